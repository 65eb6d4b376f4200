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

criterion_group!(
    benches,
    call_overhead,
    registry_construction,
    cli_construction
);
criterion_main!(benches);
