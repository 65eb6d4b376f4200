//! The scheduler's tasks on PostgreSQL (`PostgresTasks`), three schedulers on one database as
//! three replicas would run them, each with its own pool: every due run is claimed by exactly
//! one of them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use demo_app::Stores;
use demo_app::assistant::channels::Channels;
use demo_app::assistant::scheduler::Scheduler;
use demo_app::assistant::web::Web;
use demo_app::config::WebConfig;
use demo_app::store::{PostgresTasks, ScheduleType, Task, TaskStore, Tasks};
use tokio_util::sync::CancellationToken;
use tool_runtime::Registry;
use tool_runtime::agent::{Agent, Api, Model};
use tool_runtime::layers::guard::CommandPolicy;
use tool_runtime::postgres::{Postgres, PostgresOptions};
use tool_test_support::fake_provider::{FakeProvider, Step};
use tool_test_support::postgres::PostgresServer;

const KEY: &str = "sk-demo-test-key-0042";
const TASKS: usize = 200;

/// One replica's scheduler: its own pool on `url`, its own agent (its model named `model`, which
/// the provider sees in each request), a tick of 100 ms.
async fn replica(url: &str, fake: &FakeProvider, model: &str) -> (Postgres, Scheduler) {
    let postgres = Postgres::connect(PostgresOptions::new(url)).await.unwrap();
    PostgresTasks::migrate(&postgres).await.unwrap();
    let tasks = PostgresTasks(postgres.clone());
    let registry = Arc::new(Registry::builder().without_inventory().build().unwrap());
    let model = Model::new(
        Api::OpenAiChat,
        model,
        fake.base_url.clone(),
        Some(tool_runtime::Secret::new(KEY.to_owned())),
    );
    let agent = Agent::builder(registry, model).build().unwrap();
    let channels = Channels::new(
        Stores::in_memory().unwrap().channels,
        CommandPolicy::new(Vec::<String>::new()),
        Web::from_config(&WebConfig::default(), |_| None),
    );
    let scheduler = Scheduler::new(
        Tasks(Arc::new(tasks)),
        agent,
        channels,
        Duration::from_millis(100),
    );
    (postgres, scheduler)
}

async fn scalar(postgres: &Postgres, sql: &str) -> i64 {
    postgres
        .client()
        .await
        .unwrap()
        .query_one(sql, &[])
        .await
        .unwrap()
        .get(0)
}

/// Adds `count` tasks, each one time only, due at `due`.
async fn add_tasks(postgres: &Postgres, due: i64, count: usize) {
    let tasks = PostgresTasks(postgres.clone());
    for i in 0..count {
        let task = Task {
            task_id: format!("task_{i:016x}"),
            prompt: format!("Prompt number {i}."),
            schedule_type: ScheduleType::Once,
            schedule_value: "2001-01-01T00:00:00Z".to_owned(),
            channel: "log".to_owned(),
            chat_id: None,
            tier: None,
            status: "active".to_owned(),
            next_run: None,
            last_run: None,
            last_outcome: None,
            runs: 0,
        };
        tasks.add(task, due).await.unwrap();
    }
}

