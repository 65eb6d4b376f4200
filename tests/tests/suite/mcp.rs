//! The MCP adapter (`tool_runtime::mcp`).
//!
//! - Against the official Python SDK client: progress, cancellation, panics, time-outs,
//!   wrapped non-object outputs and unconfirmed destructive calls, over stdio, in both protocol
//!   eras (`tests/python/mcp_check.py fixture`; the demo app's own run is in
//!   `demo-app/tests/mcp.rs`).
//! - Raw JSON-RPC on stdio: every protocol version the official SDKs offer is negotiated as
//!   asked, unknown methods (`server/discover`-like probes of newer clients) get `-32601`.
//! - The mapping itself: annotations, output wrappers, role-filtered listings.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;

use serde_json::{Value, json};
use tool_runtime::layers::policy::RequireRoles;
use tool_runtime::mcp::McpServer;
use tool_runtime::{Registry, tool};

fn fixture_checks(mode: &str, version: &str, transport: &[&str]) {
    let python = tool_test_support::python_with("mcp, jsonschema");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python/mcp_check.py");
    let out = Command::new(python)
        .arg(script)
        .args(["fixture", "--mode", mode])
        .args(transport)
        .output()
        .unwrap();
    tool_test_support::expect_checks(
        &out,
        &[
            "connect",
            "list",
            "wrapped_output",
            "progress",
            "errors",
            "cancelled",
            "asked",
            "resources",
            "prompts",
            "complete",
            "subscribe",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("ok connect {version}")),
        "{stdout}"
    );
}

const STDIO: &[&str] = &["--stdio", env!("CARGO_BIN_EXE_mcp-fixture"), "mcp"];

#[test]
fn official_client_progress_cancellation_and_failures_with_initialize() {
    fixture_checks("legacy", "2025-11-25", STDIO);
}

#[test]
fn official_client_progress_cancellation_and_failures_with_discover() {
    fixture_checks("auto", "2026-07-28", STDIO);
}

/// `mcp-fixture serve` on a free port, with `extra` arguments; its `/mcp` URL.
pub(crate) fn serve_fixture(extra: &[&str]) -> (tool_test_support::Served, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-fixture"));
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(extra)
        .stderr(Stdio::null());
    let served = tool_test_support::Served::spawn(command);
    let url = format!("{}/mcp", served.base);
    (served, url)
}

#[test]
fn official_client_over_streamable_http_with_initialize() {
    let (_served, url) = serve_fixture(&[]);
    fixture_checks("legacy", "2025-11-25", &["--url", &url]);
}

#[test]
fn official_client_over_streamable_http_with_discover() {
    let (_served, url) = serve_fixture(&[]);
    fixture_checks("auto", "2026-07-28", &["--url", &url]);
}

/// `mcp-fixture mcp` spoken to line by line.
struct Stdio_ {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Stdio_ {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-fixture"))
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message that answers request `id` (notifications are skipped).
    fn answer(&mut self, id: i64) -> Value {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "stdout closed"
            );
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"));
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn initialize(&mut self, version: &str) -> Value {
        self.send(&tool_test_support::mcp_initialize(version));
        let answer = self.answer(0);
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }
}

impl Drop for Stdio_ {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn negotiates_every_version_the_official_sdks_offer() {
    // Python SDK 2.x and TypeScript SDK 1.x offer these through `initialize` (the TypeScript
    // client's first request id is 0, as here); 2026-07-28 comes through `server/discover`,
    // which the Python client test above covers.
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut s = Stdio_::start();
        let answer = s.initialize(version);
        assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
        assert_eq!(answer["result"]["serverInfo"]["name"], "tool-tests");
        assert!(
            answer["result"]["capabilities"]["tools"].is_object(),
            "{answer}"
        );
        // The tasks extension is for 2026-07-28's requests only, which need no `initialize`.
        assert!(
            answer["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
                .is_null(),
            "{answer}"
        );
        s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
        let tools = s.answer(1);
        assert_eq!(
            tools["result"]["tools"].as_array().unwrap().len(),
            45,
            "{tools}"
        );
    }
    // A version from the future gets the newest one this server speaks with `initialize`.
    let mut s = Stdio_::start();
    let answer = s.initialize("2099-01-01");
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
}

#[test]
fn unknown_methods_get_method_not_found_not_silence() {
    let mut s = Stdio_::start();
    s.initialize("2025-11-25");
    for (id, method) in [(1, "server/frobnicate"), (2, "tools/explode")] {
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}));
        let answer = s.answer(id);
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
    // Still serving.
    s.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "numbers", "arguments": {"n": 2}}}));
    let answer = s.answer(3);
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"result": [0, 1]})
    );
    assert_eq!(answer["result"]["isError"], false);
}

