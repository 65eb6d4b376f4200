//! The demo app as a gateway: `[[stores]]` and `[[mcp_servers]]` from its configuration mounted
//! beside its own tools on `serve`, with the reference MCP server `server-everything` (npm,
//! `tests/node`) as the other server; a bad entry stops start-up naming it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use tool_test_support::Served;

fn everything() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.exists(),
        "{} is missing: run `bash tests/run.sh` (it installs tests/node)",
        path.display()
    );
    path
}

/// A configuration mounting the store `notes` of `kind` and the reference server over stdio
/// as `everything`.
fn notes_and_everything(kind: &str) -> String {
    format!(
        "[[stores]]\nname = \"notes\"\nkind = \"{kind}\"\n\n\
         [[mcp_servers]]\nname = \"everything\"\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
        everything().to_string_lossy()
    )
}

fn demo(dir: &Path, config: &str) -> Command {
    let file = dir.join("demo-app.toml");
    std::fs::write(&file, config).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_demo-app"));
    cmd.arg("--db")
        .arg(dir.join("demo.db"))
        .arg("--config")
        .arg(&file)
        .env_remove("RUST_LOG");
    cmd
}

fn serve(dir: &Path, config: &str) -> Served {
    let mut command = demo(dir, config);
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stderr(Stdio::null());
    Served::spawn(command)
}

