//! `cargo bench -p tool-tests --bench http_inprocess`
//!
//! The HTTP front end's cost per request without the network: the same request handled by the
//! full router (middleware, pipeline, envelope), by `http::tool_route`, and by a hand-written
//! axum handler, through `tower::ServiceExt::oneshot` on one thread. The loopback benchmark
//! (`--bench http`) measures throughput; this one says where the time goes.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tool_runtime::{Caller, Source};
use tower::ServiceExt;

#[path = "common/add.rs"]
mod add;

use add::request;

fn per_request(c: &mut Criterion) {
    let rt = add::runtime();
    let registry = add::registry();
    let apps = add::apps(&registry);
    let mut group = c.benchmark_group("http in-process: POST /tools/add");
    for (name, app) in apps {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| {
                let app = app.clone();
                async move {
                    let r = app.oneshot(request()).await.unwrap();
                    black_box(axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap())
                }
            });
        });
    }
    group.bench_function("pipeline alone: Registry::call + serialize", |b| {
        b.to_async(&rt).iter(|| async {
            let e = registry
                .call("add", json!({"a": 20, "b": 22}), Caller::new(Source::Http))
                .await;
            black_box(serde_json::to_vec(&e).unwrap())
        });
    });
    group.finish();
}

criterion_group!(benches, per_request);
criterion_main!(benches);
