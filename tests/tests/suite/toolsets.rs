//! Toolsets: key-value stores (`toolset::Store`), and other MCP servers mounted as toolsets
//! (`mcp::RemoteServer`), against the reference server
//! nobody here wrote: `@modelcontextprotocol/server-everything` from npm (`tests/node`), over
//! stdio and over streamable HTTP.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_runtime::mcp::RemoteServer;
use tool_runtime::{Caller, Registry, Source};

/// The reference server's entry point; a test that needs it fails (never passes) without it.
pub(crate) fn everything() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.exists(),
        "{} is missing: run `bash tests/run.sh` (it installs tests/node)",
        path.display()
    );
    path
}

/// A remote tool's result without an output schema: its content blocks, here one text.
fn text(text: &str) -> Value {
    json!([{"type": "text", "text": text}])
}

/// server-everything on stdio, started in `dir` (which tells its processes apart).
pub(crate) fn everything_on_stdio(dir: &tool_test_support::TempDir) -> RemoteServer {
    RemoteServer::stdio("everything", "node")
        .args([
            everything().to_string_lossy().into_owned(),
            "stdio".to_owned(),
        ])
        .cwd(dir.path())
}

fn caller() -> Caller {
    Caller::new(Source::Internal)
}

fn registry(timeout: Duration) -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .without_inventory()
            .default_timeout(timeout)
            .build()
            .unwrap(),
    )
}

async fn call(registry: &Registry, tool: &str, args: Value) -> Result<Value, (String, String)> {
    let envelope = registry.call(tool, args, caller()).await;
    match envelope.outcome {
        Ok(result) => Ok(result),
        Err(e) => Err((e.kind().as_str().to_owned(), e.message().to_owned())),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_is_mounted_and_called_through_the_pipeline() {
    let registry = registry(Duration::from_millis(1500));
    let dir = tool_test_support::TempDir::new("remote-stdio");
    let server = everything_on_stdio(&dir);
    let names = registry.mount(server).await.expect("mounted");
    for expected in [
        "everything-echo",
        "everything-get-sum",
        "everything-trigger-long-running-operation",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    // Remote annotations are ours.
    {
        let echo = registry.get("everything-echo").unwrap();
        assert_eq!(echo.meta().annotations.read_only, Some(true));
        assert!(!echo.meta().annotations.needs_confirmation());
    }

    assert_eq!(
        call(&registry, "everything-echo", json!({"message": "hi"})).await,
        Ok(text("Echo: hi"))
    );
    let sum = call(&registry, "everything-get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum, text("The sum of 2 and 3 is 5."));
    // Validated here, against the remote schema, before the server sees it.
    let (kind, _) = call(&registry, "everything-get-sum", json!({"a": "two", "b": 3}))
        .await
        .unwrap_err();
    assert_eq!(kind, "invalid_arguments");
    // The server's own error result: a tool error with its text.
    let (kind, message) = call(
        &registry,
        "everything-gzip-file-as-resource",
        json!({"name": "x", "data": "http://127.0.0.1:1/nothing"}),
    )
    .await
    .unwrap_err();
    assert_eq!(kind, "tool_failed");
    assert!(
        message.contains("everything") && message.contains("fetch failed"),
        "{message}"
    );

    // A slow remote tool ends at our time limit, and the session goes on.
    let started = Instant::now();
    let (kind, _) = call(
        &registry,
        "everything-trigger-long-running-operation",
        json!({"duration": 30, "steps": 3}),
    )
    .await
    .unwrap_err();
    assert_eq!(kind, "timeout");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        call(
            &registry,
            "everything-echo",
            json!({"message": "still here"})
        )
        .await,
        Ok(text("Echo: still here"))
    );

    // Unmounted, its tools are gone, and so is its process.
    assert!(registry.unmount("everything"));
    assert!(registry.get("everything-echo").is_none());
    let gone = async {
        while processes_in(dir.path()) > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), gone)
        .await
        .expect("the child stops when its toolset is unmounted");
}

/// The child killed in the middle of a call: that call is `unavailable`, naming the server, and
/// so is the toolset's state; the next call starts it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_is_unavailable_then_started_again() {
    let registry = registry(Duration::from_secs(10));
    let dir = tool_test_support::TempDir::new("remote-killed");
    let server = everything_on_stdio(&dir);
    registry.mount(server).await.expect("mounted");
    let slow = {
        let registry = registry.clone();
        tokio::spawn(async move {
            call(
                &registry,
                "everything-trigger-long-running-operation",
                json!({"duration": 1, "steps": 1}),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed = kill_processes_in(dir.path());
    assert!(
        killed > 0,
        "the server's process was found by its working directory"
    );
    let (kind, message) = slow.await.unwrap().unwrap_err();
    assert_eq!(kind, "unavailable", "{message}");
    assert!(message.contains("`everything`"), "{message}");
    let status = registry.toolset_status().await;
    assert_eq!(
        (status[0].name.as_str(), status[0].health.available),
        ("everything", false)
    );
    assert!(status[0].health.last_error.is_some(), "{status:?}");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        call(&registry, "everything-echo", json!({"message": "again"})).await,
        Ok(text("Echo: again"))
    );
    let status = registry.toolset_status().await;
    assert!(status[0].health.available, "{status:?}");
    assert!(status[0].tools >= 10, "{status:?}");
}

/// The live processes (not zombies) whose working directory is `dir`.
fn pids_in(dir: &std::path::Path) -> Vec<u32> {
    let dir = dir.canonicalize().unwrap();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc is readable") {
        let entry = entry.unwrap();
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'))
        });
        if !zombie && std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == dir) {
            pids.push(pid);
        }
    }
    pids
}

