//! The PostgreSQL engine (`tool_runtime::postgres`) against a cluster of each test's own:
//! connecting and pinging, errors that name the server and never the password, migrations
//! applied exactly once by processes starting at once, the server's statement time limit,
//! `sslmode` (TLS with a test CA: verified, refused for another CA, `verify-ca` alone passing
//! a certificate for another host), and an outage that is `unavailable` until the server is
//! back on the same handle.
//! Then the audit sink: rows for each call, a call refused while its intent cannot be written,
//! the open intents of an instance that ended reported `unknown` exactly once by racing
//! replicas (never those of a live one), a lease taken over, a clean end, and retention.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_runtime::app;
use tool_runtime::http::ServerOptions;
use tool_runtime::layers::audit::{Audit, AuditEvent, AuditRecord, JsonLinesAudit, UnknownOutcome};
use tool_runtime::postgres::{AuditOptions, Postgres, PostgresAudit, PostgresOptions};
use tool_runtime::{Caller, ErrorKind, Registry, Source, ToolError, tool};
use tool_test_support::TempDir;
use tool_test_support::postgres::PostgresServer;
use tool_test_support::tls::TestCa;

fn location(server: &PostgresServer, database: &str) -> String {
    format!("postgres@127.0.0.1:{}/{database}", server.port())
}

/// `error` is `unavailable` (503), naming PostgreSQL, never where it is nor its password.
fn assert_unavailable_naming(error: &ToolError, server: &PostgresServer) {
    assert_unavailable_saying(error, server, "PostgreSQL is unavailable");
}

