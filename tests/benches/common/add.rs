//! The small tool the HTTP benchmarks serve two ways: through the framework and through a
//! hand-written axum handler that deserializes the same struct and calls the same fn.
//!
//! Shared as a `#[path]` module by `benches/http.rs`, `benches/http_inprocess.rs`,
//! `examples/http_instructions.rs` and `tests/http_log.rs`: each binary compiles its own copy,
//! so the tool never reaches the inventory of the other test binaries that link `tool_test_support`.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::routing::post;
use serde::Deserialize;
use serde_json::json;
use tool_runtime::{Registry, ToolError};

/// Add two integers; a sum past 64 bits is the tool's `overflow` error.
#[tool_runtime::tool(annotations(read_only))]
pub async fn add(
    /// First term
    a: i64,
    /// Second term
    b: i64,
) -> Result<i64, ToolError> {
    a.checked_add(b)
        .ok_or_else(|| ToolError::new("overflow", format!("{a} + {b} does not fit in 64 bits")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddArgs {
    pub a: i64,
    pub b: i64,
}

/// The single-threaded runtime the in-process measurements run on.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A registry with `add` alone, its validator compiled.
pub fn registry() -> Arc<Registry> {
    let registry = Registry::builder()
        .without_inventory()
        .tool(add::descriptor())
        .build()
        .unwrap();
    registry.warm_up().unwrap();
    Arc::new(registry)
}

/// `POST /tools/add` written by hand: `Json<AddArgs>` in, the same fn, a JSON object out.
pub fn hand_written() -> axum::Router {
    axum::Router::new().route(
        "/tools/add",
        post(|Json(args): Json<AddArgs>| async move {
            Json(match add(args.a, args.b).await {
                Ok(sum) => json!({"tool": "add", "status": "ok", "result": sum}),
                Err(e) => json!({"tool": "add", "status": "error", "error": e}),
            })
        }),
    )
}

/// The three paths the in-process measurements compare, by name: the full router, `tool_route`
/// alone, and the hand-written handler.
pub fn apps(registry: &Arc<Registry>) -> [(&'static str, axum::Router); 3] {
    use tool_runtime::http::{self, ServerOptions};
    [
        (
            "router (middleware + pipeline + envelope)",
            http::router(registry.clone(), ServerOptions::default()),
        ),
        (
            "tool_route (pipeline + envelope)",
            axum::Router::new().route("/tools/add", http::tool_route(registry.clone(), "add")),
        ),
        ("hand-written axum handler", hand_written()),
    ]
}

/// The request every in-process path handles.
pub fn request() -> axum::http::Request<Body> {
    axum::http::Request::post("/tools/add")
        .header("content-type", "application/json")
        .body(Body::from(r#"{"a": 20, "b": 22}"#))
        .unwrap()
}
