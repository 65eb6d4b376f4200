//! `cargo bench -p tool-tests --bench pipeline`
//!
//! 1. The pipeline's overhead for a two-integer tool, against calling the fn directly with
//!    `serde_json::from_value` + `to_value`, side by side in one run.
//! 2. Building a registry of 1,000 `#[tool]` fns found through `inventory`.
//! 3. Lowering 1,000 tools for each LLM target (`tool_runtime::llm::specs`), each with a
//!    nested struct, an optional enum, bounds, a pattern and defaults; beside it, the same
//!    specs written as JSON text, and the cached path.
//! 4. The stores behind the seams: one rate charge through a `RateLimiter`, and one
//!    confirmation token put and taken through a `ConfirmationStore`, for the in-process
//!    engines (`benches/redis.rs` times the same beside Redis's).
//!
//! 5. Telemetry (`otel`, compiled into this bench): the process CPU time per call of the
//!    two-integer tool, every thread included, with telemetry off, then installed and exporting
//!    every span (sampled 100 %) over OTLP/HTTP to a sink on loopback that reads and drops the
//!    requests (its thread's CPU time left out), flushed every 512 calls (one export batch).
//!    Last: it installs the process-wide subscriber.
//!
//! Results and the machine they came from are recorded in BENCHMARKS.md.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde::Deserialize;
use serde_json::json;
use tool_runtime::{Caller, Registry, Source};

#[path = "common/seams.rs"]
mod seams;

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
fn pass(_call: &mut tool_runtime::tool::PendingCall) -> Result<(), tool_runtime::ToolError> {
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
            black_box(tool_runtime::app::cli::command(
                "bench",
                &registry,
                Some("generated-0500"),
            ))
        });
    });
    group.bench_function("lazy, then parse `generated-0500 --a 5`", |b| {
        b.iter(|| {
            let cmd = tool_runtime::app::cli::command("bench", &registry, Some("generated-0500"));
            black_box(
                cmd.try_get_matches_from(["bench", "generated-0500", "--a", "5"])
                    .unwrap(),
            )
        });
    });
    group.bench_function("eager (every tool's flags, as completions need)", |b| {
        b.iter(|| black_box(tool_runtime::app::cli::command("bench", &registry, None)));
    });
    group.finish();
}

fn layers_overhead(c: &mut Criterion) {
    use tool_runtime::layers::policy::{AllowTools, DenyDestructive, RequireRoles};
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
        .audit(tool_runtime::layers::audit::JsonLinesAudit::open(&audit_path).unwrap())
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

/// The engines behind the seams, one operation each.
fn seams(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("seams");
    let limiter = tool_runtime::layers::limits::MemoryRateLimiter::new();
    seams::bench_limiter(&mut group, &rt, "MemoryRateLimiter", &limiter);
    let store = tool_runtime::layers::confirm::MemoryConfirmationStore::new();
    seams::bench_store(&mut group, &rt, "MemoryConfirmationStore", &store);
    group.finish();
}

/// A tool with the schema of a typical real one, under a name of its own.
struct Typical(String);

impl tool_runtime::Tool for Typical {
    fn meta(&self) -> tool_runtime::tool::ToolMeta {
        tool_runtime::tool::ToolMeta::new(self.0.clone(), "Book a room for a meeting.")
    }
    fn input_schema(&self) -> serde_json::Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "room": {"type": "string", "description": "Room name", "minLength": 1, "maxLength": 64, "pattern": "^[a-z0-9-]+$"},
                "minutes": {"type": "integer", "format": "uint32", "minimum": 15, "maximum": 480, "default": 30, "description": "Length"},
                "priority": {"oneOf": [{"const": "low", "description": "Can move"}, {"const": "high", "description": "Cannot move"}]},
                "organiser": {"anyOf": [{"type": "object", "properties": {
                    "name": {"type": "string"},
                    "email": {"type": ["string", "null"], "format": "email"},
                    "tags": {"type": "array", "items": {"type": "string"}, "default": []}
                }, "required": ["name"], "additionalProperties": false}, {"type": "null"}]},
                "attendees": {"type": "array", "items": {"type": "string"}, "maxItems": 50}
            },
            "required": ["room", "priority"],
            "additionalProperties": false
        })
    }
    fn output_schema(&self) -> serde_json::Value {
        json!({"type": "boolean"})
    }
    fn call(
        &self,
        _: serde_json::Value,
        _: tool_runtime::CallContext,
    ) -> futures_util::future::BoxFuture<'_, Result<serde_json::Value, tool_runtime::ToolError>>
    {
        Box::pin(async { Ok(json!(true)) })
    }
}

