//! A mounted MCP server's resources and prompts, against the reference server nobody here
//! wrote (`@modelcontextprotocol/server-everything`): listed beside ours, read, got and
//! completed through our pipeline, and removed when the server is unmounted.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use tool_runtime::toolset::MountError;
use tool_runtime::{Caller, CompletionRef, Registry, Source};

use super::toolsets::everything_on_stdio;

fn caller() -> Caller {
    Caller::new(Source::Internal)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_resources_and_prompts_are_served_as_ours() {
    let dir = tool_test_support::TempDir::new("remote-items");
    let registry = Registry::builder()
        .without_inventory()
        .default_timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let mut changes = registry.notifier().subscribe();
    registry.mount(everything_on_stdio(&dir)).await.unwrap();
    assert_eq!(
        changes.recv().await.unwrap(),
        tool_runtime::notify::Change::ResourcesChanged
    );

    // Templates keep their URIs; names take the server's prefix.
    let resources = registry.resources(&caller());
    let text = resources
        .iter()
        .find(|r| r.uri == "demo://resource/dynamic/text/{resourceId}")
        .expect("the reference server's text template is mounted");
    assert!(text.name.starts_with("everything-"), "{}", text.name);

    // A read passes our pipeline and reaches the server.
    let read = registry
        .read_resource("demo://resource/dynamic/text/7", caller())
        .await
        .unwrap();
    let body = read.contents[0].text.as_deref().unwrap();
    assert!(body.starts_with("Resource 7"), "{body}");

    // A URI nobody serves is not found, with the URI in its details.
    let missing = registry
        .read_resource("nowhere://x", caller())
        .await
        .unwrap_err();
    assert_eq!(missing.kind().as_str(), "not_found");
    assert_eq!(missing.details().unwrap()["uri"], "nowhere://x");

    // Prompts take the server's prefix and keep their arguments.
    let prompts = registry.prompts(&caller());
    let args_prompt = prompts
        .iter()
        .find(|p| p.name == "everything-args-prompt")
        .expect("the reference server's prompt is mounted, prefixed");
    assert!(
        args_prompt
            .arguments
            .iter()
            .any(|a| a.name == "city" && a.required)
    );
    let reply = registry
        .get_prompt("everything-args-prompt", json!({"city": "Lyon"}), caller())
        .await
        .unwrap();
    let said = serde_json::to_string(&reply.messages).unwrap();
    assert!(said.contains("Lyon"), "{said}");
    let refused = registry
        .get_prompt("everything-args-prompt", json!({}), caller())
        .await
        .unwrap_err();
    assert_eq!(refused.kind().as_str(), "invalid_arguments", "{refused}");

    // Completions are the server's, asked through our registry.
    let completed = registry
        .complete(
            &CompletionRef::Prompt("everything-completable-prompt".into()),
            "department",
            "Eng",
            BTreeMap::new(),
            caller(),
        )
        .await
        .unwrap();
    assert_eq!(completed.values, ["Engineering"]);

    // A second server serving the same URIs cannot be mounted; the error names both.
    let twin = tool_runtime::mcp::RemoteServer::stdio("twin", "node")
        .args([
            super::toolsets::everything().to_string_lossy().into_owned(),
            "stdio".to_owned(),
        ])
        .cwd(dir.path());
    let Err(MountError::Items(e)) = registry.mount(twin).await else {
        panic!("two servers of the same URIs were both mounted");
    };
    let said = e.to_string();
    assert!(
        said.contains("MCP server `twin`") && said.contains("MCP server `everything`"),
        "{said}"
    );
    assert!(!registry.toolsets().contains(&"twin".to_owned()));

    // Unmounting removes them.
    assert!(registry.unmount("everything"));
    assert!(registry.resources(&caller()).is_empty());
    assert!(registry.prompts(&caller()).is_empty());
}
