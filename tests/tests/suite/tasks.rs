//! Calls run as tasks, through the registry every front end uses: the pipeline run once under
//! the task's id, its outcome kept for its principal only, its questions answered and its
//! cancel delivered through the store, its time to live, and a task whose replica died.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tool_runtime::layers::audit::JsonLinesAudit;
use tool_runtime::prelude::*;
use tool_runtime::task::{MemoryTaskStore, Task, TaskStatus};
use tool_runtime::tool::peer::Elicited;

/// Waits `ms` milliseconds and answers `n` doubled.
#[tool(annotations(read_only), task = "optional")]
async fn tally(n: i64, ms: u64) -> i64 {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    n * 2
}

/// How many times `lasting` started.
static LASTINGS: AtomicUsize = AtomicUsize::new(0);

/// Counts, then runs for a minute.
#[tool(annotations(read_only), task = "optional", timeout = "90s")]
async fn lasting() -> &'static str {
    LASTINGS.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    "lasted"
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Colour {
    /// A colour.
    colour: String,
}

/// Asks for a colour mid-task.
#[tool(annotations(read_only), task = "required")]
async fn paint(ctx: &CallContext) -> Result<String, ToolError> {
    match ctx
        .question("colour")
        .elicit::<Colour>("Which colour?")
        .await?
    {
        Elicited::Accepted(c) => Ok(format!("painted {}", c.colour)),
        _ => Ok("left bare".to_owned()),
    }
}

/// Waits until cancelled, and says so.
#[tool(annotations(read_only), task = "optional", timeout = "60s")]
async fn wait_for_cancel(ctx: &CallContext) -> String {
    let token = ctx.cancellation().clone();
    CANCELLED_SEEN.store(0, Ordering::SeqCst);
    let _guard = SeenOnDrop(token);
    std::future::pending::<()>().await;
    unreachable!()
}

/// Whether a `wait_for_cancel` call saw its token cancelled when it was dropped.
static CANCELLED_SEEN: AtomicUsize = AtomicUsize::new(0);

struct SeenOnDrop(tokio_util::sync::CancellationToken);

impl Drop for SeenOnDrop {
    fn drop(&mut self) {
        if self.0.is_cancelled() {
            CANCELLED_SEEN.store(1, Ordering::SeqCst);
        }
    }
}

fn builder() -> tool_runtime::registry::RegistryBuilder {
    Registry::builder()
        .without_inventory()
        .tool(tally::descriptor())
        .tool(paint::descriptor())
        .tool(wait_for_cancel::descriptor())
        .tool(lasting::descriptor())
}

fn alice() -> Caller {
    Caller::new(Source::Mcp).principal("alice")
}