fn llm_lowering(c: &mut Criterion) {
    use tool_runtime::llm::{self, Options, Target};
    let registry = (0..1000)
        .fold(Registry::builder().without_inventory(), |b, i| {
            b.tool(Typical(format!("book_room_{i:04}")))
        })
        .build()
        .unwrap();
    let tools = registry.tools();
    let options = Options::default();
    let mut group = c.benchmark_group("llm: lower 1,000 tools");
    for target in Target::ALL {
        group.bench_function(target.name(), |b| {
            b.iter(|| black_box(llm::specs(&tools, target, &options)));
        });
    }
    // The same specs written as JSON text, as every consumer does next (an HTTP body, a
    // provider request): what lowering straight to text would cost at least, beside building
    // the `Value` tree node by node.
    let canonical = llm::specs(&tools, Target::Canonical, &options).0;
    group.bench_function("json, the lowered specs written as text", |b| {
        b.iter(|| black_box(serde_json::to_vec(&canonical).unwrap()));
    });
    // What a server or an agent loop pays per request once the registry's lowering is cached:
    // the visible set and its key, then a shared result.
    let cache = llm::SpecCache::new();
    let caller = Caller::new(Source::Agent);
    group.bench_function("openai, from a SpecCache", |b| {
        b.iter(|| black_box(cache.specs(&registry, &caller, Target::OpenAiChat, &options)));
    });
    group.finish();
}

/// An OTLP endpoint that reads each request and answers 200, on a thread of its own; and the
/// CPU time that thread has used (as of its last request), which is the collector's and not
/// the application's.
fn otlp_sink() -> (String, Arc<AtomicU64>) {
    let (sent, address) = std::sync::mpsc::channel();
    let used = Arc::new(AtomicU64::new(0));
    let used_here = used.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            sent.send(listener.local_addr().unwrap()).unwrap();
            let app = axum::Router::new().fallback(move |body: axum::body::Bytes| {
                black_box(body.len());
                let ns = cpu_time::ThreadTime::now().as_duration().as_nanos();
                used_here.store(u64::try_from(ns).unwrap_or(u64::MAX), Ordering::Relaxed);
                async { "" }
            });
            axum::serve(listener, app).await.unwrap();
        });
    });
    (format!("http://{}", address.recv().unwrap()), used)
}

fn telemetry(c: &mut Criterion) {
    use tool_runtime::otel::{Telemetry, TelemetryOptions};
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    const BATCH: u64 = 512;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = Registry::builder().build().unwrap();
    registry.warm_up().unwrap();
    let args = json!({"a": 20, "b": 22});
    let (endpoint, sink_cpu) = otlp_sink();
    let sink_ns = || Duration::from_nanos(sink_cpu.load(Ordering::Relaxed));
    let calls = |iters: u64, flush: &dyn Fn()| {
        let (started, sink_before) = (cpu_time::ProcessTime::now(), sink_ns());
        for i in 0..iters {
            let env =
                rt.block_on(registry.call("add", args.clone(), Caller::new(Source::Internal)));
            black_box(env);
            if (i + 1) % BATCH == 0 {
                flush();
            }
        }
        flush();
        started
            .elapsed()
            .saturating_sub(sink_ns().saturating_sub(sink_before))
    };
    let mut group = c.benchmark_group("telemetry");
    group.bench_function("CPU per call: otel compiled, no exporter", |b| {
        b.iter_custom(|iters| calls(iters, &|| {}));
    });
    let options = TelemetryOptions::new().endpoint(endpoint);
    let installed = rt
        .block_on(async { Telemetry::install(&options, "bench") })
        .unwrap()
        .expect("installed");
    tracing_subscriber::registry()
        .with(installed.layer())
        .init();
    let flush = || rt.block_on(installed.flush(std::time::Duration::from_secs(10)));
    group.bench_function("CPU per call: exporting every span", |b| {
        b.iter_custom(|iters| calls(iters, &flush));
    });
    group.finish();
}

criterion_group!(
    benches,
    call_overhead,
    registry_construction,
    cli_construction,
    layers_overhead,
    llm_lowering,
    seams,
    telemetry
);
criterion_main!(benches);
