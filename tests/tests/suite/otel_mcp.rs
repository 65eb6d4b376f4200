//! MCP in traces: a call to a gateway for a tool it mounts from another MCP server, with trace
//! context in `params._meta`, is one trace across both processes (the gateway's MCP server span,
//! its pipeline span, its client span to the mounted server, the mounted server's spans), and
//! the MCP operation durations reach the collector. Names a caller made up (tools, prompts,
//! resource URIs, an HTTP method) are in no span's name and no metric's attribute.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tool_test_support::Served;
use tool_test_support::otlp::{OtlpReceiver, ReceivedSpan, children, dump};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

/// `mcp-fixture serve` exporting to `otlp` as `service`, mounting the server at `mount`.
fn fixture(otlp: &OtlpReceiver, service: &str, mount: Option<&str>) -> Served {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-fixture"));
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint())
        .env("OTEL_SERVICE_NAME", service)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "500")
        .env_remove("MCP_FIXTURE_MOUNT")
        .stderr(Stdio::null());
    if let Some(mount) = mount {
        command.env("MCP_FIXTURE_MOUNT", mount);
    }
    Served::spawn(command)
}

/// The only child of `parent` named `name`, with what was received dumped when there is none.
fn child<'a>(spans: &'a [ReceivedSpan], parent: &ReceivedSpan, name: &str) -> &'a ReceivedSpan {
    let found: Vec<_> = children(spans, parent)
        .into_iter()
        .filter(|s| s.name == name)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one child {name:?} of {:?}; received:\n{}",
        parent.name,
        dump(spans)
    );
    found[0]
}

/// Opens a session at `url` and calls `remote-add` in it with [`TRACE`] and [`PARENT`] in
/// `_meta` (id 7); then, without, calls it to fail (id 8) and calls an unknown tool (id 9).
/// The session's id.
async fn call_with_meta(url: &str) -> String {
    let http = reqwest::Client::new();
    let rpc = |session: Option<&str>, body: Value| {
        let mut request = http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(s) = session {
            request = request
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.send()
    };
    let init = rpc(None, tool_test_support::mcp_initialize("2025-11-25"))
        .await
        .unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    rpc(
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await
    .unwrap();
    let answer = rpc(
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "remote-add", "arguments": {"a": 2, "b": 3},
            "_meta": {"traceparent": format!("00-{TRACE}-{PARENT}-01")}}}),
    )
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    let answer = tool_test_support::sse_message(&answer);
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"result": 5}),
        "{answer}"
    );
    for (id, name) in [(8, "remote-add"), (9, "nope")] {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": name, "arguments": {"a": i64::MAX, "b": 1}}});
        let answer = rpc(Some(&session), call)
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let answer = tool_test_support::sse_message(&answer);
        let failed = answer["result"]["isError"] == json!(true) || answer["error"].is_object();
        assert!(failed, "{answer}");
    }
    session
}