/// Asserts that the model was asked once per task, each task's prompt in exactly one request;
/// returns how many requests each replica's model made.
fn prompts_sent_once(fake: &FakeProvider) -> BTreeMap<String, usize> {
    let requests = fake.requests();
    assert_eq!(requests.len(), TASKS, "one model request per run");
    let mut prompts = BTreeMap::<String, usize>::new();
    let mut by_replica = BTreeMap::<String, usize>::new();
    for request in &requests {
        let text = request["messages"].to_string();
        let prompt = (0..TASKS)
            .map(|i| format!("Prompt number {i}."))
            .find(|p| text.contains(p.as_str()))
            .unwrap_or_else(|| panic!("no task's prompt in {request}"));
        *prompts.entry(prompt).or_default() += 1;
        *by_replica
            .entry(request["model"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    assert_eq!(prompts.len(), TASKS, "every prompt sent");
    assert!(prompts.values().all(|n| *n == 1), "a prompt sent twice");
    by_replica
}

/// 200 one-time tasks come due at the same second while three schedulers poll one database:
/// each runs exactly once (one `task_runs` row, one request to the model, its prompt sent
/// once), and the claims were shared out between the schedulers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_schedulers_on_one_database_run_each_due_task_exactly_once() {
    let server = PostgresServer::start();
    let url = server.create_database("scheduler");
    let script = (0..TASKS)
        .map(|i| Step::text(&format!("done {i}")))
        .collect();
    let fake = FakeProvider::start(Api::OpenAiChat, KEY, script).await;

    // Migrated at once: the tables are created once, by whichever comes first.
    let (a, b, c) = tokio::join!(
        replica(&url, &fake, "model-r1"),
        replica(&url, &fake, "model-r2"),
        replica(&url, &fake, "model-r3"),
    );
    let postgres = a.0.clone();
    assert_eq!(
        scalar(
            &postgres,
            "SELECT count(*) FROM tool_schema_migrations WHERE component = 'demo-app/scheduler'"
        )
        .await,
        1
    );
    let shutdown = CancellationToken::new();
    let running: Vec<_> = [a, b, c]
        .into_iter()
        .map(|(_, scheduler)| tokio::spawn(scheduler.run(shutdown.clone())))
        .collect();

    // Every task added an hour ahead, however long adding them takes; then all made due at
    // one second, by the database's clock, in one statement, so the schedulers race for them.
    let ahead = scalar(
        &postgres,
        "SELECT floor(extract(epoch FROM now()))::bigint + 3600",
    )
    .await;
    add_tasks(&postgres, ahead, TASKS).await;
    postgres
        .client()
        .await
        .unwrap()
        .execute(
            "UPDATE tasks SET next_run = floor(extract(epoch FROM now()))::bigint + 1",
            &[],
        )
        .await
        .unwrap();

    // A slow machine may take a while for every run; a stall, not the total, fails the test.
    let (mut done, mut moved) = (0, Instant::now());
    while done < i64::try_from(TASKS).unwrap() {
        let now = scalar(
            &postgres,
            "SELECT count(*) FROM task_runs WHERE outcome IS NOT NULL",
        )
        .await;
        if now > done {
            (done, moved) = (now, Instant::now());
        }
        assert!(
            moved.elapsed() < Duration::from_secs(60),
            "no run finished for 60 s: {done} of {TASKS} done"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A few more ticks of every scheduler: nothing else is claimed.
    tokio::time::sleep(Duration::from_millis(500)).await;
    shutdown.cancel();
    for r in running {
        r.await.unwrap();
    }

    let total = i64::try_from(TASKS).unwrap();
    assert_eq!(
        scalar(&postgres, "SELECT count(*) FROM task_runs").await,
        total
    );
    assert_eq!(
        scalar(&postgres, "SELECT count(DISTINCT task_id) FROM task_runs").await,
        total
    );
    assert_eq!(
        scalar(
            &postgres,
            "SELECT count(*) FROM task_runs WHERE due <> (SELECT min(due) FROM task_runs)"
        )
        .await,
        0,
        "every run is the run of the one due time"
    );
    assert_eq!(
        scalar(
            &postgres,
            "SELECT count(*) FROM tasks WHERE runs = 1 AND status = 'done' \
             AND next_run IS NULL AND last_outcome = 'delivered'"
        )
        .await,
        total
    );

    let by_replica = prompts_sent_once(&fake);
    assert!(
        by_replica.len() > 1,
        "one scheduler claimed every run, so nothing raced: {by_replica:?}"
    );
    fake.assert_clean();
}

/// At shutdown a scheduler claims nothing more, and returns only once the run it holds has
/// finished: the run is answered and recorded, not cut off (`serve` waits for it through the
/// drain and the grace period).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_shutdown_a_scheduler_claims_no_more_and_finishes_the_run_it_holds() {
    let server = PostgresServer::start();
    let url = server.create_database("draining");
    let script = vec![Step::Pause(Duration::from_secs(2)), Step::text("done 0")];
    let fake = FakeProvider::start(Api::OpenAiChat, KEY, script).await;
    let (postgres, scheduler) = replica(&url, &fake, "model-r1").await;
    let now = scalar(&postgres, "SELECT floor(extract(epoch FROM now()))::bigint").await;
    add_tasks(&postgres, now, 1).await;
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(scheduler.run(shutdown.clone()));
    // The run has begun: the model has been asked, and answers only after its pause.
    let deadline = Instant::now() + Duration::from_secs(30);
    while fake.requests().is_empty() {
        assert!(Instant::now() < deadline, "the task was never run");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    shutdown.cancel();
    running.await.unwrap();
    assert_eq!(
        scalar(
            &postgres,
            "SELECT count(*) FROM task_runs WHERE outcome IS NOT NULL"
        )
        .await,
        1,
        "the run in progress was finished and recorded before the scheduler returned"
    );
}

/// A task of `kind` with `value`, to be added by a test.
fn task(id: &str, kind: ScheduleType, value: &str) -> Task {
    Task {
        task_id: id.to_owned(),
        prompt: format!("the prompt of {id}"),
        schedule_type: kind,
        schedule_value: value.to_owned(),
        channel: "log".to_owned(),
        chat_id: Some("chat-1".to_owned()),
        tier: None,
        status: "active".to_owned(),
        next_run: None,
        last_run: None,
        last_outcome: None,
        runs: 0,
    }
}

/// What every engine does with one store: a due task claimed once and moved on by its
/// interval, a future one left alone, an outcome recorded, a cancelled task never claimed.
async fn one_store_lifecycle(tasks: &dyn TaskStore) {
    let now = demo_app::store::now();
    let every = task("task_00000000000000a1", ScheduleType::Interval, "60");
    let later = task(
        "task_00000000000000b2",
        ScheduleType::Once,
        "2099-01-01T00:00:00Z",
    );
    let added = tasks.add(every.clone(), now - 10).await.unwrap();
    assert_eq!(
        (added.status.as_str(), added.runs, added.chat_id.as_deref()),
        ("active", 0, Some("chat-1"))
    );
    assert_eq!(
        added.next_run.as_deref(),
        Some(demo_app::store::rfc3339(now - 10).as_str())
    );
    tasks.add(later, now + 3600).await.unwrap();
    assert_eq!(tasks.list().await.unwrap().len(), 2);

    let claims = tasks.claim_due(16).await.unwrap();
    assert_eq!(claims.len(), 1, "{claims:?}");
    assert_eq!(
        (claims[0].task.task_id.as_str(), claims[0].due),
        (every.task_id.as_str(), now - 10)
    );
    assert!(
        tasks.claim_due(16).await.unwrap().is_empty(),
        "claimed twice"
    );
    tasks
        .finish(every.task_id.clone(), now - 10, "delivered".to_owned())
        .await
        .unwrap();
    let listed = tasks.list().await.unwrap();
    let ran = listed.iter().find(|t| t.task_id == every.task_id).unwrap();
    assert_eq!(
        (ran.runs, ran.last_outcome.as_deref()),
        (1, Some("delivered"))
    );
    // The next due time counts on from the missed one: 60 s after it, 50 from now.
    let next = chrono::DateTime::parse_from_rfc3339(ran.next_run.as_deref().unwrap())
        .unwrap()
        .timestamp();
    assert!((now + 49..=now + 52).contains(&next), "{next} vs {now}");

    let cancelled = tasks.cancel(every.task_id.clone()).await.unwrap().unwrap();
    assert_eq!(
        (cancelled.status.as_str(), cancelled.next_run.as_deref()),
        ("cancelled", None)
    );
    let again = tasks.cancel(every.task_id.clone()).await.unwrap().unwrap();
    assert_eq!(again, cancelled, "cancelling twice changes nothing");
    assert!(
        tasks
            .cancel("task_00000000000000ff".to_owned())
            .await
            .unwrap()
            .is_none()
    );
}

/// The PostgreSQL engine keeps tasks as the SQLite one does, each the tasks of `Stores` on its
/// database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_engines_keep_claim_and_cancel_tasks_alike() {
    one_store_lifecycle(&*Stores::in_memory().unwrap().tasks().0).await;
    let server = PostgresServer::start();
    let postgres = Postgres::connect(PostgresOptions::new(server.url()))
        .await
        .unwrap();
    let stores = Stores::postgres(&postgres).await.unwrap();
    one_store_lifecycle(&*stores.tasks().0).await;
}
