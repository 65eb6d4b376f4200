//! Telemetry as a collector and a scraper see it: `demo-app serve` exporting to an OTLP receiver
//! on loopback (decoding the protobuf requests), its `GET /metrics` read by Prometheus's own
//! parser, a collector that is down, never answers or holds its answers.

// Reason: the samples compared are counts, exact in an `f64`.
#![allow(clippy::float_cmp)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tool_test_support::otlp::{OtlpReceiver, ReceivedPoint, ReceivedSpan, closed_port, dump, find};
use tool_test_support::{Served, TempDir, python_with};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";
const TOKEN: &str = "t-operator-5f1c";

/// `demo-app` in `dir`, exporting to `endpoint` quickly (spans every 100 ms, metrics every
/// 300 ms), with `config` as its configuration; its standard error in `dir/stderr`.
fn demo(dir: &TempDir, endpoint: &str, config: &str) -> Command {
    let file = dir.join("demo-app.toml");
    std::fs::write(&file, config).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_demo-app"));
    command
        .arg("--db")
        .arg(dir.join("demo.db"))
        .arg("--config")
        .arg(&file)
        .arg("--audit-log")
        .arg(dir.join("audit.jsonl"))
        .env_remove("RUST_LOG")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "300")
        .env("OTEL_SERVICE_NAME", "demo-under-test")
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap());
    command
}

/// [`demo`]'s `serve`, with a token for an operator and one for a viewer.
fn serve(dir: &TempDir, endpoint: &str, config: &str) -> Served {
    Served::spawn(serve_command(dir, endpoint, config))
}

/// The command [`serve`] runs.
fn serve_command(dir: &TempDir, endpoint: &str, config: &str) -> Command {
    let auth = dir.join("auth.toml");
    std::fs::write(
        &auth,
        format!(
            "[[tokens]]\ntoken = \"{TOKEN}\"\nprincipal = \"ops\"\nroles = [\"admin\"]\n\
             [[tokens]]\ntoken = \"t-viewer\"\nprincipal = \"viewer\"\nroles = []\n"
        ),
    )
    .unwrap();
    let mut command = demo(dir, endpoint, config);
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--auth-file"])
        .arg(&auth);
    command
}

