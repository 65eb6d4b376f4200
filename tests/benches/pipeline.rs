//! `cargo bench -p tool-tests --bench pipeline`
//!
//! 1. The pipeline's overhead for a two-integer tool, against calling the fn directly with
//!    `serde_json::from_value` + `to_value`, side by side in one run.
//! 2. Building a registry of 1,000 `#[tool]` fns found through `inventory`.
//!
//! Results and the machine they came from are recorded in BENCHMARKS.md.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde::Deserialize;
use serde_json::json;
use tool_runtime::{Caller, Registry, Source};

#[allow(clippy::identity_op)] // Reason: the generated `a + 0`.
mod thousand {
    include!(concat!(env!("OUT_DIR"), "/thousand_tools.rs"));
}

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

/// A guard that lets everything through, to measure the cost of running one.
#[allow(clippy::unnecessary_wraps)] // Reason: every guard has the same signature.
fn pass(_call: &mut tool_runtime::PendingCall) -> Result<(), tool_runtime::ToolError> {
    Ok(())
}

/// Add two integers, with every layer of the pipeline engaged.
#[tool_runtime::tool(
    annotations(read_only),
    guard = pass,
    rate = "1000000/s",
    concurrency = 64,
    roles("bench")
)]
async fn add_guarded(
    /// First term
    a: i64,
    /// Second term
    b: i64,
) -> i64 {
    a + b
}

#[derive(Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn call_overhead(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = Registry::builder().build().unwrap();
    registry.warm_up().unwrap();
    let args = json!({"a": 20, "b": 22});

    let mut group = c.benchmark_group("two_integer_tool");
    group.bench_function("direct: from_value + fn + to_value", |b| {
        b.to_async(&rt).iter(|| async {
            let parsed: AddArgs = serde_json::from_value(black_box(args.clone())).unwrap();
            let out = add(parsed.a, parsed.b).await;
            black_box(serde_json::to_value(out).unwrap())
        });
    });
    group.bench_function("pipeline: Registry::call", |b| {
        b.to_async(&rt).iter(|| async {
            let env = registry
                .call(
                    "add",
                    black_box(args.clone()),
                    Caller::new(Source::Internal),
                )
                .await;
            debug_assert!(env.is_ok());
            black_box(env)
        });
    });
    group.finish();
}

fn registry_construction(c: &mut Criterion) {
    let count = Registry::builder().build().unwrap().tools().len();
    assert!(
        count >= 1000,
        "expected the 1,000 generated tools, found {count}"
    );
    let _ = thousand::generated_0000::NAME;
    c.bench_function("registry: build with 1,000 tools", |b| {
        b.iter(|| black_box(Registry::builder().build().unwrap()));
    });
}

fn cli_construction(c: &mut Criterion) {
    let registry = Registry::builder().build().unwrap();
    let mut group = c.benchmark_group("cli: command tree with 1,000 tools");
    group.bench_function("lazy (flags for the invoked tool only)", |b| {
        b.iter(|| {
            black_box(tool_runtime::cli::command(
                "bench",
                &registry,
                Some("generated-0500"),
            ))
        });
    });
    group.bench_function("lazy, then parse `generated-0500 --a 5`", |b| {
        b.iter(|| {
            let cmd = tool_runtime::cli::command("bench", &registry, Some("generated-0500"));
            black_box(
                cmd.try_get_matches_from(["bench", "generated-0500", "--a", "5"])
                    .unwrap(),
            )
        });
    });
    group.bench_function("eager (every tool's flags, as completions need)", |b| {
        b.iter(|| black_box(tool_runtime::cli::command("bench", &registry, None)));
    });
    group.finish();
}

fn layers_overhead(c: &mut Criterion) {
    use tool_runtime::policy::{AllowTools, DenyDestructive, RequireRoles};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let args = json!({"a": 20, "b": 22});
    let caller = || {
        Caller::new(Source::Http)
            .principal("bench")
            .roles(["bench"])
    };
    let layered = || {
        Registry::builder()
            .without_inventory()
            .tool(add::descriptor())
            .tool(add_guarded::descriptor())
            .policy(DenyDestructive::for_sources([Source::Agent]))
            .policy(AllowTools::new().allow(Source::Mcp, ["add"]))
            .policy(RequireRoles)
    };
    let bare = Registry::builder()
        .without_inventory()
        .tool(add::descriptor())
        .build()
        .unwrap();
    let layers = layered().build().unwrap();
    let audit_path = std::env::temp_dir().join(format!("bench-audit-{}.jsonl", std::process::id()));
    let audited = layered()
        .audit(tool_runtime::audit::JsonLinesAudit::open(&audit_path).unwrap())
        .build()
        .unwrap();
    for r in [&bare, &layers, &audited] {
        r.warm_up().unwrap();
    }
    let mut group = c.benchmark_group("layers");
    group.bench_function("bare pipeline (no policy, guard, limit, audit)", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(bare.call("add", black_box(args.clone()), caller()).await)
        });
    });
    group.bench_function("policy + guard + rate + concurrency + roles", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(
                layers
                    .call("add_guarded", black_box(args.clone()), caller())
                    .await,
            )
        });
    });
    group.bench_function("... + audit to a JSON Lines file (read-only tool)", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(
                audited
                    .call("add_guarded", black_box(args.clone()), caller())
                    .await,
            )
        });
    });
    group.finish();
    let _ = std::fs::remove_file(&audit_path);
}

criterion_group!(
    benches,
    call_overhead,
    registry_construction,
    cli_construction,
    layers_overhead
);
criterion_main!(benches);
