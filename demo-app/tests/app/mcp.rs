//! `demo-app mcp` (stdio) and `demo-app serve` (`/mcp`, behind bearer tokens) driven by the
//! official MCP clients: the Python SDK's (`tests/python/mcp_check.py`), once with the
//! `initialize` handshake (protocol 2025-11-25) and once as SDK 2.x connects by default
//! (`server/discover`, protocol 2026-07-28); and the TypeScript SDK's
//! (`tests/node/mcp_check.mjs`), which spawns the server with sockets rather than pipes: 1.x on
//! 2025-11-25, and 2.x pinned to 2026-07-28, which confirms the destructive tool through an
//! input-required result.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tool_test_support::Served;

const CHECKS: &[&str] = &[
    "connect",
    "list",
    "annotations",
    "device_add",
    "invalid_arguments",
    "unknown_tool",
    "device_pair",
    "demo_resources",
    "demo_prompt",
    "demo_subscribe",
    "destructive_refused",
    "elicitation_declined",
    "elicitation_accepted",
];

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/python/mcp_check.py")
}

/// Runs the client; asserts it got through every check and that the protocol was `version`.
fn run_client(args: &[&str], version: &str) {
    let python = tool_test_support::python_with("mcp, jsonschema");
    let out = Command::new(python)
        .arg(script())
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    tool_test_support::expect_checks(&out, CHECKS);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("ok connect {version}")),
        "negotiated another protocol version than {version}:\n{stdout}"
    );
}

fn stdio(mode: &str, version: &str) {
    let dir = tool_test_support::TempDir::new(&format!("demo-mcp-{mode}"));
    let db = dir.path().join("d.db");
    run_client(
        &[
            "demo",
            "--mode",
            mode,
            "--stdio",
            env!("CARGO_BIN_EXE_demo-app"),
            "--db",
            db.to_str().unwrap(),
            "mcp",
        ],
        version,
    );
}

#[test]
fn stdio_with_the_initialize_handshake() {
    stdio("legacy", "2025-11-25");
}

#[test]
fn stdio_as_sdk_2_connects_by_default() {
    stdio("auto", "2026-07-28");
}

fn serve(dir: &Path) -> Served {
    let auth = dir.join("auth.toml");
    std::fs::write(
        &auth,
        "[[tokens]]\ntoken = \"alice-token\"\nprincipal = \"alice\"\nroles = [\"admin\"]\n",
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_demo-app"));
    command
        .arg("--db")
        .arg(dir.join("d.db"))
        .args(["serve", "--addr", "127.0.0.1:0", "--auth-file"])
        .arg(&auth)
        .env_remove("RUST_LOG")
        .stderr(Stdio::null());
    Served::spawn(command)
}

fn http(mode: &str, version: &str) {
    let dir = tool_test_support::TempDir::new(&format!("demo-mcp-{}", &format!("http-{mode}")));
    let server = serve(dir.path());
    let url = format!("{}/mcp", server.base);
    run_client(
        &[
            "demo",
            "--mode",
            mode,
            "--url",
            &url,
            "--token",
            "alice-token",
        ],
        version,
    );
}

#[test]
fn streamable_http_with_the_initialize_handshake() {
    http("legacy", "2025-11-25");
}

#[test]
fn streamable_http_as_sdk_2_connects_by_default() {
    http("auto", "2026-07-28");
}

#[test]
fn streamable_http_needs_the_token() {
    let dir = tool_test_support::TempDir::new(&format!("demo-mcp-{}", "http-auth"));
    let server = serve(dir.path());
    let addr = server.base.strip_prefix("http://").unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let answer = |token: Option<&str>| {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    };
    let refused = answer(None);
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert!(refused.contains("www-authenticate: Bearer"), "{refused}");
    let refused = answer(Some("mallory-token"));
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    let accepted = answer(Some("alice-token"));
    assert!(accepted.starts_with("HTTP/1.1 200"), "{accepted}");
    assert!(
        accepted.contains("\"protocolVersion\":\"2025-11-25\""),
        "{accepted}"
    );
}

/// `node tests/node/mcp_check.mjs --sdk SDK ARGS`, asserting it got through every check on
/// `version`.
fn run_node(sdk: &str, version: &str, args: &[&str]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/node");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "this test needs the MCP TypeScript SDK: run the tests with `bash tests/run.sh`, or \
         `npm ci` in tests/node (Node.js 18 or newer)"
    );
    let out = Command::new("node")
        .arg(dir.join("mcp_check.mjs"))
        .args(["--sdk", sdk])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run `node` ({e}): install Node.js 18 or newer"));
    tool_test_support::expect_checks(
        &out,
        &[
            "connect",
            "formats",
            "list",
            "device_add",
            "invalid_arguments",
            "unknown_tool",
            "destructive_refused",
            "elicitation_accepted",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("ok connect {version}")),
        "spoke another protocol version than {version}:\n{stdout}"
    );
}

fn typescript_over_stdio(sdk: &str, version: &str) {
    let dir = tool_test_support::TempDir::new(&format!("demo-mcp-ts{sdk}-stdio"));
    let db = dir.path().join("d.db");
    run_node(
        sdk,
        version,
        &[
            "--stdio",
            env!("CARGO_BIN_EXE_demo-app"),
            "--db",
            db.to_str().unwrap(),
            "mcp",
        ],
    );
}

