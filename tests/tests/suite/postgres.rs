//! The PostgreSQL engine (`tool_runtime::postgres`) against a cluster of each test's own:
//! connecting and pinging, errors that name the server and never the password, migrations
//! applied exactly once by processes starting at once, the server's statement time limit,
//! `sslmode`, and an outage that is `unavailable` until the server is back on the same handle.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_runtime::ErrorKind;
use tool_runtime::app;
use tool_runtime::http::ServerOptions;
use tool_runtime::postgres::{Postgres, PostgresOptions};
use tool_runtime::{Registry, tool};
use tool_test_support::postgres::PostgresServer;

fn location(server: &PostgresServer, database: &str) -> String {
    format!("postgres@127.0.0.1:{}/{database}", server.port())
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
    assert_eq!(slow.kind(), &ErrorKind::UNAVAILABLE);
    assert!(slow.message().contains("57014"), "{}", slow.message());
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
    let pool_wait = Duration::from_millis(500);
    let postgres = Postgres::connect(PostgresOptions::new(server.url()).pool_wait(pool_wait))
        .await
        .unwrap();
    postgres.ping().await.unwrap();

    server.stop();
    let started = Instant::now();
    let error = postgres.client().await.unwrap_err();
    assert!(
        started.elapsed() < pool_wait + Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(error.kind(), &ErrorKind::UNAVAILABLE, "{error:?}");
    assert_eq!(error.status(), 503);
    let message = error.message();
    assert!(
        message.contains(&format!("PostgreSQL at {}", location(&server, "postgres"))),
        "{message}"
    );
    assert!(!message.contains(server.password()), "{message}");
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
    let ready = reqwest::get(format!("{base}/readyz")).await.unwrap();
    assert_eq!(ready.status(), 200);
    server.stop();
    let down = reqwest::get(format!("{base}/readyz")).await.unwrap();
    assert_eq!(down.status(), 503);
    let body: Value = down.json().await.unwrap();
    let check = body["checks"]["postgres"].as_str().unwrap();
    assert!(check.starts_with("PostgreSQL at "), "{body}");
    server.start_again();
    let ready = reqwest::get(format!("{base}/readyz")).await.unwrap();
    assert_eq!(ready.status(), 200);
}
