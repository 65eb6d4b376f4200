//! Registry-wide policies and per-tool guards, through the pipeline and over HTTP.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tool_runtime::Registry;
use tool_runtime::layers::hooks::{CallObserver, CompletedCall};
use tool_runtime::layers::policy::{AllowTools, DenyDestructive, RequireRoles};
use tool_runtime::prelude::*;
use tool_runtime::tool::PendingCall;

/// Purge the archive.
#[tool(annotations(destructive))]
async fn purge() -> bool {
    true
}

/// Read the report.
#[tool(annotations(read_only))]
async fn report() -> String {
    "all good".into()
}

/// Rotate the keys.
#[tool(roles("admin", "security"))]
async fn rotate_keys() -> bool {
    true
}

/// Caps `n` at 10.
#[allow(clippy::unnecessary_wraps)] // Reason: every guard has the same signature.
fn cap_at_ten(call: &mut PendingCall) -> Result<(), ToolError> {
    if call.args()["n"].as_i64().is_some_and(|n| n > 10) {
        let mut args = call.args().clone();
        args["n"] = json!(10);
        call.set_args(args);
    }
    Ok(())
}

/// Refuses 13.
fn not_thirteen(call: &mut PendingCall) -> Result<(), ToolError> {
    if call.args()["n"] == 13 {
        return Err(ToolError::new("forbidden", "13 is unlucky"));
    }
    Ok(())
}

/// Turns 7 into a string, which the schema forbids.
#[allow(clippy::unnecessary_wraps)] // Reason: every guard has the same signature.
fn break_seven(call: &mut PendingCall) -> Result<(), ToolError> {
    if call.args()["n"] == 7 {
        let mut args = call.args().clone();
        args["n"] = json!("seven");
        call.set_args(args);
    }
    Ok(())
}

/// Echo a number.
#[tool(guard = not_thirteen, guard = cap_at_ten, guard = break_seven)]
async fn echo_number(
    /// The number
    n: i64,
) -> i64 {
    n
}

fn registry(builder: tool_runtime::registry::RegistryBuilder) -> Registry {
    builder.build().unwrap()
}

/// The policies' reasons for the tools they hid, as the observers (the audit) learn them:
/// callers are told only that there is no such tool.
#[derive(Clone, Default)]
struct HiddenBecause(Arc<Mutex<Vec<String>>>);

impl HiddenBecause {
    fn last(&self) -> String {
        self.0.lock().unwrap().last().cloned().unwrap_or_default()
    }
}

impl CallObserver for HiddenBecause {
    fn observe<'a>(&'a self, call: CompletedCall<'a>) -> BoxFuture<'a, ()> {
        if let Some(reason) = call.hidden {
            self.0.lock().unwrap().push(reason.to_owned());
        }
        Box::pin(std::future::ready(()))
    }
}

async fn call(
    r: &Registry,
    tool: &str,
    args: Value,
    caller: Caller,
) -> Result<Value, (String, String)> {
    let env = r.call(tool, args, caller).await;
    match env.outcome {
        Ok(v) => Ok(v),
        Err(e) => Err((e.kind().as_str().to_owned(), e.message().to_owned())),
    }
}

#[tokio::test]
async fn guards_run_in_order_deny_and_rewrite_with_revalidation() {
    let r = registry(registry_builder());
    let c = || Caller::new(Source::Internal);
    assert_eq!(
        call(&r, "echo_number", json!({"n": 3}), c()).await,
        Ok(json!(3))
    );
    assert_eq!(
        call(&r, "echo_number", json!({"n": 99}), c()).await,
        Ok(json!(10))
    );
    let denied = call(&r, "echo_number", json!({"n": 13}), c())
        .await
        .unwrap_err();
    assert_eq!(denied, ("forbidden".into(), "13 is unlucky".into()));
    // A guard's rewrite that breaks the schema is caught by validating again.
    let broken = call(&r, "echo_number", json!({"n": 7}), c())
        .await
        .unwrap_err();
    assert_eq!(broken.0, "invalid_arguments");
    assert_eq!(r.get("echo_number").unwrap().meta().guards.len(), 3);
}

