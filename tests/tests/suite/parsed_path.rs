//! `POST /tools/{name}` parses its body into a borrowed tree, validates that and decodes the
//! arguments from it, without a `serde_json::Value` (the fast path). It must be
//! indistinguishable from the `Value` path every other caller takes: for a corpus of bodies
//! over many parameter types, the status, the envelope (result or error, every message) and the
//! arguments an observer sees must be the same from a registry that takes the fast path and
//! from one with a (no-op) policy, which always takes the `Value` path. And the fast path must
//! really be taken: a wrapper around each tool counts the calls that came through `Tool::call`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Request, header};
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_runtime::http::{self, ServerOptions};
use tool_runtime::layers::hooks::{CallObserver, CompletedCall};
use tool_runtime::layers::policy::{AllowTools, DenyDestructive};
use tool_runtime::registry::RegistryBuilder;
use tool_runtime::tool::Rate;
use tool_runtime::tool::ToolMeta;
use tool_runtime::{CallContext, Registry, Source, Tool, ToolError, tool};
use tower::ServiceExt;

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
enum Color {
    Red,
    Green,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Shape {
    Circle { r: f64 },
    Square(u32),
    Pair(u8, u8),
    Dot,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Point {
    x: i32,
    y: i32,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
struct Meters(u32);

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind")]
enum Tagged {
    A { n: u8 },
    B,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum Either {
    N(i64),
    S(String),
}

/// Return every argument as decoded.
#[tool]
#[allow(clippy::too_many_arguments, clippy::many_single_char_names)]
async fn kinds(
    i: i64,
    #[arg(range(min = 1, max = 10))] u: u8,
    f: f64,
    b: bool,
    #[arg(length(min = 1))] s: String,
    c: Option<char>,
    o: Option<String>,
    v: Vec<u32>,
    color: Color,
    shape: Shape,
    point: Option<Point>,
    m: Option<Meters>,
    t: Option<Tagged>,
    e: Option<Either>,
    map: Option<BTreeMap<String, i32>>,
    any: Option<Value>,
    pair: Option<(u8, String)>,
    path: Option<PathBuf>,
    big: Option<u64>,
    #[arg(default = 7)] d: u16,
) -> Value {
    json!({
        "i": i, "u": u, "f": f, "b": b, "s": s, "c": c, "o": o, "v": v,
        "color": format!("{color:?}"), "shape": format!("{shape:?}"),
        "point": format!("{point:?}"), "m": format!("{m:?}"), "t": format!("{t:?}"),
        "e": format!("{e:?}"), "map": map, "any": any, "pair": pair, "path": path,
        "big": big, "d": d,
    })
}

/// Take no arguments.
#[tool]
async fn nothing() -> &'static str {
    "done"
}

/// Wipe a target.
#[tool(annotations(destructive), dry_run)]
async fn wipe(target: String, ctx: &CallContext) -> String {
    if ctx.dry_run() {
        format!("would wipe {target}")
    } else {
        format!("wiped {target}")
    }
}

/// Counts the calls that reach `Tool::call` (the `Value` path) and passes everything else,
/// the fast path's decoder included, to the generated tool.
struct Counting(
    &'static tool_runtime::__private::ToolDescriptor,
    Arc<AtomicUsize>,
);

impl Tool for Counting {
    fn meta(&self) -> ToolMeta {
        self.0.meta()
    }
    fn input_schema(&self) -> Value {
        self.0.input_schema()
    }
    fn output_schema(&self) -> Value {
        self.0.output_schema()
    }
    fn call(&self, args: Value, ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        self.0.call(args, ctx)
    }
    fn parsed_call(&self) -> Option<tool_runtime::__private::ParsedCall> {
        self.0.parsed_call()
    }
}

#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Value>>>);

impl CallObserver for Seen {
    fn observe<'a>(&'a self, call: CompletedCall<'a>) -> BoxFuture<'a, ()> {
        self.0.lock().unwrap().push(call.args.clone());
        Box::pin(async {})
    }
}

struct Fixture {
    fast: axum::Router,
    reference: axum::Router,
    value_calls: Arc<AtomicUsize>,
    seen: Seen,
}

fn fixture(observe: bool) -> Fixture {
    fixture_with(observe, |b| b)
}

/// Both registries get `extra` (built-in policies and limits, which do not read arguments).
fn fixture_with(observe: bool, extra: fn(RegistryBuilder) -> RegistryBuilder) -> Fixture {
    let value_calls = Arc::new(AtomicUsize::new(0));
    let seen = Seen::default();
    let app = |reference: bool| {
        let counter = Arc::new(AtomicUsize::new(0));
        let counter = if reference { &counter } else { &value_calls };
        let mut builder = Registry::builder()
            .without_inventory()
            .tool(Counting(kinds::descriptor(), counter.clone()))
            .tool(Counting(nothing::descriptor(), counter.clone()))
            .tool(Counting(wipe::descriptor(), counter.clone()));
        if observe {
            builder = builder.observer(seen.clone());
        }
        builder = extra(builder);
        if reference {
            // A policy of the user's own may read the arguments: the `Value` path, always.
            builder = builder.policy(|_: &tool_runtime::tool::PendingCall| Ok::<(), String>(()));
        }
        http::router(Arc::new(builder.build().unwrap()), ServerOptions::default())
    };
    Fixture {
        fast: app(false),
        reference: app(true),
        value_calls,
        seen,
    }
}

async fn post(app: &axum::Router, uri: &str, body: String) -> (u16, Value) {
    let request = Request::post(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let mut envelope: Value = serde_json::from_slice(&bytes).unwrap();
    // Timing and request ids differ from call to call.
    envelope.as_object_mut().unwrap().remove("meta");
    if let Some(details) = envelope
        .pointer_mut("/error/details")
        .and_then(Value::as_object_mut)
    {
        details.remove("retry_after");
        details.remove("token");
    }
    (status, envelope)
}

/// The same body through both paths: same status, same envelope.
async fn both(fx: &Fixture, tool: &str, body: &str) -> (u16, Value) {
    both_at(fx, &format!("/tools/{tool}"), body).await
}

async fn both_at(fx: &Fixture, uri: &str, body: &str) -> (u16, Value) {
    let fast = post(&fx.fast, uri, body.to_owned()).await;
    let reference = post(&fx.reference, uri, body.to_owned()).await;
    assert_eq!(fast, reference, "the two paths disagree on {body}");
    fast
}

fn valid() -> Value {
    json!({
        "i": -5, "u": 3, "f": 2.5, "b": true, "s": "text", "c": "x", "o": "some",
        "v": [1, 2, 3], "color": "Red", "shape": {"circle": {"r": 1.5}},
        "point": {"x": 1, "y": -2}, "m": 12, "t": {"kind": "A", "n": 4}, "e": "word",
        "map": {"b": 2, "a": 1}, "any": {"z": [1, 2.0, null], "a": {"q": "w"}},
        "pair": [9, "nine"], "path": "/tmp/x", "big": 18_446_744_073_709_551_615_u64
    })
}

/// Values that probe types and bounds, put in every position of a valid call.
fn probes() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(2.0),
        json!(1e300),
        json!(""),
        json!("x"),
        json!("Red"),
        json!("dot"),
        json!("square"),
        json!("5"),
        json!([]),
        json!([1]),
        json!([9, "nine"]),
        json!([1, 2, 3]),
        json!({}),
        json!({"a": 1}),
        json!({"square": 4}),
        json!({"pair": [1, 2]}),
        json!({"dot": null}),
        json!({"circle": {"r": 1}}),
        json!({"circle": {"r": 1}, "dot": null}),
        json!({"kind": "B"}),
        json!({"x": 1, "y": 2, "z": 3}),
        json!(4_294_967_296_u64),
        json!(18_446_744_073_709_551_615_u64),
        json!(-9_223_372_036_854_775_808_i64),
    ]
}

#[tokio::test]
async fn valid_calls_take_the_fast_path_and_return_what_the_value_path_returns() {
    let fx = fixture(true);
    let body = valid().to_string();
    let (status, envelope) = both(&fx, "kinds", &body).await;
    assert_eq!(status, 200, "{envelope}");
    // None of the fast registry's calls went through `Tool::call`.
    assert_eq!(fx.value_calls.load(Ordering::SeqCst), 0);
    assert_eq!(envelope["result"]["d"], 7);
    assert_eq!(envelope["result"]["shape"], "Circle { r: 1.5 }");
    assert_eq!(envelope["result"]["any"]["z"], json!([1, 2, null]));
    let seen = fx.seen.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0], seen[1], "observers see the same arguments");