#[test]
fn discover_probe_is_answered() {
    let mut s = Stdio_::start();
    s.send(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}}}),
    );
    let answer = s.answer(7);
    let versions = answer["result"]["supportedVersions"]
        .as_array()
        .expect("versions");
    for v in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        assert!(versions.contains(&json!(v)), "{v} missing: {answer}");
    }
}

#[test]
fn unknown_tool_is_the_invalid_params_error() {
    let mut s = Stdio_::start();
    s.initialize("2025-11-25");
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "numbrs", "arguments": {}}}));
    let answer = s.answer(1);
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["data"]["suggestions"], json!(["numbers"]));
}

#[test]
fn the_fixtures_add_reports_overflow_as_its_own_error() {
    let mut s = Stdio_::start();
    s.initialize("2025-11-25");
    let big = 1_i64 << 62;
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "add", "arguments": {"a": big, "b": big}}}));
    let answer = s.answer(1);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("overflow: "), "{text}");
    s.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "add", "arguments": {"a": big, "b": -big}}}));
    assert_eq!(
        s.answer(2)["result"]["structuredContent"],
        json!({"result": 0})
    );
}

// --- the mapping, in process ---------------------------------------------------------------

/// Lists the backups.
#[tool(annotations(read_only, idempotent), roles("ops"))]
async fn backups() -> Vec<String> {
    Vec::new()
}

/// Deletes a backup.
#[tool(annotations(destructive, open_world))]
async fn backup_delete(#[arg(length(max = 10))] id: String) -> String {
    id
}

fn registry() -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(backups::descriptor())
            .tool(backup_delete::descriptor())
            .policy(RequireRoles)
            .build()
            .unwrap(),
    )
}

#[test]
fn listing_maps_annotations_and_filters_by_role() {
    let server = McpServer::new(registry());
    let all: Vec<Value> = server
        .list(&tool_runtime::Caller::new(tool_runtime::Source::Mcp).roles(["ops"]))
        .into_iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    let names: Vec<&str> = all.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["backup_delete", "backups"]);
    assert_eq!(
        all[0]["annotations"],
        json!({"title": "Backup delete", "destructiveHint": true, "openWorldHint": true})
    );
    assert_eq!(
        all[1]["annotations"],
        json!({"title": "Backups", "readOnlyHint": true, "idempotentHint": true})
    );
    assert_eq!(all[1]["title"], "Backups");
    assert_eq!(all[1]["description"], "Lists the backups.");
    assert_eq!(all[0]["inputSchema"]["type"], "object");
    // Without the role, the role-gated tool is not listed.
    let visible: Vec<String> = server
        .list(&tool_runtime::Caller::new(tool_runtime::Source::Mcp))
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    assert_eq!(visible, ["backup_delete"]);
}

// --- every pipeline outcome through the adapter, in process --------------------------------

/// Finds a backup; its own error when there is none.
#[tool(annotations(read_only))]
async fn backup_find(
    #[arg(length(max = 10))] id: String,
) -> Result<String, tool_runtime::ToolError> {
    Err(tool_runtime::ToolError::not_found(format!(
        "no backup `{id}`"
    )))
}

/// Starts a backup, at most once a minute.
#[tool(annotations(read_only), rate = "1/min")]
async fn backup_start() -> String {
    "started".into()
}

/// Newline-delimited JSON-RPC to an in-process server over a duplex pipe.
pub(crate) struct Pipe {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Pipe {
    /// A server with no session yet: 2026-07-28 requests stand alone, their `_meta` saying
    /// what `initialize` would have.
    pub(crate) fn connect(registry: Arc<Registry>) -> Self {
        use tokio::io::AsyncBufReadExt;
        let (client, server) = tokio::io::duplex(1 << 16);
        let (sr, sw) = tokio::io::split(server);
        tokio::spawn(McpServer::new(registry).serve_on(sr, sw));
        let (cr, cw) = tokio::io::split(client);
        Self {
            write: cw,
            read: tokio::io::BufReader::new(cr).lines(),
        }
    }

    async fn start(registry: Arc<Registry>) -> Self {
        let mut pipe = Self::connect(registry);
        pipe.send(tool_test_support::mcp_initialize("2025-11-25"))
            .await;
        pipe.answer(0).await;
        pipe.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        pipe
    }

    pub(crate) async fn send(&mut self, message: Value) {
        use tokio::io::AsyncWriteExt;
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    pub(crate) async fn answer(&mut self, id: i64) -> Value {
        self.answer_after(id).await.0
    }

    /// The answer to request `id`, and every message that came before it.
    pub(crate) async fn answer_after(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let line = self.read.next_line().await.unwrap().expect("open");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return (message, before);
            }
            before.push(message);
        }
    }

