//! Calls run as tasks, through the registry every front end uses: the pipeline run once under
//! the task's id, its outcome kept for its principal only, its questions answered and its
//! cancel delivered through the store, its time to live, and a task whose replica died.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tool_runtime::layers::audit::JsonLinesAudit;
use tool_runtime::prelude::*;
use tool_runtime::registry::task::{MemoryTaskStore, Task, TaskStatus};
use tool_runtime::tool::peer::Elicited;

/// Waits `ms` milliseconds and answers `n` doubled.
#[tool(annotations(read_only), task = "optional")]
async fn tally(n: i64, ms: u64) -> i64 {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    n * 2
}

/// Answers at once: never a task.
#[tool(annotations(read_only))]
async fn plain() -> &'static str {
    "plain"
}

/// How many times `lasting` started, by request id (a task's is its id).
static LASTINGS: std::sync::Mutex<BTreeMap<String, usize>> = std::sync::Mutex::new(BTreeMap::new());

/// How many times the task `id` ran `lasting`.
fn runs_of(id: &str) -> usize {
    LASTINGS.lock().unwrap().get(id).copied().unwrap_or(0)
}

/// Counts its run, then runs for `ms` milliseconds (a minute by default).
#[tool(annotations(read_only), task = "optional", timeout = "90s")]
async fn lasting(ctx: &CallContext, ms: Option<u64>) -> &'static str {
    *LASTINGS
        .lock()
        .unwrap()
        .entry(ctx.request_id().to_owned())
        .or_default() += 1;
    tokio::time::sleep(Duration::from_millis(ms.unwrap_or(60_000))).await;
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

/// Answers in the foreground when told to stay; else becomes a task, and there asks for a
/// colour.
#[tool(
    annotations(read_only),
    task = "optional",
    detach = "explicit",
    timeout = "60s"
)]
async fn staged(ctx: &CallContext, stay: bool) -> Result<String, ToolError> {
    if stay {
        return Ok("stayed".to_owned());
    }
    ctx.detach().await?;
    // A second detach does nothing.
    ctx.detach().await?;
    match ctx
        .question("colour")
        .elicit::<Colour>("Which colour?")
        .await?
    {
        Elicited::Accepted(c) => Ok(format!("painted {} as a task", c.colour)),
        _ => Ok("left bare".to_owned()),
    }
}

