//! The HTTP front end over real HTTP on 127.0.0.1:0 (reqwest): every route, every status code,
//! auth on and off, request ids, limits, a user's own router, graceful shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tool_runtime::http::{self, Auth, ServerOptions};
use tool_runtime::layers::hooks::{CallHook, HookPoint, Permit};
use tool_runtime::prelude::*;
use tool_runtime::tool::PendingCall;

/// Sleep, then answer.
#[tool(timeout = "2s")]
async fn nap(
    /// Milliseconds
    ms: u64,
) -> u64 {
    let _ = NAP_STARTED.send(ms);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ms
}

/// Told each `nap`'s length as it starts, so a test can act while its call is in flight.
static NAP_STARTED: std::sync::LazyLock<tokio::sync::broadcast::Sender<u64>> =
    std::sync::LazyLock::new(|| tokio::sync::broadcast::channel(64).0);

/// Wait until a `nap` of `ms` milliseconds is running (subscribe before sending the call).
async fn nap_started(started: &mut tokio::sync::broadcast::Receiver<u64>, ms: u64) {
    while started.recv().await.unwrap() != ms {}
}

/// Take too long.
#[tool(timeout = "50ms")]
async fn stall() -> bool {
    tokio::time::sleep(Duration::from_secs(10)).await;
    true
}

/// Panic.
#[tool]
async fn crash() -> bool {
    panic!("crash for the test")
}

/// Report the caller.
#[tool]
async fn whoami(ctx: &CallContext) -> Value {
    json!({"principal": ctx.principal(), "roles": ctx.roles(), "source": ctx.source().as_str()})
}

/// Refused by policy.
#[tool]
async fn secret() -> bool {
    true
}

/// Always over its rate limit.
#[tool]
async fn limited() -> bool {
    true
}

/// Always over capacity.
#[tool]
async fn busy() -> bool {
    true
}

/// Policy, limit and capacity refusals, by tool name, as hooks make them.
struct Refusals;
impl CallHook for Refusals {
    fn point(&self) -> HookPoint {
        HookPoint::Policy
    }
    fn before<'a>(&'a self, call: &'a mut PendingCall) -> BoxFuture<'a, Result<Permit, ToolError>> {
        Box::pin(async move {
            match &*call.meta().name {
                "secret" => Err(ToolError::new("forbidden", "not for you")),
                "limited" => Err(ToolError::new("rate_limited", "slow down")
                    .with_details(json!({"retry_after": 7}))),
                "busy" => Err(ToolError::new("unavailable", "over capacity")),
                _ => Ok(Permit::none()),
            }
        })
    }
}

