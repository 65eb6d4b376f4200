//! Input-required results on protocol 2026-07-28, beyond the conformance suite's scenarios: a
//! tool asks its client over several rounds and runs again from the top with every answer, all
//! rounds under one request id; a destructive tool that asks after its confirmation is confirmed
//! for each later round by a single-use token of its own; a resource asks as a tool does; an
//! answer of the wrong kind is a protocol error; a client that cannot answer is not asked, and a
//! request that needs what it did not declare is refused with `-32021`. And what else a
//! 2026-07-28 request's `_meta` decides: the log messages it hears.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_runtime::tool::peer::{Elicited, Sample};
use tool_runtime::{CallContext, Registry, ToolError, resource, tool};

use crate::mcp::Pipe;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// Asks a name, then the model, then the roots: one round each.
#[tool(annotations(read_only))]
async fn survey(ctx: &CallContext) -> Result<String, ToolError> {
    let name = match ctx.question("name").elicit::<Name>("Who are you?").await? {
        Elicited::Accepted(n) => n.name,
        _ => "nobody".to_owned(),
    };
    let said = ctx.sample(Sample::new(format!("Greet {name}"))).await?;
    let roots = ctx.roots().await?;
    Ok(format!("{} ({} roots)", said.text, roots.len()))
}

/// Deletes everything, once it knows why.
#[tool(annotations(destructive))]
async fn purge(ctx: &CallContext) -> Result<String, ToolError> {
    let why = match ctx.question("reason").elicit::<Name>("Why?").await? {
        Elicited::Accepted(n) => n.name,
        _ => return Ok("kept".to_owned()),
    };
    // After the question, as the docs say: a run that asks does nothing before it.
    ctx.state::<AtomicUsize>()
        .expect("registered")
        .fetch_add(1, Ordering::SeqCst);
    Ok(format!("purged: {why}"))
}

/// Logs at two levels.
#[tool(annotations(read_only))]
async fn chatty(ctx: &CallContext) -> &'static str {
    ctx.log(tool_runtime::tool::peer::LogLevel::Debug, "detail");
    ctx.log(tool_runtime::tool::peer::LogLevel::Warning, "careful");
    "said"
}

/// The roots the client works in.
#[resource("work://roots", mime = "text/plain")]
async fn workspace(ctx: &CallContext) -> Result<String, ToolError> {
    let roots = ctx.roots().await?;
    Ok(roots
        .iter()
        .map(|r| r.uri.as_str())
        .collect::<Vec<_>>()
        .join("\n"))
}

/// The request id and outcome of every pipeline run.
#[derive(Default, Clone)]
struct Runs(Arc<Mutex<Vec<(String, String)>>>);

impl tool_runtime::layers::hooks::CallObserver for Runs {
    fn observe<'a>(
        &'a self,
        call: tool_runtime::layers::hooks::CompletedCall<'a>,
    ) -> futures_util::future::BoxFuture<'a, ()> {
        let outcome = call.envelope.error().map_or("ok", |e| e.kind().as_str());
        self.0
            .lock()
            .unwrap()
            .push((call.ctx.request_id().to_owned(), outcome.to_owned()));
        Box::pin(async {})
    }
}

/// A 2026-07-28 client that can answer everything, on a server of these items.
struct Client {
    pipe: Pipe,
    id: i64,
    capabilities: Value,
}