/// `POST /tools/{tool}` with `args`, as the operator, with `headers`: the status, the
/// `x-request-id` and the body.
async fn call(
    served: &Served,
    tool: &str,
    args: &Value,
    headers: &[(&str, &str)],
) -> (u16, String, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/tools/{tool}", served.base))
        .bearer_auth(TOKEN)
        .json(args);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let id = response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    (status, id, response.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_call_is_one_trace_under_the_callers_parent() {
    let receiver = OtlpReceiver::start().await;
    let dir = TempDir::new("otel-trace");
    let served = serve(&dir, &receiver.endpoint(), "");
    let traceparent = format!("00-{TRACE}-{PARENT}-01");
    let (status, request_id, body) = call(
        &served,
        "device_add",
        &json!({"workspace": "lab"}),
        &[("traceparent", &traceparent)],
    )
    .await;
    assert_eq!(status, 200, "{body}");

    let spans = receiver
        .wait_for_spans(
            |spans| spans.iter().any(|s| s.name == "execute_tool device_add"),
            Duration::from_secs(20),
        )
        .await;
    let http_span = find(&spans, "POST /tools/device_add");
    let tool_span = find(&spans, "execute_tool device_add");
    let context = dump(&spans);
    assert_eq!(http_span.kind, "server", "{context}");
    assert_eq!(http_span.trace_id, TRACE, "the caller's trace is continued");
    assert_eq!(http_span.parent_span_id, PARENT, "{context}");
    assert_eq!(http_span.service_name, "demo-under-test");
    assert_eq!(
        http_span.attributes["http.response.status_code"],
        json!(200)
    );
    assert_eq!(
        http_span.attributes["http.route"],
        json!("/tools/device_add")
    );
    assert_eq!(tool_span.trace_id, TRACE, "{context}");
    assert_eq!(tool_span.parent_span_id, http_span.span_id, "{context}");
    assert_eq!(tool_span.kind, "internal");
    assert_eq!(
        tool_span.attributes["gen_ai.operation.name"],
        json!("execute_tool")
    );
    assert_eq!(
        tool_span.attributes["gen_ai.tool.name"],
        json!("device_add")
    );
    // Its stages, in order, as events of the span.
    let stages: Vec<&str> = tool_span
        .events
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        stages,
        [
            "validated",
            "admitted",
            "intent recorded",
            "tool returned",
            "outcome recorded"
        ],
        "{context}"
    );
    for span in [http_span, tool_span] {
        assert_eq!(
            span.attributes["request_id"],
            json!(request_id),
            "{context}"
        );
    }

    // The log's line of the request, inside its span, leads to the trace.
    let stderr = std::fs::read_to_string(dir.join("stderr")).unwrap();
    let line = stderr
        .lines()
        .find(|l| l.contains("path=\"/tools/device_add\""))
        .unwrap_or_else(|| panic!("the request's log line:\n{stderr}"));
    assert!(
        line.starts_with(&format!("trace_id={TRACE} span_id={} ", http_span.span_id)),
        "{line}"
    );

    // The audit record carries the trace.
    let audit: Value = reqwest::Client::new()
        .get(format!("{}/audit?tool=device_add", served.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(audit["calls"][0]["trace_id"], json!(TRACE), "{audit}");
}

/// The samples of `GET /metrics` as Prometheus's parser reads them.
async fn scrape(served: &Served, token: &str) -> (u16, Vec<Value>) {
    let response = reqwest::Client::new()
        .get(format!("{}/metrics", served.base))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    if status != 200 {
        return (status, Vec::new());
    }
    let parsed = parse_prometheus(&text);
    (status, parsed)
}

fn parse_prometheus(text: &str) -> Vec<Value> {
    use std::io::Write;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/python/prometheus_parse.py");
    let mut child = Command::new(python_with("prometheus_client"))
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "Prometheus's parser refused the text: {}\n{text}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The value of the sample `name` whose labels include `labels`, summed over the others.
fn sample(samples: &[Value], name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| s["name"] == name)
        .filter(|s| labels.iter().all(|(k, v)| s["labels"][*k] == *v))
        .map(|s| s["value"].as_f64().unwrap())
        .sum()
}

/// Of the samples of [`metrics_count_calls_by_tool_and_outcome`]: the MCP tool and the HTTP
/// method a caller made up are `_unknown` and `_OTHER`, and no label is a name it made up.
fn made_up_names_are_not_labels(samples: &[Value]) {
    let calls = "tool_runtime_calls_total";
    assert_eq!(
        sample(
            samples,
            calls,
            &[("gen_ai_tool_name", "_unknown"), ("source", "mcp")]
        ),
        1.0
    );
    let mcp = [
        ("mcp_method_name", "tools/call"),
        ("gen_ai_tool_name", "_unknown"),
    ];
    assert_eq!(
        sample(samples, "mcp_server_operation_duration_seconds_count", &mcp),
        1.0,
        "{samples:#?}"
    );
    let other = [
        ("http_request_method", "_OTHER"),
        ("http_response_status_code", "405"),
    ];
    assert_eq!(
        sample(
            samples,
            "http_server_request_duration_seconds_count",
            &other
        ),
        1.0,
        "{samples:#?}"
    );
    let made_up = ["no_such_tool", "no_such_mcp_tool", "FOO"];
    for s in samples {
        let labels = s["labels"].as_object().unwrap();
        assert!(
            !labels
                .values()
                .any(|v| made_up.iter().any(|m| v.as_str() == Some(*m))),
            "a made-up name as a label: {s}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_calls_by_tool_and_outcome() {
    let receiver = OtlpReceiver::start().await;
    let dir = TempDir::new("otel-metrics");
    let served = serve(&dir, &receiver.endpoint(), "");
    for _ in 0..3 {
        assert_eq!(call(&served, "device_list", &json!({}), &[]).await.0, 200);
    }
    assert_eq!(
        call(&served, "device_add", &json!({"bogus": 1}), &[])
            .await
            .0,
        422
    );
    assert_eq!(call(&served, "no_such_tool", &json!({}), &[]).await.0, 404);
    // A method and an MCP tool a caller made up.
    let method = reqwest::Method::from_bytes(b"FOO").unwrap();
    let answer = reqwest::Client::new()
        .request(method, format!("{}/tools/no_such_tool", served.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 405);
    let answer = mcp_call(&served, "no_such_mcp_tool", &json!({})).await;
    assert!(answer.is_null(), "a JSON-RPC error: {answer}");

    let (status, samples) = scrape(&served, TOKEN).await;
    assert_eq!(status, 200);
    let calls = "tool_runtime_calls_total";
    let ok = [
        ("gen_ai_tool_name", "device_list"),
        ("outcome", "ok"),
        ("source", "http"),
    ];
    assert_eq!(sample(&samples, calls, &ok), 3.0, "{samples:#?}");
    let invalid = [
        ("gen_ai_tool_name", "device_add"),
        ("outcome", "invalid_arguments"),
    ];
    assert_eq!(sample(&samples, calls, &invalid), 1.0);
    // A name the caller made up is not a label: unknown tools are counted together.
    let unknown = [
        ("gen_ai_tool_name", "_unknown"),
        ("outcome", "unknown_tool"),
        ("source", "http"),
    ];
    assert_eq!(sample(&samples, calls, &unknown), 1.0);
    made_up_names_are_not_labels(&samples);
    assert_eq!(
        sample(&samples, "tool_runtime_call_duration_seconds_count", &ok),
        3.0
    );
    let route = [
        ("http_route", "/tools/device_list"),
        ("http_request_method", "POST"),
        ("http_response_status_code", "200"),
    ];
    assert_eq!(
        sample(
            &samples,
            "http_server_request_duration_seconds_count",
            &route
        ),
        3.0,
        "{samples:#?}"
    );
    // For operators only.
    assert_eq!(scrape(&served, "t-viewer").await.0, 403);
}

/// A `tools/call` of `tool` with `args` over MCP (protocol 2026-07-28, standing alone), as the
/// operator: its result.
async fn mcp_call(served: &Served, tool: &str, args: &Value) -> Value {
    let params = json!({"name": tool, "arguments": args, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}});
    let response = reqwest::Client::new()
        .post(format!("{}/mcp", served.base))
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
        .send()
        .await
        .unwrap();
    let body = response.text().await.unwrap();
    tool_test_support::sse_message(&body)["result"].clone()
}

/// Whether a point of metric `name` has `attributes` among its own.
fn measured(points: &[ReceivedPoint], name: &str, attributes: &[(&str, &str)]) -> bool {
    points.iter().any(|p| {
        p.name == name
            && attributes
                .iter()
                .all(|(k, v)| p.attributes.get(*k) == Some(&json!(v)))
    })
}

/// Whether `spans` hold every span of a flush of the four calls of [`pair_and_collect`]: each
/// call's `execute_tool` span (by source), its HTTP request's span, and over MCP its server
/// span.
fn every_span(spans: &[ReceivedSpan]) -> bool {
    let tool = |name: &str, source: &str| {
        spans
            .iter()
            .any(|s| s.name == name && s.attributes.get("source") == Some(&json!(source)))
    };
    let named = |name: &str, count: usize| spans.iter().filter(|s| s.name == name).count() >= count;
    ["http", "mcp"].iter().all(|source| {
        tool("execute_tool device_list", source) && tool("execute_tool device_pair", source)
    }) && named("POST /tools/device_list", 1)
        && named("POST /tools/device_pair", 1)
        && named("POST /mcp", 2)
        && named("tools/call device_list", 1)
        && named("tools/call device_pair", 1)
}

/// Whether `points` hold every metric of the four calls of [`pair_and_collect`]: the calls by
/// tool, outcome and source, the HTTP requests by route, the MCP requests by tool.
fn every_metric(points: &[ReceivedPoint]) -> bool {
    let calls = [("device_list", "ok"), ("device_pair", "invalid_code")];
    let counted = ["http", "mcp"].iter().all(|source| {
        calls.iter().all(|(tool, outcome)| {
            let labels = [
                ("gen_ai.tool.name", *tool),
                ("outcome", *outcome),
                ("source", *source),
            ];
            measured(points, "tool_runtime.calls", &labels)
                && measured(points, "tool_runtime.call.duration", &labels)
        })
    });
    let routes = ["/tools/device_list", "/tools/device_pair", "/mcp"];
    let requests = routes.iter().all(|route| {
        measured(
            points,
            "http.server.request.duration",
            &[("http.route", route)],
        )
    });
    let mcp = calls.iter().all(|(tool, _)| {
        let labels = [
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", *tool),
        ];
        measured(points, "mcp.server.operation.duration", &labels)
    });
    counted && requests && mcp
}

/// The whole of what the receiver got, as text, from a server with `config` that answered a
/// `device_list` call (which succeeds) and a `device_pair` call (which fails: an unknown code)
/// over HTTP and over MCP, once every span and metric of the four has arrived.
///
/// The collector holds its answers until the four calls have returned, with the server's
/// exports already waiting on it and their time-outs far off: a call that waited on the
/// collector would not return, and one that waited a bounded while would take that much longer
/// than the same four made again once the collector answers.
async fn pair_and_collect(config: &str, name: &str) -> String {
    let receiver = OtlpReceiver::holding().await;
    let dir = TempDir::new(name);
    let mut command = serve_command(&dir, &receiver.endpoint(), config);
    for timeout in [
        "OTEL_EXPORTER_OTLP_TIMEOUT",
        "OTEL_BSP_EXPORT_TIMEOUT",
        "OTEL_METRIC_EXPORT_TIMEOUT",
    ] {
        command.env(timeout, "120000");
    }
    let served = Served::spawn(command);
    // A request's span, and the metrics exported on their interval, are held by the collector:
    // from here on, the exporters wait on it.
    let health = reqwest::get(format!("{}/healthz", served.base))
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while receiver.trace_requests() == 0 || receiver.metric_requests() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "no export reached the collector"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let pair = json!({"code": "86420731", "device_name": "Kitchen-tablet-Q7"});
    let list = json!({"workspace": "Attic-lab-Z9"});
    let calls = || async {
        let started = std::time::Instant::now();
        let (status, _, body) = call(&served, "device_list", &list, &[]).await;
        assert_eq!(status, 200, "{body}");
        let (status, _, body) = call(&served, "device_pair", &pair, &[]).await;
        assert_eq!(status, 400, "an unknown code: {body}");
        let result = mcp_call(&served, "device_list", &list).await;
        assert_eq!(result["isError"], json!(false), "{result}");
        let result = mcp_call(&served, "device_pair", &pair).await;
        assert_eq!(result["isError"], json!(true), "{result}");
        started.elapsed()
    };
    let held = tokio::time::timeout(Duration::from_secs(20), calls())
        .await
        .expect(
            "a call waited on the collector: the four did not return while it held its answers",
        );
    assert_eq!(receiver.answered(), 0, "the collector answered an export");
    receiver.release();
    // The same four with the collector answering: a call that waited on it, even for a bounded
    // while (half a second, say, then gave up), took that much longer each time above.
    let answered = calls().await;
    assert!(
        held < answered + Duration::from_secs(1),
        "a call waited on the collector: the four took {held:?} while it held its answers, \
         {answered:?} while it answered"
    );

    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (spans, points) = (receiver.spans(), receiver.metric_points());
        if every_span(&spans) && every_metric(&points) {
            for name in ["execute_tool device_pair", "tools/call device_pair"] {
                for span in spans.iter().filter(|s| s.name == name) {
                    assert_eq!(span.status, "error", "{}", dump(&spans));
                }
            }
            let tool: &ReceivedSpan = find(&spans, "execute_tool device_pair");
            assert_eq!(tool.attributes["error.type"], json!("invalid_code"));
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not every span and metric of the calls arrived; spans:\n{}\nmetrics: {:?}",
            dump(&spans),
            points
                .iter()
                .map(|p| (&p.name, &p.attributes))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    receiver.everything_as_text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_secrets_and_tokens_stay_out_of_telemetry() {
    let everything = pair_and_collect("", "otel-private").await;
    for private in [
        "Kitchen-tablet-Q7",
        "Attic-lab-Z9",
        "86420731",
        TOKEN,
        "[redacted]",
    ] {
        assert!(
            !everything.contains(private),
            "`{private}` reached the collector with capture off"
        );
    }
    let captured = pair_and_collect("[otel]\ncapture_content = true\n", "otel-captured").await;
    assert!(captured.contains("Kitchen-tablet-Q7"), "captured arguments");
    assert!(captured.contains("Attic-lab-Z9"), "captured arguments");
    assert!(captured.contains("[redacted]"), "the secret, redacted");
    for private in ["86420731", TOKEN] {
        assert!(
            !captured.contains(private),
            "`{private}` reached the collector with capture on"
        );
    }
}

/// Calls `device_list` `n` times: each answers 200 at once, whatever the collector does.
async fn calls_succeed(served: &Served, n: usize) {
    for _ in 0..n {
        let started = std::time::Instant::now();
        assert_eq!(call(served, "device_list", &json!({}), &[]).await.0, 200);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "a call waited on the collector"
        );
    }
}

/// Waits until `GET /metrics` counts dropped spans; the stderr of the server then.
async fn drops_counted(served: &Served, dir: &TempDir) -> String {
    let failed = [("error_type", "export_failed")];
    for _ in 0..100 {
        let (_, samples) = scrape(served, TOKEN).await;
        if sample(&samples, "tool_runtime_telemetry_exported_total", &failed) > 0.0 {
            return std::fs::read_to_string(dir.join("stderr")).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!(
        "no dropped spans counted; stderr:\n{}",
        std::fs::read_to_string(dir.join("stderr")).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_that_is_down_or_silent_never_fails_a_call() {
    let closed = format!("http://127.0.0.1:{}", closed_port());
    let silent = OtlpReceiver::hanging().await;
    for (endpoint, name) in [(closed, "otel-down"), (silent.endpoint(), "otel-silent")] {
        let dir = TempDir::new(name);
        let served = serve(&dir, &endpoint, "");
        calls_succeed(&served, 3).await;
        drops_counted(&served, &dir).await;
        // More failed exports, still one line in the log.
        calls_succeed(&served, 3).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let stderr = drops_counted(&served, &dir).await;
        let said = stderr
            .lines()
            .filter(|l| l.contains("cannot export to the OpenTelemetry collector"))
            .count();
        assert_eq!(said, 1, "{name}: the failure is logged once:\n{stderr}");
    }
    assert!(silent.trace_requests() + silent.metric_requests() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_authenticated_callers_may_continue_a_trace_when_so_configured() {
    let receiver = OtlpReceiver::start().await;
    let dir = TempDir::new("otel-inbound");
    let config = "[otel]\ninbound = \"authenticated\"\n";
    let traceparent = format!("00-{TRACE}-{PARENT}-01");
    // Without an auth file no caller is authenticated: a trace of the server's own.
    let mut command = demo(&dir, &receiver.endpoint(), config);
    command.args(["serve", "--addr", "127.0.0.1:0"]);
    let open = Served::spawn(command);
    let response = reqwest::Client::new()
        .post(format!("{}/tools/device_list", open.base))
        .header("traceparent", &traceparent)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let spans = receiver
        .wait_for_spans(
            |spans| spans.iter().any(|s| s.name == "POST /tools/device_list"),
            Duration::from_secs(20),
        )
        .await;
    let ignored = find(&spans, "POST /tools/device_list");
    assert_ne!(ignored.trace_id, TRACE, "{}", dump(&spans));
    assert_eq!(ignored.parent_span_id, "");
    drop(open);

    // With a valid token, the caller's trace is continued.
    let dir = TempDir::new("otel-inbound-token");
    let served = serve(&dir, &receiver.endpoint(), config);
    let (status, _, _) = call(
        &served,
        "device_list",
        &json!({}),
        &[("traceparent", &traceparent)],
    )
    .await;
    assert_eq!(status, 200);
    let spans = receiver
        .wait_for_spans(
            |spans| spans.iter().any(|s| s.trace_id == TRACE),
            Duration::from_secs(20),
        )
        .await;
    let continued = spans
        .iter()
        .find(|s| s.trace_id == TRACE && s.name == "POST /tools/device_list")
        .unwrap_or_else(|| panic!("{}", dump(&spans)));
    assert_eq!(continued.parent_span_id, PARENT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_shot_command_exports_before_it_exits_or_gives_up_soon() {
    let receiver = OtlpReceiver::start().await;
    let dir = TempDir::new("otel-one-shot");
    let output = demo(&dir, &receiver.endpoint(), "")
        .args(["--json", "device-list"])
        .output()
        .unwrap();
    assert!(output.status.success());
    // Exported at exit: no waiting here beyond the receiver's own bookkeeping.
    let spans = receiver
        .wait_for_spans(
            |spans| spans.iter().any(|s| s.name == "execute_tool device_list"),
            Duration::from_secs(5),
        )
        .await;
    assert_eq!(
        find(&spans, "execute_tool device_list").attributes["source"],
        json!("cli")
    );

    // A collector that never answers holds the command up for the bounded flush only.
    let silent = OtlpReceiver::hanging().await;
    let dir = TempDir::new("otel-one-shot-silent");
    let started = std::time::Instant::now();
    let output = demo(&dir, &silent.endpoint(), "")
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "30000")
        .args(["--json", "device-list"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the command waited {:?} for the collector",
        started.elapsed()
    );
}