    async fn call(&mut self, id: i64, name: &str, arguments: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": name, "arguments": arguments}}))
            .await;
        self.answer(id).await["result"].clone()
    }
}

fn error_text(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    result["content"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn every_pipeline_error_is_an_is_error_result_naming_its_type() {
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(backup_find::descriptor())
            .tool(backup_start::descriptor())
            .tool(backup_delete::descriptor())
            .policy(|call: &tool_runtime::tool::PendingCall| {
                if call.meta().name == "backup_delete" && call.args()["id"] == "prod" {
                    Err("`prod` backups are kept".to_owned())
                } else {
                    Ok(())
                }
            })
            .build()
            .unwrap(),
    );
    let mut pipe = Pipe::start(registry).await;

    let own = pipe.call(1, "backup_find", json!({"id": "b1"})).await;
    assert_eq!(error_text(&own), "not_found: no backup `b1`");

    let first = pipe.call(2, "backup_start", json!({})).await;
    assert_eq!(first["structuredContent"], json!({"result": "started"}));
    let limited = pipe.call(3, "backup_start", json!({})).await;
    let text = error_text(&limited);
    assert!(text.starts_with("rate_limited:"), "{text}");
    assert!(text.ends_with("(retryable)"), "{text}");

    let forbidden = pipe.call(4, "backup_delete", json!({"id": "prod"})).await;
    let text = error_text(&forbidden);
    assert!(
        text.starts_with("forbidden:") && text.contains("`prod` backups are kept"),
        "{text}"
    );

    // This client declared no elicitation: refused, and told why.
    let unconfirmed = pipe.call(5, "backup_delete", json!({"id": "old"})).await;
    let text = error_text(&unconfirmed);
    assert!(text.starts_with("confirmation_required:"), "{text}");
    assert!(text.contains("no elicitation capability"), "{text}");

    let invalid = pipe
        .call(6, "backup_find", json!({"id": "much-too-long", "x": 1}))
        .await;
    let text = error_text(&invalid);
    assert!(text.starts_with("invalid_arguments:"), "{text}");
    assert!(
        text.contains("\n  /id:") && text.contains("\n  /x:"),
        "{text}"
    );
}

/// A validation failure says each thing once: the type, then the violation the message names,
/// not listed again; with several, the count and one line each.
#[tokio::test]
async fn a_validation_failure_is_worded_once() {
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(backup_find::descriptor())
            .tool(sized::descriptor())
            .build()
            .unwrap(),
    );
    let mut pipe = Pipe::start(registry).await;
    let one = pipe.call(1, "sized", json!({"count": 5})).await;
    assert_eq!(
        error_text(&one),
        "invalid_arguments: /count: 5 is less than the minimum of 30\n  (retryable)"
    );
    let two = pipe
        .call(2, "backup_find", json!({"id": "much-too-long", "x": 1}))
        .await;
    let text = error_text(&two);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("invalid_arguments: 2 violations"),
        "{text}"
    );
    let mut rest: Vec<&str> = lines.collect();
    assert_eq!(rest.pop(), Some("  (retryable)"), "{text}");
    rest.sort_unstable();
    assert_eq!(rest.len(), 2, "{text}");
    assert!(rest[0].starts_with("  /id: "), "{text}");
    assert!(rest[1].starts_with("  /x: "), "{text}");
    assert_eq!(text.matches("/id").count(), 1, "{text}");
}

/// Sizes things with every fixed-width number schemars gives a format of its own.
#[tool(annotations(read_only))]
async fn sized(
    #[arg(range(min = 30))] count: u32,
    small: Option<u8>,
    offset: Option<i32>,
    index: Option<usize>,
    ratio: Option<f64>,
) -> Vec<u64> {
    let _ = (small, offset, index, ratio);
    vec![u64::from(count)]
}