fn processes_in(dir: &std::path::Path) -> usize {
    pids_in(dir).len()
}

/// SIGKILLs every process whose working directory is `dir`; how many.
fn kill_processes_in(dir: &std::path::Path) -> usize {
    let mut killed = 0;
    for pid in pids_in(dir) {
        let status = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        killed += usize::from(status.success());
    }
    killed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_is_mounted_and_called() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut child = std::process::Command::new("node")
        .arg(everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node runs");
    let _kill = KillOnDrop(&mut child);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let registry = registry(Duration::from_secs(10));
    // The server takes a moment to listen.
    let mut names = Vec::new();
    for _ in 0..100 {
        match registry
            .mount(RemoteServer::http("web", url.clone()).connect_timeout(Duration::from_secs(5)))
            .await
        {
            Ok(mounted) => {
                names = mounted;
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    assert!(names.iter().any(|n| n == "web-echo"), "{names:?}");
    assert_eq!(
        call(&registry, "web-echo", json!({"message": "over http"})).await,
        Ok(text("Echo: over http"))
    );
    // Served again by our own front ends: the gateway.
    let base = tool_test_support::serve_on_loopback(tool_runtime::http::router(
        registry.clone(),
        tool_runtime::http::ServerOptions::default(),
    ))
    .await;
    let answer: Value = reqwest::Client::new()
        .post(format!("{base}/tools/web-get-sum"))
        .json(&json!({"a": 40, "b": 2}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        answer["result"],
        text("The sum of 40 and 2 is 42."),
        "{answer}"
    );
    let toolsets: Value = reqwest::get(format!("{base}/toolsets"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(toolsets["toolsets"][0]["name"], "web", "{toolsets}");
    assert_eq!(toolsets["toolsets"][0]["available"], true, "{toolsets}");
    assert_eq!(
        toolsets["toolsets"][0]["last_error"],
        Value::Null,
        "{toolsets}"
    );
}

struct KillOnDrop<'a>(&'a mut std::process::Child);

impl Drop for KillOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A caller's side that answers as a user and a model would, and notes what it was asked.
#[derive(Default)]
struct Answering {
    asked: std::sync::Mutex<Vec<String>>,
    progress: std::sync::Mutex<Vec<f64>>,
}

impl tool_runtime::tool::peer::Peer for Answering {
    fn sample(
        &self,
        request: tool_runtime::tool::peer::Sample,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<tool_runtime::tool::peer::Sampled, tool_runtime::ToolError>,
    > {
        let asked = format!(
            "sample: {} | system: {} | max {} | t {:?}",
            request.turns()[0].1,
            request.system_prompt().unwrap_or_default(),
            request.token_limit(),
            request.sampling_temperature()
        );
        self.asked.lock().unwrap().push(asked);
        Box::pin(async {
            Ok(tool_runtime::tool::peer::Sampled {
                text: "forty-two".to_owned(),
                model: "a-local-model".to_owned(),
                stop_reason: Some("endTurn".to_owned()),
            })
        })
    }

    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<
            tool_runtime::tool::peer::Elicited<serde_json::Map<String, Value>>,
            tool_runtime::ToolError,
        >,
    > {
        let fields: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        self.asked
            .lock()
            .unwrap()
            .push(format!("elicit: {message} | fields: {fields:?}"));
        let answer = json!({"name": "Ada", "color": "green"});
        Box::pin(async move {
            Ok(tool_runtime::tool::peer::Elicited::Accepted(
                answer.as_object().cloned().unwrap(),
            ))
        })
    }
}

impl tool_runtime::tool::ProgressSink for Answering {
    fn report(&self, update: tool_runtime::tool::ProgressUpdate) {
        self.progress.lock().unwrap().push(update.progress);
    }
}

/// The texts of a content result.
fn texts(result: &Value) -> String {
    result
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_tools_requests_and_progress_reach_our_caller() {
    let registry = registry(Duration::from_secs(20));
    let dir = tool_test_support::TempDir::new("remote-relay");
    let server = everything_on_stdio(&dir);
    registry.mount(server).await.expect("mounted");
    let answering = Arc::new(Answering::default());
    let by = || {
        caller()
            .confirm(true)
            .peer(answering.clone())
            .progress(answering.clone())
    };

    // Sampling: the server's request reaches our caller's model, whose answer reaches the tool.
    let sampled = registry
        .call(
            "everything-trigger-sampling-request",
            json!({"prompt": "the answer?"}),
            by(),
        )
        .await
        .outcome
        .expect("sampled");
    let sampled = texts(&sampled);
    assert!(
        sampled.contains("forty-two") && sampled.contains("a-local-model"),
        "{sampled}"
    );
    assert_eq!(
        answering.asked.lock().unwrap()[0],
        "sample: Resource trigger-sampling-request context: the answer? | system: You are a helpful test server. | max 100 | t Some(0.7)"
    );

    // Elicitation: the form reaches our caller's user, whose answer reaches the tool.
    let elicited = registry
        .call("everything-trigger-elicitation-request", json!({}), by())
        .await
        .outcome
        .expect("elicited");
    let elicited = texts(&elicited);
    assert!(
        elicited.contains("- Name: Ada") && elicited.contains("- Favorite Color: green"),
        "{elicited}"
    );
    assert!(
        answering.asked.lock().unwrap()[1].contains("\"name\""),
        "{:?}",
        answering.asked.lock().unwrap()
    );

    // Progress: the remote tool's reports are the call's own.
    registry
        .call(
            "everything-trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
            by(),
        )
        .await
        .outcome
        .expect("ran");
    // (The SDK hands notifications on apart from responses: the last may come after the result.)
    let progress = answering.progress.lock().unwrap().clone();
    assert!(
        !progress.is_empty() && [1.0, 2.0, 3.0].starts_with(&progress),
        "{progress:?}"
    );

    // A caller that cannot answer: the server hears so, and its tool fails; we answer nothing.
    let refused = call(
        &registry,
        "everything-trigger-sampling-request",
        json!({"prompt": "p"}),
    )
    .await;
    let Err((_, message)) = refused else {
        panic!("a caller without a model was sampled: {refused:?}")
    };
    assert!(message.contains("offers no sampling"), "{message}");
}

impl Answering {
    fn roots_asked(&self) -> usize {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .filter(|a| *a == "roots")
            .count()
    }
}

/// Our caller's roots, for [`Answering`].
struct WithRoots(Arc<Answering>);

impl tool_runtime::tool::peer::Peer for WithRoots {
    fn sample(
        &self,
        request: tool_runtime::tool::peer::Sample,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<tool_runtime::tool::peer::Sampled, tool_runtime::ToolError>,
    > {
        self.0.sample(request)
    }

    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<
            tool_runtime::tool::peer::Elicited<serde_json::Map<String, Value>>,
            tool_runtime::ToolError,
        >,
    > {
        self.0.elicit(message, schema)
    }

    fn list_roots(
        &self,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<Vec<tool_runtime::tool::peer::Root>, tool_runtime::ToolError>,
    > {
        self.0.asked.lock().unwrap().push("roots".to_owned());
        Box::pin(async {
            Ok(vec![tool_runtime::tool::peer::Root {
                uri: "file:///work".to_owned(),
                name: None,
            }])
        })
    }
}

/// A server mounted with `discover_first` speaks 2026-07-28 when it offers it: its
/// input-required results are answered by our caller (elicitation, sampling, roots, over
/// several rounds) and retried, and its tool parameters marked `x-mcp-header` travel in
/// headers it checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_mounted_discover_first_speaks_2026_07_28_and_asks_our_caller() {
    let (_served, url) = crate::mcp::serve_fixture(&[]);
    let registry = registry(Duration::from_secs(20));
    registry
        .mount(RemoteServer::http("fx", url).tools_only().discover_first())
        .await
        .expect("mounted");
    let status = registry.toolset_status().await;
    assert_eq!(
        status[0].health.protocol.as_deref(),
        Some("2026-07-28"),
        "{status:?}"
    );
    let answering = Arc::new(Answering::default());
    let by = || caller().peer(Arc::new(WithRoots(answering.clone())));
    let call = async |tool: &str, args: Value| {
        registry
            .call(&format!("fx-{tool}"), args, by())
            .await
            .outcome
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
    };
    assert_eq!(
        call("test_input_required_result_multi_round", json!({})).await,
        json!({"result": "Ada likes green"})
    );
    assert_eq!(
        call("test_input_required_result_multiple_inputs", json!({})).await,
        json!({"result": "forty-two Ada, working in file:///work"})
    );
    assert_eq!(answering.roots_asked(), 1);
    // The region goes in `Mcp-Param-Region` too, which the server compares with the argument.
    assert_eq!(
        call("test_custom_headers", json!({"region": "eu-west-1"})).await,
        json!({"result": "eu-west-1"})
    );
}

#[tokio::test]
async fn a_server_that_cannot_start_is_a_clear_error() {
    let registry = registry(Duration::from_secs(5));
    let error = registry
        .mount(RemoteServer::stdio("ghost", "/nonexistent/mcp-server"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`ghost`") && error.contains("cannot start `/nonexistent/mcp-server`"),
        "{error}"
    );
    assert!(registry.toolsets().is_empty());
}

/// A server built with the official Python SDK (`tests/python/mcp_remote_server.py`): a tool
/// whose 70-character name the registry shortens, an error with the server's text, and a tool
/// added at run time that the registry picks up from `notifications/tools/list_changed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sdk_server_announces_new_tools_and_long_names_are_shortened() {
    let python = tool_test_support::python_with("mcp");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/mcp_remote_server.py");
    let registry = registry(Duration::from_secs(10));
    let names = registry
        .mount(RemoteServer::stdio("py", python.to_string_lossy()).args([script.to_string_lossy()]))
        .await
        .expect("mounted");
    let long = names
        .iter()
        .find(|n| n.starts_with("py-a_tool_whose_name"))
        .unwrap_or_else(|| panic!("the long-named tool is mounted: {names:?}"));
    assert_eq!(long.len(), 64, "{long}");
    // Without annotations a remote tool is destructive, as the specification's defaults say:
    // it waits for confirmation like a local one.
    let (kind, _) = call(&registry, long, json!({})).await.unwrap_err();
    assert_eq!(kind, "confirmation_required");
    let confirmed = |tool: String, args: Value| {
        let registry = registry.clone();
        async move {
            let envelope = registry.call(&tool, args, caller().confirm(true)).await;
            envelope
                .outcome
                .map_err(|e| (e.kind().to_owned(), e.message().to_owned()))
        }
    };
    assert_eq!(
        confirmed(long.clone(), json!({})).await,
        Ok(json!({"result": "long"}))
    );

    let (kind, message) = confirmed("py-fail".into(), json!({"text": "disk full"}))
        .await
        .unwrap_err();
    assert_eq!(
        (kind.as_str(), message.contains("disk full")),
        ("tool_failed", true),
        "{message}"
    );

    let mut changes = registry.changes();
    assert!(registry.get("py-grown").is_none());
    confirmed("py-grow".into(), json!({})).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        while registry.get("py-grown").is_none() {
            changes.changed().await.unwrap();
        }
    })
    .await
    .expect("the new tool is listed after the server's notification");
    assert_eq!(
        confirmed("py-grown".into(), json!({})).await,
        Ok(json!({"result": "I grew"}))
    );
}

/// Our own server, mounted by another registry over HTTP: a tool added on the serving side
/// reaches the mounting side through the protocol's change notices (on 2026-07-28, a
/// `subscriptions/listen` stream).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_own_server_mounted_elsewhere_announces_its_new_tools() {
    use tool_runtime::tool::ToolMeta;
    use tool_runtime::{CallContext, Tool, ToolError};

    struct Shout;
    impl Tool for Shout {
        fn meta(&self) -> ToolMeta {
            let mut meta = ToolMeta::new("shout", "Upper-cases the text.");
            meta.annotations.read_only = Some(true);
            meta
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object", "properties": {"text": {"type": "string"}},
                   "required": ["text"], "additionalProperties": false})
        }
        fn output_schema(&self) -> Value {
            json!({"type": "string"})
        }
        fn call(
            &self,
            args: Value,
            _: CallContext,
        ) -> futures_util::future::BoxFuture<'_, Result<Value, ToolError>> {
            Box::pin(async move { Ok(json!(args["text"].as_str().unwrap_or("").to_uppercase())) })
        }
    }

    let serving = registry(Duration::from_secs(5));
    let base = tool_test_support::serve_on_loopback(tool_runtime::app::router(
        serving.clone(),
        tool_runtime::http::ServerOptions::default(),
    ))
    .await;
    let mounting = registry(Duration::from_secs(5));
    let names = mounting
        .mount(RemoteServer::http("ours", format!("{base}/mcp")))
        .await
        .expect("mounted");
    assert!(names.is_empty(), "{names:?}");

    let mut changes = mounting.changes();
    serving.add_tool(Shout).unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        while mounting.get("ours-shout").is_none() {
            changes.changed().await.unwrap();
        }
    })
    .await
    .expect("the new tool reached the mounting registry");
    // Our server wraps a result that is not an object, as its output schema says.
    assert_eq!(
        call(&mounting, "ours-shout", json!({"text": "hi"})).await,
        Ok(json!({"result": "HI"}))
    );
}

#[tokio::test]
async fn a_store_gives_four_tools_bound_to_its_own_data() {
    use tool_runtime::toolset::{MemoryStore, Store};
    let registry = registry(Duration::from_secs(5));
    let mut names = registry
        .mount(Store::new("notes", MemoryStore::default()))
        .await
        .unwrap();
    names.sort();
    assert_eq!(
        names,
        ["notes-delete", "notes-list", "notes-read", "notes-write"]
    );
    registry
        .mount(Store::new("drafts", MemoryStore::default()))
        .await
        .unwrap();

    for (key, value) in [
        ("a/1", json!({"text": "one"})),
        ("a/2", json!([1, 2])),
        ("b", json!(null)),
    ] {
        assert_eq!(
            call(
                &registry,
                "notes-write",
                json!({"key": key, "value": value})
            )
            .await,
            Ok(json!({"key": key}))
        );
    }
    assert_eq!(
        call(&registry, "notes-read", json!({"key": "a/2"})).await,
        Ok(json!([1, 2]))
    );
    assert_eq!(
        call(&registry, "notes-list", json!({"prefix": "a/"})).await,
        Ok(json!(["a/1", "a/2"]))
    );
    assert_eq!(
        call(&registry, "notes-list", json!({})).await,
        Ok(json!(["a/1", "a/2", "b"]))
    );
    // Each store its own data.
    assert_eq!(
        call(&registry, "drafts-list", json!({})).await,
        Ok(json!([]))
    );
    let (kind, message) = call(&registry, "drafts-read", json!({"key": "a/1"}))
        .await
        .unwrap_err();
    assert_eq!(kind, "not_found");
    assert!(message.contains("`drafts`"), "{message}");
    // Keys are bounded, and the schema says so before the store is asked.
    let (kind, _) = call(
        &registry,
        "notes-write",
        json!({"key": "k".repeat(300), "value": 1}),
    )
    .await
    .unwrap_err();
    assert_eq!(kind, "invalid_arguments");
    // Deleting is destructive: confirmed like any destructive tool.
    let (kind, _) = call(&registry, "notes-delete", json!({"key": "b"}))
        .await
        .unwrap_err();
    assert_eq!(kind, "confirmation_required");
    let deleted = registry
        .call("notes-delete", json!({"key": "b"}), caller().confirm(true))
        .await;
    assert_eq!(deleted.result(), Some(&json!({"deleted": true})));
    assert_eq!(
        call(&registry, "notes-list", json!({})).await,
        Ok(json!(["a/1", "a/2"]))
    );
}

/// Each caller sees its share of the mounted tools: allow and deny lists by exact name, glob and
/// toolset, per source, role and principal; hidden tools are neither listed nor callable.
#[tokio::test]
async fn a_tool_filter_gives_each_caller_its_share() {
    use tool_runtime::layers::policy::ToolFilter;
    use tool_runtime::toolset::{MemoryStore, Store};
    let filter = ToolFilter::new()
        .for_everyone(Vec::<String>::new(), ["*-delete"])
        .for_source(Source::Agent, ["toolset:notes"], Vec::<String>::new())
        .for_role("guest", ["*-list", "*-read"], Vec::<String>::new())
        .for_principal("bot", Vec::<String>::new(), ["secrets-*"]);
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .policy(filter)
            .build()
            .unwrap(),
    );
    for name in ["notes", "secrets"] {
        registry
            .mount(Store::new(name, MemoryStore::default()))
            .await
            .unwrap();
    }
    let seen = |caller: Caller| {
        registry
            .visible(&caller)
            .iter()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        seen(Caller::new(Source::Http)),
        [
            "notes-list",
            "notes-read",
            "notes-write",
            "secrets-list",
            "secrets-read",
            "secrets-write"
        ]
    );
    assert_eq!(
        seen(Caller::new(Source::Agent)),
        ["notes-list", "notes-read", "notes-write"]
    );
    assert_eq!(
        seen(Caller::new(Source::Http).roles(["guest"])),
        ["notes-list", "notes-read", "secrets-list", "secrets-read"]
    );
    // Rules add up: an agent with the guest role gets what both allow.
    assert_eq!(
        seen(Caller::new(Source::Agent).roles(["guest"])),
        [
            "notes-list",
            "notes-read",
            "notes-write",
            "secrets-list",
            "secrets-read"
        ]
    );
    assert_eq!(
        seen(Caller::new(Source::Mcp).principal("bot")),
        ["notes-list", "notes-read", "notes-write"]
    );
    // Hidden means unknown when called by name: the reason is not the caller's to read.
    let envelope = registry
        .call("secrets-list", json!({}), Caller::new(Source::Agent))
        .await;
    let error = envelope.error().unwrap();
    assert_eq!(error.kind(), "unknown_tool");
    assert!(
        !error.message().contains("not among the tools"),
        "{}",
        error.message()
    );
    let envelope = registry
        .call(
            "notes-delete",
            json!({"key": "k"}),
            Caller::new(Source::Http).confirm(true),
        )
        .await;
    assert_eq!(envelope.error().unwrap().kind(), "unknown_tool");
}