struct Server {
    base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Server {
    async fn start(options: ServerOptions) -> Server {
        let registry = Arc::new(
            registry_builder()
                .state(demo_app::Stores::in_memory().unwrap().devices)
                .state(downstream::Inbox::default())
                .hook(Refusals)
                .build()
                .unwrap(),
        );
        Self::start_app(http::router(registry, options)).await
    }

    async fn start_app(app: axum::Router) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let done = tokio::spawn(http::serve(
            listener,
            app,
            async {
                let _ = rx.await;
            },
            &http::ServerOptions::default().grace(Duration::from_secs(5)),
        ));
        Server {
            base: format!("http://{addr}"),
            stop: Some(tx),
            done,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

async fn post_json(
    s: &Server,
    path: &str,
    body: &Value,
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let r = client().post(s.url(path)).json(body).send().await.unwrap();
    let status = r.status();
    let headers = r.headers().clone();
    (status, headers, r.json().await.unwrap())
}

#[tokio::test]
async fn tool_routes_answer_with_envelopes() {
    let s = Server::start(ServerOptions::default()).await;
    let (status, headers, env) =
        post_json(&s, "/tools/device_add", &json!({"ttl_seconds": 60})).await;
    assert_eq!(status, 200);
    assert_eq!(env["status"], "ok");
    assert_eq!(env["result"]["code"].as_str().unwrap().len(), 6);
    assert_eq!(
        headers["x-request-id"],
        env["meta"]["request_id"].as_str().unwrap()
    );
    assert_eq!(headers["content-type"], "application/json");

    // An empty body is `{}`.
    let r = client()
        .post(s.url("/tools/device_list"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let (status, _, env) =
        post_json(&s, "/invoke", &json!({"tool": "device_list", "params": {}})).await;
    assert_eq!(
        (status, env["tool"].as_str()),
        (StatusCode::OK, Some("device_list"))
    );
    assert_eq!(env["result"]["pending_codes"].as_array().unwrap().len(), 1);

    let (status, _, env) = post_json(&s, "/invoke", &json!({"tool": "whoami"})).await;
    assert_eq!(status, 200);
    assert_eq!(env["result"]["source"], "http");
}

#[tokio::test]
async fn a_declared_length_over_the_limit_is_refused_before_the_body_is_read() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = Server::start(ServerOptions::default()).await;
    let addr = s.base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    // 100 MB declared, 2 bytes sent: a server that read first would wait for the rest.
    stream
        .write_all(
            b"POST /tools/device_add HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100000000\r\n\r\n{}",
        )
        .await
        .unwrap();
    let mut head = vec![0; 64];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut head))
        .await
        .expect("answered without waiting for the body")
        .unwrap();
    let head = String::from_utf8_lossy(&head[..n]);
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
}

#[tokio::test]
async fn every_status_of_the_envelope_table() {
    let s = Server::start(ServerOptions::default()).await;
    let cases: Vec<(&str, Value, u16, &str)> = vec![
        (
            "/tools/device_add",
            json!({"ttl_seconds": 1, "nope": 1}),
            422,
            "invalid_arguments",
        ),
        (
            "/tools/device_revoke",
            json!({"device_id": "dev_0000000000000000"}),
            409,
            "confirmation_required",
        ),
        (
            "/tools/device_pair",
            json!({"code": "0000", "device_name": "x"}),
            400,
            "invalid_code",
        ),
        ("/tools/no_such_tool", json!({}), 404, "unknown_tool"),
        ("/tools/secret", json!({}), 403, "forbidden"),
        ("/tools/limited", json!({}), 429, "rate_limited"),
        ("/tools/crash", json!({}), 500, "internal"),
        ("/tools/busy", json!({}), 503, "unavailable"),
        ("/tools/stall", json!({}), 504, "timeout"),
    ];
    for (path, body, status, kind) in cases {
        let (got, headers, env) = post_json(&s, path, &body).await;
        assert_eq!(
            (got.as_u16(), env["error"]["type"].as_str()),
            (status, Some(kind)),
            "{path}: {env}"
        );
        assert_eq!(env["status"], "error");
        assert!(headers.contains_key("x-request-id"));
        if status == 429 {
            assert_eq!(headers["retry-after"], "7");
        }
    }
    // The 422 lists every violation, each with the keyword it breaks and the property an
    // unknown field is.
    let (_, _, env) = post_json(
        &s,
        "/tools/device_add",
        &json!({"ttl_seconds": 1, "nope": 1}),
    )
    .await;
    let mut violations = env["error"]["details"]["violations"]
        .as_array()
        .unwrap()
        .clone();
    violations.sort_by_key(|v| v["path"].to_string());
    assert_eq!(violations.len(), 2);
    assert_eq!(
        (&violations[0]["path"], &violations[0]["keyword"]),
        (&json!("/nope"), &json!("additionalProperties"))
    );
    assert_eq!(violations[0]["property"], "nope");
    assert_eq!(
        (&violations[1]["path"], &violations[1]["keyword"]),
        (&json!("/ttl_seconds"), &json!("minimum"))
    );
    assert!(violations[1].get("property").is_none(), "{env}");
    // Confirmation by query string or header.
    let (_, _, env) = post_json(
        &s,
        "/tools/device_revoke?confirm=true",
        &json!({"device_id": "dev_0000000000000000"}),
    )
    .await;
    assert_eq!(env["error"]["type"], "not_found");
    let r = client()
        .post(s.url("/tools/device_revoke"))
        .header("x-confirm", "true")
        .json(&json!({"device_id": "dev_0000000000000000"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let (status, _, _) = post_json(&s, "/invoke", &json!({"tool": "device_revoke", "confirm": true, "params": {"device_id": "dev_0000000000000000"}})).await;
    assert_eq!(status, 404);
    // The panic message never leaks; the server keeps serving.
    let (_, _, env) = post_json(&s, "/tools/crash", &json!({})).await;
    assert!(!env.to_string().contains("crash for the test"));
    let r = client().get(s.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn bad_requests_get_envelopes_too() {
    let s = Server::start(ServerOptions::default().body_limit(1024)).await;
    let send = |path: &'static str, ct: Option<&'static str>, body: Vec<u8>| {
        let mut r = client().post(s.url(path)).body(body);
        if let Some(ct) = ct {
            r = r.header("content-type", ct);
        }
        async move {
            let r = r.send().await.unwrap();
            let status = r.status().as_u16();
            let env: Value = r.json().await.unwrap();
            (
                status,
                env["error"]["type"].as_str().unwrap_or_default().to_owned(),
            )
        }
    };
    let json_ct = Some("application/json");
    assert_eq!(
        send("/invoke", json_ct, b"{not json".to_vec()).await,
        (400, "invalid_request".into())
    );
    assert_eq!(
        send("/invoke", json_ct, b"[1, 2]".to_vec()).await,
        (400, "invalid_request".into())
    );
    assert_eq!(
        send("/invoke", json_ct, br#"{"params": {}}"#.to_vec()).await,
        (400, "invalid_request".into())
    );
    assert_eq!(
        send("/invoke", json_ct, br#"{"tool": "x", "extra": 1}"#.to_vec()).await,
        (400, "invalid_request".into())
    );
    assert_eq!(
        send(
            "/invoke",
            json_ct,
            br#"{"tool": "device_list", "params": []}"#.to_vec()
        )
        .await,
        (400, "invalid_request".into())
    );
    assert_eq!(
        send("/tools/device_add", json_ct, b"\"text\"".to_vec()).await,
        (400, "invalid_request".into())
    );
    assert_eq!(
        send("/tools/device_add", Some("text/plain"), b"{}".to_vec()).await,
        (415, "unsupported_media_type".into())
    );
    assert_eq!(
        send("/tools/device_add", None, b"{}".to_vec()).await,
        (415, "unsupported_media_type".into())
    );
    let big = format!(r#"{{"workspace": "{}"}}"#, "a".repeat(2000));
    assert_eq!(
        send("/tools/device_add", json_ct, big.into_bytes()).await,
        (413, "payload_too_large".into())
    );
    let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
    assert_eq!(
        send("/tools/device_add", json_ct, deep.into_bytes()).await,
        (400, "invalid_request".into())
    );
    // Far deeper than any parser's recursion, within the size limit: still a clean 400.
    let s2 = Server::start(ServerOptions::default()).await;
    let r = client()
        .post(s2.url("/invoke"))
        .header("content-type", "application/json")
        .body("[".repeat(500_000))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(
        client()
            .get(s2.url("/healthz"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // Unknown routes and methods.
    let r = client().get(s.url("/nope")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["type"],
        "not_found"
    );
    let r = client().delete(s.url("/tools")).send().await.unwrap();
    assert_eq!(r.status(), 405);
}

/// Serves with short deadlines and a small connection cap.
async fn start_strict(max_connections: usize) -> Server {
    let registry = Arc::new(
        registry_builder()
            .state(demo_app::Stores::in_memory().unwrap().devices)
            .state(downstream::Inbox::default())
            .build()
            .unwrap(),
    );
    let app = http::router(registry, ServerOptions::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let options = ServerOptions::default()
        .header_timeout(Duration::from_secs(1))
        .body_timeout(Duration::from_secs(1))
        .max_connections(max_connections);
    let done = tokio::spawn(http::serve(
        listener,
        app,
        async {
            let _ = rx.await;
        },
        &options,
    ));
    Server {
        base: format!("http://{addr}"),
        stop: Some(tx),
        done,
    }
}

/// Reads what the server sends until it closes the connection (or `within` passes: `None`).
async fn read_until_closed(stream: &mut tokio::net::TcpStream, within: Duration) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut out = Vec::new();
    match tokio::time::timeout(within, stream.read_to_end(&mut out)).await {
        Ok(_) => Some(String::from_utf8_lossy(&out).into_owned()),
        Err(_) => None,
    }
}

/// Slowloris: 300 idle, slow-header and slow-body connections against a cap of 256. The server
/// closes each at its deadline (slow bodies get a 408 envelope), and a client arriving among them
/// is served within a few seconds.
#[tokio::test]
async fn slow_and_idle_connections_are_closed_and_never_starve_a_client() {
    use tokio::io::AsyncWriteExt;
    let s = start_strict(256).await;
    let addr = s.base.trim_start_matches("http://").to_owned();
    let mut idle = Vec::new();
    let mut slow_head = Vec::new();
    let mut slow_body = Vec::new();
    for i in 0..300 {
        let mut c = tokio::net::TcpStream::connect(&addr).await.unwrap();
        match i % 3 {
            0 => idle.push(c),
            1 => {
                c.write_all(b"POST /tools/nap HTTP/1.1\r\nHost: x\r\n")
                    .await
                    .unwrap();
                slow_head.push(c);
            }
            _ => {
                c.write_all(b"POST /tools/nap HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"").await.unwrap();
                slow_body.push(c);
            }
        }
    }
    let started = std::time::Instant::now();
    let r = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
        .get(s.url("/healthz"))
        .send()
        .await
        .expect("served among 300 bad connections");
    assert_eq!(r.status(), 200);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    for c in idle.iter_mut().chain(slow_head.iter_mut()) {
        let answer = read_until_closed(c, Duration::from_secs(10)).await;
        assert!(answer.is_some(), "a slow or idle connection was left open");
    }
    for c in &mut slow_body {
        let answer = read_until_closed(c, Duration::from_secs(10))
            .await
            .expect("closed after its body deadline");
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains(r#""type":"request_timeout""#), "{answer}");
    }
}

/// The answers hyper makes itself for requests it cannot parse carry an error envelope.
#[tokio::test]
async fn unparseable_requests_get_an_envelope() {
    use tokio::io::AsyncWriteExt;
    let s = start_strict(16).await;
    let addr = s.base.trim_start_matches("http://").to_owned();
    let ask = |request: Vec<u8>| {
        let addr = addr.clone();
        async move {
            let mut c = tokio::net::TcpStream::connect(&addr).await.unwrap();
            c.write_all(&request).await.unwrap();
            read_until_closed(&mut c, Duration::from_secs(5))
                .await
                .unwrap()
        }
    };
    let answer = ask(b"NOT HTTP AT ALL\r\n\r\n".to_vec()).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["status"], "error");
    assert_eq!(body["error"]["type"], "invalid_request");

    let long = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70_000));
    let answer = ask(long.into_bytes()).await;
    assert!(
        answer.starts_with("HTTP/1.1 414"),
        "{}",
        &answer[..answer.len().min(200)]
    );
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["error"]["type"], "uri_too_long");
}

/// A body of thousands of unknown fields, or one huge string, gets a small 422: at most 100
/// violations, and rejected values quoted by their start only.
#[tokio::test]
async fn an_invalid_body_gets_an_answer_far_smaller_than_itself() {
    let s = Server::start(ServerOptions::default()).await;
    let mut body = serde_json::Map::new();
    body.insert("ttl_seconds".into(), json!(60));
    for i in 0..20_000 {
        body.insert(format!("unknown_field_{i:05}"), json!("v".repeat(24)));
    }
    let body = Value::Object(body);
    let sent = body.to_string().len();
    let r = client()
        .post(s.url("/tools/device_add"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let answer = r.bytes().await.unwrap();
    assert!(
        answer.len() < 40_000,
        "{sent} bytes in, {} out",
        answer.len()
    );
    let env: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(
        env["error"]["details"]["violations"]
            .as_array()
            .unwrap()
            .len(),
        100
    );
    assert_eq!(env["error"]["details"]["omitted"], 19_900);

    let huge = "w".repeat(400_000);
    let (status, _, env) = post_json(
        &s,
        "/tools/device_pair",
        &json!({"code": huge, "device_name": huge}),
    )
    .await;
    assert_eq!(status, 422);
    assert!(env.to_string().len() < 2_000, "{env}");
}

#[tokio::test]
async fn discovery_routes() {
    let s = Server::start(ServerOptions::default()).await;
    let tools: Value = client()
        .get(s.url("/tools"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let names = tool_test_support::tool_names(&tools);
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert!(names.contains(&"device_add"));

    let one: Value = client()
        .get(s.url("/tools/device_add"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        one["params"]["ttl_seconds"],
        json!({"type": "integer", "description": "Pairing code lifetime in seconds", "required": false, "default": 300})
    );
    assert_eq!(one["params"]["workspace"]["type"], "string");
    assert_eq!(one["input_schema"]["additionalProperties"], false);
    assert_eq!(one["annotations"]["destructive"], false);
    for key in ["name", "title", "description", "output_schema", "tags"] {
        assert!(one.get(key).is_some(), "{key}");
    }
    let r = client()
        .get(s.url("/tools/device_ad"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let env: Value = r.json().await.unwrap();
    assert!(
        env["error"]["message"]
            .as_str()
            .unwrap()
            .contains("device_add")
    );

    let doc: Value = client()
        .get(s.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["paths"]["/tools/device_add"]["post"]["responses"]["422"].is_object());
}

/// Measures with every fixed-width number schemars gives a format of its own.
#[tool(annotations(read_only))]
async fn measure(
    count: u32,
    small: Option<u8>,
    offset: Option<i32>,
    total: Option<i64>,
    index: Option<usize>,
    ratio: Option<f64>,
) -> Vec<u16> {
    let _ = (count, small, offset, total, index, ratio);
    Vec::new()
}

/// `/openapi.json` keeps the formats JSON Schema and OpenAPI define (`int32`, `int64`,
/// `double`) and leaves schemars' others out; the bounds say what they said.
#[test]
fn openapi_schemas_carry_only_the_formats_openapi_defines() {
    let registry = tool_runtime::Registry::builder()
        .without_inventory()
        .tool(measure::descriptor())
        .build()
        .unwrap();
    let caller = tool_runtime::Caller::new(tool_runtime::Source::Http);
    let doc = http::openapi::document(&registry, &caller, "t", "1", false);
    let schemas = &doc["components"]["schemas"];
    let p = &schemas["measure__input"]["properties"];
    let format = |v: &Value| v.get("format").cloned();
    assert_eq!(format(&p["count"]), None, "{p}");
    assert_eq!(
        (&p["count"]["minimum"], &p["count"]["maximum"]),
        (&json!(0), &json!(u32::MAX))
    );
    assert_eq!(format(&p["small"]), None, "{p}");
    assert_eq!(p["small"]["maximum"], 255);
    assert_eq!(format(&p["index"]), None, "{p}");
    assert_eq!(format(&p["offset"]), Some(json!("int32")), "{p}");
    assert_eq!(format(&p["total"]), Some(json!("int64")), "{p}");
    assert_eq!(format(&p["ratio"]), Some(json!("double")), "{p}");
    let items = &schemas["measure__output"]["items"];
    assert_eq!(
        (format(items), &items["maximum"]),
        (None, &json!(u16::MAX)),
        "{items}"
    );
}

/// A call's options are read with their types, from the query string or the body of
/// `/invoke`: a wrong one is a 400 naming the option (and the tool, once known).
#[tokio::test]
async fn bad_call_options_are_named() {
    let s = Server::start(ServerOptions::default()).await;
    let message = |env: &Value| {
        env["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let (status, _, env) = post_json(
        &s,
        "/invoke",
        &json!({"tool": "device_add", "params": {}, "confirm": "yes"}),
    )
    .await;
    assert_eq!(
        (status.as_u16(), &env["tool"]),
        (400, &json!("device_add")),
        "{env}"
    );
    assert!(message(&env).starts_with("confirm: "), "{env}");
    let (status, _, env) =
        post_json(&s, "/invoke", &json!({"tool": "device_add", "extra": 1})).await;
    assert_eq!(status.as_u16(), 400);
    assert!(message(&env).contains("unknown field `extra`"), "{env}");
    // An option is given a value or left out: `null` is no value of any.
    for null in ["params", "confirmation", "format"] {
        let mut body = json!({"tool": "device_add"});
        body[null] = Value::Null;
        let (status, _, env) = post_json(&s, "/invoke", &body).await;
        assert_eq!(status.as_u16(), 400, "{null}: {env}");
        assert!(message(&env).starts_with(&format!("{null}: ")), "{env}");
    }
    let (status, _, env) = post_json(&s, "/invoke", &json!({"tool": 7})).await;
    assert_eq!(
        (status.as_u16(), &env["tool"]),
        (400, &Value::Null),
        "{env}"
    );
    assert!(message(&env).starts_with("tool: "), "{env}");
    let (status, _, env) = post_json(&s, "/tools/device_add?dry_run=maybe", &json!({})).await;
    assert_eq!(
        (status.as_u16(), &env["tool"]),
        (400, &json!("device_add")),
        "{env}"
    );
    assert!(message(&env).contains("dry_run"), "{env}");
    let (status, _, env) = post_json(&s, "/tools/device_add?confirmed=true", &json!({})).await;
    assert_eq!(status.as_u16(), 400);
    assert!(message(&env).contains("unknown field `confirmed`"), "{env}");
    // The header and the query say the same thing in the same type: either turns it on.
    let r = client()
        .post(s.url("/tools/device_revoke?dry_run=false"))
        .header("x-dry-run", "true")
        .json(&json!({"device_id": "dev_0000000000000000"}))
        .send()
        .await
        .unwrap();
    let env: Value = r.json().await.unwrap();
    assert_eq!(env["error"]["type"], "not_found", "ran as a dry run: {env}");
}

#[tokio::test]
async fn request_ids_are_echoed_or_generated_on_every_response() {
    let s = Server::start(ServerOptions::default()).await;
    for (method, path) in [
        ("GET", "/healthz"),
        ("GET", "/nope"),
        ("POST", "/tools/device_list"),
        ("POST", "/invoke"),
    ] {
        let r = client()
            .request(method.parse().unwrap(), s.url(path))
            .header("x-request-id", "trace-123")
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(r.headers()["x-request-id"], "trace-123", "{path}");
        let body: Value = r.json().await.unwrap();
        if let Some(meta) = body.get("meta") {
            assert_eq!(meta["request_id"], "trace-123", "{path}");
        }
    }
    let a = client().get(s.url("/healthz")).send().await.unwrap();
    let b = client().get(s.url("/healthz")).send().await.unwrap();
    assert_ne!(a.headers()["x-request-id"], b.headers()["x-request-id"]);
    // A header that is not a sensible id is replaced.
    let r = client()
        .get(s.url("/healthz"))
        .header("x-request-id", "a".repeat(500))
        .send()
        .await
        .unwrap();
    assert!(r.headers()["x-request-id"].len() < 100);
}

/// The operator endpoints (`GET /audit`, `GET /toolsets`) answer, with authentication, callers
/// with the operator role only: `admin` by default, or the role the options name; the others get
/// `403 forbidden`. Without authentication the machine's own callers read both.
#[tokio::test]
async fn operator_endpoints_need_the_operator_role() {
    const TOKENS: &str = "[[tokens]]\ntoken = \"admin-token\"\nprincipal = \"ada\"\nroles = [\"admin\"]\n\n\
                          [[tokens]]\ntoken = \"ops-token\"\nprincipal = \"olga\"\nroles = [\"ops\"]\n\n\
                          [[tokens]]\ntoken = \"plain-token\"\nprincipal = \"pat\"\n";
    let get = |s: &Server, path: &str, token: Option<&str>| {
        let mut request = client().get(s.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            let r = request.send().await.unwrap();
            let status = r.status().as_u16();
            let body: Value = r.json().await.unwrap();
            (status, body)
        }
    };
    let with_tokens = |role: Option<&str>| {
        let options = ServerOptions::default().auth(Auth::from_toml(TOKENS).unwrap());
        Server::start(match role {
            Some(role) => options.operator_role(role),
            None => options,
        })
    };
    // This server keeps no audit log: past the role check, `/audit` answers 501 `unsupported`.
    let by_default = with_tokens(None).await;
    assert_eq!(
        get(&by_default, "/toolsets", Some("admin-token")).await.0,
        200
    );
    assert_eq!(get(&by_default, "/audit", Some("admin-token")).await.0, 501);
    for path in ["/toolsets", "/audit"] {
        for token in ["ops-token", "plain-token"] {
            let (status, body) = get(&by_default, path, Some(token)).await;
            assert_eq!(
                (status, &body["error"]["type"]),
                (403, &json!("forbidden")),
                "{path} {token}"
            );
            assert!(
                body["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("`admin`"),
                "{body}"
            );
        }
    }
    // The OpenAPI document says so.
    let (_, doc) = get(&by_default, "/openapi.json", Some("plain-token")).await;
    assert!(
        doc["paths"]["/toolsets"]["get"]["responses"]["403"].is_object(),
        "{}",
        doc["paths"]["/toolsets"]
    );
    let ops = with_tokens(Some("ops")).await;
    assert_eq!(get(&ops, "/toolsets", Some("ops-token")).await.0, 200);
    assert_eq!(get(&ops, "/audit", Some("ops-token")).await.0, 501);
    for path in ["/toolsets", "/audit"] {
        for token in ["admin-token", "plain-token"] {
            assert_eq!(get(&ops, path, Some(token)).await.0, 403, "{path} {token}");
        }
    }
    let open = Server::start(ServerOptions::default()).await;
    assert_eq!(get(&open, "/toolsets", None).await.0, 200);
    assert_eq!(get(&open, "/audit", None).await.0, 501);
}

#[tokio::test]
async fn auth_requires_a_bearer_token_and_passes_the_identity_on() {
    let auth = Auth::from_toml(
        "[[tokens]]\ntoken = \"alice-token\"\nprincipal = \"alice\"\nroles = [\"admin\"]\n",
    )
    .unwrap();
    let s = Server::start(ServerOptions::default().auth(auth)).await;
    let r = client().post(s.url("/tools/whoami")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert!(
        r.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    // The generated id in the header is the one in the envelope.
    let id = r.headers()["x-request-id"].to_str().unwrap().to_owned();
    let body = r.json::<Value>().await.unwrap();
    assert_eq!(body["error"]["type"], "unauthenticated");
    assert_eq!(body["meta"]["request_id"], id);
    let r = client()
        .post(s.url("/tools/whoami"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = client().get(s.url("/tools")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    // Health checks need no token.
    assert_eq!(
        client()
            .get(s.url("/healthz"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );

    let r = client()
        .post(s.url("/tools/whoami"))
        .bearer_auth("alice-token")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let env: Value = r.json().await.unwrap();
    assert_eq!(
        env["result"],
        json!({"principal": "alice", "roles": ["admin"], "source": "http"})
    );
    let doc: Value = client()
        .get(s.url("/openapi.json"))
        .bearer_auth("alice-token")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );

    // Without auth, no identity.
    let open = Server::start(ServerOptions::default()).await;
    let (_, _, env) = post_json(&open, "/tools/whoami", &json!({})).await;
    assert_eq!(env["result"]["principal"], Value::Null);
}

#[tokio::test]
async fn one_tool_mounted_in_a_users_own_router_with_a_users_layer() {
    let registry = Arc::new(demo_app::registry(&demo_app::Stores::in_memory().unwrap()).unwrap());
    let app = axum::Router::new()
        .route(
            "/api/codes",
            http::tool_route(registry.clone(), "device_add"),
        )
        .route("/api/ping", axum::routing::get(|| async { "pong" }))
        .layer(axum::middleware::map_response(
            |mut r: axum::response::Response| async move {
                r.headers_mut()
                    .insert("x-served-by", "my-app".parse().unwrap());
                r
            },
        ));
    let s = Server::start_app(app).await;
    let (status, headers, env) = post_json(&s, "/api/codes", &json!({"code_length": 8})).await;
    assert_eq!(status, 200);
    assert_eq!(headers["x-served-by"], "my-app");
    assert!(headers.contains_key("x-request-id"));
    assert_eq!(env["result"]["code"].as_str().unwrap().len(), 8);
    let (status, _, env) = post_json(&s, "/api/codes", &json!({"code_length": 3})).await;
    assert_eq!(
        (status.as_u16(), env["error"]["type"].as_str()),
        (422, Some("invalid_arguments"))
    );
}

#[tokio::test]
async fn shutdown_lets_a_slow_call_finish_then_stops() {
    let mut s = Server::start(ServerOptions::default()).await;
    let url = s.url("/tools/nap");
    let mut started = NAP_STARTED.subscribe();
    let slow = tokio::spawn(async move {
        let r = client()
            .post(url)
            .json(&json!({"ms": 400}))
            .send()
            .await
            .unwrap();
        (r.status(), r.json::<Value>().await.unwrap())
    });
    nap_started(&mut started, 400).await;
    s.stop.take().unwrap().send(()).unwrap();
    let (status, env) = slow.await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(env["result"], 400);
    tokio::time::timeout(Duration::from_secs(5), s.done)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        client()
            .get(format!("{}/healthz", s.base))
            .send()
            .await
            .is_err(),
        "no longer accepting"
    );
}

/// `serve` cancels the shutdown token of the options it is given when its shutdown future
/// completes: a router given the same options (`/mcp`) learns of the shutdown with nothing more.
#[tokio::test]
async fn serve_cancels_the_options_shutdown_token() {
    let token = tokio_util::sync::CancellationToken::new();
    let options = ServerOptions::default().shutdown(token.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(
        listener,
        axum::Router::new(),
        async {
            let _ = rx.await;
        },
        &options,
    ));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!token.is_cancelled(), "not before shutdown");
    tx.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), token.cancelled())
        .await
        .expect("the token is cancelled at shutdown");
    server.await.unwrap().unwrap();
}

/// `POST /hello` answering `hi`, served by `http::serve` with `options` until the sender is
/// used: its address, the sender, and the server's task.
async fn serve_hello(
    options: &ServerOptions,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let app = axum::Router::new().route("/hello", axum::routing::post(|| async { "hi" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(
        listener,
        app,
        async {
            let _ = rx.await;
        },
        options,
    ));
    (addr, tx, server)
}

/// A connection the kernel completed before the server stopped accepting, its request already
/// sent (a balancer's), is answered, not reset: here it waits in the backlog behind the
/// connection cap when shutdown begins.
#[tokio::test]
async fn a_connection_waiting_in_the_backlog_at_shutdown_is_answered() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (addr, tx, server) = serve_hello(&ServerOptions::default().max_connections(1)).await;
    // An idle connection takes the one slot; the next waits in the kernel's backlog.
    let _idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut queued = tokio::net::TcpStream::connect(addr).await.unwrap();
    queued
        .write_all(b"POST /hello HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    tx.send(()).unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(5), queued.read_to_string(&mut answer))
        .await
        .expect("answered within 5 s")
        .expect("answered, not reset");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    assert!(answer.ends_with("hi"), "{answer}");
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the server stops: the idle connection is closed")
        .unwrap()
        .unwrap();
}

/// A connection accepted while the server drains is answered once, even when its request
/// arrives after the server stopped accepting: it is not closed with its request unread.
#[tokio::test]
async fn a_connection_accepted_while_draining_gets_its_answer_after_the_drain() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (addr, tx, server) =
        serve_hello(&ServerOptions::default().drain(Duration::from_millis(300))).await;
    tx.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut late = tokio::net::TcpStream::connect(addr).await.unwrap();
    // The drain ends; the request follows.
    tokio::time::sleep(Duration::from_millis(400)).await;
    late.write_all(b"POST /hello HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(5), late.read_to_string(&mut answer))
        .await
        .expect("answered within 5 s")
        .expect("answered, not reset");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the server stops once the connection closed")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn the_grace_period_bounds_shutdown() {
    let registry = Arc::new(
        registry_builder()
            .state(demo_app::Stores::in_memory().unwrap().devices)
            .state(downstream::Inbox::default())
            .build()
            .unwrap(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(
        listener,
        http::router(registry, ServerOptions::default()),
        async {
            let _ = rx.await;
        },
        &ServerOptions::default().grace(Duration::from_millis(200)),
    ));
    let mut nap = NAP_STARTED.subscribe();
    let call = tokio::spawn(async move {
        client()
            .post(format!("http://{addr}/tools/nap"))
            .json(&json!({"ms": 1900}))
            .send()
            .await
    });
    nap_started(&mut nap, 1900).await;
    tx.send(()).unwrap();
    let started = std::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(3), server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "bounded by the grace period"
    );
    // `serve` has returned; a process exits here, taking the call still in flight with it
    // (in this test the runtime lives on, so the connection's task may still finish).
    drop(call);
}

#[tokio::test]
async fn dry_runs_by_query_header_or_invoke() {
    let s = Server::start(ServerOptions::default()).await;
    // Refused for tools without dry runs; run, with no confirmation asked, for those with.
    let (status, _, env) = post_json(
        &s,
        "/tools/device_revoke?dry_run=true",
        &json!({"device_id": "dev_0000000000000000"}),
    )
    .await;
    assert_eq!(
        (status.as_u16(), env["error"]["type"].as_str()),
        (404, Some("not_found")),
        "ran as a dry run, no confirmation asked"
    );
    let (status, _, env) = post_json(
        &s,
        "/invoke",
        &json!({"tool": "nap", "dry_run": true, "params": {"ms": 1}}),
    )
    .await;
    assert_eq!(
        (status.as_u16(), env["error"]["type"].as_str()),
        (400, Some("dry_run_unsupported"))
    );
    let r = client()
        .post(s.url("/tools/nap"))
        .header("x-dry-run", "true")
        .json(&json!({"ms": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

/// The tools of this file, and no others: the test binary holds other files' tools too.
/// These tools are served beside the demo app's and the downstream crate's.
fn registry_builder() -> tool_runtime::registry::RegistryBuilder {
    demo_app::registry_builder()
        .tool(downstream::ticket_open::descriptor())
        .tool(downstream::ticket_list::descriptor())
        .tool(nap::descriptor())
        .tool(stall::descriptor())
        .tool(crash::descriptor())
        .tool(whoami::descriptor())
        .tool(secret::descriptor())
        .tool(limited::descriptor())
        .tool(busy::descriptor())
}

/// A caller shown the specs lowered for OpenAI (`GET /tools?format=openai`) forwards what a
/// strict-mode model wrote: `null` for every optional field it leaves out. Said with `format`,
/// those `null`s leave the fields out; without it, the canonical schema holds.
#[tokio::test]
async fn arguments_in_the_form_of_the_specs_shown_are_taken_when_the_call_names_it() {
    let s = Server::start(ServerOptions::default()).await;
    let specs: Value = client()
        .get(s.url("/tools?format=openai"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let spec = specs["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "device_add")
        .expect("device_add is listed");
    // What the model writes when it sets nothing: every (required, nullable) field `null`.
    let written: serde_json::Map<String, Value> = spec["function"]["parameters"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| (name.as_str().unwrap().to_owned(), Value::Null))
        .collect();
    assert!(written.contains_key("ttl_seconds"), "{spec}");
    let written = Value::Object(written);

    let (status, _, env) = post_json(&s, "/tools/device_add", &written).await;
    assert_eq!(
        (status.as_u16(), env["error"]["type"].as_str()),
        (422, Some("invalid_arguments"))
    );
    let (status, _, env) = post_json(&s, "/tools/device_add?format=gemini", &written).await;
    assert_eq!(status.as_u16(), 422, "{env}");

    for (path, body) in [
        ("/tools/device_add?format=openai", written.clone()),
        ("/tools/device_add?format=openai-responses", written.clone()),
        (
            "/invoke",
            json!({"tool": "device_add", "params": written, "format": "openai"}),
        ),
    ] {
        let (status, _, env) = post_json(&s, path, &body).await;
        assert_eq!(status, 200, "{path}: {env}");
        // The `null`s left the fields out, so their defaults apply: a 6-digit code.
        assert_eq!(env["result"]["code"].as_str().unwrap().len(), 6, "{path}");
    }
    // A `null` where the field is required stays an error; other values are judged as ever.
    let (status, _, _) = post_json(
        &s,
        "/tools/device_revoke?format=openai",
        &json!({"device_id": null}),
    )
    .await;
    assert_eq!(status.as_u16(), 422);
    let (status, _, env) = post_json(&s, "/tools/device_add?format=nope", &json!({})).await;
    assert_eq!(status.as_u16(), 400);
    assert!(
        env["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown format `nope`; one of json, mcp, openai"),
        "{env}"
    );
    let (status, _, _) = post_json(
        &s,
        "/invoke",
        &json!({"tool": "device_add", "params": {}, "format": 1}),
    )
    .await;
    assert_eq!(status.as_u16(), 400);
}

/// A request answered before its body has all arrived (here: refused for its missing token)
/// says `Connection: close` in its answer, so that a kept-alive client does not send its next
/// request on a connection the server is closing.
#[tokio::test]
async fn an_answer_that_leaves_the_body_unread_closes_the_connection_and_says_so() {
    use tokio::io::AsyncWriteExt;
    let auth = Auth::from_toml(
        "[[tokens]]\ntoken = \"alice-token\"\nprincipal = \"alice\"\nroles = [\"admin\"]\n",
    )
    .unwrap();
    let s = Server::start(ServerOptions::default().auth(auth)).await;
    let addr = s.base.trim_start_matches("http://").to_owned();
    let mut c = tokio::net::TcpStream::connect(&addr).await.unwrap();
    c.write_all(b"POST /tools/whoami HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"")
        .await
        .unwrap();
    let answer = read_until_closed(&mut c, Duration::from_secs(5))
        .await
        .expect("the connection is closed after the answer");
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("\r\nconnection: close\r\n"),
        "{answer}"
    );
    // A request whose body was read keeps its connection.
    let mut c = tokio::net::TcpStream::connect(&addr).await.unwrap();
    c.write_all(b"POST /tools/whoami HTTP/1.1\r\nHost: x\r\nauthorization: Bearer alice-token\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}")
        .await
        .unwrap();
    assert_eq!(
        read_until_closed(&mut c, Duration::from_secs(1)).await,
        None,
        "a kept-alive connection was closed"
    );
}