/// Every `format` in `schema`, with the path to it.
fn formats_in(schema: &Value, at: &str, found: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "format"
                    && let Some(f) = v.as_str()
                {
                    found.push((at.to_owned(), f.to_owned()));
                } else {
                    formats_in(v, &format!("{at}/{k}"), found);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                formats_in(v, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

/// `tools/list` carries only the formats JSON Schema defines (ajv, in the TypeScript SDK, warns
/// of any other on every listing); the bounds say what `uint32` said, and still hold.
#[tokio::test]
async fn tools_list_carries_only_json_schema_formats_and_keeps_the_bounds() {
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(sized::descriptor())
            .build()
            .unwrap(),
    );
    // The canonical schema keeps schemars' formats: the CLI reads them.
    let canonical = registry.get("sized").unwrap().input_schema().clone();
    assert_eq!(canonical["properties"]["count"]["format"], "uint32");
    let mut pipe = Pipe::start(registry).await;
    pipe.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let listed = pipe.answer(1).await;
    let tool = &listed["result"]["tools"][0];
    let mut found = Vec::new();
    formats_in(tool, "", &mut found);
    assert_eq!(found, Vec::<(String, String)>::new(), "{tool}");
    let p = &tool["inputSchema"]["properties"];
    assert_eq!(
        (&p["count"]["minimum"], &p["count"]["maximum"]),
        (&json!(30), &json!(u32::MAX))
    );
    assert_eq!(p["small"]["maximum"], 255, "{p}");
    assert_eq!(p["offset"]["minimum"], i32::MIN, "{p}");
    assert_eq!(p["index"]["minimum"], 0, "{p}");
    assert_eq!(
        tool["outputSchema"]["properties"]["result"]["items"]["maximum"],
        u64::MAX,
        "{tool}"
    );
}

/// Empties a backup store.
#[tool(annotations(destructive))]
async fn store_wipe(
    store: String,
    runs: tool_runtime::State<std::sync::atomic::AtomicUsize>,
) -> String {
    runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!("wiped {store}")
}

/// The outcome of every pipeline run, as the audit would record it.
#[derive(Default, Clone)]
struct Outcomes(Arc<std::sync::Mutex<Vec<String>>>);

impl tool_runtime::layers::hooks::CallObserver for Outcomes {
    fn observe<'a>(
        &'a self,
        call: tool_runtime::layers::hooks::CompletedCall<'a>,
    ) -> futures_util::future::BoxFuture<'a, ()> {
        let outcome = call
            .envelope
            .error()
            .map_or("ok", |e| e.kind().as_str())
            .to_owned();
        self.0.lock().unwrap().push(outcome);
        Box::pin(async {})
    }
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // Reason: one scenario, step by step, whose audit trail is checked at its end.
async fn on_2026_07_28_an_accept_runs_only_the_call_its_token_was_issued_for() {
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let outcomes = Outcomes::default();
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(store_wipe::descriptor())
            .state::<std::sync::atomic::AtomicUsize>(runs.clone())
            .observer(outcomes.clone())
            .confirmation_lifetime(std::time::Duration::from_secs(1))
            .build()
            .unwrap(),
    );
    let mut pipe = Pipe::connect(registry.clone());
    let mut id = 0;
    // A 2026-07-28 call that stands alone, from a client that can ask its user; `retry` adds
    // the answer (`inputResponses`) and what it echoes (`requestState`).
    let mut call = async |store: &str, retry: Value| {
        id += 1;
        let mut params = json!({"name": "store_wipe", "arguments": {"store": store}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}});
        for (k, v) in retry.as_object().unwrap() {
            params[k] = v.clone();
        }
        pipe.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        let answer = pipe.answer(id).await;
        // A request state not sealed here for this call is a protocol error, before any run.
        if let Some(error) = answer.get("error") {
            return json!({"error": error});
        }
        answer["result"].clone()
    };
    let accept = |state: Option<&str>| {
        let mut retry = json!({"inputResponses": {"confirm": {"action": "accept", "content": {}}}});
        if let Some(state) = state {
            retry["requestState"] = json!(state);
        }
        retry
    };
    let refused = |result: &Value| {
        let text = error_text(result);
        assert!(text.starts_with("confirmation_required:"), "{text}");
    };

    // Asked inline: the question, and the sealed state (with the call's token) to echo.
    let asked = call("a", json!({})).await;
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert!(
        asked["inputRequests"]["confirm"]["params"]["message"]
            .as_str()
            .unwrap()
            .contains('a'),
        "{asked}"
    );
    let token = asked["requestState"].as_str().unwrap().to_owned();

    // An accept that echoes no state confirms nothing.
    refused(&call("a", accept(None)).await);
    // The state of a question about other arguments, or one altered, is refused before the
    // call runs: it opens only for the caller and the request it was sealed for.
    let other = call("b", json!({})).await["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let forged = format!("{token}x");
    for state in [other.as_str(), forged.as_str(), "c1-forged"] {
        let answer = call("a", accept(Some(state))).await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("requestState was refused"),
            "{answer}"
        );
    }
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 0);

    // The accept with the token of this very call runs it, once.
    let done = call("a", accept(Some(&token))).await;
    assert_eq!(
        done["structuredContent"],
        json!({"result": "wiped a"}),
        "{done}"
    );
    // The same state again: its token is used up.
    refused(&call("a", accept(Some(&token))).await);
    // A decline runs nothing.
    let declined = call(
        "a",
        json!({"inputResponses": {"confirm": {"action": "decline"}}}),
    )
    .await;
    assert!(
        error_text(&declined).starts_with("confirmation_declined:"),
        "{declined}"
    );
    // Nor a state whose token is past its lifetime (this registry's tokens live a second).
    let expired = call("a", json!({})).await["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    refused(&call("a", accept(Some(&expired))).await);
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 1);

    // One record per pipeline run: each question, each refusal, the one run; a state refused
    // before the pipeline runs nothing.
    let seen = outcomes.0.lock().unwrap().clone();
    let required = "confirmation_required".to_owned();
    assert_eq!(
        seen,
        [
            vec![required.clone(); 3],
            vec!["ok".to_owned()],
            vec![required; 4],
        ]
        .concat(),
        "{seen:?}"
    );
}