/// A caller whose user confirms, as Ada.
struct Confirming;

impl tool_runtime::tool::peer::Peer for Confirming {
    fn elicit(
        &self,
        _message: String,
        _schema: Value,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<
            tool_runtime::tool::peer::Elicited<serde_json::Map<String, Value>>,
            tool_runtime::ToolError,
        >,
    > {
        let answer = json!({"name": "Ada", "confirm": true});
        Box::pin(async move {
            Ok(tool_runtime::tool::peer::Elicited::Accepted(
                answer.as_object().cloned().unwrap(),
            ))
        })
    }
}

/// A mounted server on 2026-07-28 that runs its tools as tasks (the tasks extension, which the
/// mount declares): each call followed to the task's end, the questions it asks mid-task put to
/// our caller and answered with `tasks/update`; a tool the server runs only as a task is
/// served too.
#[tokio::test]
async fn a_mounted_servers_tasks_are_followed_to_their_end_and_asked_of_our_caller() {
    let (_served, url) = crate::mcp::serve_fixture(&[]);
    let registry = registry(Duration::from_secs(20));
    registry
        .mount(
            RemoteServer::http("fx", url)
                .tools_only()
                .discover_first()
                .tasks(tool_runtime::tool::TaskMode::Optional),
        )
        .await
        .expect("mounted");
    let by = || caller().peer(Arc::new(Confirming));
    let call = async |tool: &str, args: Value| {
        registry
            .call(&format!("fx-{tool}"), args, by())
            .await
            .outcome
    };
    assert_eq!(
        call("slow_compute", json!({"seconds": 1, "label": "sums"}))
            .await
            .unwrap(),
        json!({"result": "computed sums in 1 s"})
    );
    assert_eq!(
        call("confirm_delete", json!({"filename": "a.txt"}))
            .await
            .unwrap(),
        json!({"result": "deleted a.txt"})
    );
    assert_eq!(
        call("multi_input", json!({})).await.unwrap(),
        json!({"result": "Ada and Ada"})
    );
    let failed = call("failing_job", json!({})).await.unwrap_err();
    assert_eq!(
        failed.kind(),
        &tool_runtime::ErrorKind::TOOL_FAILED,
        "{failed:?}"
    );
    assert!(failed.message().contains("the job failed"), "{failed:?}");
    // Mounted as tasks here too: a task of ours following the server's.
    assert_eq!(
        registry.task_mode("fx-slow_compute", &caller()),
        Some(tool_runtime::tool::TaskMode::Optional)
    );
    let task = registry
        .start_task("fx-slow_compute", json!({"seconds": 1}), caller())
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let done = loop {
        let read = registry.tasks().get(&task.id, None).await.unwrap().unwrap();
        if read.status.is_terminal() {
            break read;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{read:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        done.result(),
        Some(&json!({"result": "computed something in 1 s"}))
    );
}
