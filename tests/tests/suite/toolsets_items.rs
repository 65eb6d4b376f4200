//! A mounted MCP server's resources and prompts, against the reference server nobody here
//! wrote (`@modelcontextprotocol/server-everything`): listed beside ours, read, got and
//! completed through our pipeline, and removed when the server is unmounted.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use tool_runtime::registry::MountError;
use tool_runtime::tool::CompletionRef;
use tool_runtime::tool::notify::Change;
use tool_runtime::{Caller, Registry, Source};

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
    assert_eq!(changes.recv().await.unwrap(), Change::ResourcesChanged);

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_reaches_the_mounted_server_and_its_updates_reach_ours() {
    let dir = tool_test_support::TempDir::new("remote-updates");
    let registry = Registry::builder()
        .without_inventory()
        .default_timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    registry.mount(everything_on_stdio(&dir)).await.unwrap();
    let mut changes = registry.notifier().subscribe();
    // The subscription reaches the server, whose updates reach our subscribers.
    let watched = "demo://resource/dynamic/text/7";
    // Held until the end: dropped, it would be released.
    let _subscribed = registry
        .subscribe_resource(watched, &caller())
        .await
        .unwrap();
    let toggled = registry
        .call(
            "everything-toggle-subscriber-updates",
            json!({}),
            caller().confirm(true),
        )
        .await;
    assert!(toggled.is_ok(), "{toggled:?}");
    let heard = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            if let Ok(Change::ResourceUpdated(uri)) = changes.recv().await
                && uri == watched
            {
                return uri;
            }
        }
    })
    .await;
    assert_eq!(heard.as_deref(), Ok(watched));
    let hidden = registry
        .subscribe_resource("nowhere://x", &caller())
        .await
        .unwrap_err();
    assert_eq!(hidden.kind().as_str(), "not_found");
}

/// A toolset whose one resource is renamed when it says so.
struct Shifting {
    version: std::sync::Arc<std::sync::atomic::AtomicU32>,
    said: tokio::sync::broadcast::Sender<Change>,
}

struct Versioned(u32);

impl tool_runtime::resource::Resource for Versioned {
    fn meta(&self) -> tool_runtime::resource::ResourceMeta {
        let uri = format!("shifting://v{}", self.0);
        tool_runtime::resource::ResourceMeta::new(
            format!("shifting-v{}", self.0),
            uri,
            "A version.",
        )
    }

    fn read(
        &self,
        _uri: String,
        _values: BTreeMap<String, String>,
        _ctx: tool_runtime::CallContext,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<tool_runtime::resource::ResourceBody, tool_runtime::ToolError>,
    > {
        let body = tool_runtime::resource::ResourceBody::Text(format!("version {}", self.0));
        Box::pin(async move { Ok(body) })
    }
}

impl tool_runtime::toolset::Toolset for Shifting {
    fn name(&self) -> &'static str {
        "shifting"
    }

    fn tools(
        &self,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<Vec<tool_runtime::toolset::ToolsetTool>, tool_runtime::ToolError>,
    > {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        _args: serde_json::Value,
        _ctx: tool_runtime::CallContext,
    ) -> futures_util::future::BoxFuture<'a, Result<serde_json::Value, tool_runtime::ToolError>>
    {
        Box::pin(async move {
            Err(tool_runtime::ToolError::not_found(format!(
                "no tool {tool}"
            )))
        })
    }

    fn items(
        self: std::sync::Arc<Self>,
    ) -> futures_util::future::BoxFuture<
        'static,
        Result<tool_runtime::toolset::ToolsetItems, tool_runtime::ToolError>,
    > {
        Box::pin(async move {
            use futures_util::StreamExt as _;
            let version = self.version.load(std::sync::atomic::Ordering::SeqCst);
            let heard = self.said.subscribe();
            let changes = futures_util::stream::unfold(heard, |mut heard| async move {
                heard.recv().await.ok().map(|c| (c, heard))
            })
            .boxed();
            Ok(tool_runtime::toolset::ToolsetItems {
                resources: vec![std::sync::Arc::new(Versioned(version))],
                changes: Some(changes),
                ..Default::default()
            })
        })
    }
}

#[tokio::test]
async fn a_toolset_that_says_its_resources_changed_has_them_listed_again_and_updates_passed_on() {
    let registry = Registry::builder().without_inventory().build().unwrap();
    let version = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(1));
    let said = tokio::sync::broadcast::channel(8).0;
    registry
        .mount(Shifting {
            version: std::sync::Arc::clone(&version),
            said: said.clone(),
        })
        .await
        .unwrap();
    let uris = || -> Vec<String> {
        registry
            .resources(&caller())
            .iter()
            .map(|r| r.uri.to_string())
            .collect()
    };
    assert_eq!(uris(), ["shifting://v1"]);
    let mut heard = registry.notifier().subscribe();
    said.send(Change::ResourceUpdated("shifting://v1".into()))
        .unwrap();
    assert_eq!(
        heard.recv().await.unwrap(),
        Change::ResourceUpdated("shifting://v1".into())
    );
    version.store(2, std::sync::atomic::Ordering::SeqCst);
    said.send(Change::ResourcesChanged).unwrap();
    assert_eq!(heard.recv().await.unwrap(), Change::ResourcesChanged);
    assert_eq!(uris(), ["shifting://v2"]);
    let read = registry
        .read_resource("shifting://v2", caller())
        .await
        .unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("version 2"));
    // Unmounted, it is followed no more.
    assert!(registry.unmount("shifting"));
    assert!(uris().is_empty());
    // The aborted watcher is dropped when the runtime next runs it.
    tokio::task::yield_now().await;
    assert_eq!(said.receiver_count(), 0, "the watcher still listens");
}

