//! The examples in `tool-runtime/examples/`, the files the README gives users to copy: each is
//! run as its first lines say to run it, and what it answers is checked. `cargo test
//! --workspace` (the README's test command) builds them before any test runs; a binary that is
//! missing or older than its source fails here, naming the command that builds it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tool_test_support::Served;

/// The examples this file runs: a new example gets a test here, or this fails.
const RUN_HERE: [&str; 4] = ["one_tool", "cli_only", "server_with_auth", "mcp_server"];

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-runtime/examples")
}

/// The built example, beside this test binary's `deps/` folder.
fn example(name: &str) -> Command {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let binary = dir.join("examples").join(name);
    let source = sources().join(format!("{name}.rs"));
    let built = std::fs::metadata(&binary).and_then(|m| m.modified());
    let written = std::fs::metadata(&source)
        .and_then(|m| m.modified())
        .expect("the example's source");
    assert!(
        built.is_ok_and(|built| built >= written),
        "{} is missing or older than {}: build the examples with `cargo build -p tool-runtime \
         --examples` (the README's test command, `cargo test --workspace`, does)",
        binary.display(),
        source.display()
    );
    Command::new(binary)
}

fn output(mut command: Command) -> (i32, String, String) {
    let out = command.output().expect("the example runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_example_is_run_here() {
    let mut found: Vec<String> = std::fs::read_dir(sources())
        .expect("tool-runtime/examples")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .collect();
    found.sort();
    let mut known: Vec<String> = RUN_HERE.iter().map(|s| (*s).to_owned()).collect();
    known.sort();
    assert_eq!(
        found, known,
        "each example in tool-runtime/examples has a test here"
    );
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .expect("README.md");
    for name in RUN_HERE {
        assert!(
            readme.contains(&format!("examples/{name}.rs")),
            "the README lists `tool-runtime/examples/{name}.rs`"
        );
    }
}

#[test]
fn one_tool_calls_its_tool_through_the_pipeline() {
    let (code, stdout, stderr) = output(example("one_tool"));
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("an envelope per line"))
        .collect();
    assert_eq!(lines[0]["result"], "Hello, Ada!", "{stdout}");
    assert_eq!(lines[1]["error"]["type"], "invalid_arguments", "{stdout}");
}

#[test]
fn cli_only_is_a_command_line() {
    let mut add = example("cli_only");
    add.args(["add", "2", "--b", "3"]);
    let (code, stdout, stderr) = output(add);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains('5'), "{stdout}");

    let mut greet = example("cli_only");
    greet.args(["-g", "Hi", "greet", "Ada"]);
    let (code, stdout, stderr) = output(greet);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Hi") && stdout.contains("Ada"), "{stdout}");

    let mut wrong = example("cli_only");
    wrong.args(["add", "two"]);
    let (code, _, stderr) = output(wrong);
    assert_eq!(code, 2, "a usage error: {stderr}");
}

#[tokio::test]
async fn server_with_auth_asks_every_caller_for_a_token() {
    let server = Served::spawn(example("server_with_auth"));
    let client = reqwest::Client::new();
    let url = format!("{}/tools/shout", server.base);
    let anonymous = client
        .post(&url)
        .json(&serde_json::json!({"text": "hi"}))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(anonymous.status(), 401);
    let alice = client
        .post(&url)
        .bearer_auth("alice-token")
        .json(&serde_json::json!({"text": "hi"}))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(alice.status(), 200);
    let body: serde_json::Value = alice.json().await.expect("an envelope");
    assert_eq!(body["result"], "HI", "{body}");
}

#[test]
fn mcp_server_answers_on_stdio() {
    let mut command = example("mcp_server");
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the example starts");
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut answer = |message: serde_json::Value| {
        writeln!(stdin, "{message}").expect("write a line");
        if message.get("id").is_none() {
            return serde_json::Value::Null;
        }
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read a line");
        serde_json::from_str::<serde_json::Value>(&line).expect("a JSON-RPC answer")
    };
    let init = answer(serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "examples-test", "version": "0"}}
    }));
    assert_eq!(init["result"]["serverInfo"]["name"], "dictionary", "{init}");
    answer(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let called = answer(serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "define", "arguments": {"word": "tool"}}
    }));
    assert_eq!(called["result"]["isError"], false, "{called}");
    let text = called["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("a thing a model can call"), "{called}");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}