fn typescript_over_http(sdk: &str, version: &str) {
    let dir = tool_test_support::TempDir::new(&format!("demo-mcp-ts{sdk}-http"));
    let server = serve(dir.path());
    run_node(
        sdk,
        version,
        &[
            "--url",
            &format!("{}/mcp", server.base),
            "--token",
            "alice-token",
        ],
    );
}

#[test]
fn typescript_sdk_client_over_stdio() {
    typescript_over_stdio("1", "(stdio)");
}

#[test]
fn typescript_sdk_client_over_streamable_http() {
    typescript_over_http("1", "2025-11-25");
}

#[test]
fn typescript_sdk_2_client_on_2026_07_28_over_stdio() {
    typescript_over_stdio("2", "2026-07-28");
}

#[test]
fn typescript_sdk_2_client_on_2026_07_28_over_streamable_http() {
    typescript_over_http("2", "2026-07-28");
}

/// No line a peer sends ends `demo-app mcp` or goes unanswered: messages before the first
/// request are passed over, lines that are not JSON get -32700 and JSON that is not JSON-RPC
/// -32600 (both with `"id": null`), bad params of a known method -32602; the session then works.
#[test]
fn stdio_survives_bad_lines_and_messages_before_initialize() {
    use std::io::{BufRead, BufReader, Write};
    let dir = std::env::temp_dir().join(format!("demo-app-mcp-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .arg("--db")
        .arg(dir.join("d.db"))
        .arg("mcp")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || -> serde_json::Value {
        serde_json::from_str(&lines.next().expect("an answer").unwrap()).unwrap()
    };
    let mut send = |line: &str| writeln!(stdin, "{line}").unwrap();
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
    send(r#"{"jsonrpc":"2.0","id":8,"error":{"code":1,"message":"stray"}}"#);
    send("{}");
    let answer = next();
    assert_eq!(answer["id"], serde_json::Value::Null);
    assert_eq!(answer["error"]["code"], -32600);
    send("not json");
    let answer = next();
    assert_eq!(answer["id"], serde_json::Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}"#);
    let answer = next();
    assert_eq!(
        (answer["id"].as_i64(), answer["error"]["code"].as_i64()),
        (Some(3), Some(-32602))
    );
    // A request before `initialize` is not refused as out of order: since protocol 2026-07-28 a
    // request may stand alone if its `_meta` carries the protocol version and client details.
    // Without them it gets the SDK's -32602 naming what is missing, and the server keeps serving.
    send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let answer = next();
    assert_eq!(
        (answer["id"].as_i64(), answer["error"]["code"].as_i64()),
        (Some(2), Some(-32602))
    );
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("_meta"), "{message}");
    // A request the SDK refuses starts no session: a notification after it is passed over
    // still, not handed to the SDK (which would end the server on it). Found by the fuzzer.
    send(r#"{"jsonrpc":"2.0","id":9,"method":"initi`lize"}"#);
    assert_eq!(next()["id"], 9);
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert_eq!(next()["id"], 1);
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#);
    let answer = next();
    assert_eq!(answer["id"], 4);
    assert!(answer["result"]["tools"].as_array().unwrap().len() >= 4);
    // A second `initialize` is refused, and the session keeps the version it negotiated (the SDK
    // alone would take this unknown one, and then answer `ping` as an unknown method). Found by
    // the fuzzer.
    send(
        r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2hhh","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    let answer = next();
    assert_eq!(
        (answer["id"].as_i64(), answer["error"]["code"].as_i64()),
        (Some(5), Some(-32600))
    );
    send(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#);
    let answer = next();
    assert_eq!(
        (answer["id"].as_i64(), &answer["result"]),
        (Some(6), &serde_json::json!({}))
    );
    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The MCP SDK logs whole messages at `debug` and `trace`: at any `RUST_LOG` that does not name
/// it, a secret argument sent over MCP reaches no log line. Naming it shows them, as asked.
#[test]
fn a_secret_sent_over_mcp_reaches_no_log_unless_the_sdk_log_is_asked_for() {
    let dir = std::env::temp_dir().join(format!("demo-app-mcp-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log_of = |rust_log: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_demo-app"))
            .arg("--db")
            .arg(dir.join("d.db"))
            .arg("mcp")
            .env("RUST_LOG", rust_log)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"device_pair","arguments":{"code":"98765432","device_name":"x"}}}"#,
        ] {
            std::io::Write::write_all(&mut stdin, format!("{line}\n").as_bytes()).unwrap();
        }
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stderr).unwrap()
    };
    for level in ["debug", "trace"] {
        let log = log_of(level);
        assert!(log.contains("tool=\"device_pair\""), "{log}");
        assert!(!log.contains("98765432"), "RUST_LOG={level}:\n{log}");
    }
    let asked = log_of("warn,rmcp=debug");
    assert!(asked.contains("98765432"), "{asked}");
    let _ = std::fs::remove_dir_all(&dir);
}