/// Waits for the durations of the call: the gateway and the mounted server measured it as
/// servers, the gateway as a client.
async fn wait_for_durations(otlp: &OtlpReceiver) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let points = otlp.metric_points();
        let measured = |name: &str, tool: &str| {
            points.iter().any(|p| {
                p.name == name
                    && p.attributes.get("mcp.method.name") == Some(&json!("tools/call"))
                    && p.attributes.get("gen_ai.tool.name") == Some(&json!(tool))
            })
        };
        if measured("mcp.server.operation.duration", "remote-add")
            && measured("mcp.server.operation.duration", "add")
            && measured("mcp.client.operation.duration", "add")
        {
            break;
        }
        let names: std::collections::BTreeSet<_> = points.iter().map(|p| &p.name).collect();
        assert!(
            tokio::time::Instant::now() < deadline,
            "MCP durations did not arrive; metrics received: {names:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A tool's error result (request 8) and a JSON-RPC error (request 9) are the error types of
/// their server spans.
fn assert_failures_typed(spans: &[ReceivedSpan]) {
    let attribute = |span: &ReceivedSpan, key: &str| span.attributes.get(key).cloned();
    let answered = |id: &str| {
        spans
            .iter()
            .find(|s| {
                s.service_name == "mcp-gateway"
                    && s.kind == "server"
                    && s.attributes.get("jsonrpc.request.id") == Some(&json!(id))
                    && s.trace_id != TRACE
            })
            .unwrap_or_else(|| panic!("the span of request {id}; received:\n{}", dump(spans)))
    };
    let failed = answered("8");
    assert_eq!(attribute(failed, "error.type"), Some(json!("tool_error")));
    assert_eq!(failed.status, "error");
    let unknown = answered("9");
    assert_eq!(unknown.name, "tools/call");
    assert_eq!(attribute(unknown, "gen_ai.tool.name"), None);
    assert_eq!(attribute(unknown, "error.type"), Some(json!("-32602")));
    assert_eq!(
        attribute(unknown, "rpc.response.status_code"),
        Some(json!("-32602"))
    );
}

/// The session of `server` (a server span of the gateway, in `session`) is named by a digest of
/// its id: the id itself would let whoever reads the traces use the session. Each request of
/// the session carries the same.
fn session_is_named_by_a_digest(
    otlp: &OtlpReceiver,
    spans: &[ReceivedSpan],
    server: &ReceivedSpan,
    session: &str,
) {
    let digest = server
        .attributes
        .get("mcp.session.id")
        .and_then(|d| d.as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("mcp.session.id of {server:?}"));
    assert!(
        digest.len() == 16 && digest.bytes().all(|b| b.is_ascii_hexdigit()),
        "{digest}"
    );
    assert!(!session.contains(&digest) && !digest.contains(session));
    let other_request = spans
        .iter()
        .find(|s| {
            s.service_name == "mcp-gateway"
                && s.kind == "server"
                && s.attributes.get("jsonrpc.request.id") == Some(&json!("9"))
        })
        .unwrap_or_else(|| panic!("the span of request 9; received:\n{}", dump(spans)));
    assert_eq!(
        other_request.attributes.get("mcp.session.id"),
        Some(&json!(digest))
    );
    assert!(
        !otlp.everything_as_text().contains(session),
        "the session id is exported"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_through_a_gateway_is_one_trace_from_the_callers_meta_to_the_mounted_server() {
    let otlp = OtlpReceiver::start().await;
    let mounted = fixture(&otlp, "mcp-mounted", None);
    let mounted_port = mounted.base.rsplit(':').next().unwrap().to_owned();
    let gateway = fixture(&otlp, "mcp-gateway", Some(&format!("{}/mcp", mounted.base)));
    let session = call_with_meta(&format!("{}/mcp", gateway.base)).await;

    let spans = otlp
        .wait_for_spans(
            |spans| {
                let ended = |service: &str, name: &str| {
                    spans
                        .iter()
                        .any(|s| s.trace_id == TRACE && s.service_name == service && s.name == name)
                };
                let failed =
                    |name: &str| spans.iter().any(|s| s.name == name && s.status == "error");
                // The unknown tool's span is named after its method alone.
                ended("mcp-mounted", "execute_tool add")
                    && ended("mcp-gateway", "tools/call remote-add")
                    && failed("tools/call remote-add")
                    && failed("tools/call")
            },
            Duration::from_secs(20),
        )
        .await;
    let gateway_server = spans
        .iter()
        .find(|s| s.service_name == "mcp-gateway" && s.trace_id == TRACE && s.kind == "server")
        .unwrap();
    assert_eq!(gateway_server.name, "tools/call remote-add");
    assert_eq!(gateway_server.trace_id, TRACE);
    assert_eq!(gateway_server.parent_span_id, PARENT, "{}", dump(&spans));
    assert_eq!(gateway_server.kind, "server");
    let attribute = |span: &ReceivedSpan, key: &str| span.attributes.get(key).cloned();
    for (key, value) in [
        ("mcp.method.name", json!("tools/call")),
        ("gen_ai.tool.name", json!("remote-add")),
        ("gen_ai.operation.name", json!("execute_tool")),
        ("jsonrpc.request.id", json!("7")),
        ("mcp.protocol.version", json!("2025-11-25")),
        ("network.transport", json!("tcp")),
    ] {
        assert_eq!(
            attribute(gateway_server, key),
            Some(value),
            "{key} of {gateway_server:?}"
        );
    }
    assert!(attribute(gateway_server, "request_id").is_some());
    session_is_named_by_a_digest(&otlp, &spans, gateway_server, &session);
    assert_eq!(gateway_server.status, "unset");
    // The HTTP request that carried it, in a trace of its own, is linked.
    let [(link_trace, link_span)] = gateway_server.links.as_slice() else {
        panic!("one link from {gateway_server:?}");
    };
    let request = spans
        .iter()
        .find(|s| &s.trace_id == link_trace && &s.span_id == link_span)
        .unwrap_or_else(|| panic!("the linked span; received:\n{}", dump(&spans)));
    assert_eq!(request.name, "POST /mcp");
    assert_ne!(request.trace_id, TRACE);

    let gateway_call = child(&spans, gateway_server, "execute_tool remote-add");
    let client = child(&spans, gateway_call, "tools/call add");
    assert_eq!(client.kind, "client");
    assert_eq!(client.service_name, "mcp-gateway");
    for (key, value) in [
        ("mcp.method.name", json!("tools/call")),
        ("gen_ai.tool.name", json!("add")),
        ("server.address", json!("127.0.0.1")),
        ("server.port", json!(mounted_port.parse::<u16>().unwrap())),
        ("network.transport", json!("tcp")),
        ("mcp.protocol.version", json!("2025-11-25")),
    ] {
        assert_eq!(attribute(client, key), Some(value), "{key} of {client:?}");
    }
    // The request carried the client span's context as headers too: the mounted server's HTTP
    // span is in the trace, beside its MCP span.
    let mounted_request = child(&spans, client, "POST /mcp");
    assert_eq!(mounted_request.service_name, "mcp-mounted");
    assert_eq!(mounted_request.kind, "server");
    let mounted_server = child(&spans, client, "tools/call add");
    assert_eq!(mounted_server.kind, "server");
    assert_eq!(mounted_server.service_name, "mcp-mounted");
    let mounted_call = child(&spans, mounted_server, "execute_tool add");
    assert_eq!(mounted_call.service_name, "mcp-mounted");

    assert_failures_typed(&spans);
    wait_for_durations(&otlp).await;
    drop(gateway);
    drop(mounted);
}

/// `rpc` with `session`'s headers at `url`: the JSON-RPC answer.
async fn rpc(http: &reqwest::Client, url: &str, session: Option<&str>, body: Value) -> Value {
    let mut request = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(s) = session {
        request = request
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let answer = request.send().await.unwrap();
    let session = answer
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = answer.text().await.unwrap();
    if text.is_empty() {
        return json!({"session": session});
    }
    let mut message = tool_test_support::sse_message(&text);
    message["session"] = json!(session);
    message
}

/// What a caller made up, in every name this test sends that names nothing.
const MADE_UP: &str = "made-up";

/// The MCP requests of [`made_up_names_are_in_no_span_name_and_no_metric_attribute`], by
/// id: what each asks, and the name its server span must have.
fn requests() -> Vec<(u32, Value, &'static str)> {
    let call = |name: &str| json!({"name": name, "arguments": {"a": 1, "b": 2}});
    let prompt = |name: &str| json!({"name": name});
    let read = |uri: &str| json!({"uri": uri});
    vec![
        (
            1,
            json!(["tools/call", call("made-up-tool-1")]),
            "tools/call",
        ),
        (
            2,
            json!(["tools/call", call("made-up-tool-2")]),
            "tools/call",
        ),
        (3, json!(["tools/call", call("add")]), "tools/call add"),
        (
            4,
            json!(["prompts/get", prompt("made-up-prompt")]),
            "prompts/get",
        ),
        (
            5,
            json!(["prompts/get", prompt("test_simple_prompt")]),
            "prompts/get test_simple_prompt",
        ),
        (
            6,
            json!(["resources/read", read("test://made-up/1")]),
            "resources/read",
        ),
        (
            7,
            json!(["resources/read", read("test://static-text")]),
            "resources/read",
        ),
        (
            8,
            json!(["completion/complete", {
                "ref": {"type": "ref/prompt", "name": "made-up-prompt"},
                "argument": {"name": "x", "value": ""}}]),
            "completion/complete",
        ),
    ]
}

/// Sends [`requests`] in a session at `base`, then over HTTP a method a caller made up and a
/// call of a tool that does not exist.
async fn send_made_up_names(base: &str) {
    let url = format!("{base}/mcp");
    let http = reqwest::Client::new();
    let init = tool_test_support::mcp_initialize("2025-11-25");
    let init = rpc(&http, &url, None, init).await;
    let session = init["session"].as_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    rpc(&http, &url, Some(&session), initialized).await;
    for (id, request, _) in requests() {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": request[0], "params": request[1]});
        let answer = rpc(&http, &url, Some(&session), body).await;
        let failed = answer["error"].is_object();
        assert_eq!(failed, [1, 2, 4, 6, 8].contains(&id), "{id}: {answer}");
    }
    let made_up = reqwest::Method::from_bytes(b"FOO").unwrap();
    let answer = http
        .request(made_up, format!("{base}/tools/made-up-tool-3"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 405);
    let answer = http
        .post(format!("{base}/tools/made-up-tool-4"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 404);
}

/// The server span of MCP request `id`.
fn server_span(spans: &[ReceivedSpan], id: u32) -> Option<&ReceivedSpan> {
    spans.iter().find(|s| {
        s.kind == "server" && s.attributes.get("jsonrpc.request.id") == Some(&json!(id.to_string()))
    })
}

/// The pipeline's spans of calls of tools that do not exist.
fn unknown_calls(spans: &[ReceivedSpan]) -> Vec<&ReceivedSpan> {
    let made_up = |s: &&ReceivedSpan| {
        s.attributes
            .get("tool")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("made-up-tool"))
    };
    spans.iter().filter(made_up).collect()
}

/// The span of the HTTP request whose method a caller made up.
fn other_method(spans: &[ReceivedSpan]) -> Option<&ReceivedSpan> {
    spans
        .iter()
        .find(|s| s.attributes.get("url.path") == Some(&json!("/tools/made-up-tool-3")))
}

/// Waits for the spans of [`send_made_up_names`]: none has a made-up name in its name.
async fn assert_span_names(otlp: &OtlpReceiver) {
    let spans = otlp
        .wait_for_spans(
            |spans| {
                requests()
                    .iter()
                    .all(|(id, _, _)| server_span(spans, *id).is_some())
                    && unknown_calls(spans).len() == 3
                    && other_method(spans).is_some()
            },
            Duration::from_secs(20),
        )
        .await;
    for span in &spans {
        assert!(
            !span.name.contains(MADE_UP) && !span.name.contains("FOO"),
            "a made-up name in a span's name: {span:?}"
        );
    }
    for (id, _, name) in requests() {
        let span = server_span(&spans, id).unwrap();
        assert_eq!(span.name, name, "request {id}:\n{}", dump(&spans));
    }
    let attribute = |id: u32, key: &str| server_span(&spans, id).unwrap().attributes.get(key);
    assert_eq!(attribute(1, "gen_ai.tool.name"), None);
    assert_eq!(attribute(3, "gen_ai.tool.name"), Some(&json!("add")));
    assert_eq!(attribute(4, "gen_ai.prompt.name"), None);
    let simple = json!("test_simple_prompt");
    assert_eq!(attribute(5, "gen_ai.prompt.name"), Some(&simple));
    // A resource's URI is an attribute, as the conventions require it, never in the name.
    let uri = |uri: &str| Some(json!(uri));
    assert_eq!(
        attribute(6, "mcp.resource.uri").cloned(),
        uri("test://made-up/1")
    );
    assert_eq!(
        attribute(7, "mcp.resource.uri").cloned(),
        uri("test://static-text")
    );
    for call in unknown_calls(&spans) {
        assert_eq!(call.name, "execute_tool", "{call:?}");
    }
    let other = other_method(&spans).unwrap();
    assert_eq!(other.attributes["http.request.method"], json!("_OTHER"));
    let original = &other.attributes["http.request.method_original"];
    assert_eq!(original, &json!("FOO"));
    let route = other.attributes["http.route"].as_str().unwrap();
    assert_eq!(other.name, format!("HTTP {route}"));
}

/// Waits for the metrics of [`send_made_up_names`]: every name a caller made up is
/// `_unknown` or `_OTHER`.
async fn assert_labels(otlp: &OtlpReceiver) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let points = loop {
        let points = otlp.metric_points();
        let labelled = |name: &str, key: &str, value: &str| {
            points
                .iter()
                .any(|p| p.name == name && p.attributes.get(key) == Some(&json!(value)))
        };
        let mcp = "mcp.server.operation.duration";
        if labelled(mcp, "gen_ai.tool.name", "_unknown")
            && labelled(mcp, "gen_ai.tool.name", "add")
            && labelled(
                "http.server.request.duration",
                "http.request.method",
                "_OTHER",
            )
            && labelled("tool_runtime.calls", "gen_ai.tool.name", "_unknown")
        {
            break points;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the metrics did not arrive: {points:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for point in &points {
        for value in point.attributes.values() {
            let value = value.to_string();
            assert!(
                !value.contains(MADE_UP) && !value.contains("FOO"),
                "a made-up name as a metric's attribute: {point:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn made_up_names_are_in_no_span_name_and_no_metric_attribute() {
    let otlp = OtlpReceiver::start().await;
    let served = fixture(&otlp, "mcp-names", None);
    send_made_up_names(&served.base).await;
    assert_span_names(&otlp).await;
    assert_labels(&otlp).await;
    drop(served);
}