/// The names `GET /tools` lists.
async fn listed(s: &Served) -> Vec<String> {
    let tools: Value = reqwest::get(format!("{}/tools", s.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    tools["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{tools}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

async fn post(s: &Served, tool: &str, args: Value) -> Value {
    reqwest::Client::new()
        .post(format!("{}/tools/{tool}", s.base))
        .json(&args)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_mounts_stores_and_other_mcp_servers_beside_its_own_tools() {
    let dir = tool_test_support::TempDir::new("demo-gateway");
    let config = format!(
        "[[stores]]\nname = \"notes\"\nkind = \"sqlite\"\n\n[[stores]]\nname = \"scratch\"\nkind = \"memory\"\n\n\
         [[mcp_servers]]\nname = \"everything\"\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
        everything().to_string_lossy()
    );
    let served = serve(dir.path(), &config);
    let names = listed(&served).await;
    for expected in [
        "device_add",
        "notes-write",
        "scratch-read",
        "everything-echo",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    assert_eq!(
        post(
            &served,
            "everything-echo",
            json!({"message": "via the gateway"})
        )
        .await["result"],
        json!([{"type": "text", "text": "Echo: via the gateway"}])
    );
    assert_eq!(
        post(
            &served,
            "notes-write",
            json!({"key": "k", "value": {"n": 1}})
        )
        .await["status"],
        "ok"
    );
    assert_eq!(
        post(&served, "notes-read", json!({"key": "k"})).await["result"],
        json!({"n": 1})
    );
    // The official Python client at the gateway's `/mcp`: the mounted tools listed beside the
    // app's own, server-everything's image passed through as an image.
    let python = tool_test_support::python_with("mcp");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/python/mcp_check.py");
    let url = format!("{}/mcp", served.base);
    let out = Command::new(python)
        .arg(script)
        .args(["gateway", "--mode", "legacy", "--url", &url])
        .output()
        .unwrap();
    tool_test_support::expect_checks(
        &out,
        &["connect", "list", "echo", "image", "store", "items"],
    );
    drop(served);

    // A sqlite store keeps its data across restarts.
    let served = serve(dir.path(), &config);
    assert_eq!(
        post(&served, "notes-read", json!({"key": "k"})).await["result"],
        json!({"n": 1})
    );
    let missing = post(&served, "scratch-read", json!({"key": "k"})).await;
    assert_eq!(missing["error"]["type"], "not_found", "{missing}");
}

fn fails(dir: &Path, config: &str) -> String {
    let Output { status, stderr, .. } = demo(dir, config).args(["serve"]).output().unwrap();
    assert_eq!(status.code(), Some(1));
    String::from_utf8_lossy(&stderr).into_owned()
}

#[test]
fn a_bad_entry_stops_start_up_naming_it() {
    let dir = tool_test_support::TempDir::new("demo-gateway-bad");
    let cases = [
        (
            "[[mcp_servers]]\nname = \"nothing\"\n",
            "[[mcp_servers]] name = \"nothing\": give `command` (stdio) or `url` (HTTP)",
        ),
        (
            "[[mcp_servers]]\nname = \"web\"\nurl = \"ftp://example.com\"\n",
            "url = \"ftp://example.com\" is not an http:// or https:// URL",
        ),
        (
            "[[stores]]\nname = \"a\"\nkind = \"memory\"\n\n[[mcp_servers]]\nname = \"a\"\ncommand = \"x\"\n",
            "[[mcp_servers]] name = \"a\": two stores or servers have this name",
        ),
        (
            "[[stores]]\nname = \"a_name_far_too_long_for_any_tool_to_fit\"\nkind = \"memory\"\n",
            "at most 32 characters",
        ),
        (
            "[[stores]]\nname = \"s\"\nkind = \"redis\"\n",
            "line 3, stores[0].kind: unknown variant `redis`, expected one of `memory`, `sqlite`, `postgres`",
        ),
        (
            "[[mcp_servers]]\nname = \"ghost\"\ncommand = \"/nonexistent/server\"\n",
            "cannot mount toolset `ghost`",
        ),
    ];
    for (config, expected) in cases {
        let stderr = fails(dir.path(), config);
        assert!(stderr.contains(expected), "{config}\n→ {stderr}");
    }
}

/// `[[policy.filter]]` gives each caller its share: here HTTP callers see the device tools and
/// nothing mounted; the command line, named by no rule, sees everything.
#[tokio::test(flavor = "multi_thread")]
async fn a_filter_in_the_configuration_hides_tools_from_a_source() {
    let dir = tool_test_support::TempDir::new("demo-gateway-filter");
    let config = "[[stores]]\nname = \"notes\"\nkind = \"memory\"\n\n\
                  [[policy.filter]]\nsource = \"http\"\nallow = [\"device_*\"]\n";
    let served = serve(dir.path(), config);
    let names = listed(&served).await;
    assert_eq!(
        names,
        [
            "device_add",
            "device_export",
            "device_list",
            "device_pair",
            "device_revoke"
        ]
    );
    let refused = post(&served, "notes-write", json!({"key": "k", "value": 1})).await;
    assert_eq!(refused["error"]["type"], "unknown_tool", "{refused}");

    let out = demo(dir.path(), config)
        .args(["--json", "device-list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let config = "[[policy.filter]]\nsource = \"cli\"\ndeny = [\"device_list\"]\n";
    let out = demo(dir.path(), config)
        .args(["--json", "device-list"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "hidden, and unknown when called by name"
    );
    let config = "[[policy.filter]]\nsource = \"cli\"\nrole = \"admin\"\n";
    let stderr = fails(dir.path(), config);
    assert!(
        stderr.contains("policy.filter[0]: name at most one"),
        "{stderr}"
    );
}

/// A filter names resources and prompts by their own names, as it names tools: `pair*` hides
/// the `paired_devices` resource and the `pairing_message` prompt, from listings and reads,
/// over HTTP and on the command line; `resource:pair*` hides the resource alone.
#[tokio::test(flavor = "multi_thread")]
async fn a_filter_hides_resources_and_prompts_by_their_own_names() {
    let dir = tool_test_support::TempDir::new("demo-gateway-filter-items");
    let get = |url: String| async move {
        let r = reqwest::get(url).await.unwrap();
        let status = r.status().as_u16();
        (status, r.text().await.unwrap())
    };
    let config = "[[policy.filter]]\ndeny = [\"pair*\"]\n";
    let served = serve(dir.path(), config);
    let (status, resources) = get(format!("{}/resources", served.base)).await;
    assert_eq!(status, 200, "{resources}");
    assert!(!resources.contains("devices://paired"), "{resources}");
    let (status, read) = get(format!(
        "{}/resources/read?uri=devices://paired",
        served.base
    ))
    .await;
    assert_eq!(status, 404, "{read}");
    let (_, prompts) = get(format!("{}/prompts", served.base)).await;
    assert!(!prompts.contains("pairing_message"), "{prompts}");
    let got = reqwest::Client::new()
        .post(format!("{}/prompts/pairing_message", served.base))
        .json(&json!({"recipient": "Alice"}))
        .send()
        .await
        .unwrap();
    assert_eq!(got.status().as_u16(), 404);
    drop(served);
    let out = demo(dir.path(), config)
        .args(["--json", "resource", "read", "devices://paired"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");

    // A selector narrows the pattern to one kind.
    let config = "[[policy.filter]]\ndeny = [\"resource:pair*\"]\n";
    let served = serve(dir.path(), config);
    let (_, resources) = get(format!("{}/resources", served.base)).await;
    assert!(!resources.contains("devices://paired"), "{resources}");
    let (_, prompts) = get(format!("{}/prompts", served.base)).await;
    assert!(prompts.contains("pairing_message"), "{prompts}");
}

/// `demo-app toolsets` mounts each configured toolset and says how it went; one that cannot
/// be mounted is listed with why, and the exit code is 1.
#[test]
fn toolsets_shows_each_toolsets_state() {
    let dir = tool_test_support::TempDir::new("demo-gateway-toolsets");
    let config = notes_and_everything("memory");
    let out = demo(dir.path(), &config)
        .args(["toolsets"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("notes") && shown.contains("4 tools"),
        "{shown}"
    );
    assert!(
        shown.contains("everything") && shown.contains("available"),
        "{shown}"
    );

    let config =
        format!("{config}\n[[mcp_servers]]\nname = \"ghost\"\ncommand = \"/nonexistent/server\"\n");
    let out = demo(dir.path(), &config)
        .args(["--json", "toolsets"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ghost = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "ghost")
        .expect("the failed toolset is listed");
    assert_eq!(ghost["available"], false);
    assert!(
        ghost["last_error"]
            .as_str()
            .unwrap()
            .contains("cannot start"),
        "{ghost}"
    );
}

/// `demo-app call NAME --params-json` reaches mounted tools from the command line, through the
/// pipeline: a store's tool and the reference server's.
#[test]
fn call_reaches_mounted_tools_from_the_command_line() {
    let dir = tool_test_support::TempDir::new("demo-gateway-call");
    let config = notes_and_everything("sqlite");
    // No terminal: nothing is asked, whatever runs the tests.
    let run = |args: &[&str]| {
        let out = demo(dir.path(), &config)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stdout, stderr) = run(&[
        "--json",
        "call",
        "everything-get-sum",
        "--params-json",
        r#"{"a": 2, "b": 3}"#,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let envelope: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        envelope["result"],
        json!([{"type": "text", "text": "The sum of 2 and 3 is 5."}])
    );
    // For people, content blocks are their text.
    let (code, stdout, stderr) = run(&[
        "call",
        "everything-get-sum",
        "--params-json",
        r#"{"a": 2, "b": 3}"#,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "The sum of 2 and 3 is 5.\n");
    // A remote tool that asks its caller for a form: with no terminal to ask on, the server
    // hears so (its tool fails), and nothing is answered for the user.
    let (code, _, stderr) = run(&[
        "call",
        "everything-trigger-elicitation-request",
        "--params-json",
        "{}",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("no terminal to ask on"), "{stderr}");
    let (code, _, _) = run(&[
        "call",
        "notes-write",
        "--params-json",
        r#"{"key": "k", "value": 7}"#,
    ]);
    assert_eq!(code, Some(0));
    let (_, stdout, _) = run(&[
        "--json",
        "call",
        "notes-read",
        "--params-json",
        r#"{"key": "k"}"#,
    ]);
    assert_eq!(serde_json::from_str::<Value>(&stdout).unwrap()["result"], 7);
    // Destructive: refused without --yes (exit 3), done with it.
    let (code, _, stderr) = run(&["call", "notes-delete", "--params-json", r#"{"key": "k"}"#]);
    assert_eq!(code, Some(3), "{stderr}");
    let (code, _, _) = run(&[
        "call",
        "notes-delete",
        "--params-json",
        r#"{"key": "k"}"#,
        "--yes",
    ]);
    assert_eq!(code, Some(0));
    // An unknown tool and arguments that are not an object: clear errors.
    let (code, _, stderr) = run(&["call", "everything-ech"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("did you mean `everything-echo`"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["call", "notes-list", "--params-json", "[1]"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("must be a JSON object"), "{stderr}");
}

/// A port free now, for a server whose URL must be known before it starts.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The `[auth]` table of a demo at `base` behind the provider `issuer`.
fn auth_table(issuer: &str, base: &str) -> String {
    format!(
        "[auth]\nissuer = \"{issuer}\"\naudience = \"{base}/mcp\"\n\
         scopes_supported = [\"devices:read\", \"devices:write\"]\n"
    )
}

/// The demo serving on `port` behind the provider `issuer`, its calls audited in `audit`: the
/// server the gateway tests mount.
fn mounted_demo(dir: &Path, issuer: &str, port: u16, audit: &Path) -> Served {
    let up_dir = dir.join("up");
    std::fs::create_dir_all(&up_dir).unwrap();
    let mut upstream = demo(
        &up_dir,
        &auth_table(issuer, &format!("http://127.0.0.1:{port}")),
    );
    upstream
        .arg("--audit-log")
        .arg(audit)
        .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .stderr(Stdio::null());
    Served::spawn(upstream)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_mounts_another_demo_behind_oauth_per_user_and_its_callers_connect_their_accounts()
{
    use tool_test_support::oauth::AuthServers;
    let dir = tool_test_support::TempDir::new("demo-accounts");
    let (up_port, gw_port) = (free_port(), free_port());
    let (up, gw) = (
        format!("http://127.0.0.1:{up_port}"),
        format!("http://127.0.0.1:{gw_port}"),
    );
    let servers = AuthServers::start(&format!("{up}/mcp"), "devices:read devices:write");
    // The mounted server: the demo itself, behind the provider, its calls audited.
    let audit = dir.join("audit.jsonl");
    let _upstream = mounted_demo(dir.path(), &servers.oidc, up_port, &audit);
    // The gateway: the demo again, mounting it per user, listing its tools as the application.
    let gw_dir = dir.join("gw");
    std::fs::create_dir_all(&gw_dir).unwrap();
    let config = format!(
        "{}[accounts]\npublic_url = \"{gw}\"\n\n\
         [[mcp_servers]]\nname = \"up\"\nurl = \"{up}/mcp\"\ntools_only = true\n\
         [mcp_servers.oauth]\nacts_as = \"each_user\"\nscopes = [\"devices:read\"]\n\
         list_as = {{ client_id = \"jwt-client\", client_secret_env = \"LISTER_SECRET\" }}\n",
        auth_table(&servers.oidc, &gw)
    );
    let mut gateway = demo(&gw_dir, &config);
    gateway
        .env(
            "DEMO_APP_TOKEN_KEYS",
            "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
        )
        .env("LISTER_SECRET", "jwt-secret")
        .args(["serve", "--addr", &format!("127.0.0.1:{gw_port}")])
        .stderr(Stdio::null());
    let _gateway = Served::spawn(gateway);
    let python = tool_test_support::python_with("mcp");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/python/oauth_connect.py");
    let url = format!("{gw}/mcp");
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .args(["--url", &url, "--mode", "auto", "--tool", "up-device_list"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    println!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    tool_test_support::expect_checks(&out, &["logged in", "sent to connect", "called again"]);
    // The mounted demo ran each call as the user who connected, never as the gateway's caller
    // token's audience.
    let calls: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|record: &Value| record["tool"] == "device_list")
        .collect();
    assert!(!calls.is_empty(), "no call reached the mounted demo");
    let ada = format!("{}#ada", servers.oidc);
    for call in &calls {
        assert_eq!(call["principal"], ada.as_str(), "{call}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn login_signs_the_command_lines_user_in_once_and_keeps_the_token_for_the_next_commands() {
    use tool_test_support::oauth::AuthServers;
    let dir = tool_test_support::TempDir::new("demo-login");
    let up_port = free_port();
    let up = format!("http://127.0.0.1:{up_port}");
    let servers = AuthServers::start(&format!("{up}/mcp"), "devices:read devices:write");
    let audit = dir.join("audit.jsonl");
    let _upstream = mounted_demo(dir.path(), &servers.oidc, up_port, &audit);
    let tokens = dir.join("tokens");
    let cli_dir = dir.join("cli");
    std::fs::create_dir_all(&cli_dir).unwrap();
    let config = format!(
        "[[mcp_servers]]\nname = \"up\"\nurl = \"{up}/mcp\"\ntools_only = true\n\
         [mcp_servers.oauth]\nacts_as = \"user\"\nscopes = [\"devices:read\"]\n\
         token_dir = {:?}\n",
        tokens.to_string_lossy()
    );
    let python = tool_test_support::python_with("mcp");
    let browser = format!(
        "{} {}",
        python.display(),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/python/browser.py")
            .display()
    );
    let run = move |args: &[&str], browser: &str| {
        let mut command = demo(&cli_dir, &config);
        command.args(args).env("BROWSER", browser);
        command.output().unwrap()
    };
    // Signed in through the browser once, the token kept for this user alone.
    let run = std::sync::Arc::new(run);
    let login = {
        let (run, browser) = (std::sync::Arc::clone(&run), browser.clone());
        tokio::task::spawn_blocking(move || run(&["login", "up"], &browser))
            .await
            .unwrap()
    };
    let said = String::from_utf8_lossy(&login.stdout).into_owned();
    assert!(
        login.status.success() && said.contains("Signed in to `up`"),
        "{said}{}",
        String::from_utf8_lossy(&login.stderr)
    );
    let kept: Vec<_> = std::fs::read_dir(&tokens)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&kept[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", kept[0].display());
    }
    assert!(said.contains(&kept[0].display().to_string()), "{said}");
    // The next command uses it: no browser is opened (one that fails is named).
    let called =
        tokio::task::spawn_blocking(move || run(&["--json", "call", "up-device_list"], "false"))
            .await
            .unwrap();
    assert!(
        called.status.success(),
        "{}{}",
        String::from_utf8_lossy(&called.stdout),
        String::from_utf8_lossy(&called.stderr)
    );
    let ada = format!("{}#ada", servers.oidc);
    let principals: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|record| record["tool"] == "device_list")
        .map(|record| record["principal"].clone())
        .collect();
    assert!(!principals.is_empty());
    assert!(
        principals.iter().all(|p| p == ada.as_str()),
        "{principals:?}"
    );
}
