//! What the fuzz targets share: a tool with a parameter of every kind the macro handles, the
//! registries and front ends that serve it, and one runtime per process to run them on.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::http::{Request, header};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_runtime::http::{self, ServerOptions};
use tool_runtime::registry::RegistryBuilder;
use tool_runtime::{Registry, tool};
use tower::ServiceExt;

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Color {
    Red,
    Green,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    Circle { r: f64 },
    Square(u32),
    Pair(u8, u8),
    Dot,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Point {
    x: i32,
    y: i32,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind")]
pub enum Tagged {
    A { n: u8 },
    B,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Either {
    N(i64),
    S(String),
}

/// Return every argument as decoded.
#[tool]
#[allow(clippy::too_many_arguments, clippy::many_single_char_names)]
pub async fn kinds(
    /// An integer
    i: i64,
    /// A small one
    #[arg(range(min = 1, max = 10))]
    u: u8,
    /// A float
    f: f64,
    /// A flag
    b: bool,
    /// A word
    #[arg(length(min = 1, max = 20), pattern = "^[a-z]+$")]
    s: String,
    /// A character
    c: Option<char>,
    /// Some text
    o: Option<String>,
    /// Numbers
    v: Vec<u32>,
    /// A colour
    color: Color,
    /// A shape
    shape: Shape,
    /// A point
    point: Option<Point>,
    /// Tagged
    t: Option<Tagged>,
    /// Either
    e: Option<Either>,
    /// A map
    map: Option<BTreeMap<String, i32>>,
    /// Anything
    any: Option<Value>,
    /// A pair
    pair: Option<(u8, String)>,
    /// A path
    path: Option<PathBuf>,
    /// A big one
    big: Option<u64>,
    /// A default
    #[arg(default = 7)]
    d: u16,
) -> Value {
    json!({
        "i": i, "u": u, "f": f, "b": b, "s": s, "c": c, "o": o, "v": v,
        "color": format!("{color:?}"), "shape": format!("{shape:?}"),
        "point": format!("{point:?}"), "t": format!("{t:?}"), "e": format!("{e:?}"),
        "map": map, "any": any, "pair": pair, "path": path, "big": big, "d": d,
    })
}

/// The registry of `kinds` alone.
#[must_use]
pub fn builder() -> RegistryBuilder {
    Registry::builder()
        .without_inventory()
        .tool(kinds::descriptor())
}

/// The one runtime of the process: built once, reused by every input.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

/// `POST /tools/kinds` on the HTTP front end taking the fast path, and on one whose (no-op)
/// policy makes it take the `Value` path, as every other caller does.
pub fn routers() -> &'static (axum::Router, axum::Router) {
    static ROUTERS: OnceLock<(axum::Router, axum::Router)> = OnceLock::new();
    ROUTERS.get_or_init(|| {
        let fast = builder().build().expect("a registry");
        let reference = builder()
            .policy(|_: &tool_runtime::tool::PendingCall| Ok::<(), String>(()))
            .build()
            .expect("a registry");
        let router = |r: Registry| http::router(Arc::new(r), ServerOptions::default());
        (router(fast), router(reference))
    })
}

/// The status and the envelope of `body` posted to `app`, without what differs between any
/// two calls (request id, duration).
pub async fn post(app: &axum::Router, body: &[u8]) -> (u16, Value) {
    let request = Request::post("/tools/kinds")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_vec()))
        .expect("a request");
    let response = app.clone().oneshot(request).await.expect("infallible");
    let status = response.status().as_u16();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body");
    let mut envelope: Value = serde_json::from_slice(&bytes).expect("every answer is JSON");
    if let Some(meta) = envelope.get_mut("meta").and_then(Value::as_object_mut) {
        meta.remove("request_id");
        meta.remove("duration_ms");
    }
    (status, envelope)
}