/// Restores a backup; its id travels in the header `Mcp-Param-Backup` too.
#[tool(roles("ops"))]
async fn backup_restore(#[arg(header = "Backup")] id: String) -> String {
    id
}

/// SEP-2243 on 2026-07-28: a parameter marked `#[arg(header = "...")]` is listed with
/// `x-mcp-header`, and a call whose `Mcp-Param-*` header differs from its argument is refused
/// (-32020, HTTP 400) before it runs; for a caller the tool is hidden from, the headers are not
/// checked against it, and the call is answered as any unknown tool's.
#[tokio::test]
async fn a_parameter_header_that_differs_from_its_argument_is_refused() {
    use tool_runtime::app;
    use tool_runtime::http::{Auth, ServerOptions};
    let auth = Auth::from_toml(
        "[[tokens]]\ntoken = \"ops-token\"\nprincipal = \"olga\"\nroles = [\"ops\"]\n\n\
         [[tokens]]\ntoken = \"dev-token\"\nprincipal = \"dan\"\nroles = []\n",
    )
    .unwrap();
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(backup_restore::descriptor())
            .policy(RequireRoles)
            .build()
            .unwrap(),
    );
    let options = ServerOptions::default().auth(auth);
    let base = tool_test_support::serve_on_loopback(app::router(registry, options)).await;
    let http = reqwest::Client::new();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    // A 2026-07-28 request standing alone, with its standard headers and `extra` ones: the
    // status and the JSON-RPC answer (a plain body or a one-event stream).
    let post = async |token: &str, method: &str, params: Value, extra: &[(&str, &str)]| {
        let mut params = params;
        params["_meta"] = meta.clone();
        let mut request = http
            .post(format!("{base}/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response = request.json(&body).send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let answer: Value =
            serde_json::from_str(&text).unwrap_or_else(|_| tool_test_support::sse_message(&text));
        (status, answer)
    };
    let (_, listed) = post("ops-token", "tools/list", json!({}), &[]).await;
    assert_eq!(
        listed["result"]["tools"][0]["inputSchema"]["properties"]["id"]["x-mcp-header"], "Backup",
        "{listed}"
    );
    let call = async |token: &str, header: &str| {
        let params = json!({"name": "backup_restore", "arguments": {"id": "b1"}});
        let headers = [("mcp-name", "backup_restore"), ("mcp-param-backup", header)];
        post(token, "tools/call", params, &headers).await
    };
    let (status, refused) = call("ops-token", "b2").await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (400, &json!(-32020)),
        "{refused}"
    );
    let (status, answered) = call("ops-token", "b1").await;
    assert_eq!(status, 200, "{answered}");
    assert_eq!(
        answered["result"]["structuredContent"]["result"], "b1",
        "{answered}"
    );
    let (_, hidden) = call("dev-token", "b2").await;
    assert_eq!(hidden["error"]["data"]["type"], "unknown_tool", "{hidden}");
}