#[tokio::test]
async fn policies_deny_with_their_reason() {
    let hidden = HiddenBecause::default();
    let r = registry(
        registry_builder()
            .observer(hidden.clone())
            .policy(DenyDestructive::for_sources([Source::Agent]))
            .policy(AllowTools::new().allow(Source::Mcp, ["report"]))
            .policy(|call: &PendingCall| {
                if call.context().principal() == Some("mallory") {
                    Err("mallory is banned".to_owned())
                } else {
                    Ok(())
                }
            }),
    );
    // An agent may not purge, even confirmed; the CLI may, confirmed.
    let agent = call(
        &r,
        "purge",
        json!({}),
        Caller::new(Source::Agent).confirm(true),
    )
    .await;
    // Hidden from agents: unknown to them, the reason told to the observers only.
    let (kind, message) = agent.unwrap_err();
    assert_eq!(kind, "unknown_tool");
    assert_eq!(message, "no tool named `purge`");
    assert!(
        hidden
            .last()
            .contains("agent callers may not call destructive tools"),
        "{}",
        hidden.last()
    );
    assert_eq!(
        call(
            &r,
            "purge",
            json!({}),
            Caller::new(Source::Cli).confirm(true)
        )
        .await,
        Ok(json!(true))
    );
    // MCP may call only `report`.
    assert!(
        call(&r, "report", json!({}), Caller::new(Source::Mcp))
            .await
            .is_ok()
    );
    let mcp = call(&r, "echo_number", json!({"n": 1}), Caller::new(Source::Mcp))
        .await
        .unwrap_err();
    assert_eq!(mcp.0, "unknown_tool");
    assert!(
        hidden.last().contains("not allowed for mcp callers"),
        "{}",
        hidden.last()
    );
    // The closure sees the caller.
    let banned = call(
        &r,
        "report",
        json!({}),
        Caller::new(Source::Http).principal("mallory"),
    )
    .await;
    assert_eq!(
        banned.unwrap_err(),
        ("forbidden".into(), "mallory is banned".into())
    );
    // Policy runs before confirmation: a hidden tool is unknown, and a call a policy refuses
    // is `forbidden`, not `confirmation_required`.
    let unconfirmed = call(&r, "purge", json!({}), Caller::new(Source::Agent)).await;
    assert_eq!(unconfirmed.unwrap_err().0, "unknown_tool");
    let banned = call(
        &r,
        "purge",
        json!({}),
        Caller::new(Source::Cli).principal("mallory"),
    )
    .await;
    assert_eq!(banned.unwrap_err().0, "forbidden");
}

