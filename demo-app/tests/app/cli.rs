//! The `demo-app` binary: help, the pairing flow from the shell, exit codes, stdin input and
//! confirmation, through the real process.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::DEMO_TOOLS;

/// A scratch directory of the shared kind, removed on drop; the database goes inside.
struct Db(tool_test_support::TempDir);

impl Db {
    fn new(name: &str) -> Self {
        Db(tool_test_support::TempDir::new(&format!("demo-cli-{name}")))
    }
    fn path(&self) -> PathBuf {
        self.0.join("demo.db")
    }
}

fn run(db: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("DEMO_APP_DB")
        .env_remove("DEMO_APP_AUDIT")
        .env_remove("DEMO_APP_CONFIG")
        .env_remove("RUST_LOG")
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
}

fn json(db: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = run(db, &all, None);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "not JSON: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), v)
}

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .args(args)
        .env_remove("DEMO_APP_DB")
        .env_remove("DEMO_APP_AUDIT")
        .env_remove("DEMO_APP_CONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn help_lists_the_tools_and_their_flags() {
    insta::assert_snapshot!("help", help(&["--help"]));
    insta::assert_snapshot!("device-add-help", help(&["device-add", "--help"]));
    insta::assert_snapshot!("device-list-help", help(&["device-list", "--help"]));
}

#[test]
fn listings_do_not_touch_the_database() {
    let db = Db::new("listing");
    for args in [
        &["--help"][..],
        &["tools"],
        &["schema", "device_add"],
        &["completions", "bash"],
        &["device-add", "--help"],
        &["serve", "-h"],
        &[],
    ] {
        let out = run(&db.path(), args, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
    assert!(!db.path().exists());
    let tools = run(&db.path(), &["tools", "--json"], None);
    let tools: Value = serde_json::from_slice(&tools.stdout).unwrap();
    let names = tool_test_support::tool_names(&tools);
    assert_eq!(names, DEMO_TOOLS);
    let schema = run(
        &db.path(),
        &["schema", "device-pair", "--output-schema"],
        None,
    );
    let schema: Value = serde_json::from_slice(&schema.stdout).unwrap();
    assert_eq!(schema["properties"]["device_id"]["type"], "string");
}

#[test]
fn tools_print_as_each_provider_takes_them() {
    let db = Db::new("formats");
    let specs = |format: &str| -> Value {
        let out = run(&db.path(), &["tools", "--format", format], None);
        assert_eq!(out.status.code(), Some(0), "{format}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // Each format lists the tools in the same order.
    let at = |name: &str| DEMO_TOOLS.iter().position(|t| *t == name).unwrap();
    assert_eq!(
        specs("openai")[at("device_add")]["function"]["name"],
        "device_add"
    );
    assert_eq!(
        specs("openai")[at("device_add")]["function"]["strict"],
        true
    );
    assert_eq!(
        specs("openai-responses")[at("device_add")]["name"],
        "device_add"
    );
    assert_eq!(specs("anthropic")[at("device_list")]["name"], "device_list");
    assert_eq!(
        specs("gemini")[0]["functionDeclarations"][at("device_pair")]["name"],
        "device_pair"
    );
    assert_eq!(
        specs("mcp")[at("device_revoke")]["annotations"]["destructiveHint"],
        true
    );

    let lint = run(&db.path(), &["tools", "--format", "openai", "--lint"], None);
    assert_eq!(lint.status.code(), Some(0));
    let text = String::from_utf8(lint.stdout).unwrap();
    assert!(
        text.contains("warning: device_add /properties/ttl_seconds: `default`: not supported in OpenAI strict mode; moved into the description (\"default 300\")"),
        "{text}"
    );
    let (code, report) = json(&db.path(), &["tools", "--format", "gemini", "--lint"]);
    assert_eq!(code, 0);
    assert_eq!(report["format"], "gemini");
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["severity"] != "error")
    );

    let bad = run(&db.path(), &["tools", "--format", "cohere"], None);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(
        err.contains("[possible values: json, mcp, openai, openai-responses, anthropic, gemini]"),
        "{err}"
    );
    assert!(!db.path().exists());
}

#[test]
fn the_pairing_flow_works_from_the_shell() {
    let db = Db::new("flow");
    let (code, add) = json(
        &db.path(),
        &["device-add", "-w", "home", "--ttl-seconds", "120"],
    );
    assert_eq!(code, 0, "{add}");
    assert_eq!(add["status"], "ok");
    assert!(db.path().exists(), "the database is created on first use");
    let digits = add["result"]["code"].as_str().unwrap().to_owned();

    let (code, pair) = json(
        &db.path(),
        &["device-pair", "--code", &digits, "--device-name", "phone"],
    );
    assert_eq!(code, 0, "{pair}");
    let id = pair["result"]["device_id"].as_str().unwrap().to_owned();
    assert_eq!(pair["result"]["workspace"], "home");

    let (code, list) = json(&db.path(), &["device-list", "home"]);
    assert_eq!(code, 0);
    assert_eq!(list["result"]["devices"][0]["device_id"], id.as_str());
    assert!(list["meta"]["request_id"].is_string());

    let (code, preview) = json(
        &db.path(),
        &["device-revoke", "--device-id", &id, "--dry-run"],
    );
    assert_eq!(code, 0, "a dry run needs no --yes: {preview}");
    assert!(preview["result"]["revoked_at"].is_null());
    assert_eq!(
        run(&db.path(), &["device-add", "--dry-run"], None)
            .status
            .code(),
        Some(2),
        "not offered where unsupported"
    );

    let (code, revoked) = json(&db.path(), &["device-revoke", "--device-id", &id, "--yes"]);
    assert_eq!(code, 0, "{revoked}");
    assert!(revoked["result"]["revoked_at"].is_string());

    // The exact tool name works as well as the subcommand name.
    let (code, _) = json(&db.path(), &["device_list"]);
    assert_eq!(code, 0);
}

#[test]
fn results_render_for_people_without_json() {
    let db = Db::new("render");
    let out = run(&db.path(), &["device-add", "--code-length", "8"], None);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("code:"), "{text}");
    assert!(text.contains("expires_at:"), "{text}");
    let out = run(&db.path(), &["device-list"], None);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("pending_codes:\n  code_hint  workspace  expires_at"),
        "{text}"
    );
}

