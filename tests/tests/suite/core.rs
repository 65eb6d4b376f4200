//! The core's decisions seen through every front end: which tools a caller may see (one
//! answer for GET /tools, /openapi.json, MCP tools/list and the CLI), confirmation of
//! destructive calls (one audit record per decision), a registry that changes while it serves
//! (an official MCP client hears of it), and duplicate names from any source.

#![allow(clippy::too_many_lines)] // Reason: each test walks one table through every front end, in order.
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tool_runtime::app;
use tool_runtime::http::Identity;
use tool_runtime::http::{self, Auth, ServerOptions};
use tool_runtime::layers::audit::{Audit, AuditRecord};
use tool_runtime::layers::policy::{AllowTools, DenyDestructive, RequireRoles};
use tool_runtime::mcp::McpServer;
use tool_runtime::prelude::*;
use tool_runtime::registry::RegistryBuilder;
use tool_runtime::tool::ToolMeta;
use tool_runtime::toolset::{Toolset, ToolsetTool};

/// List the backups.
#[tool(annotations(read_only))]
async fn backups_list() -> Vec<String> {
    vec!["b1".to_owned()]
}

/// Delete a backup.
#[tool(annotations(destructive), dry_run)]
async fn backup_delete(
    ctx: &CallContext,
    /// The backup
    id: String,
) -> String {
    if ctx.dry_run() {
        format!("would delete {id}")
    } else {
        format!("deleted {id}")
    }
}

/// Rotate the signing keys.
#[tool(roles("admin"))]
async fn keys_rotate() -> bool {
    true
}

/// Every audit outcome record's tool and outcome, in order.
#[derive(Clone, Default)]
struct Outcomes(Arc<Mutex<Vec<(String, String)>>>);

impl Audit for Outcomes {
    fn record<'a>(
        &'a self,
        record: &'a AuditRecord<'a>,
    ) -> futures_util::future::BoxFuture<'a, std::io::Result<()>> {
        if let Some(outcome) = record.outcome {
            self.0
                .lock()
                .unwrap()
                .push((record.tool.to_owned(), outcome.to_owned()));
        }
        Box::pin(std::future::ready(Ok(())))
    }
}

impl Outcomes {
    fn take(&self) -> Vec<(String, String)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn builder(audit: &Outcomes) -> RegistryBuilder {
    Registry::builder()
        .without_inventory()
        .tool(backups_list::descriptor())
        .tool(backup_delete::descriptor())
        .tool(keys_rotate::descriptor())
        .policy(RequireRoles)
        .policy(DenyDestructive::for_sources([Source::Agent]))
        .policy(AllowTools::new().allow(Source::Mcp, ["backups_list", "keys_rotate"]))
        .audit(audit.clone())
}

const TOKENS: &str = "[[tokens]]\ntoken = \"admin-token\"\nprincipal = \"ada\"\nroles = [\"admin\"]\n\n[[tokens]]\ntoken = \"plain-token\"\nprincipal = \"pat\"\nroles = []\n";

fn arguments_of(tool: &str) -> Value {
    match tool {
        "backup_delete" => json!({"id": "b1"}),
        _ => json!({}),
    }
}

fn set(names: impl IntoIterator<Item = impl Into<String>>) -> BTreeSet<String> {
    names.into_iter().map(Into::into).collect()
}

async fn get_json(url: &str, token: Option<&str>) -> Value {
    let mut request = reqwest::Client::new().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200, "{url}");
    response.json().await.unwrap()
}

