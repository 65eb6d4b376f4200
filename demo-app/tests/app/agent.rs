//! `demo-app agent`, `chat` and `POST /agent`, against a fake OpenAI server on loopback that
//! checks every request against the Chat Completions contract.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tool_runtime::agent::Api;
use tool_test_support::fake_provider::{FakeProvider, Step};

pub(super) const KEY: &str = "sk-demo-test-key-0042";

/// A scratch directory of the shared kind, removed on drop.
fn temp_dir(name: &str) -> tool_test_support::TempDir {
    tool_test_support::TempDir::new(&format!("demo-agent-{name}"))
}

/// `demo-app` with the provider's environment pointing at `fake` (or at nothing).
pub(super) fn demo(db: &Path, fake: Option<&FakeProvider>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_demo-app"));
    cmd.arg("--db").arg(db).current_dir(db.parent().unwrap());
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "DEMO_APP_CONFIG",
        "DEMO_APP_AUDIT",
        "RUST_LOG",
    ] {
        cmd.env_remove(var);
    }
    if let Some(fake) = fake {
        cmd.env("OPENAI_API_KEY", KEY)
            .env("OPENAI_BASE_URL", &fake.base_url);
    }
    cmd
}

pub(super) async fn output(mut cmd: Command, stdin: Option<&str>) -> Output {
    let stdin = stdin.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let mut child = cmd
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(input) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_run_from_the_shell_calls_tools_and_prints_the_answer() {
    let dir = temp_dir("run");
    let db = dir.join("demo.db");
    let fake = FakeProvider::start(
        Api::OpenAiChat,
        KEY,
        vec![
            Step::calls(&[(
                "device_add",
                r#"{"workspace":"home","ttl_seconds":null,"code_length":null}"#,
            )]),
            Step::text("Here is a pairing code for workspace home."),
        ],
    )
    .await;
    let mut cmd = demo(&db, Some(&fake));
    cmd.args(["agent", "pair a new phone for workspace home"]);
    let out = output(cmd, None).await;
    fake.assert_clean();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "Here is a pairing code for workspace home.");
    assert!(stderr.contains("→ device_add"), "{stderr}");
    assert!(stderr.contains("✓ device_add"), "{stderr}");
    // The agent does not see the destructive tool (the default configuration denies it).
    let offered = fake.requests()[0]["tools"].to_string();
    assert!(
        offered.contains("device_add") && !offered.contains("device_revoke"),
        "{offered}"
    );
    // The call really happened: the code is in the database.
    let mut list = demo(&db, None);
    list.args(["--json", "device-list", "home"]);
    let listed: Value = serde_json::from_slice(&output(list, None).await.stdout).unwrap();
    assert_eq!(
        listed["result"]["pending_codes"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    // No key anywhere in what was printed.
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
}

#[tokio::test(flavor = "multi_thread")]
async fn json_prints_the_transcript() {
    let dir = temp_dir("json");
    let fake = FakeProvider::start(
        Api::OpenAiChat,
        KEY,
        vec![
            Step::calls(&[("device_list", r#"{"workspace":null}"#)]),
            Step::text("No devices."),
        ],
    )
    .await;
    let mut cmd = demo(&dir.join("demo.db"), Some(&fake));
    cmd.args(["--json", "agent", "which", "devices?"]);
    let out = output(cmd, None).await;
    fake.assert_clean();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["answer"], "No devices.");
    let messages = run["transcript"]["messages"].as_array().unwrap();
    assert_eq!(
        messages[0],
        serde_json::json!({"role": "user", "text": "which devices?"})
    );
    assert_eq!(messages[2]["results"][0]["name"], "device_list");
    assert_eq!(messages[2]["results"][0]["envelope"]["status"], "ok");
    assert_eq!(run["transcript"]["tool_calls"], 1);
    assert!(!text(&out.stdout).contains(KEY));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_provider_the_commands_say_so_and_exit_2() {
    let dir = temp_dir("none");
    for args in [&["agent", "hello"][..], &["chat"][..]] {
        let mut cmd = demo(&dir.join("demo.db"), None);
        cmd.args(args);
        let out = output(cmd, Some("hi\n")).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("no model provider is configured") && stderr.contains("OPENAI_API_KEY"),
            "{stderr}"
        );
    }
    // A provider named on the command line whose key is missing: the variable is named.
    let mut cmd = demo(&dir.join("demo.db"), None);
    cmd.args(["agent", "--provider", "anthropic", "hi"]);
    let out = output(cmd, None).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("ANTHROPIC_API_KEY"));
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_keeps_the_conversation() {
    let dir = temp_dir("chat");
    let fake = FakeProvider::start(
        Api::OpenAiChat,
        KEY,
        vec![Step::text("Hello!"), Step::text("You said hi.")],
    )
    .await;
    let mut cmd = demo(&dir.join("demo.db"), Some(&fake));
    cmd.arg("chat");
    let out = output(cmd, Some("hi\nwhat did I say?\n")).await;
    fake.assert_clean();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Hello!\nYou said hi.\n");
    let second = &fake.requests()[1]["messages"];
    let roles: Vec<&str> = second
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
}

/// `serve` with `POST /agent`: the run's events as server-sent events, behind the server's
/// authentication.
#[tokio::test(flavor = "multi_thread")]
#[allow(clippy::too_many_lines)] // Reason: one server, its runs in order, then their events.
async fn serve_streams_a_run_as_server_sent_events() {
    let dir = temp_dir("serve");
    let fake = FakeProvider::start(
        Api::OpenAiChat,
        KEY,
        vec![
            Step::calls(&[("device_list", r#"{"workspace":"home"}"#)]),
            Step::text("Nothing paired in home."),
            Step::calls(&[("device_list", r#"{"workspace":"home"}"#)]),
            Step::text("I may not list them."),
        ],
    )
    .await;
    let auth = dir.join("auth.toml");
    std::fs::write(
        &auth,
        "[[tokens]]\ntoken = \"t-alice\"\nprincipal = \"alice\"\nroles = [\"admin\"]\nscopes = [\"devices:read\"]\n\n\
         [[tokens]]\ntoken = \"t-bob\"\nprincipal = \"bob\"\n",
    )
    .unwrap();
    // The demo's configuration (read from the working directory), with a scope on the list.
    std::fs::write(
        dir.join("demo-app.toml"),
        format!(
            "{}\n[scopes]\ndevice_list = [\"devices:read\"]\n",
            demo_app::config::DEFAULT
        ),
    )
    .unwrap();
    let mut cmd = demo(&dir.join("demo.db"), Some(&fake));
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--auth-file"])
        .arg(&auth)
        .stderr(Stdio::null());
    let served = tool_test_support::Served::spawn(cmd);
    let base = served.base.clone();
    let http = reqwest::Client::new();
    let body = serde_json::json!({"prompt": "devices in home?", "chat_id": "c1"});
    let refused = http
        .post(format!("{base}/agent"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let response = http
        .post(format!("{base}/agent"))
        .bearer_auth("t-alice")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let stream = response.text().await.unwrap();
    // A bad body is refused before any run, naming what to send.
    let bad = http
        .post(format!("{base}/agent"))
        .bearer_auth("t-alice")
        .json(&serde_json::json!({"promt": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert!(bad.text().await.unwrap().contains("prompt"));
    // A run acts under its token's scopes: bob's has none, so the model's call is refused.
    let bobs = http
        .post(format!("{base}/agent"))
        .bearer_auth("t-bob")
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(bobs.contains("\"insufficient_scope\""), "{bobs}");
    drop(served);
    fake.assert_clean();
    let events: Vec<(String, Value)> = stream
        .split("\n\n")
        .filter_map(|block| {
            let name = block.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((name.to_owned(), serde_json::from_str(data).unwrap()))
        })
        .collect();
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "turn_started",
            "usage",
            "tool_call_started",
            "tool_call_finished",
            "turn_started",
            "text_delta",
            "usage",
            "finished",
            "transcript"
        ],
        "{stream}"
    );
    assert_eq!(events[7].1["answer"], "Nothing paired in home.");
    let result = &events[8].1["messages"][2]["results"][0];
    assert_eq!(result["envelope"]["status"], "ok");
}

/// Without a terminal, a destructive call the policy lets through cannot be confirmed (the model
/// gets `confirmation_required`), unless the configuration says `auto_confirm = true`.
#[tokio::test(flavor = "multi_thread")]
async fn without_a_terminal_destructive_calls_are_not_run_unless_configured() {
    let dir = temp_dir("confirm");
    let revoke = ("device_revoke", r#"{"device_id":"dev_0123456789abcdef"}"#);
    for (auto, expected) in [(false, "confirmation_required"), (true, "not_found")] {
        let config = dir.join(format!("c{auto}.toml"));
        std::fs::write(
            &config,
            format!("[policy]\ndeny_destructive_for = []\n[agent]\nauto_confirm = {auto}\n"),
        )
        .unwrap();
        let fake = FakeProvider::start(
            Api::OpenAiChat,
            KEY,
            vec![Step::calls(&[revoke]), Step::text("ok")],
        )
        .await;
        let mut cmd = demo(&dir.join("demo.db"), Some(&fake));
        cmd.arg("--config")
            .arg(&config)
            .args(["--json", "agent", "revoke it"]);
        let out = output(cmd, None).await;
        fake.assert_clean();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let run: Value = serde_json::from_slice(&out.stdout).unwrap();
        let result = &run["transcript"]["messages"][2]["results"][0];
        assert_eq!(
            result["content"]["type"], expected,
            "auto_confirm = {auto}: {result}"
        );
    }
}

/// A refusal ends `demo-app agent` with exit 4 and the model's words on stderr; an empty answer
/// with exit 0 and a note saying so.
#[tokio::test(flavor = "multi_thread")]
async fn a_refusal_exits_4_and_an_empty_answer_says_so() {
    let dir = temp_dir("refusal");
    let fake = FakeProvider::start(
        Api::OpenAiChat,
        KEY,
        vec![Step::fixture("openai-chat-refusal")],
    )
    .await;
    let mut cmd = demo(&dir.join("demo.db"), Some(&fake));
    cmd.args(["agent", "do something bad"]);
    let out = output(cmd, None).await;
    fake.assert_clean();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("refused: the model refused (refusal): I can't help with that."),
        "{stderr}"
    );

    let fake = FakeProvider::start(
        Api::OpenAiChat,
        KEY,
        vec![Step::fixture("openai-chat-empty")],
    )
    .await;
    let mut cmd = demo(&dir.join("demo.db"), Some(&fake));
    cmd.args(["agent", "say nothing"]);
    let out = output(cmd, None).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("no answer"), "{stderr}");
    assert_eq!(text(&out.stdout).trim(), "");
}