/// `error` is `unavailable` (503) with `message`, never naming where PostgreSQL is nor its
/// password.
fn assert_unavailable_saying(error: &ToolError, server: &PostgresServer, message: &str) {
    assert_eq!(error.kind(), &ErrorKind::UNAVAILABLE, "{error:?}");
    assert_eq!(error.status(), 503);
    assert_eq!(error.message(), message);
    let shown = format!("{:?}", error.details());
    let address = format!("127.0.0.1:{}", server.port());
    for hidden in [address.as_str(), server.password()] {
        assert!(!shown.contains(hidden), "{shown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connects_pings_and_names_its_location_without_the_password() {
    let server = PostgresServer::start();
    let options = PostgresOptions::new(server.url());
    assert_eq!(options.location().unwrap(), location(&server, "postgres"));
    assert!(!format!("{options:?}").contains(server.password()));
    let postgres = Postgres::connect(options).await.unwrap();
    assert_eq!(postgres.location(), location(&server, "postgres"));
    assert!(!format!("{postgres:?}").contains(server.password()));
    postgres.ping().await.unwrap();
    let client = postgres.client().await.unwrap();
    let row = client
        .query_one("SELECT current_setting('statement_timeout')", &[])
        .await
        .unwrap();
    assert_eq!(
        row.get::<_, String>(0),
        "2s",
        "the default statement time limit"
    );
    let value: serde_json::Value = client
        .query_one("SELECT $1::jsonb", &[&json!({"a": [1, 2]})])
        .await
        .unwrap()
        .get(0);
    assert_eq!(value, json!({"a": [1, 2]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_names_postgresql_and_its_location_not_the_password() {
    let server = PostgresServer::start();
    let wrong = "not-the-pw-7f3a";
    for options in [
        PostgresOptions::new(format!(
            "postgres://postgres:{wrong}@127.0.0.1:{}/postgres",
            server.port()
        )),
        // The password given apart from the URL wins over the URL's.
        PostgresOptions::new(server.url()).password(wrong),
    ] {
        assert!(!format!("{options:?}").contains(wrong));
        let error = Postgres::connect(options).await.unwrap_err();
        assert_eq!(error.kind(), &ErrorKind::UNAVAILABLE, "{error:?}");
        let message = error.message();
        assert!(
            message.contains(&format!("PostgreSQL at {}", location(&server, "postgres"))),
            "{message}"
        );
        assert!(
            message.contains("password authentication failed"),
            "{message}"
        );
        assert!(!message.contains(wrong), "{message}");
        assert!(!message.contains(server.password()), "{message}");
    }
    // The right password apart from a URL without one.
    let bare = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port());
    Postgres::connect(PostgresOptions::new(bare).password(server.password()))
        .await
        .unwrap();
}

#[tokio::test]
async fn nothing_listening_fails_at_start_naming_the_location() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = format!("postgres://app:pw-secret-1@127.0.0.1:{port}/billing");
    let started = Instant::now();
    let error = Postgres::connect(PostgresOptions::new(&url))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(error.kind(), &ErrorKind::UNAVAILABLE);
    let message = error.message();
    assert!(
        message.starts_with(&format!(
            "cannot connect to PostgreSQL at app@127.0.0.1:{port}/billing"
        )),
        "{message}"
    );
    assert!(!message.contains("pw-secret-1"), "{message}");
    let error = PostgresOptions::new("postgres://a:b@h:notaport/x")
        .location()
        .unwrap_err();
    assert!(
        error.message().contains("postgres://"),
        "{}",
        error.message()
    );
    let error = PostgresOptions::from_env("TOOL_TESTS_NO_SUCH_VARIABLE").unwrap_err();
    assert!(
        error.message().contains("`TOOL_TESTS_NO_SUCH_VARIABLE`"),
        "{}",
        error.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslmode_require_refuses_a_server_without_tls_and_disable_connects_in_plain() {
    let server = PostgresServer::start();
    let require = Postgres::connect(PostgresOptions::new(format!(
        "{}?sslmode=require",
        server.url()
    )))
    .await
    .unwrap_err();
    assert_eq!(require.kind(), &ErrorKind::UNAVAILABLE);
    assert!(
        require.message().contains("PostgreSQL at ") && require.message().contains("TLS"),
        "{}",
        require.message()
    );
    let plain = Postgres::connect(PostgresOptions::new(format!(
        "{}?sslmode=disable",
        server.url()
    )))
    .await
    .unwrap();
    let client = plain.client().await.unwrap();
    let ssl: bool = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(!ssl);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_map_a_cancelled_statement_to_unavailable_and_a_bad_one_to_internal() {
    let server = PostgresServer::start();
    let postgres = Postgres::connect(
        PostgresOptions::new(server.url()).statement_timeout(Duration::from_millis(200)),
    )
    .await
    .unwrap();
    let client = postgres.client().await.unwrap();
    let started = Instant::now();
    let slow = client.simple_query("SELECT pg_sleep(5)").await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    let slow = postgres.error(slow);
    // Cancelled by `statement_timeout` (57014, which the log says).
    assert_eq!(slow.kind(), &ErrorKind::UNAVAILABLE);
    assert_eq!(slow.message(), "PostgreSQL is unavailable");
    let bad = client
        .simple_query("SELECT FROM nowhere")
        .await
        .unwrap_err();
    let bad = postgres.error(bad);
    assert_eq!(bad.kind(), &ErrorKind::INTERNAL);
    assert_eq!(bad.message(), "internal error");
    // The connection is still good after both.
    client.simple_query("SELECT 1").await.unwrap();
}

/// Version 1 makes a table; each later one inserts its own number into it, so the rows show
/// how many times each ran.
fn migrations(count: usize) -> Vec<String> {
    let mut all = vec!["CREATE TABLE ran (version integer NOT NULL)".to_owned()];
    all.extend((2..=count).map(|v| format!("INSERT INTO ran VALUES ({v})")));
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_processes_migrating_at_once_apply_each_migration_exactly_once() {
    let server = PostgresServer::start();
    let url = server.create_database("migrating");
    let sql = migrations(5);
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (url, sql) = (url.clone(), sql.clone());
        // A pool of its own each, as separate processes would have.
        tasks.push(tokio::spawn(async move {
            let postgres = Postgres::connect(PostgresOptions::new(url)).await.unwrap();
            let sql: Vec<&str> = sql.iter().map(String::as_str).collect();
            postgres.migrate("app", &sql).await
        }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    assert_eq!(
        server.psql(
            "migrating",
            "SELECT version FROM tool_schema_migrations WHERE component = 'app' ORDER BY version"
        ),
        "1\n2\n3\n4\n5"
    );
    assert_eq!(
        server.psql("migrating", "SELECT version FROM ran ORDER BY version"),
        "2\n3\n4\n5"
    );

    // Another component keeps its own versions; appending a migration applies only it; a
    // failing one rolls the call back whole and is named.
    let postgres = Postgres::connect(PostgresOptions::new(&url)).await.unwrap();
    postgres
        .migrate("other", &["CREATE TABLE other_table (x int)"])
        .await
        .unwrap();
    let more = migrations(6);
    let more: Vec<&str> = more.iter().map(String::as_str).collect();
    postgres.migrate("app", &more).await.unwrap();
    let mut failing = more.clone();
    failing.push("INSERT INTO ran VALUES (7)");
    failing.push("INSERT INTO no_such_table VALUES (8)");
    let error = postgres.migrate("app", &failing).await.unwrap_err();
    assert!(
        error.message().contains("migration 8 of `app` failed")
            && error.message().contains("no_such_table"),
        "{}",
        error.message()
    );
    assert_eq!(
        server.psql("migrating", "SELECT version FROM ran ORDER BY version"),
        "2\n3\n4\n5\n6"
    );
    assert_eq!(
        server.psql(
            "migrating",
            "SELECT component, max(version) FROM tool_schema_migrations GROUP BY 1 ORDER BY 1"
        ),
        "app|6\nother|1"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_server_is_unavailable_within_the_pool_wait_then_back_on_the_same_handle() {
    let mut server = PostgresServer::start();
    // A connect time-out far longer than the pool wait: the wait bounds the refusal, with
    // seconds of slack for a slow machine.
    let pool_wait = Duration::from_millis(500);
    let options = PostgresOptions::new(server.url())
        .pool_wait(pool_wait)
        .connect_timeout(Duration::from_secs(60));
    let postgres = Postgres::connect(options).await.unwrap();
    postgres.ping().await.unwrap();

    server.stop();
    let started = Instant::now();
    let error = postgres.client().await.unwrap_err();
    assert!(
        started.elapsed() < pool_wait + Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_unavailable_naming(&error, &server);
    assert_eq!(
        postgres.ping().await.unwrap_err().kind(),
        &ErrorKind::UNAVAILABLE
    );

    server.start_again();
    postgres.ping().await.unwrap();
    let client = postgres.client().await.unwrap();
    client.simple_query("SELECT 1").await.unwrap();
}

/// Says hello.
#[tool(annotations(read_only))]
async fn hello(name: String) -> String {
    format!("hello {name}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_checks_postgresql() {
    let mut server = PostgresServer::start();
    let postgres =
        Postgres::connect(PostgresOptions::new(server.url()).pool_wait(Duration::from_millis(300)))
            .await
            .unwrap();
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(hello::descriptor())
            .build()
            .unwrap(),
    );
    let options = ServerOptions::default().postgres(&postgres);
    let base = tool_test_support::serve_on_loopback(app::router(registry, options)).await;
    assert_eq!(readyz_until(&base, 200).await.0, 200);
    server.stop();
    let (status, body) = readyz_until(&base, 503).await;
    assert_eq!(status, 503);
    // Which engine is down, not where it is: that is in the log, and for the operator.
    assert_eq!(body["checks"]["postgres"], "unavailable", "{body}");
    server.start_again();
    assert_eq!(readyz_until(&base, 200).await.0, 200);
}

/// `GET /readyz` until it answers `status` (a report is kept for a second): the status and
/// body.
async fn readyz_until(base: &str, status: u16) -> (u16, Value) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let response = reqwest::get(format!("{base}/readyz")).await.unwrap();
        let got = response.status().as_u16();
        let body: Value = response.json().await.unwrap();
        if got == status || std::time::Instant::now() > deadline {
            return (got, body);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Echoes its key.
#[tool]
async fn bump(
    /// What to bump.
    key: String,
) -> String {
    key
}

static PROBES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts its runs (only the test of an outage calls it, so no other test moves its count).
#[tool]
async fn probe() -> usize {
    PROBES.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1
}

fn audited(audit: impl Audit) -> Registry {
    Registry::builder()
        .without_inventory()
        .tool(bump::descriptor())
        .tool(probe::descriptor())
        .audit(audit)
        .build()
        .unwrap()
}

async fn connect(url: &str) -> Postgres {
    Postgres::connect(PostgresOptions::new(url)).await.unwrap()
}

/// A lease that neither expires nor is renewed within a test: only `recover()` recovers.
fn still() -> AuditOptions {
    AuditOptions::default()
        .lease(Duration::from_secs(120))
        .renew(Duration::from_secs(60))
}

fn record<'a>(event: AuditEvent, call: &'a str, arguments: &'a Value) -> AuditRecord<'a> {
    AuditRecord {
        event,
        time: 1.7e9,
        call,
        request_id: "r-1",
        source: "http",
        principal: Some("ann"),
        tool: "bump",
        arguments,
        outcome: (event == AuditEvent::Outcome).then_some("ok"),
        duration_ms: (event == AuditEvent::Outcome).then_some(1.5),
        dry_run: false,
        hidden: None,
        trace_id: None,
        read_only: false,
    }
}

/// Polls `psql` until it prints `expected`, for at most `seconds`.
pub(crate) async fn eventually(
    server: &PostgresServer,
    db: &str,
    sql: &str,
    expected: &str,
    seconds: u64,
) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        let found = server.psql(db, sql);
        if found == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{sql}: still {found:?}, not {expected:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn without_call_time_and_duration(records: &[Value]) -> Vec<Value> {
    records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            let map = r.as_object_mut().unwrap();
            for (key, value) in map.iter_mut() {
                if matches!(key.as_str(), "call" | "time" | "duration_ms") {
                    *value = json!(value.is_number() || value.is_string());
                }
            }
            r
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_leaves_intent_and_outcome_rows_and_recent_reads_them_as_json_lines_does() {
    let server = PostgresServer::start();
    let url = server.create_database("audited");
    let postgres = connect(&url).await;
    let audit = PostgresAudit::start(&postgres, AuditOptions::default())
        .await
        .unwrap();
    let instance = audit.instance();
    assert_eq!(instance.len(), 32, "{instance}");
    let dir = TempDir::new("pg-audit-shape");
    let in_postgres = audited(audit);
    let in_file = audited(JsonLinesAudit::open(dir.join("audit.jsonl")).unwrap());
    for registry in [&in_postgres, &in_file] {
        let caller = || Caller::new(Source::Http).principal("ann").request_id("r-7");
        assert!(
            registry
                .call("bump", json!({"key": "a"}), caller())
                .await
                .is_ok()
        );
        let refused = registry.call("bump", json!({"key": 5}), caller()).await;
        assert_eq!(
            refused.error().unwrap().kind(),
            &ErrorKind::INVALID_ARGUMENTS
        );
        assert!(
            registry
                .call("bump", json!({"key": "b"}), caller())
                .await
                .is_ok()
        );
    }
    assert_eq!(
        server.psql(
            "audited",
            &format!(
                "SELECT event, tool, coalesce(outcome, '-'), instance = '{instance}', \
                 principal, request_id, source, arguments::text, recorded_at <= now() \
                 FROM tool_audit_records ORDER BY seq"
            )
        ),
        "intent|bump|-|t|ann|r-7|http|{\"key\": \"a\"}|t\n\
         outcome|bump|ok|t|ann|r-7|http|{\"key\": \"a\"}|t\n\
         outcome|bump|invalid_arguments|t|ann|r-7|http|{\"key\": 5}|t\n\
         intent|bump|-|t|ann|r-7|http|{\"key\": \"b\"}|t\n\
         outcome|bump|ok|t|ann|r-7|http|{\"key\": \"b\"}|t"
    );
    // An intent and its outcome share their call id.
    assert_eq!(
        server.psql(
            "audited",
            "SELECT count(DISTINCT call) FROM tool_audit_records"
        ),
        "3"
    );
    let from_postgres = in_postgres.recent_calls(10, None).await.unwrap().unwrap();
    let from_file = in_file.recent_calls(10, None).await.unwrap().unwrap();
    assert_eq!(from_postgres.len(), 3);
    assert_eq!(from_postgres[0]["arguments"], json!({"key": "b"}));
    assert_eq!(
        without_call_time_and_duration(&from_postgres),
        without_call_time_and_duration(&from_file)
    );
    // The same keys in the same order as the JSON lines.
    let keys = |r: &Value| r.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&from_postgres[1]), keys(&from_file[1]));
    let one = in_postgres
        .recent_calls(1, Some("bump"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(one, from_postgres[..1]);
    assert!(
        in_postgres
            .recent_calls(5, Some("other"))
            .await
            .unwrap()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_intent_cannot_be_written_is_refused_and_never_runs() {
    let mut server = PostgresServer::start();
    let postgres =
        Postgres::connect(PostgresOptions::new(server.url()).pool_wait(Duration::from_millis(300)))
            .await
            .unwrap();
    let registry = audited(PostgresAudit::start(&postgres, still()).await.unwrap());
    let caller = || Caller::new(Source::Cli);
    let runs = || PROBES.load(std::sync::atomic::Ordering::SeqCst);
    assert!(registry.call("probe", json!({}), caller()).await.is_ok());
    assert_eq!(runs(), 1);

    server.stop();
    let refused = registry.call("probe", json!({}), caller()).await;
    let error = refused.error().expect("refused");
    // Which store failed; where it is, and why, are for the log.
    assert_unavailable_saying(
        error,
        &server,
        "the call was not run: its audit record could not be written (PostgreSQL is unavailable)",
    );
    assert_eq!(runs(), 1, "the tool did not run");

    server.start_again();
    let again = registry.call("probe", json!({}), caller()).await;
    assert!(again.is_ok(), "{:?}", again.error());
    assert_eq!(runs(), 2);
    assert_eq!(
        server.psql(
            "postgres",
            "SELECT event, coalesce(outcome, '-') FROM tool_audit_records ORDER BY seq"
        ),
        "intent|-\noutcome|ok\nintent|-\noutcome|ok"
    );
}

/// An outcome that cannot be written while PostgreSQL is away (the call ran and was answered)
/// is kept and written once it is back, once; its intent is never left without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outcome_written_during_an_outage_is_kept_and_written_when_postgres_is_back() {
    let mut server = PostgresServer::start();
    let postgres =
        Postgres::connect(PostgresOptions::new(server.url()).pool_wait(Duration::from_millis(300)))
            .await
            .unwrap();
    let options = AuditOptions::default()
        .lease(Duration::from_secs(60))
        .renew(Duration::from_millis(200));
    let sink = PostgresAudit::start(&postgres, options).await.unwrap();
    let arguments = json!({"key": "k"});
    sink.record(&record(AuditEvent::Intent, "c-kept", &arguments))
        .await
        .unwrap();

    server.stop();
    // Kept: the caller is not told the outcome was lost.
    sink.record(&record(AuditEvent::Outcome, "c-kept", &arguments))
        .await
        .unwrap();
    // An intent is not kept: a call whose intent cannot be written is refused.
    assert!(
        sink.record(&record(AuditEvent::Intent, "c-refused", &arguments))
            .await
            .is_err()
    );

    server.start_again();
    let rows = "SELECT call, event, coalesce(outcome, '-') FROM tool_audit_records ORDER BY seq";
    eventually(
        &server,
        "postgres",
        rows,
        "c-kept|intent|-\nc-kept|outcome|ok",
        20,
    )
    .await;
    // Written once: later renewals find nothing left to write.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        server.psql("postgres", rows),
        "c-kept|intent|-\nc-kept|outcome|ok"
    );
    // An outcome PostgreSQL refuses (jsonb holds no NUL) is not kept: it would be refused
    // forever and hold back the others; it is the caller's error, to be logged.
    let refused = json!({"key": "a\u{0}b"});
    assert!(
        sink.record(&record(AuditEvent::Outcome, "c-nul", &refused))
            .await
            .is_err()
    );
    drop(sink);
}

/// Starts a sink in a runtime of its own, writes `intents` (and the outcome of `finished`, and
/// a dry run's intent) as it, then ends that runtime at once: its lease is no longer renewed
/// and it never ends cleanly, as when its process is killed. Returns its instance id.
async fn killed_instance(url: &str, intents: &[&'static str], finished: &'static str) -> String {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let url = url.to_owned();
    let intents: Vec<&'static str> = intents.to_vec();
    let sink = runtime
        .spawn(async move {
            let postgres = connect(&url).await;
            let options = AuditOptions::default()
                .lease(Duration::from_secs(1))
                .renew(Duration::from_millis(300));
            let sink = PostgresAudit::start(&postgres, options).await.unwrap();
            let arguments = json!({"key": "k"});
            for call in intents.iter().chain([&finished]) {
                sink.record(&record(AuditEvent::Intent, call, &arguments))
                    .await
                    .unwrap();
            }
            sink.record(&record(AuditEvent::Outcome, finished, &arguments))
                .await
                .unwrap();
            let mut dry = record(AuditEvent::Intent, "dry-run-call", &arguments);
            dry.dry_run = true;
            sink.record(&dry).await.unwrap();
            sink
        })
        .await
        .unwrap();
    let instance = sink.instance();
    runtime.shutdown_background();
    // Its task is gone with its runtime; dropping the handle must not look like a clean end.
    std::mem::forget(sink);
    instance
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_that_ended_has_its_open_intents_reported_unknown_once_among_racing_replicas() {
    let server = PostgresServer::start();
    let url = server.create_database("recovering");
    let replicas = [
        PostgresAudit::start(&connect(&url).await, still())
            .await
            .unwrap(),
        PostgresAudit::start(&connect(&url).await, still())
            .await
            .unwrap(),
        PostgresAudit::start(&connect(&url).await, still())
            .await
            .unwrap(),
    ];
    // A live replica's call in flight.
    let arguments = json!({"key": "k"});
    replicas[0]
        .record(&record(AuditEvent::Intent, "live-call", &arguments))
        .await
        .unwrap();
    let dead = killed_instance(&url, &["lost-1", "lost-2"], "finished").await;

    // Before its lease has run out, nothing is reported.
    assert_eq!(replicas[1].recover().await.unwrap(), []);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (a, b, c) = tokio::join!(
        replicas[0].recover(),
        replicas[1].recover(),
        replicas[2].recover()
    );
    let mut found: Vec<UnknownOutcome> = [a.unwrap(), b.unwrap(), c.unwrap()].concat();
    found.sort_by(|x, y| x.call.cmp(&y.call));
    let calls: Vec<&str> = found.iter().map(|u| u.call.as_str()).collect();
    assert_eq!(calls, ["lost-1", "lost-2"], "each reported once: {found:?}");
    assert_eq!(found[0].tool, "bump");
    assert_eq!(found[0].request_id, "r-1");
    assert!((found[0].time - 1.7e9).abs() < 1e-3, "the intent's time");
    for replica in &replicas {
        assert_eq!(replica.recover().await.unwrap(), []);
    }
    assert_eq!(
        server.psql(
            "recovering",
            "SELECT call, outcome FROM tool_audit_records WHERE event = 'outcome' ORDER BY call, outcome"
        ),
        "finished|ok\nlost-1|unknown\nlost-2|unknown"
    );
    assert_eq!(
        server.psql(
            "recovering",
            &format!(
                "SELECT resolved_at IS NOT NULL FROM tool_audit_instances WHERE id = '{dead}'"
            )
        ),
        "t"
    );
    assert_eq!(
        server.psql(
            "recovering",
            "SELECT count(*) FROM tool_audit_instances WHERE resolved_at IS NULL"
        ),
        "3",
        "the live replicas are untouched"
    );
    // The shape `recent` shows, as the JSON lines' own recovery writes it.
    let registry = audited(replicas[2].clone());
    let recent = registry.recent_calls(1, None).await.unwrap().unwrap();
    assert_eq!(recent[0]["outcome"], "unknown");
    assert_eq!(recent[0]["event"], "outcome");
    assert!(recent[0].get("duration_ms").is_none(), "{}", recent[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_taken_over_is_replaced_by_a_new_instance_and_a_late_outcome_is_kept() {
    let server = PostgresServer::start();
    let url = server.create_database("takeover");
    let slow = PostgresAudit::start(&connect(&url).await, still())
        .await
        .unwrap();
    // The other replica's timer recovers by itself, every 200 ms.
    let watcher = PostgresAudit::start(
        &connect(&url).await,
        AuditOptions::default()
            .lease(Duration::from_secs(120))
            .renew(Duration::from_millis(200)),
    )
    .await
    .unwrap();
    let arguments = json!({"key": "k"});
    slow.record(&record(AuditEvent::Intent, "late", &arguments))
        .await
        .unwrap();
    let first = slow.instance();
    // As if `slow` had stalled past its lease.
    server.psql(
        "takeover",
        &format!(
            "UPDATE tool_audit_instances SET lease_until = now() - interval '1 second' \
             WHERE id = '{first}'"
        ),
    );
    eventually(
        &server,
        "takeover",
        "SELECT outcome FROM tool_audit_records WHERE call = 'late' AND event = 'outcome'",
        "unknown",
        5,
    )
    .await;
    // Its outcome comes late: stored beside the `unknown`.
    slow.record(&record(AuditEvent::Outcome, "late", &arguments))
        .await
        .unwrap();
    // Its next intent finds the instance resolved, and is written as a new one.
    slow.record(&record(AuditEvent::Intent, "next", &arguments))
        .await
        .unwrap();
    let second = slow.instance();
    assert_ne!(first, second);
    assert_eq!(
        server.psql(
            "takeover",
            &format!(
                "SELECT call, event, coalesce(outcome, '-'), \
                 CASE instance WHEN '{first}' THEN 'first' WHEN '{second}' THEN 'second' END \
                 FROM tool_audit_records ORDER BY seq"
            )
        ),
        "late|intent|-|first\nlate|outcome|unknown|first\nlate|outcome|ok|first\nnext|intent|-|second"
    );
    assert_eq!(
        server.psql(
            "takeover",
            &format!(
                "SELECT id = '{first}', resolved_at IS NOT NULL FROM tool_audit_instances \
                 WHERE id <> '{}' ORDER BY started_at",
                watcher.instance()
            )
        ),
        "t|t\nf|f"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_stalled_past_its_lease_writes_its_next_intent_as_a_new_instance() {
    let server = PostgresServer::start();
    let url = server.create_database("stalled");
    let slow = PostgresAudit::start(&connect(&url).await, still())
        .await
        .unwrap();
    let arguments = json!({"key": "k"});
    slow.record(&record(AuditEvent::Intent, "before", &arguments))
        .await
        .unwrap();
    let first = slow.instance();
    // As if `slow` had been paused past its lease, and no replica had recovered it yet.
    server.psql(
        "stalled",
        &format!(
            "UPDATE tool_audit_instances SET lease_until = now() - interval '1 second' \
             WHERE id = '{first}'"
        ),
    );
    // Its next call's intent is not written under the expired lease, but as a new instance.
    slow.record(&record(AuditEvent::Intent, "after", &arguments))
        .await
        .unwrap();
    let second = slow.instance();
    assert_ne!(first, second);
    // So a recovery reports the call in flight at the pause, and not the one that came after.
    // Which recovery comes first is not fixed: another replica's (its first, at start, or this
    // one), or this process's own background pass, which may run once `first` is no longer its
    // instance, between the new instance and its first intent. Hence by call, not by `seq`.
    let other = PostgresAudit::start(&connect(&url).await, still())
        .await
        .unwrap();
    other.recover().await.unwrap();
    assert_eq!(
        server.psql(
            "stalled",
            &format!(
                "SELECT call, event, coalesce(outcome, '-'), \
                 CASE instance WHEN '{first}' THEN 'first' WHEN '{second}' THEN 'second' END \
                 FROM tool_audit_records ORDER BY call, seq"
            )
        ),
        "after|intent|-|second\nbefore|intent|-|first\nbefore|outcome|unknown|first"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_clone_reports_its_own_open_intents_and_resolves_the_instance() {
    let server = PostgresServer::start();
    let sink = PostgresAudit::start(&connect(&server.url()).await, still())
        .await
        .unwrap();
    let arguments = json!({});
    let clone = sink.clone();
    sink.record(&record(AuditEvent::Intent, "open", &arguments))
        .await
        .unwrap();
    let id = sink.instance();
    drop(sink);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        server.psql(
            "postgres",
            "SELECT count(*) FROM tool_audit_records WHERE event = 'outcome'"
        ),
        "0",
        "a clone is still alive"
    );
    drop(clone);
    eventually(
        &server,
        "postgres",
        &format!(
            "SELECT r.outcome, i.resolved_at IS NOT NULL FROM tool_audit_records r \
             JOIN tool_audit_instances i ON i.id = r.instance \
             WHERE r.event = 'outcome' AND i.id = '{id}'"
        ),
        "unknown|t",
        5,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_deletes_old_records_and_resolved_instances_at_most_once_an_hour() {
    let server = PostgresServer::start();
    let url = server.create_database("retained");
    let writer = PostgresAudit::start(&connect(&url).await, still())
        .await
        .unwrap();
    let arguments = json!({});
    for call in ["old", "new"] {
        for event in [AuditEvent::Intent, AuditEvent::Outcome] {
            writer
                .record(&record(event, call, &arguments))
                .await
                .unwrap();
        }
    }
    server.psql(
        "retained",
        "UPDATE tool_audit_records SET recorded_at = now() - interval '31 days' WHERE call = 'old';
         INSERT INTO tool_audit_instances (id, lease_until, resolved_at)
         VALUES ('gone', now() - interval '40 days', now() - interval '40 days'),
                ('recent', now() - interval '1 day', now() - interval '1 day')",
    );
    let _keeper = PostgresAudit::start(
        &connect(&url).await,
        AuditOptions::default()
            .lease(Duration::from_secs(120))
            .renew(Duration::from_millis(100))
            .retention(30),
    )
    .await
    .unwrap();
    eventually(
        &server,
        "retained",
        "SELECT call, event FROM tool_audit_records ORDER BY seq",
        "new|intent\nnew|outcome",
        5,
    )
    .await;
    assert_eq!(
        server.psql(
            "retained",
            "SELECT count(*) FROM tool_audit_instances WHERE id IN ('gone', 'recent')"
        ),
        "1"
    );
    // Not again within the hour, however often the timer runs.
    server.psql(
        "retained",
        "UPDATE tool_audit_records SET recorded_at = now() - interval '31 days'",
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        server.psql("retained", "SELECT count(*) FROM tool_audit_records"),
        "2"
    );
}

/// The certificates of one TLS test, made for it: a CA and the file of its certificate, and
/// another CA's file, in the test's own directory.
struct Certificates {
    ca: TestCa,
    ca_file: String,
    other_ca_file: String,
    dir: TempDir,
}

fn certificates(test: &str) -> Certificates {
    let dir = TempDir::new(test);
    let ca = TestCa::new("tool-tests CA");
    let ca_file = ca.write(dir.join("ca.pem")).display().to_string();
    let other_ca_file = TestCa::new("another CA")
        .write(dir.join("other-ca.pem"))
        .display()
        .to_string();
    Certificates {
        ca,
        ca_file,
        other_ca_file,
        dir,
    }
}

/// Connected to `url` with `query` (`sslmode=...&sslrootcert=...`); whether the connection
/// is TLS, as the server sees it.
async fn tls_in_use(url: &str, query: &str) -> Result<bool, ToolError> {
    let postgres = Postgres::connect(PostgresOptions::new(format!("{url}?{query}"))).await?;
    let client = postgres.client().await?;
    let row = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .map_err(|e| postgres.error(e))?;
    Ok(row.get(0))
}

/// The error of connecting to `url` with `query`: unavailable at start, naming PostgreSQL and
/// where it is (as every failure at start does), with why; never the password.
async fn refused(server: &PostgresServer, url: &str, query: &str) -> String {
    let error = tls_in_use(url, query).await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::UNAVAILABLE, "{query}");
    let message = error.message().to_owned();
    assert!(
        message.starts_with(&format!(
            "cannot connect to PostgreSQL at postgres@localhost:{}/postgres: ",
            server.port()
        )),
        "{query}: {message}"
    );
    assert!(!message.contains(server.password()), "{message}");
    message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_full_with_sslrootcert_connects_over_tls_and_the_audit_works() {
    let pki = certificates("pg-tls-ok");
    let server = PostgresServer::with_tls(&pki.ca.server(&["localhost", "127.0.0.1"]));
    let root = format!("sslrootcert={}", pki.ca_file);
    for host in ["localhost", "127.0.0.1"] {
        let url = server.url_at(host, "postgres");
        for mode in ["verify-full", "verify-ca", "require", "prefer"] {
            let query = format!("sslmode={mode}&{root}");
            assert!(tls_in_use(&url, &query).await.unwrap(), "{host} {mode}");
        }
    }
    let _ = server.create_database("tls_audited");
    let url = format!(
        "{}?application_name=tls-test&sslmode=verify-full&{root}",
        server.url_at("localhost", "tls_audited")
    );
    let options = PostgresOptions::new(&url);
    assert_eq!(
        options.location().unwrap(),
        format!("postgres@localhost:{}/tls_audited", server.port())
    );
    assert!(!format!("{options:?}").contains(server.password()));
    let postgres = Postgres::connect(options).await.unwrap();
    let registry = audited(
        PostgresAudit::start(&postgres, AuditOptions::default())
            .await
            .unwrap(),
    );
    let caller = Caller::new(Source::Http)
        .principal("ann")
        .request_id("r-tls");
    assert!(
        registry
            .call("bump", json!({"key": "over-tls"}), caller)
            .await
            .is_ok()
    );
    assert_eq!(
        server.psql(
            "tls_audited",
            "SELECT event, coalesce(outcome, '-'), arguments::text FROM tool_audit_records \
             ORDER BY seq"
        ),
        "intent|-|{\"key\": \"over-tls\"}\noutcome|ok|{\"key\": \"over-tls\"}"
    );
    // The pool's connections are TLS, under the name the URL gave.
    assert_eq!(
        server.psql(
            "postgres",
            "SELECT bool_and(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.application_name = 'tls-test'"
        ),
        "t"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_of_another_ca_is_refused_by_every_verifying_mode() {
    let pki = certificates("pg-tls-other-ca");
    let server = PostgresServer::with_tls(&pki.ca.server(&["localhost", "127.0.0.1"]));
    let url = server.url_at("localhost", "postgres");
    for mode in ["verify-ca", "verify-full", "require", "prefer"] {
        let message = refused(
            &server,
            &url,
            &format!("sslmode={mode}&sslrootcert={}", pki.other_ca_file),
        )
        .await;
        assert!(message.contains("UnknownIssuer"), "{mode}: {message}");
        // Nor do the system's roots know the test's CA.
        let message = refused(&server, &url, &format!("sslmode={mode}")).await;
        assert!(message.contains("UnknownIssuer"), "{mode}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_for_another_host_passes_verify_ca_and_nothing_stricter() {
    let pki = certificates("pg-tls-misnamed");
    let server = PostgresServer::with_tls(&pki.ca.server(&["other.example"]));
    let url = server.url_at("localhost", "postgres");
    let root = format!("sslrootcert={}", pki.ca_file);
    assert!(
        tls_in_use(&url, &format!("sslmode=verify-ca&{root}"))
            .await
            .unwrap()
    );
    for mode in ["verify-full", "require", "prefer"] {
        let message = refused(&server, &url, &format!("sslmode={mode}&{root}")).await;
        assert!(
            message.contains("not valid for name") && message.contains("localhost"),
            "{mode}: {message}"
        );
    }
    // verify-ca still checks the chain: the other CA's roots refuse it.
    let message = refused(
        &server,
        &url,
        &format!("sslmode=verify-ca&sslrootcert={}", pki.other_ca_file),
    )
    .await;
    assert!(message.contains("UnknownIssuer"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_refused_once_serving_is_unavailable_then_back_on_the_same_handle() {
    let pki = certificates("pg-tls-later");
    let mut server = PostgresServer::with_tls(&pki.ca.server(&["localhost"]));
    let url = format!(
        "{}?sslmode=verify-full&sslrootcert={}",
        server.url_at("localhost", "postgres"),
        pki.ca_file
    );
    let postgres =
        Postgres::connect(PostgresOptions::new(url).pool_wait(Duration::from_millis(500)))
            .await
            .unwrap();
    postgres.ping().await.unwrap();
    // Back with a certificate of a CA the client does not trust: every connection it opens is
    // refused, which callers see as an outage (why, with where, goes to the log).
    server.restart_with_tls(&TestCa::new("a stranger").server(&["localhost"]));
    for _ in 0..3 {
        let error = postgres.ping().await.unwrap_err();
        assert_unavailable_naming(&error, &server);
        assert!(!format!("{error:?}").contains("localhost"), "{error:?}");
    }
    // Its own CA's certificate again: served again on the same handle.
    server.restart_with_tls(&pki.ca.server(&["localhost"]));
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Err(e) = postgres.ping().await {
        assert!(Instant::now() < deadline, "still failing: {e:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslmode_disable_connects_in_plain_to_a_server_offering_tls() {
    let pki = certificates("pg-tls-disable");
    let server = PostgresServer::with_tls(&pki.ca.server(&["localhost"]));
    let url = server.url_at("localhost", "postgres");
    assert!(!tls_in_use(&url, "sslmode=disable").await.unwrap());
    // Without TLS, sslrootcert is not read (as libpq ignores it).
    let missing = pki.dir.join("missing.pem");
    let query = format!("sslmode=disable&sslrootcert={}", missing.display());
    assert!(!tls_in_use(&url, &query).await.unwrap());
}

#[tokio::test]
async fn an_unusable_sslrootcert_or_sslmode_fails_at_start_naming_it_and_not_the_password() {
    let pki = certificates("pg-tls-bad-root");
    let missing = pki.dir.join("missing.pem");
    let empty = pki.dir.join("empty.pem");
    std::fs::write(&empty, "no certificate here\n").unwrap();
    let key_only = pki.dir.join("key.pem");
    std::fs::write(&key_only, pki.ca.server(&["localhost"]).key).unwrap();
    let url = "postgres://app:pw-secret-2@localhost:1/db";
    for (path, why) in [
        (&missing, "cannot read it"),
        (&empty, "holds no PEM certificate"),
        (&key_only, "holds no PEM certificate"),
    ] {
        for mode in ["verify-full", "verify-ca", "require", "prefer"] {
            let options = PostgresOptions::new(format!(
                "{url}?sslmode={mode}&sslrootcert={}",
                path.display()
            ));
            let error = Postgres::connect(options).await.unwrap_err();
            let message = error.message();
            assert!(
                message.starts_with(&format!(
                    "the PostgreSQL URL's sslrootcert ({}): {why}",
                    path.display()
                )),
                "{mode}: {message}"
            );
            assert!(!message.contains("pw-secret-2"), "{message}");
        }
    }
    for mode in ["allow", "verify_full", ""] {
        let error = PostgresOptions::new(format!("{url}?sslmode={mode}"))
            .location()
            .unwrap_err();
        let message = error.message();
        assert!(
            message.contains(&format!("sslmode={mode} is not one of"))
                && message.contains("verify-full"),
            "{message}"
        );
        assert!(!message.contains("pw-secret-2"), "{message}");
    }
}