/// One table of callers, every front end: each lists exactly what the registry says the caller
/// may see; every listed tool is callable (past policy), every hidden one refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_front_end_lists_what_the_caller_may_call() {
    let audit = Outcomes::default();
    let registry = Arc::new(builder(&audit).build().unwrap());
    let auth = Auth::from_toml(TOKENS).unwrap();
    let app = http::router(registry.clone(), ServerOptions::default().auth(auth));
    let base = tool_test_support::serve_on_loopback(app).await;
    let all = set(registry.names());
    let admin = || Caller::new(Source::Http).principal("ada").roles(["admin"]);

    // The table: who calls, through which front end, and what it must see.
    let rows: Vec<(&str, Caller, BTreeSet<String>)> = vec![
        (
            "http without a role",
            Caller::new(Source::Http).principal("pat"),
            set(["backup_delete", "backups_list"]),
        ),
        ("http with admin", admin(), all.clone()),
        (
            "mcp, allow-listed, with admin",
            Caller::new(Source::Mcp).principal("ada").roles(["admin"]),
            set(["backups_list", "keys_rotate"]),
        ),
        (
            "mcp, allow-listed, no role",
            Caller::new(Source::Mcp),
            set(["backups_list"]),
        ),
        (
            "agent with admin",
            Caller::new(Source::Agent).roles(["admin"]),
            set(["backups_list", "keys_rotate"]),
        ),
        (
            "cli (no roles)",
            Caller::new(Source::Cli),
            set(["backup_delete", "backups_list"]),
        ),
    ];
    for (who, caller, expected) in &rows {
        let visible = set(registry.visible(caller).iter().map(|t| t.name().to_owned()));
        assert_eq!(&visible, expected, "{who}: Registry::visible");
        for tool in &all {
            let env = registry
                .call(tool, arguments_of(tool), caller.clone().confirm(true))
                .await;
            let refused = env.error().is_some_and(|e| e.kind() == "unknown_tool");
            assert_eq!(
                refused,
                !visible.contains(tool),
                "{who}: `{tool}` is {} but the call {}",
                if visible.contains(tool) {
                    "listed"
                } else {
                    "hidden"
                },
                if refused {
                    "was refused"
                } else {
                    "went through"
                }
            );
        }
    }

    // HTTP: GET /tools, GET /tools/{name} and /openapi.json, per token.
    for (token, caller) in [
        ("plain-token", Caller::new(Source::Http).principal("pat")),
        ("admin-token", admin()),
    ] {
        let expected = set(registry
            .visible(&caller)
            .iter()
            .map(|t| t.name().to_owned()));
        let listed = get_json(&format!("{base}/tools"), Some(token)).await;
        let listed = set(listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned()));
        assert_eq!(listed, expected, "GET /tools with {token}");
        let doc = get_json(&format!("{base}/openapi.json"), Some(token)).await;
        let paths = set(doc["paths"]
            .as_object()
            .unwrap()
            .keys()
            .filter_map(|p| p.strip_prefix("/tools/"))
            .filter(|p| *p != "{name}")
            .map(str::to_owned));
        assert_eq!(paths, expected, "/openapi.json with {token}");
        for tool in &all {
            let status = reqwest::Client::new()
                .get(format!("{base}/tools/{tool}"))
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
                .status();
            let want = if expected.contains(tool) { 200 } else { 404 };
            assert_eq!(status, want, "GET /tools/{tool} with {token}");
        }
    }

    // MCP tools/list, per caller, as the server lists it for the session's identity.
    let server = McpServer::new(registry.clone());
    for (who, caller, expected) in rows.iter().filter(|r| r.1.source() == Source::Mcp) {
        let listed = set(server.list(caller).into_iter().map(|t| t.name.into_owned()));
        assert_eq!(&listed, expected, "MCP tools/list, {who}");
    }
    // And over HTTP, where the session's identity comes from the bearer token.
    let mut requester = tool_runtime::http::Requester::new("r");
    requester.identity = Some(Identity {
        principal: "ada".into(),
        roles: vec!["admin".into()],
        scopes: Vec::new(),
    });
    assert_eq!(
        set(server
            .list(&requester.caller(Source::Mcp))
            .into_iter()
            .map(|t| t.name.into_owned())),
        set(["backups_list", "keys_rotate"])
    );

    // The CLI: `tools --json` and the help's subcommands.
    let (code, out) = tool_runtime::App::new("t")
        .registry(builder(&audit))
        .run_captured(["t", "--json", "tools"])
        .await;
    assert_eq!(code, 0, "{out}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    let listed = set(listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned()));
    let cli = rows.iter().find(|r| r.1.source() == Source::Cli).unwrap();
    assert_eq!(listed, cli.2, "CLI tools --json");
    let help = tool_runtime::app::cli::command("t", &registry, None);
    let subcommands = set(help
        .get_subcommands()
        .map(|c| c.get_name().replace('-', "_"))
        .filter(|n| all.contains(n)));
    assert_eq!(subcommands, cli.2, "CLI help");

    // A hidden tool's name is not suggested to a caller who may not see it.
    let env = registry
        .call("keys_rotat", json!({}), Caller::new(Source::Http))
        .await;
    let e = env.error().unwrap();
    assert_eq!(e.kind(), "unknown_tool");
    assert!(!e.message().contains("keys_rotate"), "{}", e.message());
}