#[tokio::test]
async fn over_http_the_token_decides_what_is_listed_and_who_calls() {
    use tool_runtime::app;
    use tool_runtime::http::{Auth, ServerOptions};
    let auth = Auth::from_toml(
        "[[tokens]]\ntoken = \"ops-token\"\nprincipal = \"olga\"\nroles = [\"ops\"]\n\n\
         [[tokens]]\ntoken = \"dev-token\"\nprincipal = \"dan\"\nroles = []\n",
    )
    .unwrap();
    let options = ServerOptions::default().auth(auth);
    let base = tool_test_support::serve_on_loopback(app::router(registry(), options)).await;
    let url = format!("{base}/mcp");
    let http = reqwest::Client::new();
    let rpc = |token: &'static str, session: Option<String>, body: Value| {
        let mut request = http
            .post(&url)
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(s) = session {
            request = request
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.send()
    };
    let data = tool_test_support::sse_message;
    let mut listed = Vec::new();
    for token in ["ops-token", "dev-token"] {
        let init = rpc(token, None, tool_test_support::mcp_initialize("2025-11-25"))
            .await
            .unwrap();
        assert_eq!(init.status(), 200);
        let session = init.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let _ = rpc(
            token,
            Some(session.clone()),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await
        .unwrap();
        let tools = rpc(
            token,
            Some(session.clone()),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
        let names: Vec<String> = data(&tools)["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        let call = rpc(token, Some(session), json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                    "params": {"name": "backups", "arguments": {}}}))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        listed.push((names, data(&call)));
    }
    assert_eq!(listed[0].0, ["backup_delete", "backups"]);
    assert_eq!(
        listed[0].1["result"]["structuredContent"],
        json!({"result": []})
    );
    assert_eq!(listed[1].0, ["backup_delete"]);
    // A tool hidden from this token is answered as one that does not exist.
    let error = &listed[1].1["error"];
    assert_eq!(error["code"], -32602, "{}", listed[1].1);
    assert_eq!(error["data"]["type"], "unknown_tool", "{}", listed[1].1);
}

#[tokio::test]
async fn a_session_answers_only_the_principal_that_opened_it() {
    use tool_runtime::app;
    use tool_runtime::http::{Auth, ServerOptions};
    // Two tokens of one principal (with other roles), and another principal's.
    let auth = Auth::from_toml(
        "[[tokens]]\ntoken = \"olga-1\"\nprincipal = \"olga\"\nroles = [\"ops\"]\n\n\
         [[tokens]]\ntoken = \"olga-2\"\nprincipal = \"olga\"\nroles = []\n\n\
         [[tokens]]\ntoken = \"dan\"\nprincipal = \"dan\"\nroles = [\"ops\"]\n",
    )
    .unwrap();
    let base = tool_test_support::serve_on_loopback(app::router(
        registry(),
        ServerOptions::default().auth(auth),
    ))
    .await;
    let url = format!("{base}/mcp");
    let http = reqwest::Client::new();
    let send =
        |method: reqwest::Method, token: &str, session: Option<&str>, body: Option<Value>| {
            let mut request = http
                .request(method, &url)
                .bearer_auth(token)
                .header("accept", "application/json, text/event-stream");
            if let Some(s) = session {
                request = request
                    .header("mcp-session-id", s)
                    .header("mcp-protocol-version", "2025-11-25");
            }
            if let Some(body) = body {
                request = request.json(&body);
            }
            request.send()
        };
    let post = |token: &str, session: Option<&str>, body: Value| {
        send(reqwest::Method::POST, token, session, Some(body))
    };
    let init = post(
        "olga-1",
        None,
        tool_test_support::mcp_initialize("2025-11-25"),
    )
    .await
    .unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    // Not even the handshake's end is taken from another principal.
    let done = post("dan", Some(&session), initialized.clone())
        .await
        .unwrap();
    assert_eq!(done.status(), 404);
    let done = post("olga-1", Some(&session), initialized).await.unwrap();
    assert_eq!(done.status(), 202);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});

    // Another principal is answered as for a session that does not exist: its requests, the
    // session's event stream, its DELETE.
    let unknown = "00000000000000000000000000000000";
    for id in [session.as_str(), unknown] {
        let listed = post("dan", Some(id), list.clone()).await.unwrap();
        assert_eq!(listed.status(), 404, "{id}");
        let listed = listed.text().await.unwrap();
        assert_eq!(listed, "Not Found: Session not found");
        let stream = send(reqwest::Method::GET, "dan", Some(id), None)
            .await
            .unwrap();
        assert_eq!(stream.status(), 404, "{id}");
        let end = send(reqwest::Method::DELETE, "dan", Some(id), None)
            .await
            .unwrap();
        assert_eq!(end.status(), 404, "{id}");
    }

    // The same principal with another token is served: the session is hers, not the token's.
    for token in ["olga-1", "olga-2"] {
        let listed = post(token, Some(&session), list.clone()).await.unwrap();
        assert_eq!(listed.status(), 200, "{token}");
        let listed = tool_test_support::sse_message(&listed.text().await.unwrap());
        assert!(listed["result"]["tools"].is_array(), "{listed}");
    }
    let end = send(reqwest::Method::DELETE, "olga-2", Some(&session), None)
        .await
        .unwrap();
    assert_eq!(end.status(), 204);
    let gone = post("olga-1", Some(&session), list).await.unwrap();
    assert_eq!(gone.status(), 404);
}

#[test]
fn shutdown_lets_mcp_calls_finish_and_does_not_wait_for_idle_sessions() {
    let python = tool_test_support::python_with("mcp");
    let (mut served, url) = serve_fixture(&["--grace-period", "120"]);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python/mcp_check.py");
    // The client keeps its session (and its event stream) open while the server shuts down.
    let out = Command::new(python)
        .arg(script)
        .args(["shutdown", "--mode", "legacy", "--url", &url])
        .args(["--pid", &served.child.id().to_string()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ok finished_during_shutdown"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Well inside the 120 s grace period: the idle session did not hold the server up.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(status) = served.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server waited for an idle MCP session"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
}

#[test]
fn stdio_works_when_standard_streams_are_not_pipes() {
    // MCP clients may hand the server sockets or files instead of pipes (Node.js uses sockets);
    // the SDK then falls back to the blocking standard streams. Regression: the CLI held the
    // stdout lock for the whole run, so no answer ever came out.
    let dir = tool_test_support::TempDir::new("mcp-stdio-file");
    let input = dir.join("in.jsonl");
    let lines = [
        tool_test_support::mcp_initialize("2025-11-25"),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "numbers", "arguments": {"n": 1}}}),
    ];
    std::fs::write(
        &input,
        lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    let output = dir.join("out.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-fixture"))
        .arg("mcp")
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "no answer within 30 s: {:?}",
                std::fs::read_to_string(&output)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let out = std::fs::read_to_string(&output).unwrap();
    assert!(status.success(), "{status}");
    let answers: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        answers[0]["result"]["protocolVersion"], "2025-11-25",
        "{out}"
    );
    assert_eq!(
        answers[1]["result"]["structuredContent"],
        json!({"result": [0]}),
        "{out}"
    );
}