/// A field missing from `--params-json` is said by the flag that gives it, found from the
/// violation's keyword and property.
#[test]
fn a_missing_field_is_said_by_its_flag() {
    let db = Db::new("missing");
    let out = run(
        &db.path(),
        &["device-pair", "--params-json", r#"{"code": "1234"}"#],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "error: --device-name: \"device_name\" is a required property\n"
    );
    let out = run(&db.path(), &["device-pair", "--params-json", "{}"], None);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("  --code: \"code\" is a required property\n")
            && err.contains("  --device-name: \"device_name\" is a required property\n"),
        "{err}"
    );
}

#[test]
fn exit_codes_follow_the_documented_table() {
    let db = Db::new("exit");
    // 2: constraint violations, reported by the pipeline's validator, every one of them.
    let out = run(
        &db.path(),
        &["device-add", "--ttl-seconds", "5", "--code-length", "20"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("--ttl-seconds: 5 is less than the minimum of 30"),
        "{err}"
    );
    assert!(
        err.contains("--code-length: 20 is greater than the maximum of 10"),
        "{err}"
    );
    // One violation is said once, by its flag.
    let out = run(&db.path(), &["device-add", "--ttl-seconds", "5"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "error: --ttl-seconds: 5 is less than the minimum of 30\n"
    );
    // With --json, the envelope on stdout alone, the same exit code.
    let out = run(
        &db.path(),
        &["--json", "device-add", "--ttl-seconds", "5"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["error"]["type"], "invalid_arguments");
    // 2: a value of the wrong type, refused by clap's typed parser.
    let out = run(&db.path(), &["device-add", "--ttl-seconds", "abc"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("invalid value 'abc'")
    );
    // 2: a bad flag, a missing required flag, an unknown subcommand.
    assert_eq!(
        run(&db.path(), &["device-add", "--bogus"], None)
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run(&db.path(), &["device-pair", "--code", "1234"], None)
            .status
            .code(),
        Some(2)
    );
    // A name no tool has is the pipeline's `unknown_tool`, as a hidden tool's is: its "did you
    // mean" names the near tool, not every one that shares its prefix.
    let unknown = run(&db.path(), &["devce-add"], None);
    assert_eq!(unknown.status.code(), Some(2));
    let err = String::from_utf8(unknown.stderr).unwrap();
    assert!(
        err.contains("did you mean `device_add`") && !err.contains("device_list"),
        "{err}"
    );
    // With `--help`, a listing: clap's tip names the near subcommand alone.
    let unknown = run(&db.path(), &["devce-add", "--help"], None);
    assert_eq!(unknown.status.code(), Some(2));
    let err = String::from_utf8(unknown.stderr).unwrap();
    assert!(
        err.contains("tip: a similar subcommand exists: 'device-add'")
            && !err.contains("device-list"),
        "{err}"
    );
    let far = run(&db.path(), &["schema", "nope"], None);
    assert_eq!(far.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(far.stderr).unwrap(),
        "error: no tool named `nope`; `tools` lists them\n"
    );
    // 1: the tool's own error.
    let (code, env) = json(
        &db.path(),
        &["device-pair", "--code", "000000", "--device-name", "x"],
    );
    assert_eq!(
        (code, env["error"]["type"].as_str()),
        (1, Some("invalid_code"))
    );
    // 3: confirmation required (no terminal, no --yes).
    let (code, env) = json(
        &db.path(),
        &["device-revoke", "--device-id", "dev_0000000000000000"],
    );
    assert_eq!(
        (code, env["error"]["type"].as_str()),
        (3, Some("confirmation_required"))
    );
    // 1: not found once confirmed.
    let (code, env) = json(
        &db.path(),
        &["device-revoke", "--device-id", "dev_0000000000000000", "-y"],
    );
    assert_eq!(
        (code, env["error"]["type"].as_str()),
        (1, Some("not_found"))
    );
}

#[test]
fn params_json_from_stdin_with_flags_overriding() {
    let db = Db::new("stdin");
    let out = run(
        &db.path(),
        &[
            "--json",
            "device-add",
            "--params-json",
            "-",
            "--code-length",
            "9",
        ],
        Some(r#"{"workspace": "lab", "code_length": 4}"#),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["result"]["workspace"], "lab");
    assert_eq!(env["result"]["code"].as_str().unwrap().len(), 9);
    // Required flags may come from --params-json instead.
    let out = run(
        &db.path(),
        &[
            "device-pair",
            "--params-json",
            r#"{"code":"0000","device_name":"x"}"#,
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "the code is invalid, but the call was made"
    );
    let out = run(&db.path(), &["device-add", "--params-json", "[1]"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_unconfirmed_destructive_call_without_a_terminal_does_not_run() {
    let db = Db::new("confirm");
    let (_, add) = json(&db.path(), &["device-add"]);
    let digits = add["result"]["code"].as_str().unwrap().to_owned();
    let (_, pair) = json(
        &db.path(),
        &["device-pair", "-c", &digits, "--device-name", "tv"],
    );
    let id = pair["result"]["device_id"].as_str().unwrap().to_owned();
    // Even "y" on a stdin that is not a terminal is not a confirmation.
    let out = run(
        &db.path(),
        &["device-revoke", "--device-id", &id],
        Some("y\n"),
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8(out.stderr).unwrap().contains("--yes"));
    let (_, list) = json(&db.path(), &["device-list"]);
    assert!(
        list["result"]["devices"][0]["revoked_at"].is_null(),
        "the tool must not have run"
    );
}

/// Runs `demo-app ARGS` on a pseudo-terminal (util-linux `script`), typing `answer` after a
/// moment, and returns the exit code and what the terminal showed.
fn on_terminal(db: &Path, args: &str, answer: &str, no_color: bool) -> (i32, String) {
    let line = format!(
        "{} --db {} {args}",
        env!("CARGO_BIN_EXE_demo-app"),
        db.display()
    );
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .env_remove("DEMO_APP_DB")
        .env_remove("DEMO_APP_AUDIT")
        .env_remove("DEMO_APP_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if no_color {
        cmd.env("NO_COLOR", "1");
    } else {
        cmd.env_remove("NO_COLOR");
    }
    let mut child = cmd
        .spawn()
        .expect("util-linux `script` is needed for terminal tests (Debian: bsdutils)");
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    stdin.write_all(answer.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn on_a_terminal_a_resource_read_ends_its_line() {
    let db = Db::new("tty-read");
    let (code, screen) = on_terminal(&db.path(), "resource read devices://paired", "", true);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.ends_with('\n'), "{screen:?}");
    // Piped, the contents as they are.
    let piped = run(&db.path(), &["resource", "read", "devices://paired"], None);
    assert_eq!(piped.status.code(), Some(0));
    assert!(!piped.stdout.ends_with(b"\n"), "{:?}", piped.stdout);
}

#[test]
fn on_a_terminal_destructive_calls_ask_first() {
    let db = Db::new("tty");
    let paired = |name: &str| {
        let (_, add) = json(&db.path(), &["device-add"]);
        let digits = add["result"]["code"].as_str().unwrap().to_owned();
        let (_, pair) = json(
            &db.path(),
            &["device-pair", "-c", &digits, "--device-name", name],
        );
        pair["result"]["device_id"].as_str().unwrap().to_owned()
    };
    let kept = paired("kept");
    let (code, screen) = on_terminal(
        &db.path(),
        &format!("device-revoke --device-id {kept}"),
        "n\n",
        true,
    );
    assert!(
        screen.contains(&format!("Revoke device {kept}? [y/N]")),
        "{screen}"
    );
    assert_eq!(code, 3, "{screen}");

    let gone = paired("gone");
    let (code, screen) = on_terminal(
        &db.path(),
        &format!("device-revoke --device-id {gone}"),
        "y\n",
        true,
    );
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("revoked_at: 20"), "{screen}");
    assert!(
        !screen.contains('\u{1b}'),
        "NO_COLOR must turn colours off: {screen:?}"
    );

    let (_, list) = json(&db.path(), &["device-list"]);
    let revoked = |id: &str| {
        list["result"]["devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["device_id"] == id)
            .map(|d| d["revoked_at"].is_string())
    };
    assert_eq!((revoked(&kept), revoked(&gone)), (Some(false), Some(true)));

    // Colours on a terminal unless NO_COLOR.
    let (code, screen) = on_terminal(&db.path(), "device-list", "", false);
    assert_eq!(code, 0);
    assert!(screen.contains("\u{1b}["), "expected colours: {screen:?}");
}

#[test]
fn audit_log_records_cli_calls() {
    let db = Db::new("audit");
    let log = db.0.join("audit.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .arg("--db")
        .arg(db.path())
        .arg("--audit-log")
        .arg(&log)
        .args(["device-add", "--ttl-seconds", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = std::fs::read_to_string(&log).unwrap();
    let record: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(record["event"], "outcome");
    assert_eq!(record["tool"], "device_add");
    assert_eq!(record["source"], "cli");
    assert_eq!(record["outcome"], "invalid_arguments");
}

/// An audit log that cannot be written refuses the call before it runs: nothing is committed.
#[test]
fn a_call_that_cannot_be_audited_does_not_run() {
    let db = Db::new("audit-full");
    let out = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .arg("--db")
        .arg(db.path())
        .args([
            "--audit-log",
            "/dev/full",
            "--json",
            "device-add",
            "--ttl-seconds",
            "60",
        ])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["error"]["type"], "unavailable", "{answer}");
    assert_ne!(out.status.code(), Some(0));
    let (_, list) = json(&db.path(), &["device-list"]);
    assert_eq!(list["result"]["pending_codes"], serde_json::json!([]));
}

/// The pairing code is a one-time credential: the audit log never holds it.
#[test]
fn the_pairing_code_is_never_in_the_audit_log() {
    let db = Db::new("audit-code");
    let log = db.0.join("audit.jsonl");
    let demo = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_demo-app"))
            .arg("--db")
            .arg(db.path())
            .arg("--audit-log")
            .arg(&log)
            .arg("--json")
            .args(args)
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let code = demo(&["device-add"])["result"]["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let paired = demo(&["device-pair", "--code", &code, "--device-name", "phone"]);
    assert_eq!(paired["status"], "ok", "{paired}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains(&format!("\"{code}\"")), "{text}");
    assert!(text.contains(r#""code":"[redacted]""#), "{text}");
}

/// A call left without an outcome by a killed process is reported when the log is next opened.
#[test]
fn an_outcome_left_unknown_is_reported_at_start() {
    let db = Db::new("audit-unknown");
    let log = db.0.join("audit.jsonl");
    std::fs::write(
        &log,
        concat!(
            r#"{"event":"intent","time":2.5,"call":"aa-2","request_id":"r-lost","source":"http","#,
            r#""principal":null,"tool":"device_revoke","arguments":{}}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .arg("--db")
        .arg(db.path())
        .arg("--audit-log")
        .arg(&log)
        .arg("device-list")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("outcome unknown"), "{err}");
    assert!(
        err.contains("device_revoke") && err.contains("r-lost"),
        "{err}"
    );
}

#[test]
fn a_bad_configuration_is_reported() {
    let db = Db::new("config");
    let config = db.0.join("bad.toml");
    std::fs::write(&config, "[limits.device_add]\nrate = \"lots\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .arg("--db")
        .arg(db.path())
        .arg("--config")
        .arg(&config)
        .arg("device-list")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("limits.device_add.rate"), "{err}");
    assert!(err.contains("bad.toml): line 2, "), "{err}");
}

/// A `./demo-app.toml` that exists but cannot be read stops the command; only a missing one
/// leaves the built-in configuration in use.
#[test]
fn an_unreadable_configuration_in_the_working_directory_is_reported() {
    let db = Db::new("unreadable-config");
    std::fs::create_dir(db.0.join("demo-app.toml")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .current_dir(db.0.path())
        .arg("--db")
        .arg(db.path())
        .arg("device-list")
        .env_remove("DEMO_APP_CONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("configuration (./demo-app.toml): cannot read it"),
        "{err}"
    );
}

/// The configuration's policy shapes the listings as it shapes calls: a tool it keeps from the
/// command line is not in `--help` or `tools`, and is refused when called; the database is
/// still untouched by the listings.
#[test]
fn the_configured_policy_hides_tools_from_help_and_tools() {
    let db = Db::new("policy");
    let config = db.0.join("policy.toml");
    std::fs::write(
        &config,
        "[policy.allow]\ncli = [\"device_list\", \"device_add\"]\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let help = run(&db.path(), &["--config", config, "--help"], None);
    assert_eq!(help.status.code(), Some(0));
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("device-list"), "{help}");
    assert!(!help.contains("device-revoke"), "{help}");
    let tools = run(&db.path(), &["tools", "--json", "--config", config], None);
    let tools: Value = serde_json::from_slice(&tools.stdout).unwrap();
    let names = tool_test_support::tool_names(&tools);
    assert_eq!(names, ["device_add", "device_list"]);
    assert!(!db.path().exists(), "listings open no database");
    let (code, refused) = json(
        &db.path(),
        &["--config", config, "device-revoke", "--device-id", "d1"],
    );
    // Hidden, so unknown when called by name.
    assert_eq!(code, 2, "{refused}");
    assert_eq!(refused["error"]["type"], "unknown_tool");
}