/// Reads the task `id` for `principal` until `done` holds, for at most ten seconds.
async fn until(
    registry: &Registry,
    id: &str,
    principal: Option<&str>,
    done: impl Fn(&Task) -> bool,
) -> Task {
    let started = Instant::now();
    loop {
        let task = registry
            .tasks()
            .get(id, principal)
            .await
            .unwrap()
            .expect("the task is kept");
        if done(&task) {
            return task;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "still {:?}",
            task.status
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_task_runs_the_pipeline_once_and_keeps_its_outcome_for_its_principal_only() {
    let log = tool_test_support::TempDir::new("task-audit");
    let path = log.path().join("audit.jsonl");
    let registry = Arc::new(
        builder()
            .audit(JsonLinesAudit::open(&path).unwrap())
            .build()
            .unwrap(),
    );
    let task = registry
        .start_task("tally", json!({"n": 21, "ms": 50}), alice())
        .await
        .unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    assert!(
        task.id.starts_with("task-") && task.id.len() == 37,
        "{}",
        task.id
    );
    assert!(task.ttl_ms > 0 && task.poll_ms > 0);
    // Another principal, or none, does not see it.
    for other in [Some("bob"), None] {
        assert_eq!(registry.tasks().get(&task.id, other).await.unwrap(), None);
        assert_eq!(
            registry.tasks().cancel(&task.id, other).await.unwrap(),
            None
        );
        let answers = Map::new();
        assert!(
            !registry
                .tasks()
                .answer(&task.id, other, &answers)
                .await
                .unwrap()
        );
    }
    let done = until(&registry, &task.id, Some("alice"), |t| {
        t.status.is_terminal()
    })
    .await;
    assert_eq!(done.status, TaskStatus::Completed);
    let outcome = done.outcome.unwrap();
    assert_eq!(outcome["status"], "ok");
    assert_eq!(outcome["result"], 42);
    // One run of the pipeline, audited under the task's id.
    let records: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcomes: Vec<&Value> = records.iter().filter(|r| r["event"] == "outcome").collect();
    assert_eq!(outcomes.len(), 1, "{records:#?}");
    assert_eq!(outcomes[0]["request_id"], task.id.as_str());
    assert_eq!(outcomes[0]["principal"], "alice");
    // Invalid arguments end the task with the pipeline's answer, as a call would.
    let bad = registry
        .start_task("tally", json!({"n": "many"}), alice())
        .await
        .unwrap();
    let bad = until(&registry, &bad.id, Some("alice"), |t| {
        t.status.is_terminal()
    })
    .await;
    assert_eq!(bad.status, TaskStatus::Completed);
    assert_eq!(bad.outcome.unwrap()["error"]["type"], "invalid_arguments");
}

#[tokio::test]
async fn a_task_waits_for_its_answer_and_goes_on_from_where_it_asked() {
    let registry = Arc::new(builder().build().unwrap());
    let task = registry
        .start_task("paint", json!({}), alice())
        .await
        .unwrap();
    let asking = until(&registry, &task.id, Some("alice"), |t| {
        t.status == TaskStatus::InputRequired
    })
    .await;
    assert_eq!(asking.questions["colour"]["method"], "elicitation/create");
    assert_eq!(
        asking.questions["colour"]["params"]["message"],
        "Which colour?"
    );
    // An answer to a question it did not ask is ignored; the right one goes through.
    let stray = Map::from_iter([("size".to_owned(), json!({"action": "accept"}))]);
    assert!(
        registry
            .tasks()
            .answer(&task.id, Some("alice"), &stray)
            .await
            .unwrap()
    );
    let still = registry
        .tasks()
        .get(&task.id, Some("alice"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(still.status, TaskStatus::InputRequired);
    let answer = Map::from_iter([(
        "colour".to_owned(),
        json!({"action": "accept", "content": {"colour": "teal"}}),
    )]);
    registry
        .tasks()
        .answer(&task.id, Some("alice"), &answer)
        .await
        .unwrap();
    let done = until(&registry, &task.id, Some("alice"), |t| {
        t.status.is_terminal()
    })
    .await;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.outcome.unwrap()["result"], "painted teal");
}

#[tokio::test]
async fn a_cancel_cancels_the_running_call_and_an_ended_task_stays_as_it_ended() {
    let registry = Arc::new(builder().build().unwrap());
    let task = registry
        .start_task("wait_for_cancel", json!({}), alice())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let asked = Instant::now();
    registry
        .tasks()
        .cancel(&task.id, Some("alice"))
        .await
        .unwrap()
        .unwrap();
    let done = until(&registry, &task.id, Some("alice"), |t| {
        t.status.is_terminal()
    })
    .await;
    assert_eq!(done.status, TaskStatus::Cancelled);
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(
        CANCELLED_SEEN.load(Ordering::SeqCst),
        1,
        "the call's token was cancelled"
    );
    // Cancelling it again changes nothing.
    let again = registry
        .tasks()
        .cancel(&task.id, Some("alice"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.status, TaskStatus::Cancelled);
}

#[tokio::test]
async fn a_task_past_its_time_to_live_is_gone() {
    let registry = Arc::new(
        builder()
            .task_lifetime(Duration::from_millis(300), Duration::from_millis(50))
            .build()
            .unwrap(),
    );
    let task = registry
        .start_task("tally", json!({"n": 1, "ms": 0}), alice())
        .await
        .unwrap();
    assert_eq!(task.ttl_ms, 300);
    assert_eq!(task.poll_ms, 50);
    until(&registry, &task.id, Some("alice"), |t| {
        t.status.is_terminal()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        registry.tasks().get(&task.id, Some("alice")).await.unwrap(),
        None
    );
}

/// A replica starts a task and dies (its runtime is dropped, as a killed process's tasks end);
/// another, on the same store, reports the task `failed`, its outcome unknown, once the lease
/// has expired, and the tool ran once.
#[test]
fn a_task_whose_replica_died_fails_with_its_outcome_unknown_and_never_runs_again() {
    let store = Arc::new(MemoryTaskStore::new());
    let lease = Duration::from_millis(400);
    let replica = |store: &Arc<MemoryTaskStore>| {
        Arc::new(
            builder()
                .task_store(Arc::clone(store))
                .task_lease(lease)
                .build()
                .unwrap(),
        )
    };
    let dying = tokio::runtime::Runtime::new().unwrap();
    let first = replica(&store);
    let task = dying.block_on(async {
        let task = first
            .start_task("lasting", json!({}), alice())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        task
    });
    drop(dying);
    assert_eq!(LASTINGS.load(Ordering::SeqCst), 1);
    let other = tokio::runtime::Runtime::new().unwrap();
    let second = replica(&store);
    other.block_on(async {
        let running = second
            .tasks()
            .get(&task.id, Some("alice"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(running.status, TaskStatus::Working, "its lease still holds");
        let lost = until(&second, &task.id, Some("alice"), |t| t.status.is_terminal()).await;
        assert_eq!(lost.status, TaskStatus::Failed);
        assert!(lost.message.unwrap().starts_with("outcome unknown"));
        assert_eq!(lost.outcome.unwrap()["error"]["type"], "unavailable");
    });
    assert_eq!(LASTINGS.load(Ordering::SeqCst), 1, "never run again");
}
