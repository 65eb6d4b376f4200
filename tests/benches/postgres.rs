//! `cargo bench -p tool-tests --bench postgres` (needs PostgreSQL's programs, Debian package
//! `postgresql`)
//!
//! What the PostgreSQL audit costs a call: one call of a two-integer tool through the
//! pipeline with no audit, with the JSON-lines audit (a file in the system's temporary
//! directory) and with `PostgresAudit` (a cluster of the bench's own on loopback, its data on the
//! same disk, pooled connections: an intent and an outcome row, one round trip and one commit
//! each), side by side in one run. First for a read-only tool (the JSON lines written, not
//! synced; PostgreSQL with `fsync=off`), then for a tool that is not (each JSON line synced;
//! PostgreSQL with `fsync=on`, each commit flushed).
//!
//! Then what running a call as a task adds (`tasks`): the call, then the same call started as a
//! task and read until it has ended, its task kept in memory and in PostgreSQL.
//!
//! Results and the machine they came from are recorded in BENCHMARKS.md.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tool_runtime::layers::audit::JsonLinesAudit;
use tool_runtime::postgres::{AuditOptions, Postgres, PostgresAudit, PostgresOptions};
use tool_runtime::{Caller, Registry, Source};
use tool_test_support::TempDir;
use tool_test_support::postgres::PostgresServer;

/// Add two integers.
#[tool_runtime::tool(annotations(read_only))]
async fn add(
    /// First term
    a: i64,
    /// Second term
    b: i64,
) -> i64 {
    a + b
}

/// Add two integers, as a tool that is not read-only.
#[tool_runtime::tool]
async fn add_write(
    /// First term
    a: i64,
    /// Second term
    b: i64,
) -> i64 {
    a + b
}

fn registry() -> tool_runtime::registry::RegistryBuilder {
    Registry::builder()
        .without_inventory()
        .tool(add::descriptor())
        .tool(add_write::descriptor())
}

fn audit(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = PostgresServer::start();
    let dir = TempDir::new("bench-postgres-audit");
    let bare = registry().build().unwrap();
    let in_file = registry()
        .audit(JsonLinesAudit::open(dir.join("audit.jsonl")).unwrap())
        .build()
        .unwrap();
    let in_postgres = rt.block_on(async {
        let postgres = Postgres::connect(PostgresOptions::new(server.url()))
            .await
            .unwrap();
        let audit = PostgresAudit::start(&postgres, AuditOptions::default())
            .await
            .unwrap();
        registry().audit(audit).build().unwrap()
    });
    for r in [&bare, &in_file, &in_postgres] {
        r.warm_up().unwrap();
    }
    let args = json!({"a": 20, "b": 22});
    let caller = || Caller::new(Source::Http).principal("bench");
    let mut group = c.benchmark_group("postgres");
    for (name, registry, tool) in [
        ("no audit", &bare, "add"),
        (
            "JSON Lines audit, read-only tool (not synced)",
            &in_file,
            "add",
        ),
        (
            "PostgreSQL audit, read-only tool (fsync off)",
            &in_postgres,
            "add",
        ),
        (
            "JSON Lines audit, tool not read-only (synced)",
            &in_file,
            "add_write",
        ),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                black_box(registry.call(tool, black_box(args.clone()), caller()).await)
            });
        });
    }
    server.psql("postgres", "ALTER SYSTEM SET fsync = on");
    server.psql("postgres", "SELECT pg_reload_conf()");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while server.psql("postgres", "SHOW fsync") != "on" {
        assert!(std::time::Instant::now() < deadline, "fsync still off");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    group.bench_function("PostgreSQL audit, tool not read-only (fsync on)", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(
                in_postgres
                    .call("add_write", black_box(args.clone()), caller())
                    .await,
            )
        });
    });
    group.finish();
}

/// A call of the two-integer tool, then the same call as a task (started, then read until it
/// has ended) with tasks kept in memory and in PostgreSQL (`fsync=off`): a task's added cost.
fn tasks(c: &mut Criterion) {
    use std::sync::Arc;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = PostgresServer::start();
    let in_memory = Arc::new(registry().build().unwrap());
    let in_postgres = rt.block_on(async {
        let postgres = Postgres::connect(PostgresOptions::new(server.url()))
            .await
            .unwrap();
        let store = tool_runtime::postgres::PostgresTaskStore::start(&postgres)
            .await
            .unwrap();
        Arc::new(registry().task_store(store).build().unwrap())
    });
    let args = json!({"a": 20, "b": 22});
    let caller = || Caller::new(Source::Http).principal("bench");
    let mut group = c.benchmark_group("tasks");
    group.bench_function("call", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(
                in_memory
                    .call("add", black_box(args.clone()), caller())
                    .await,
            )
        });
    });
    for (name, registry) in [
        ("task in memory", &in_memory),
        ("task in PostgreSQL", &in_postgres),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let task = registry
                    .start_task("add", args.clone(), caller())
                    .await
                    .unwrap();
                loop {
                    let read = registry.tasks().get(&task.id, Some("bench")).await.unwrap();
                    if read.as_ref().is_some_and(|t| t.status.is_terminal()) {
                        break black_box(read);
                    }
                    tokio::task::yield_now().await;
                }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, audit, tasks);
criterion_main!(benches);