#[tokio::test]
async fn bad_bodies_get_json_rpc_errors_and_sessions_end_with_204() {
    use tool_runtime::app;
    use tool_runtime::http::ServerOptions;
    let base =
        tool_test_support::serve_on_loopback(app::router(registry(), ServerOptions::default()))
            .await;
    let url = format!("{base}/mcp");
    let http = reqwest::Client::new();
    let post = |body: Vec<u8>| {
        http.post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
            .send()
    };
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    for (body, code) in [
        (br#"{"jsonrpc":"#.to_vec(), -32700),
        (deep.into_bytes(), -32700),
        (b"{}".to_vec(), -32600),
        (b"[1, 2]".to_vec(), -32600),
    ] {
        let response = post(body).await.unwrap();
        assert_eq!(response.status(), 400);
        let answer: Value = response.json().await.unwrap();
        assert_eq!(answer["error"]["code"], code, "{answer}");
        assert_eq!(answer["id"], Value::Null);
    }
    let huge = post(vec![b' '; 2 * 1024 * 1024]).await.unwrap();
    assert_eq!(huge.status(), 413);
    let init = post(serde_json::to_vec(&tool_test_support::mcp_initialize("2025-11-25")).unwrap())
        .await
        .unwrap();
    assert_eq!(init.status(), 200);
    // Ending the session: 204, as the official clients expect (the SDK says 202); then it is gone.
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let end = http
        .delete(&url)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(end.status(), 204);
    let gone = http
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
}

#[tokio::test]
async fn sessions_are_capped_and_unfinished_handshakes_expire() {
    use std::time::Duration;
    use tool_runtime::app;
    use tool_runtime::http::ServerOptions;
    const MAX: usize = 6;
    let options = ServerOptions::default()
        .max_sessions(MAX)
        .session_handshake_timeout(Duration::from_millis(400));
    let base = tool_test_support::serve_on_loopback(app::router(registry(), options)).await;
    let url = format!("{base}/mcp");
    let http = reqwest::Client::new();
    let post = |body: &Value, session: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .json(body);
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.send()
    };
    let init = tool_test_support::mcp_initialize("2025-11-25");
    let open = |n: usize| {
        let init = init.clone();
        let post = &post;
        async move {
            let mut sessions = Vec::new();
            for _ in 0..n {
                let answer = post(&init, None).await.unwrap();
                assert_eq!(answer.status(), 200);
                sessions.push(
                    answer.headers()["mcp-session-id"]
                        .to_str()
                        .unwrap()
                        .to_owned(),
                );
            }
            sessions
        }
    };
    let first = open(MAX).await;

    // At the cap, an `initialize` is refused with an answer a client can act on.
    let mut late = init.clone();
    late["id"] = json!(77);
    let refused = post(&late, None).await.unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "5");
    let answer: Value = refused.json().await.unwrap();
    assert_eq!(answer["id"], 77, "{answer}");
    assert_eq!(answer["error"]["code"], -32000);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("6 MCP sessions open"), "{message}");
    // Posts that open no session are not refused for it.
    let stray = post(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}),
        None,
    )
    .await
    .unwrap();
    assert_ne!(stray.status(), 503);

    // One client finishes its handshake; the others never do, and lose their sessions soon.
    let notified = post(
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&first[0]),
    )
    .await
    .unwrap();
    assert_eq!(notified.status(), 202);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(post(&list, Some(&first[0])).await.unwrap().status(), 200);
    for session in &first[1..] {
        assert_eq!(post(&list, Some(session)).await.unwrap().status(), 404);
    }

    // Their places are free again, and only theirs.
    let second = open(MAX - 1).await;
    assert_eq!(post(&init, None).await.unwrap().status(), 503);
    // Ending a session frees its place too.
    let end = http
        .delete(&url)
        .header("mcp-session-id", &second[0])
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(end.status(), 204);
    assert_eq!(open(1).await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initializes_racing_for_the_last_places_get_503_never_500() {
    use tool_runtime::app;
    use tool_runtime::http::ServerOptions;
    const MAX: usize = 32;
    // Each round on a new server: the race is likely in one round, and near certain in five.
    for _ in 0..5 {
        let options = ServerOptions::default().max_sessions(MAX);
        let base = tool_test_support::serve_on_loopback(app::router(registry(), options)).await;
        let url = format!("{base}/mcp");
        let http = reqwest::Client::new();
        // Many at once, so that several pass the check made before the SDK while places remain,
        // and the cap is decided when the sessions are counted in.
        let answers = futures_util::future::join_all((0..256).map(|i| {
            let mut init = tool_test_support::mcp_initialize("2025-11-25");
            init["id"] = json!(i);
            http.post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .json(&init)
                .send()
        }))
        .await;
        let mut opened = 0;
        for (i, answer) in answers.into_iter().enumerate() {
            let answer = answer.unwrap();
            match answer.status().as_u16() {
                200 => opened += 1,
                503 => {
                    let refusal: Value = answer.json().await.unwrap();
                    assert_eq!(refusal["id"], i, "{refusal}");
                    assert_eq!(refusal["error"]["code"], -32000, "{refusal}");
                }
                status => panic!(
                    "initialize {i}: {status} {}",
                    answer.text().await.unwrap_or_default()
                ),
            }
        }
        assert_eq!(opened, MAX);
    }
}

/// A destructive call over streamable HTTP (2025-11-25, in a session) waits on the question it
/// asked when the server stops accepting connections: the answer, which comes in a request of
/// its own, could no longer reach it (a balancer sends it to another replica), so the call
/// fails at once, saying so, instead of being cut at the end of the grace period and leaving
/// its client resuming a stream that will never answer. The tool did not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_pending_when_the_server_stops_accepting_fails_its_call_at_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};
    use tool_runtime::app;
    use tool_runtime::http::{self, ServerOptions};

    let runs = Arc::new(AtomicUsize::new(0));
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(store_wipe::descriptor())
            .state::<AtomicUsize>(runs.clone())
            .build()
            .unwrap(),
    );
    let options = ServerOptions::default().grace(Duration::from_secs(60));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(
        listener,
        app::router(registry, options.clone()),
        async {
            let _ = stopped.await;
        },
        &options,
    ));

    let http = reqwest::Client::new();
    let post = |session: Option<&str>, body: Value| {
        let mut request = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let opened = post(None, init).await.unwrap();
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = opened.text().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(Some(&session), initialized).await.unwrap().status(),
        202
    );
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "store_wipe", "arguments": {"store": "a"}}});
    let mut stream = post(Some(&session), call).await.unwrap();
    let mut seen = String::new();
    while !seen.contains("elicitation/create") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.chunk())
            .await
            .expect("the question")
            .unwrap()
            .expect("the stream open");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }

    // The server stops accepting (no drain) while the question waits for its answer.
    let stopping = Instant::now();
    stop.send(()).unwrap();
    while !seen.contains("\"id\":1") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.chunk())
            .await
            .expect("the call answered within seconds, not at the end of the grace period")
            .unwrap()
            .unwrap_or_else(|| panic!("the stream ended unanswered: {seen}"));
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let answer = seen
        .lines()
        .filter_map(|l| l.strip_prefix("data:").map(str::trim))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .find(|m| m["id"] == 1)
        .unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    // Not confirmed, and why: the question could not be answered here any more.
    assert!(
        text.starts_with("confirmation_required:")
            && text.contains("the server is shutting down")
            && text.contains("call again"),
        "{text}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the tool ran unconfirmed");
    drop(stream);
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the server stopped within seconds")
        .unwrap()
        .unwrap();
    assert!(stopping.elapsed() < Duration::from_secs(20));
}