/// A resource of an upstream server that counts what it is asked: subscriptions made and
/// released.
#[derive(Clone, Default)]
struct Watched {
    subscribed: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    released: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl tool_runtime::resource::Resource for Watched {
    fn meta(&self) -> tool_runtime::resource::ResourceMeta {
        tool_runtime::resource::ResourceMeta::new("watched", "up://{id}", "Counts subscriptions.")
    }

    fn read(
        &self,
        uri: String,
        _values: BTreeMap<String, String>,
        _ctx: tool_runtime::CallContext,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<tool_runtime::resource::ResourceBody, tool_runtime::ToolError>,
    > {
        Box::pin(async move { Ok(tool_runtime::resource::ResourceBody::Text(uri)) })
    }

    fn subscribe(
        &self,
        _uri: &str,
    ) -> Option<futures_util::future::BoxFuture<'static, Result<(), tool_runtime::ToolError>>> {
        let subscribed = std::sync::Arc::clone(&self.subscribed);
        Some(Box::pin(async move {
            subscribed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        }))
    }

    fn unsubscribe(
        &self,
        _uri: &str,
    ) -> Option<futures_util::future::BoxFuture<'static, Result<(), tool_runtime::ToolError>>> {
        self.released
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        None
    }
}

/// Our own server over HTTP on loopback, serving `watched` with one URI a session at most: its
/// base URL, and the methods of the requests that reach it.
async fn upstream(watched: &Watched) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::sync::{Arc, Mutex};
    let serving = Arc::new(
        Registry::builder()
            .without_inventory()
            .resource(watched.clone())
            .build()
            .unwrap(),
    );
    let methods = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&methods);
    let app = tool_runtime::app::router(
        serving,
        tool_runtime::http::ServerOptions::default().max_subscriptions(1),
    )
    .layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let seen = Arc::clone(&seen);
            async move {
                let (parts, body) = request.into_parts();
                let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
                if let Ok(message) = serde_json::from_slice::<serde_json::Value>(&bytes)
                    && let Some(method) = message["method"].as_str()
                {
                    seen.lock().unwrap().push(method.to_owned());
                }
                let request = axum::extract::Request::from_parts(parts, bytes.into());
                next.run(request).await
            }
        },
    ));
    (tool_test_support::serve_on_loopback(app).await, methods)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_uri_is_subscribed_there_once_and_released_with_its_last_session() {
    use super::mcp_resources::Pipe;
    use std::sync::Arc;
    use std::sync::atomic::Ordering::SeqCst;
    use tool_runtime::mcp::McpServer;

    let watched = Watched::default();
    let (base, methods) = upstream(&watched).await;
    let asked = |method: &str| {
        methods
            .lock()
            .unwrap()
            .iter()
            .filter(|m| *m == method)
            .count()
    };
    let mounting = Arc::new(
        Registry::builder()
            .without_inventory()
            .default_timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
    );
    mounting
        .mount(tool_runtime::mcp::RemoteServer::http(
            "up",
            format!("{base}/mcp"),
        ))
        .await
        .unwrap();
    let subscribe = json!({"uri": "up://1"});

    // Two sessions here, one subscription there.
    let mut first = Pipe::legacy(McpServer::new(mounting.clone())).await;
    let mut second = Pipe::legacy(McpServer::new(mounting.clone())).await;
    for pipe in [&mut first, &mut second] {
        let answer = pipe.request("resources/subscribe", subscribe.clone()).await;
        assert_eq!(answer["result"], json!({}), "{answer}");
    }
    assert_eq!(asked("resources/subscribe"), 1);
    assert_eq!(watched.subscribed.load(SeqCst), 1);

    // The upstream session's cap holds: its error, naming the cap, reaches our client.
    let refused = first
        .request("resources/subscribe", json!({"uri": "up://2"}))
        .await;
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("MCP server `up`") && message.contains("follows 1 resources"),
        "{refused}"
    );

    // The first lets go: the second still holds it, nothing is sent there.
    first
        .request("resources/unsubscribe", subscribe.clone())
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(asked("resources/unsubscribe"), 0);

    // The second MCP session ends: the last holder gone, the server is told, and releases it.
    drop(second);
    tokio::time::timeout(Duration::from_secs(10), async {
        while watched.released.load(SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the upstream subscription released once its last MCP session ended");
    assert_eq!(asked("resources/unsubscribe"), 1);
    // There, room for another.
    let answer = first
        .request("resources/subscribe", json!({"uri": "up://2"}))
        .await;
    assert_eq!(answer["result"], json!({}), "{answer}");
    assert_eq!(asked("resources/subscribe"), 3);

    // Unmounted while a session here still holds a subscription to one of its resources, the
    // server is let go all the same: its session there ends, releasing what it held.
    assert!(mounting.unmount("up"));
    tokio::time::timeout(Duration::from_secs(10), async {
        while watched.released.load(SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the unmounted server's session ended");
    drop(first);
}