/// Confirmation is decided in the pipeline; each front end renders it, and each decision is one
/// audit record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirmation_is_one_decision_per_record_on_every_front_end() {
    let audit = Outcomes::default();
    let registry = Arc::new(builder(&audit).build().unwrap());
    let base = tool_test_support::serve_on_loopback(http::router(
        registry.clone(),
        ServerOptions::default(),
    ))
    .await;
    let http = reqwest::Client::new();
    let delete = |query: &str| format!("{base}/tools/backup_delete{query}");

    // HTTP: 409 with the question, the dry-run preview and a token; the token runs that call.
    let r = http
        .post(delete(""))
        .json(&json!({"id": "b1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    let body: Value = r.json().await.unwrap();
    let details = &body["error"]["details"];
    assert_eq!(details["question"], "Delete backup b1?");
    assert_eq!(details["preview"], "would delete b1");
    let token = details["token"].as_str().unwrap().to_owned();
    assert_eq!(
        audit.take(),
        [(
            "backup_delete".to_owned(),
            "confirmation_required".to_owned()
        )]
    );
    // The token is bound to the arguments: sent with another backup's, it is used up and that
    // backup is asked about anew.
    let r = http
        .post(delete(""))
        .header("x-confirmation", &token)
        .json(&json!({"id": "b2"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    let stale: Value = r.json().await.unwrap();
    assert!(
        stale["error"]["message"]
            .as_str()
            .unwrap()
            .contains("token sent is expired, used, or for another call")
    );
    let token = stale["error"]["details"]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    audit.take();
    let r = http
        .post(delete(""))
        .header("x-confirmation", &token)
        .json(&json!({"id": "b2"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["result"], "deleted b2");
    assert_eq!(
        audit.take(),
        [("backup_delete".to_owned(), "ok".to_owned())]
    );
    // Used once.
    let r = http
        .post(delete(&format!("?confirmation={token}")))
        .json(&json!({"id": "b2"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    audit.take();
    // Confirmed up front: one call, one record. `/invoke` takes the token too.
    let r = http
        .post(delete("?confirm=true"))
        .json(&json!({"id": "b1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(audit.take().len(), 1);
    let asked: Value = http
        .post(format!("{base}/invoke"))
        .json(&json!({"tool": "backup_delete", "params": {"id": "b3"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = asked["error"]["details"]["token"].as_str().unwrap();
    let done: Value = http
        .post(format!("{base}/invoke"))
        .json(&json!({"tool": "backup_delete", "params": {"id": "b3"}, "confirmation": token}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(done["result"], "deleted b3");
    assert_eq!(audit.take().len(), 2);

    // CLI without a terminal: the question is the answer (exit 3), one record; `--yes` runs it,
    // one record.
    let cli = |args: &'static [&'static str]| {
        tool_runtime::App::new("t")
            .registry(builder(&audit))
            .run_captured(args.iter().copied())
    };
    let (code, _) = cli(&["t", "backup-delete", "--id", "b1"]).await;
    assert_eq!(code, 3);
    assert_eq!(
        audit.take(),
        [(
            "backup_delete".to_owned(),
            "confirmation_required".to_owned()
        )]
    );
    let (code, out) = cli(&["t", "--json", "backup-delete", "--id", "b1", "--yes"]).await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        audit.take(),
        [("backup_delete".to_owned(), "ok".to_owned())]
    );

    // MCP, with the official client answering the question through elicitation: the attempt
    // and the confirmed call, one record each; the question is the pipeline's wording.
    let (mcp_registry, mcp_audit) = {
        let audit = Outcomes::default();
        let r = Registry::builder()
            .without_inventory()
            .tool(backup_delete::descriptor())
            .audit(audit.clone())
            .build()
            .unwrap();
        (Arc::new(r), audit)
    };
    let base =
        tool_test_support::serve_on_loopback(app::router(mcp_registry, ServerOptions::default()))
            .await;
    let lines = run_python(
        &[
            "confirm",
            &format!("{base}/mcp"),
            "backup_delete",
            r#"{"id": "b9"}"#,
        ],
        2,
    )
    .await;
    assert_eq!(lines[0], "asked Delete backup b9?");
    let result: Value = serde_json::from_str(lines[1].strip_prefix("result ").unwrap()).unwrap();
    assert_eq!(result["is_error"], false, "{result}");
    assert!(result["text"].as_str().unwrap().contains("deleted b9"));
    assert_eq!(
        mcp_audit.take(),
        [
            (
                "backup_delete".to_owned(),
                "confirmation_required".to_owned()
            ),
            ("backup_delete".to_owned(), "ok".to_owned())
        ]
    );
}

/// Runs `tests/python/core_check.py ARGS` and returns its first `count` lines.
async fn run_python(args: &[&str], count: usize) -> Vec<String> {
    let (mut child, mut lines) = spawn_python(args);
    let mut out = Vec::new();
    while out.len() < count {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("the Python client answers")
            .unwrap()
            .unwrap_or_else(|| panic!("the Python client ended early after {out:?}"));
        out.push(line);
    }
    let _ = child.wait().await;
    out
}

fn spawn_python(
    args: &[&str],
) -> (
    tokio::process::Child,
    tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
) {
    let python = tool_test_support::python_with("mcp");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/core_check.py");
    let mut child = tokio::process::Command::new(python)
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python runs");
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    (child, lines)
}

/// A tool added at run time.
struct Echo(&'static str);

impl Tool for Echo {
    fn meta(&self) -> ToolMeta {
        ToolMeta::new(self.0, "Return the text.")
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}},
               "required": ["text"], "additionalProperties": false})
    }
    fn output_schema(&self) -> Value {
        json!({"type": "string"})
    }
    fn call(&self, args: Value, _: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move { Ok(args["text"].clone()) })
    }
}

/// Tools added and removed while a server runs: GET /tools changes (and its ETag), calls find
/// them, and an official MCP client connected all along hears `tools/list_changed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_added_and_removed_at_run_time_reach_every_front_end() {
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(backups_list::descriptor())
            .tool(backup_delete::descriptor())
            .build()
            .unwrap(),
    );
    let base = tool_test_support::serve_on_loopback(app::router(
        registry.clone(),
        ServerOptions::default(),
    ))
    .await;
    let http = reqwest::Client::new();
    let first = http.get(format!("{base}/tools")).send().await.unwrap();
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    let again = http
        .get(format!("{base}/tools"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);

    let (_child, mut lines) = spawn_python(&["list-changed", &format!("{base}/mcp")]);
    let mut next = async || {
        tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("the Python client answers")
            .unwrap()
            .expect("the Python client ended early")
    };
    assert_eq!(next().await, r#"tools ["backup_delete", "backups_list"]"#);
    // The client opens its stream for server notifications after the handshake.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;

    let version = registry.version();
    registry.add_tool(Echo("echo")).unwrap();
    assert!(registry.version() > version);
    assert_eq!(
        next().await,
        r#"changed ["backup_delete", "backups_list", "echo"]"#
    );
    let changed = http
        .get(format!("{base}/tools"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(changed.status(), 200);
    assert_ne!(changed.headers()["etag"].to_str().unwrap(), etag);
    let called: Value = http
        .post(format!("{base}/tools/echo"))
        .json(&json!({"text": "hi"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(called["result"], "hi");

    assert!(registry.remove_tool("echo"));
    assert!(!registry.remove_tool("echo"));
    assert!(!registry.remove_tool("backups_list"), "built-in tools stay");
    assert_eq!(next().await, r#"changed ["backup_delete", "backups_list"]"#);
    let gone = http
        .post(format!("{base}/tools/echo"))
        .json(&json!({"text": "hi"}))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
}

/// A tool, a mounted source of tools and state are each given through one method, by value or
/// already shared (an `Arc` the application keeps a clone of), which the registry then holds
/// as it is.
#[tokio::test]
async fn tools_sources_and_state_are_taken_by_value_or_shared() {
    use std::sync::atomic::AtomicUsize;
    let shared: Arc<dyn Tool> = Arc::new(Echo("shared"));
    let typed = Arc::new(Echo("typed"));
    let hits = Arc::new(AtomicUsize::new(7));
    let registry = Registry::builder()
        .without_inventory()
        .tool(Echo("owned"))
        .tool(Arc::clone(&shared))
        .tool(Arc::clone(&typed))
        .state::<AtomicUsize>(Arc::clone(&hits))
        .build()
        .unwrap();
    assert_eq!(
        Arc::strong_count(&shared),
        2,
        "the registry holds the same tool"
    );
    assert_eq!(Arc::strong_count(&typed), 2);
    assert_eq!(
        Arc::strong_count(&hits),
        2,
        "the registry holds the same state"
    );

    registry.add_tool(Echo("added")).unwrap();
    registry.add_tool(Arc::new(Echo("added_typed"))).unwrap();
    let dynamic: Arc<dyn Tool> = Arc::new(Echo("added_shared"));
    registry.add_tool(dynamic).unwrap();

    registry.mount(Notes::new("owned", &["a"])).await.unwrap();
    registry
        .mount(Arc::new(Notes::new("typed", &["b"])))
        .await
        .unwrap();
    let toolset: Arc<dyn Toolset> = Arc::new(Notes::new("shared", &["c"]));
    registry.mount(Arc::clone(&toolset)).await.unwrap();
    assert!(
        Arc::strong_count(&toolset) > 1,
        "the registry holds the same toolset"
    );

    assert_eq!(
        registry.names(),
        [
            "added",
            "added_shared",
            "added_typed",
            "owned",
            "owned-a",
            "shared",
            "shared-c",
            "typed",
            "typed-b"
        ]
    );
}

/// Two tools of one name are refused from any source, naming both origins; nothing is dropped
/// silently.
#[tokio::test]
async fn duplicate_names_from_any_source_are_refused_naming_both() {
    // Two dynamic tools when the registry is built.
    let err = Registry::builder()
        .without_inventory()
        .tool(Echo("echo"))
        .tool(Echo("echo"))
        .build()
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("two tools are named `echo`"), "{text}");
    assert!(
        text.contains("dynamic tool #1 (`suite::core::Echo`)")
            && text.contains("dynamic tool #2 (`suite::core::Echo`)"),
        "{text}"
    );

    // At run time, against a `#[tool]` and against another dynamic tool.
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(backups_list::descriptor())
            .build()
            .unwrap(),
    );
    let err = registry
        .add_tool(Echo("backups_list"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("two tools are named `backups_list`")
            && err.contains("suite/core.rs")
            && err.contains("`suite::core::Echo`"),
        "{err}"
    );
    registry.add_tool(Echo("echo")).unwrap();
    let err = registry.add_tool(Echo("echo")).unwrap_err().to_string();
    assert!(
        err.contains("dynamic tool #") && err.contains("two tools are named `echo`"),
        "{err}"
    );
    assert_eq!(registry.names(), ["backups_list", "echo"]);

    // A toolset whose tool would take a name in use: none of its tools is added.
    let err = registry.mount(Notes::new("echo", &["x"])).await;
    assert!(err.is_ok(), "echo-x is a new name");
    let err = registry
        .mount(Notes::new("other", &["a", "b"]))
        .await
        .unwrap();
    assert_eq!(err, ["other-a", "other-b"]);
    let clash = registry
        .mount(Notes::new("other", &["c"]))
        .await
        .unwrap_err();
    assert!(clash.to_string().contains("mounted already"), "{clash}");
}

/// A tool with a limit of its own.
struct Limited;

impl Tool for Limited {
    fn meta(&self) -> ToolMeta {
        let mut meta = ToolMeta::new("limited", "Return the text, at most twice a minute.");
        meta.options.rate = Some(tool_runtime::tool::Rate::parse("2/min").unwrap());
        meta
    }
    fn input_schema(&self) -> Value {
        Echo("limited").input_schema()
    }
    fn output_schema(&self) -> Value {
        json!({"type": "string"})
    }
    fn call(&self, args: Value, _: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move { Ok(args["text"].clone()) })
    }
}

/// Limits are set up when the registry is built: a run-time tool that has one, or that the
/// builder set one for, is refused rather than served unlimited. Built in, the limit holds.
#[tokio::test]
async fn limits_are_never_ignored_for_tools_added_at_run_time() {
    let registry = Registry::builder()
        .without_inventory()
        .concurrency_limit("later", Some(1))
        .build()
        .unwrap();
    let err = registry.add_tool(Limited).unwrap_err().to_string();
    assert!(
        err.contains("tool `limited`") && err.contains("rate or concurrency limit"),
        "{err}"
    );
    let err = registry.add_tool(Echo("later")).unwrap_err().to_string();
    assert!(err.contains("tool `later`"), "{err}");
    registry.add_tool(Echo("free")).unwrap();
    assert_eq!(registry.names(), ["free"]);

    let built = Registry::builder()
        .without_inventory()
        .tool(Limited)
        .build()
        .unwrap();
    let call = || {
        built.call(
            "limited",
            json!({"text": "hi"}),
            Caller::new(Source::Internal),
        )
    };
    assert!(call().await.is_ok());
    assert!(call().await.is_ok());
    assert_eq!(call().await.error().unwrap().kind(), "rate_limited");
}

/// An in-process toolset whose tools can change.
struct Notes {
    name: &'static str,
    tools: Arc<Mutex<Vec<String>>>,
    changes: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<()>>>,
}

impl Notes {
    fn new(name: &'static str, tools: &[&str]) -> Self {
        Self {
            name,
            tools: Arc::new(Mutex::new(tools.iter().map(|t| (*t).to_owned()).collect())),
            changes: Mutex::new(None),
        }
    }
}

impl Toolset for Notes {
    fn name(&self) -> &str {
        self.name
    }
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolsetTool>, ToolError>> {
        let tools = self.tools.lock().unwrap().clone();
        Box::pin(async move {
            Ok(tools
                .into_iter()
                .map(|t| {
                    ToolsetTool::new(
                        ToolMeta::new(t, "A note tool."),
                        json!({"type": "object", "additionalProperties": false}),
                        json!({"type": "string"}),
                    )
                })
                .collect())
        })
    }
    fn call<'a>(
        &'a self,
        tool: &'a str,
        _args: Value,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move { Ok(json!(format!("{} ran {tool}", self.name))) })
    }
    fn changes(&self) -> Option<futures_util::stream::BoxStream<'static, ()>> {
        let rx = self.changes.lock().unwrap().take()?;
        Some(Box::pin(futures_util::stream::unfold(
            rx,
            |mut rx| async move { rx.recv().await.map(|()| ((), rx)) },
        )))
    }
}

/// A mounted toolset: its tools are named `{toolset}-{tool}`, called through the pipeline,
/// replaced when it announces a change, and gone when it is unmounted.
#[tokio::test]
async fn a_toolset_mounts_changes_and_unmounts() {
    let registry = Arc::new(Registry::builder().without_inventory().build().unwrap());
    let notes = Notes::new("notes", &["count"]);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    *notes.changes.lock().unwrap() = Some(rx);
    let tools = notes.tools.clone();
    let mut changes = registry.changes();
    assert_eq!(registry.mount(notes).await.unwrap(), ["notes-count"]);
    let env = registry
        .call("notes-count", json!({}), Caller::new(Source::Internal))
        .await;
    assert_eq!(env.result(), Some(&json!("notes ran count")));
    assert_eq!(
        registry.get("notes-count").unwrap().origin(),
        "toolset `notes` (its tool `count`)"
    );

    changes.borrow_and_update();
    *tools.lock().unwrap() = vec!["count".into(), "search".into()];
    tx.send(()).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), changes.changed())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(registry.names(), ["notes-count", "notes-search"]);

    assert!(registry.unmount("notes"));
    assert!(registry.names().is_empty());
    assert!(!registry.unmount("notes"));
}

/// Routes of the user's own given to `router_with` are behind the front layer: authenticated,
/// given a request id, refused to remote peers without authentication; they learn who calls
/// from the `Requester`; unknown paths still get the tool routes' 404.
#[tokio::test]
async fn routes_given_to_router_with_are_behind_the_front_layer() {
    use axum::Extension;
    use axum::extract::ConnectInfo;
    use tool_runtime::http::Requester;
    use tower::ServiceExt;
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(backups_list::descriptor())
            .build()
            .unwrap(),
    );
    let app = |options: ServerOptions| {
        let mine = axum::Router::new().route(
            "/whoami",
            axum::routing::get(|Extension(who): Extension<Requester>| async move {
                let principal = who.identity.map_or("anonymous".to_owned(), |i| i.principal);
                format!("{principal} {}", who.id)
            }),
        );
        http::router_with(registry.clone(), options, mine)
    };
    let get = |path: &str, token: Option<&str>, peer: [u8; 4]| {
        let mut request = axum::http::Request::get(path).header("x-request-id", "r-1");
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let mut request = request.body(axum::body::Body::empty()).unwrap();
        request
            .extensions_mut()
            .insert(ConnectInfo(std::net::SocketAddr::from((peer, 40000))));
        request
    };
    let text = |response: axum::response::Response| async move {
        let status = response.status().as_u16();
        let id = response.headers()["x-request-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, id, String::from_utf8_lossy(&body).into_owned())
    };
    let with_tokens = || ServerOptions::default().auth(Auth::from_toml(TOKENS).unwrap());
    let lan = [192, 168, 1, 20];

    let (status, id, _) = text(
        app(with_tokens())
            .oneshot(get("/whoami", None, lan))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, id.as_str()), (401, "r-1"));
    let (status, _, body) = text(
        app(with_tokens())
            .oneshot(get("/whoami", Some("admin-token"), lan))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "ada r-1"));
    let (status, _, body) = text(
        app(ServerOptions::default())
            .oneshot(get("/whoami", None, [127, 0, 0, 1]))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "anonymous r-1"));
    let (status, _, _) = text(
        app(ServerOptions::default())
            .oneshot(get("/whoami", None, lan))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 403);
    let (status, _, body) = text(
        app(ServerOptions::default())
            .oneshot(get("/elsewhere", None, [127, 0, 0, 1]))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"]["type"],
        "not_found"
    );
}

/// Without authentication, the HTTP front end (and `/mcp` behind it) serves loopback peers
/// only, unless told otherwise; with tokens, anyone who has one.
#[tokio::test]
async fn unauthenticated_servers_refuse_remote_peers() {
    use axum::extract::ConnectInfo;
    use tower::ServiceExt;
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(backups_list::descriptor())
            .build()
            .unwrap(),
    );
    let status = |options: ServerOptions, peer: [u8; 4], path: &'static str| {
        let app = app::router(registry.clone(), options);
        async move {
            let mut request = axum::http::Request::get(path)
                .body(axum::body::Body::empty())
                .unwrap();
            request
                .extensions_mut()
                .insert(ConnectInfo(std::net::SocketAddr::from((peer, 40000))));
            app.oneshot(request).await.unwrap().status().as_u16()
        }
    };
    let lan = [192, 168, 1, 20];
    assert_eq!(
        status(ServerOptions::default(), [127, 0, 0, 1], "/tools").await,
        200
    );
    assert_eq!(status(ServerOptions::default(), lan, "/tools").await, 403);
    assert_eq!(status(ServerOptions::default(), lan, "/mcp").await, 403);
    let opted_out = ServerOptions::default().allow_remote_without_auth(true);
    assert_eq!(status(opted_out, lan, "/tools").await, 200);
    let with_tokens = ServerOptions::default().auth(Auth::from_toml(TOKENS).unwrap());
    assert_eq!(status(with_tokens, lan, "/tools").await, 401);

    // `tool_route` in a router of the user's own: no front layer, so the same rule applies
    // there, unless an authentication layer of theirs says who is calling (a `Requester`).
    let call = |peer: [u8; 4], requester: Option<tool_runtime::http::Requester>| {
        let app = axum::Router::new().route(
            "/api/backups",
            http::tool_route(registry.clone(), "backups_list"),
        );
        async move {
            let mut request = axum::http::Request::post("/api/backups")
                .header("content-type", "application/json")
                .body(axum::body::Body::from("{}"))
                .unwrap();
            request
                .extensions_mut()
                .insert(ConnectInfo(std::net::SocketAddr::from((peer, 40000))));
            if let Some(r) = requester {
                request.extensions_mut().insert(r);
            }
            app.oneshot(request).await.unwrap().status().as_u16()
        }
    };
    assert_eq!(call([127, 0, 0, 1], None).await, 200);
    assert_eq!(call(lan, None).await, 403);
    let authenticated = tool_runtime::http::Requester::new("req-1");
    assert_eq!(call(lan, Some(authenticated)).await, 200);
}