#[tokio::test]
async fn roles_are_required_by_the_require_roles_policy() {
    let hidden = HiddenBecause::default();
    let r = registry(
        registry_builder()
            .observer(hidden.clone())
            .policy(RequireRoles),
    );
    let tool_meta = r.get("rotate_keys").unwrap();
    let meta = tool_meta.meta();
    assert_eq!(meta.options.roles, ["admin", "security"]);
    // Without the role the tool is unknown to the caller: neither its existence nor the role
    // it needs is told, only recorded.
    let anonymous = call(&r, "rotate_keys", json!({}), Caller::new(Source::Http)).await;
    let (kind, message) = anonymous.unwrap_err();
    assert_eq!(kind, "unknown_tool");
    assert!(!message.contains("admin"), "{message}");
    assert!(
        hidden.last().contains("needs the role admin or security"),
        "{}",
        hidden.last()
    );
    let viewer = Caller::new(Source::Http).principal("bob").roles(["viewer"]);
    assert_eq!(
        call(&r, "rotate_keys", json!({}), viewer)
            .await
            .unwrap_err()
            .0,
        "unknown_tool"
    );
    assert!(
        hidden.last().contains("bob has viewer"),
        "{}",
        hidden.last()
    );
    let security = Caller::new(Source::Http)
        .principal("eve")
        .roles(["security"]);
    assert_eq!(
        call(&r, "rotate_keys", json!({}), security).await,
        Ok(json!(true))
    );
    // Tools without roles need none.
    assert!(
        call(&r, "report", json!({}), Caller::new(Source::Http))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn roles_from_bearer_tokens_reach_the_policy_over_http() {
    use tool_runtime::http::{self, Auth, ServerOptions};
    let auth = Auth::from_toml(
        "[[tokens]]\ntoken = \"admin-token\"\nprincipal = \"alice\"\nroles = [\"admin\"]\n\n\
         [[tokens]]\ntoken = \"viewer-token\"\nprincipal = \"bob\"\nroles = [\"viewer\"]\n",
    )
    .unwrap();
    let r = Arc::new(registry(registry_builder().policy(RequireRoles)));
    let app = http::router(r, ServerOptions::default().auth(auth));
    let url = format!(
        "{}/tools/rotate_keys",
        tool_test_support::serve_on_loopback(app).await
    );
    let client = reqwest::Client::new();
    let viewer = client
        .post(&url)
        .bearer_auth("viewer-token")
        .send()
        .await
        .unwrap();
    assert_eq!(viewer.status(), 404);
    assert_eq!(
        viewer.json::<Value>().await.unwrap()["error"]["type"],
        "unknown_tool"
    );
    let admin = client
        .post(&url)
        .bearer_auth("admin-token")
        .send()
        .await
        .unwrap();
    assert_eq!(admin.status(), 200);
}

#[tokio::test]
async fn guards_and_policies_apply_over_http_too() {
    use tool_runtime::http::{self, ServerOptions};
    let r = Arc::new(registry(
        registry_builder().policy(DenyDestructive::for_sources([Source::Http])),
    ));
    let base =
        tool_test_support::serve_on_loopback(http::router(r, ServerOptions::default())).await;
    let client = reqwest::Client::new();
    let post = |tool: &str, body: Value| {
        client
            .post(format!("{base}/tools/{tool}?confirm=true"))
            .json(&body)
            .send()
    };
    let denied = post("echo_number", json!({"n": 13})).await.unwrap();
    assert_eq!(denied.status(), 403);
    let capped: Value = post("echo_number", json!({"n": 99}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(capped["result"], 10);
    // Hidden from HTTP callers: unknown to them.
    let destructive = post("purge", json!({})).await.unwrap();
    assert_eq!(destructive.status(), 404);
}

/// The tools of this file, and no others: the test binary holds other files' tools too.
fn registry_builder() -> tool_runtime::registry::RegistryBuilder {
    tool_runtime::Registry::builder()
        .without_inventory()
        .tool(purge::descriptor())
        .tool(report::descriptor())
        .tool(rotate_keys::descriptor())
        .tool(echo_number::descriptor())
}

/// What a policy keeps from a front end is missing from that front end's listings (`GET
/// /tools`, `/openapi.json` and its library form, MCP `tools/list`) and refused when called.
#[tokio::test]
async fn a_policy_hides_a_tool_from_every_listing_of_the_front_end_it_concerns() {
    use tool_runtime::http::{self, ServerOptions};
    let r = Arc::new(registry(
        registry_builder().policy(
            AllowTools::new()
                .allow(Source::Http, ["report"])
                .allow(Source::Mcp, ["report", "purge"]),
        ),
    ));
    let doc = http::openapi::document(&r, &Caller::new(Source::Http), "t", "1", false);
    let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    assert!(paths.iter().any(|p| p.ends_with("/report")), "{paths:?}");
    assert!(!paths.iter().any(|p| p.contains("purge")), "{paths:?}");

    let base =
        tool_test_support::serve_on_loopback(http::router(r.clone(), ServerOptions::default()))
            .await;
    let client = reqwest::Client::new();
    let get = |path: &'static str| {
        let client = client.clone();
        let url = format!("{base}{path}");
        async move {
            client
                .get(url)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let tools = get("/tools").await;
    let names = tool_test_support::tool_names(&tools);
    assert_eq!(names, ["report"]);
    let served = get("/openapi.json").await;
    assert_eq!(served["paths"], doc["paths"]);
    let refused = client
        .post(format!("{base}/tools/echo_number"))
        .json(&json!({"n": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 404);

    let mcp = tool_runtime::mcp::McpServer::new(r.clone());
    let listed: Vec<String> = mcp
        .list(&Caller::new(Source::Mcp))
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    assert_eq!(listed, ["purge", "report"]);
    let refused = call(&r, "echo_number", json!({"n": 1}), Caller::new(Source::Mcp)).await;
    assert_eq!(refused.unwrap_err().0, "unknown_tool");
}
