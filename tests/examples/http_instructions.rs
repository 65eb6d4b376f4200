//! Per-request work of the HTTP front end, for instruction counts under callgrind (exact and
//! repeatable, where wall-clock runs on this shared machine are not): `tests/http_instructions.sh`
//! runs this with two request counts per path and prints the difference per request.
//!
//! `http_instructions <path> <requests>`, path: 0 the full router, 1 `tool_route`, 2 the
//! hand-written axum handler, 3 the pipeline alone (`Registry::call` and serialising the
//! envelope). The same requests as `benches/http_inprocess.rs`, through `oneshot` on one thread.
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::routing::post;
use serde::Deserialize;
use serde_json::json;
use tool_runtime::http::{self, HttpOptions};
use tool_runtime::{Caller, Registry, Source};
use tower::ServiceExt;

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
#[serde(deny_unknown_fields)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn request() -> axum::http::Request<Body> {
    axum::http::Request::post("/tools/add")
        .header("content-type", "application/json")
        .body(Body::from(r#"{"a": 20, "b": 22}"#))
        .unwrap()
}

fn main() {
    let which: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n: usize = std::env::args().nth(2).unwrap().parse().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(add::descriptor())
            .build()
            .unwrap(),
    );
    registry.warm_up().unwrap();
    let apps = [
        http::router(registry.clone(), HttpOptions::default()),
        axum::Router::new().route("/tools/add", http::tool_route(registry.clone(), "add")),
        axum::Router::new().route(
            "/tools/add",
            post(|Json(args): Json<AddArgs>| async move {
                Json(json!({"tool": "add", "status": "ok", "result": add(args.a, args.b).await}))
            }),
        ),
    ];
    rt.block_on(async {
        if which == 3 {
            for _ in 0..n {
                let e = registry
                    .call("add", json!({"a": 20, "b": 22}), Caller::new(Source::Http))
                    .await;
                std::hint::black_box(serde_json::to_vec(&e).unwrap());
            }
            return;
        }
        let app = apps[which].clone();
        for _ in 0..n {
            let r = app.clone().oneshot(request()).await.unwrap();
            std::hint::black_box(axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap());
        }
    });
}