fn builder() -> tool_runtime::registry::RegistryBuilder {
    Registry::builder()
        .without_inventory()
        .tool(tally::descriptor())
        .tool(paint::descriptor())
        .tool(wait_for_cancel::descriptor())
        .tool(lasting::descriptor())
        .tool(plain::descriptor())
        .tool(staged::descriptor())
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

/// Answers 7, only ever as a task where the caller can follow one.
#[tool(annotations(read_only), task = "required")]
async fn seven() -> u8 {
    7
}

/// The agent (and the command line without `--detach`) calls a task tool as it calls any: in
/// the foreground, to its answer.
#[tokio::test]
async fn a_task_tool_called_as_a_call_answers_in_the_foreground() {
    let registry = builder().tool(seven::descriptor()).build().unwrap();
    for source in [Source::Agent, Source::Cli, Source::Internal] {
        let called = registry.call("seven", json!({}), Caller::new(source)).await;
        assert_eq!(called.outcome.unwrap(), 7, "{source}");
    }
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
    assert_eq!(runs_of(&task.id), 1);
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
    assert_eq!(runs_of(&task.id), 1, "never run again");
}

/// Serves `registry` over HTTP with alice's and bob's tokens; answers its base URL.
async fn served(registry: Arc<Registry>) -> String {
    use tool_runtime::http::{self, Auth, ServerOptions};
    let auth = Auth::from_toml(
        "[[tokens]]\ntoken = \"alice-token\"\nprincipal = \"alice\"\n\n[[tokens]]\ntoken = \"bob-token\"\nprincipal = \"bob\"\n",
    )
    .unwrap();
    let options = ServerOptions::default().auth(auth);
    let app = http::router(registry, options.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(http::serve(listener, app, std::future::pending(), &options));
    base
}

/// `POST /tools/{tool}` with `body` as `token`'s holder, preferring an answer at once or not.
async fn post(base: &str, tool: &str, body: Value, prefer: bool, token: &str) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/tools/{tool}"))
        .bearer_auth(token)
        .json(&body);
    if prefer {
        request = request.header("prefer", "respond-async, wait=10");
    }
    request.send().await.unwrap()
}

/// `method` on `location` (a path) as `token`'s holder.
async fn at(base: &str, method: reqwest::Method, location: &str, token: &str) -> reqwest::Response {
    reqwest::Client::new()
        .request(method, format!("{base}{location}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

/// Reads the task at `location` as alice until its status is no longer `from`.
async fn after(base: &str, location: &str, from: &str) -> Value {
    let started = Instant::now();
    loop {
        let r = at(base, reqwest::Method::GET, location, "alice-token").await;
        assert_eq!(r.status(), 200);
        let task: Value = r.json().await.unwrap();
        if task["status"] != from {
            return task;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn over_http_prefer_respond_async_answers_202_and_the_task_is_read_at_its_location() {
    let base = served(Arc::new(builder().build().unwrap())).await;
    // Without the preference, a call of a tool that may be a task is a call.
    let r = post(
        &base,
        "tally",
        json!({"n": 2, "ms": 0}),
        false,
        "alice-token",
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["result"], 4);
    // A tool that is never a task ignores the preference.
    let r = post(&base, "plain", json!({}), true, "alice-token").await;
    assert_eq!(r.status(), 200);
    // With it, a task at its location.
    let r = post(
        &base,
        "tally",
        json!({"n": 21, "ms": 100}),
        true,
        "alice-token",
    )
    .await;
    assert_eq!(r.status(), 202);
    assert!(r.headers().contains_key("retry-after"));
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    let started: Value = r.json().await.unwrap();
    assert_eq!(
        location,
        format!("/tasks/{}", started["id"].as_str().unwrap())
    );
    assert_eq!(started["status"], "working");
    assert_eq!(started["tool"], "tally");
    // Bob does not see alice's task.
    let r = at(&base, reqwest::Method::GET, &location, "bob-token").await;
    assert_eq!(r.status(), 404);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["type"],
        "not_found"
    );
    let done = after(&base, &location, "working").await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["outcome"]["status"], "ok");
    assert_eq!(done["outcome"]["result"], 42);
    let r = at(&base, reqwest::Method::GET, "/tasks/task-0", "alice-token").await;
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn over_http_a_task_is_cancelled_at_its_location_and_described_in_the_openapi_document() {
    let base = served(Arc::new(builder().build().unwrap())).await;
    // A tool that must be a task is one without asking; its question is answered at its
    // location's `input`.
    let r = post(&base, "paint", json!({}), false, "alice-token").await;
    assert_eq!(r.status(), 202);
    let painting = r.headers()["location"].to_str().unwrap().to_owned();
    let asking = after(&base, &painting, "working").await;
    assert_eq!(asking["status"], "input_required");
    assert_eq!(
        asking["questions"]["colour"]["method"],
        "elicitation/create"
    );
    let answer = json!({"colour": {"action": "accept", "content": {"colour": "umber"}}});
    let answered = |token: &'static str| {
        reqwest::Client::new()
            .post(format!("{base}{painting}/input"))
            .bearer_auth(token)
            .json(&answer)
            .send()
    };
    assert_eq!(answered("bob-token").await.unwrap().status(), 404);
    assert_eq!(answered("alice-token").await.unwrap().status(), 202);
    let painted = loop {
        let task = after(&base, &painting, "input_required").await;
        if task["status"] != "working" {
            break task;
        }
    };
    assert_eq!(painted["outcome"]["result"], "painted umber", "{painted}");
    let r = post(&base, "wait_for_cancel", json!({}), true, "alice-token").await;
    assert_eq!(r.status(), 202);
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    let r = at(&base, reqwest::Method::DELETE, &location, "bob-token").await;
    assert_eq!(r.status(), 404, "bob cannot cancel it");
    let r = at(&base, reqwest::Method::DELETE, &location, "alice-token").await;
    assert_eq!(r.status(), 202);
    assert_eq!(
        after(&base, &location, "working").await["status"],
        "cancelled"
    );
    let doc: Value = at(&base, reqwest::Method::GET, "/openapi.json", "alice-token")
        .await
        .json()
        .await
        .unwrap();
    assert!(doc["paths"]["/tasks/{id}"]["get"].is_object());
    assert!(doc["paths"]["/tasks/{id}"]["delete"].is_object());
    assert!(doc["paths"]["/tasks/{id}/input"]["post"].is_object());
    let prefers = |tool: &str| {
        doc["paths"][format!("/tools/{tool}")]["post"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "Prefer")
    };
    assert!(prefers("tally"));
    assert!(!prefers("plain"));
    assert!(doc["paths"]["/tools/tally"]["post"]["responses"]["202"].is_object());
}

#[tokio::test]
async fn a_tool_that_detaches_answers_as_a_call_until_it_does_and_goes_on_as_a_task_after() {
    let base = served(Arc::new(builder().build().unwrap())).await;
    // Ended before its detach point: a call's answer, though a task was preferred.
    let r = post(&base, "staged", json!({"stay": true}), true, "alice-token").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["result"], "stayed");
    // Detached: the task, answered while the call goes on past the request's end, its
    // question now the task's.
    let r = post(&base, "staged", json!({"stay": false}), true, "alice-token").await;
    assert_eq!(r.status(), 202);
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    let asking = after(&base, &location, "working").await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    assert!(asking["questions"]["colour"].is_object(), "{asking}");
    let answered = reqwest::Client::new()
        .post(format!("{base}{location}/input"))
        .bearer_auth("alice-token")
        .json(&json!({"colour": {"action": "accept", "content": {"colour": "ochre"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 202);
    let done = loop {
        let task = after(&base, &location, "input_required").await;
        if task["status"] != "working" {
            break task;
        }
    };
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["outcome"]["result"], "painted ochre as a task");
    // A detached call is cancelled by its task's cancel.
    let r = post(&base, "staged", json!({"stay": false}), true, "alice-token").await;
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(
        after(&base, &location, "working").await["status"],
        "input_required"
    );
    let r = at(&base, reqwest::Method::DELETE, &location, "alice-token").await;
    assert_eq!(r.status(), 202);
    assert_eq!(
        after(&base, &location, "input_required").await["status"],
        "cancelled"
    );
}

/// Two replicas on one store: a task started on `first` is read and answered through `second`,
/// another cancelled through it.
async fn shared_by_two_replicas(first: &Arc<Registry>, second: &Arc<Registry>) {
    let task = first.start_task("paint", json!({}), alice()).await.unwrap();
    let asking = until(second, &task.id, Some("alice"), |t| {
        t.status == TaskStatus::InputRequired
    })
    .await;
    assert!(asking.questions.contains_key("colour"));
    let answer = Map::from_iter([(
        "colour".to_owned(),
        json!({"action": "accept", "content": {"colour": "ochre"}}),
    )]);
    assert!(
        second
            .tasks()
            .answer(&task.id, Some("alice"), &answer)
            .await
            .unwrap()
    );
    let done = until(first, &task.id, Some("alice"), |t| t.status.is_terminal()).await;
    assert_eq!(done.result(), Some(&json!("painted ochre")));
    let waiting = first
        .start_task("wait_for_cancel", json!({}), alice())
        .await
        .unwrap();
    let asked = Instant::now();
    second
        .tasks()
        .cancel(&waiting.id, Some("alice"))
        .await
        .unwrap()
        .unwrap();
    let cancelled = until(second, &waiting.id, Some("alice"), |t| {
        t.status.is_terminal()
    })
    .await;
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
}

/// Calls left detached (`queue_task`) are taken by the replicas that run queued tasks, each by
/// one, and run once.
async fn queued_calls_run_once_on_whichever_replica_takes_them(
    first: &Arc<Registry>,
    second: &Arc<Registry>,
) {
    let stop = tokio_util::sync::CancellationToken::new();
    for replica in [first, second] {
        tokio::spawn(Arc::clone(replica).run_queued_tasks(stop.clone()));
    }
    let mut ids = Vec::new();
    for _ in 0..6 {
        let task = first
            .queue_task("lasting", json!({"ms": 50}), &alice())
            .await
            .unwrap();
        assert!(task.queued.is_some());
        ids.push(task.id);
    }
    for id in &ids {
        let done = until(second, id, Some("alice"), |t| t.status.is_terminal()).await;
        assert_eq!(done.result(), Some(&json!("lasted")), "{done:?}");
        assert_eq!(runs_of(id), 1, "run once");
    }
    stop.cancel();
    // A tool that never runs as a task is not left detached.
    let refused = first
        .queue_task("plain", json!({}), &alice())
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), &tool_runtime::ErrorKind::INVALID_REQUEST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_on_one_store_in_memory_share_their_tasks() {
    let store = Arc::new(MemoryTaskStore::new());
    let replica = || Arc::new(builder().task_store(Arc::clone(&store)).build().unwrap());
    let first = replica();
    shared_by_two_replicas(&first, &replica()).await;
    // No other process sees this store: nothing would run a call left detached in it.
    let refused = first
        .queue_task("lasting", json!({}), &alice())
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), &tool_runtime::ErrorKind::UNAVAILABLE);
    assert!(
        refused.message().contains("PostgreSQL or Redis"),
        "{refused:?}"
    );
}

#[test]
fn replicas_on_postgresql_share_their_tasks_and_a_dead_replicas_task_fails_unrun() {
    use tool_runtime::postgres::{Postgres, PostgresOptions, PostgresTaskStore};
    let server = tool_test_support::postgres::PostgresServer::start();
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    };
    let replica = |lease: Duration| {
        let url = server.url();
        async move {
            let postgres = Postgres::connect(PostgresOptions::new(url)).await.unwrap();
            let store = PostgresTaskStore::start(&postgres).await.unwrap();
            Arc::new(
                builder()
                    .task_store(store)
                    .task_lease(lease)
                    .build()
                    .unwrap(),
            )
        }
    };
    let lease = Duration::from_millis(1500);
    let live = runtime();
    live.block_on(async {
        let (first, second) = (replica(lease).await, replica(lease).await);
        shared_by_two_replicas(&first, &second).await;
        queued_calls_run_once_on_whichever_replica_takes_them(&first, &second).await;
    });
    // A replica that dies mid-task.
    let dying = runtime();
    let task = dying.block_on(async {
        let first = replica(lease).await;
        let task = first
            .start_task("lasting", json!({}), alice())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        task
    });
    drop(dying);
    assert_eq!(runs_of(&task.id), 1);
    live.block_on(async {
        let second = replica(lease).await;
        let lost = until(&second, &task.id, Some("alice"), |t| t.status.is_terminal()).await;
        assert_eq!(lost.status, TaskStatus::Failed);
        assert!(lost.message.unwrap().starts_with("outcome unknown"));
    });
    assert_eq!(runs_of(&task.id), 1, "never run again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_on_redis_share_their_tasks() {
    use tool_runtime::redis::{Redis, RedisOptions};
    let server = tool_test_support::redis::RedisServer::start();
    let replica = || async {
        let redis = Redis::connect(RedisOptions::new(server.url()).prefix("tasks:"))
            .await
            .unwrap();
        Arc::new(builder().redis(&redis).build().unwrap())
    };
    let (first, second) = (replica().await, replica().await);
    shared_by_two_replicas(&first, &second).await;
    queued_calls_run_once_on_whichever_replica_takes_them(&first, &second).await;
}

/// FastMCP's client confirms a destructive tool (an input-required result) before its task is
/// created, then follows the task to its end.
#[test]
fn fastmcps_client_confirms_a_destructive_tool_before_its_task_exists() {
    let (_served, url) = crate::mcp::serve_fixture(&[]);
    let python = tool_test_support::python_with("fastmcp, fastmcp_tasks");
    let out = std::process::Command::new(python)
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python/fastmcp_task_client.py"))
        .args([
            "--url",
            &url,
            "--tool",
            "wipe",
            "--args",
            r#"{"target": "disk"}"#,
            "--confirm",
        ])
        .output()
        .unwrap();
    tool_test_support::expect_checks(
        &out,
        &[
            "confirmation asked before the task",
            "started",
            "status",
            "result {\"counted\": 1}",
        ],
    );
}