impl Client {
    fn new(registry: Arc<Registry>) -> Self {
        Self {
            pipe: Pipe::connect(registry),
            id: 0,
            capabilities: json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}}),
        }
    }

    /// The answer to `method` with `params`, and `retry`'s fields (`inputResponses`,
    /// `requestState`): its result, or `{"error": ...}`.
    async fn request(&mut self, method: &str, mut params: Value, retry: Value) -> Value {
        self.id += 1;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}});
        for (k, v) in retry.as_object().unwrap() {
            params[k] = v.clone();
        }
        let id = self.id;
        self.pipe
            .send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = self.pipe.answer(id).await;
        match answer.get("error") {
            Some(error) => json!({"error": error}),
            None => answer["result"].clone(),
        }
    }

    /// The log messages heard while `tool` ran, asked with `meta` added to the request's.
    async fn heard(&mut self, tool: &str, meta: Value) -> Vec<Value> {
        self.id += 1;
        let mut params = json!({"name": tool, "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}});
        for (k, v) in meta.as_object().unwrap() {
            params["_meta"][k] = v.clone();
        }
        let id = self.id;
        self.pipe
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        let (answer, before) = self.pipe.answer_after(id).await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        before
            .into_iter()
            .filter(|m| m["method"] == "notifications/message")
            .map(|m| m["params"]["data"].clone())
            .collect()
    }

    async fn call(&mut self, tool: &str, retry: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": {}}), retry)
            .await
    }
}

/// The retry that answers `responses` and echoes the state of `asked`.
fn answering(asked: &Value, responses: Value) -> Value {
    let mut retry = json!({"requestState": asked["requestState"]});
    retry["inputResponses"] = responses;
    retry
}

fn questions(asked: &Value) -> Vec<&str> {
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    asked["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

fn registry(purged: &Arc<AtomicUsize>, runs: &Runs) -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(survey::descriptor())
            .tool(purge::descriptor())
            .tool(chatty::descriptor())
            .resource(workspace::descriptor())
            .state::<AtomicUsize>(Arc::clone(purged))
            .observer(runs.clone())
            .build()
            .unwrap(),
    )
}

#[tokio::test]
async fn a_tool_asks_round_after_round_and_every_round_is_one_call() {
    let (purged, runs) = (Arc::new(AtomicUsize::new(0)), Runs::default());
    let mut client = Client::new(registry(&purged, &runs));

    let first = client.call("survey", json!({})).await;
    assert_eq!(questions(&first), ["name"]);
    assert_eq!(
        first["inputRequests"]["name"]["params"]["requestedSchema"]["properties"]["name"]["type"],
        "string",
        "{first}"
    );
    // The answer, and a key nobody asked about, which is ignored.
    let second = client
        .call(
            "survey",
            answering(
                &first,
                json!({"name": {"action": "accept", "content": {"name": "Ada"}},
                       "stray": {"action": "decline"}}),
            ),
        )
        .await;
    assert_eq!(questions(&second), ["sampling-1"]);
    assert_eq!(
        second["inputRequests"]["sampling-1"]["params"]["messages"][0]["content"]["text"],
        "Greet Ada",
        "the earlier answer reached the tool: {second}"
    );
    let third = client
        .call(
            "survey",
            answering(
                &second,
                json!({"sampling-1": {"role": "assistant", "model": "m",
                       "content": {"type": "text", "text": "Hello, Ada"}}}),
            ),
        )
        .await;
    assert_eq!(questions(&third), ["roots-2"]);
    let done = client
        .call(
            "survey",
            answering(
                &third,
                json!({"roots-2": {"roots": [{"uri": "file:///a"}]}}),
            ),
        )
        .await;
    assert_eq!(
        done["structuredContent"]["result"], "Hello, Ada (1 roots)",
        "{done}"
    );

    // An answer of the wrong kind is the request's error, not the tool's.
    let wrong = client
        .call("survey", json!({"inputResponses": {"name": 12345}}))
        .await;
    assert_eq!(wrong["error"]["code"], -32602, "{wrong}");
    assert!(
        wrong["error"]["message"]
            .as_str()
            .unwrap()
            .contains("inputResponses.name is not an elicitation result"),
        "{wrong}"
    );

    // Four runs of one call, under the first round's request id.
    let seen = runs.0.lock().unwrap().clone();
    let ids: Vec<&str> = seen[..4].iter().map(|(id, _)| id.as_str()).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{seen:?}");
    let outcomes: Vec<&str> = seen[..4].iter().map(|(_, o)| o.as_str()).collect();
    assert_eq!(
        outcomes,
        ["input_required", "input_required", "input_required", "ok"]
    );
    assert_ne!(seen[4].0, ids[0], "a new call has an id of its own");
}

#[tokio::test]
async fn a_confirmed_tool_that_asks_is_confirmed_once_per_round_and_runs_once() {
    let (purged, runs) = (Arc::new(AtomicUsize::new(0)), Runs::default());
    let mut client = Client::new(registry(&purged, &runs));
    let accept = json!({"confirm": {"action": "accept", "content": {}}});

    let confirm = client.call("purge", json!({})).await;
    assert_eq!(questions(&confirm), ["confirm"]);
    let reason = client
        .call("purge", answering(&confirm, accept.clone()))
        .await;
    assert_eq!(questions(&reason), ["reason"]);
    assert_eq!(
        purged.load(Ordering::SeqCst),
        0,
        "nothing before its question"
    );
    let answer = json!({"reason": {"action": "accept", "content": {"name": "spring cleaning"}}});
    let done = client
        .call("purge", answering(&reason, answer.clone()))
        .await;
    assert_eq!(
        done["structuredContent"]["result"], "purged: spring cleaning",
        "{done}"
    );
    assert_eq!(purged.load(Ordering::SeqCst), 1);

    // The last round again: its token is used up, so it confirms nothing.
    let again = client.call("purge", answering(&reason, answer)).await;
    assert_eq!(again["isError"], true, "{again}");
    assert!(
        again["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("confirmation_required:"),
        "{again}"
    );
    // The confirmation's state again: its token too.
    let replayed = client.call("purge", answering(&confirm, accept)).await;
    assert_eq!(replayed["isError"], true, "{replayed}");
    assert_eq!(purged.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_resource_asks_as_a_tool_does_and_a_client_that_cannot_answer_is_not_asked() {
    let (purged, runs) = (Arc::new(AtomicUsize::new(0)), Runs::default());
    let mut client = Client::new(registry(&purged, &runs));
    let read = json!({"uri": "work://roots"});

    let asked = client
        .request("resources/read", read.clone(), json!({}))
        .await;
    assert_eq!(questions(&asked), ["roots-1"]);
    assert_eq!(asked["inputRequests"]["roots-1"]["method"], "roots/list");
    let done = client
        .request(
            "resources/read",
            read.clone(),
            answering(
                &asked,
                json!({"roots-1": {"roots": [{"uri": "file:///x"}, {"uri": "file:///y"}]}}),
            ),
        )
        .await;
    assert_eq!(
        done["contents"][0]["text"], "file:///x\nfile:///y",
        "{done}"
    );
    // Its state does not open for another request.
    let elsewhere = client
        .call(
            "survey",
            answering(
                &asked,
                json!({"name": {"action": "accept", "content": {"name": "Eve"}}}),
            ),
        )
        .await;
    assert_eq!(elsewhere["error"]["code"], -32602, "{elsewhere}");

    // Without the roots capability nothing is asked: the read, which needs them, is refused
    // with -32021 naming what the request did not declare.
    client.capabilities = json!({"elicitation": {"form": {}}});
    let unasked = client.request("resources/read", read, json!({})).await;
    assert_eq!(unasked["error"]["code"], -32021, "{unasked}");
    assert_eq!(
        unasked["error"]["data"]["requiredCapabilities"],
        json!({"roots": {}}),
        "{unasked}"
    );
    // What the request does declare is asked as usual.
    let survey = client.call("survey", json!({})).await;
    assert_eq!(questions(&survey), ["name"], "{survey}");
}

#[tokio::test]
async fn on_2026_07_28_a_call_logs_only_at_the_level_its_meta_sets() {
    let (purged, runs) = (Arc::new(AtomicUsize::new(0)), Runs::default());
    let mut client = Client::new(registry(&purged, &runs));
    let level = "io.modelcontextprotocol/logLevel";
    assert_eq!(
        client.heard("chatty", json!({})).await,
        Vec::<Value>::new(),
        "no level, no log messages"
    );
    assert_eq!(
        client.heard("chatty", json!({level: "info"})).await,
        [json!("careful")]
    );
    assert_eq!(
        client.heard("chatty", json!({level: "debug"})).await,
        [json!("detail"), json!("careful")]
    );
}