    let (status, envelope) = both(&fx, "nothing", "").await;
    assert_eq!((status, &envelope["result"]), (200, &json!("done")));
    assert_eq!(both(&fx, "nothing", "{}").await.0, 200);
    assert_eq!(fx.value_calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn bodies_the_tree_does_not_take_or_that_fail_agree_with_the_value_path() {
    let fx = fixture(true);
    let raw = [
        // Integral floats are integers, for validation and decoding alike.
        r#"{"i": 5.0, "u": 3.0, "f": -0.0, "b": false, "s": "s", "v": [1.0], "color": "Green", "shape": "dot", "any": [5.0, -0.0]}"#,
        // Repeated keys: the last one counts, as it always has.
        r#"{"i": 1, "i": 2, "u": 1, "f": 1, "b": true, "s": "s", "v": [], "color": "Red", "shape": "dot"}"#,
        r#"{"i": 1, "u": 1, "f": 1, "b": true, "s": "s", "v": [], "color": "Red", "shape": "dot", "any": {"k": 1, "k": 2}}"#,
        // Escapes in keys and values.
        r#"{"\u0069": 1, "u": 1, "f": 1, "b": true, "s": "a\"b\\c\u00e9\ud83d\ude00", "v": [], "color": "Red", "shape": "dot", "map": {"k\n": 1}}"#,
        // Not an object, not JSON, trailing garbage.
        "[1, 2]",
        "\"text\"",
        "null",
        "{\"i\": 1,}",
        "{\"i\": 1} x",
        // A unit variant written as an object, a data variant as a string.
        r#"{"i": 1, "u": 1, "f": 1, "b": true, "s": "s", "v": [], "color": {"Red": null}, "shape": "circle"}"#,
        // Out of range for the Rust type but not for the schema.
        r#"{"i": 1, "u": 1, "f": 1, "b": true, "s": "s", "v": [], "color": "Red", "shape": {"square": -1}}"#,
        r#"{"i": 1, "u": 1, "f": 1e400, "b": true, "s": "s", "v": [], "color": "Red", "shape": "dot"}"#,
    ];
    for body in raw {
        both(&fx, "kinds", body).await;
    }
    let seen = fx.seen.0.lock().unwrap();
    for pair in seen.chunks(2) {
        assert_eq!(pair[0], pair[1], "observers see the same arguments");
    }
}

#[tokio::test]
async fn confirmation_and_dry_runs_agree() {
    let fx = fixture(true);
    let disk = r#"{"target": "disk"}"#;
    let cases = [
        ("/tools/wipe", disk, 409, "confirmation_required"),
        ("/tools/wipe?confirm=true", disk, 200, "wiped disk"),
        ("/tools/wipe?dry_run=true", disk, 200, "would wipe disk"),
        (
            "/tools/nothing?dry_run=true",
            "{}",
            400,
            "dry_run_unsupported",
        ),
    ];
    for (uri, body, status, what) in cases {
        let (got, envelope) = both_at(&fx, uri, body).await;
        assert_eq!(got, status, "{uri}: {envelope}");
        let shown = envelope["result"]
            .as_str()
            .or(envelope["error"]["type"].as_str());
        assert_eq!(shown, Some(what), "{uri}: {envelope}");
    }
    // The confirmed call and the dry run ran from the tree; the refused call ran only the
    // tool's dry run, from its arguments as a value, for the preview its question carries.
    assert_eq!(fx.value_calls.load(Ordering::SeqCst), 1);
    let seen = fx.seen.0.lock().unwrap().clone();
    for pair in seen.chunks(2) {
        assert_eq!(pair[0], pair[1], "observers see the same arguments");
    }
}

#[tokio::test]
async fn every_probe_in_every_position_agrees() {
    let fx = fixture(false);
    let seed = valid();
    let mut outcomes = BTreeMap::<u16, usize>::new();
    let keys = seed.as_object().unwrap().keys().map(String::as_str);
    for key in keys.chain(["d", "unknown"]) {
        let mut without = seed.clone();
        without.as_object_mut().unwrap().remove(key);
        *outcomes
            .entry(both(&fx, "kinds", &without.to_string()).await.0)
            .or_default() += 1;
        for probe in probes() {
            let mut body = seed.clone();
            body[key] = probe;
            let (status, _) = both(&fx, "kinds", &body.to_string()).await;
            *outcomes.entry(status).or_default() += 1;
        }
    }
    // The corpus exercises both outcomes, many times each; the fast path took every valid call.
    assert!(outcomes[&200] > 50, "{outcomes:?}");
    assert!(outcomes[&422] > 200, "{outcomes:?}");
    assert_eq!(fx.value_calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn built_in_policies_and_limits_keep_the_fast_path_and_agree() {
    let fx = fixture_with(true, |b| {
        b.policy(AllowTools::new().allow(Source::Http, ["nothing", "wipe"]))
            .policy(DenyDestructive::for_sources([Source::Mcp]))
            .rate_limit("nothing", Rate::parse("2/min"))
            .concurrency_limit("wipe", Some(1))
    });
    let disk = r#"{"target": "disk"}"#;
    let cases = [
        ("/tools/nothing", "{}", 200),
        ("/tools/nothing", "{}", 200),
        // The third call within the minute: rate limited, on both registries alike.
        ("/tools/nothing", "{}", 429),
        ("/tools/wipe?confirm=true", disk, 200),
        ("/tools/wipe", disk, 409),
        // Hidden from HTTP callers: unknown to them.
        ("/tools/kinds", &valid().to_string(), 404),
    ];
    for (uri, body, status) in cases {
        let (got, envelope) = both_at(&fx, uri, body).await;
        assert_eq!(got, status, "{uri}: {envelope}");
    }
    // Only the unconfirmed `wipe` ran its dry run as a value, for its preview.
    assert_eq!(fx.value_calls.load(Ordering::SeqCst), 1);
    let seen = fx.seen.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 2 * cases.len());
    for pair in seen.chunks(2) {
        assert_eq!(pair[0], pair[1], "observers see the same arguments");
    }
}
