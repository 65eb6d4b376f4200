//! Resumable event streams at `/mcp` (MCP 2025-11-25, "Resumability and Redelivery"): a call's
//! stream starts with a priming event and a `retry`; a client that drops it mid-call and
//! comes back with `Last-Event-ID` receives what it missed and the answer, from the event
//! store `ServerOptions` keeps by default; a tool that ends its stream mid-call
//! (`CallContext::close_stream`, SSE polling) is heard out the same way. Raw HTTP, so that
//! nothing is hidden by a client.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::app;
use tool_runtime::http::ServerOptions;
use tool_runtime::{CallContext, Registry, tool};

/// Reports progress, waits a while, reports again and answers.
#[tool(annotations(read_only))]
async fn slow_count(ctx: &CallContext) -> String {
    ctx.progress(1.0, Some(3.0), Some("one"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    ctx.progress(2.0, Some(3.0), Some("two"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    ctx.progress(3.0, Some(3.0), Some("three"));
    "counted".to_owned()
}

/// Reports progress, ends its event stream, reports again and answers whether it could end it.
#[tool(annotations(read_only))]
async fn polled(ctx: &CallContext) -> bool {
    ctx.progress(1.0, Some(2.0), Some("one"));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let closed = ctx.close_stream();
    tokio::time::sleep(Duration::from_millis(200)).await;
    ctx.progress(2.0, Some(2.0), Some("two"));
    closed
}

fn registry() -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(slow_count::descriptor())
            .tool(polled::descriptor())
            .build()
            .unwrap(),
    )
}

/// One server-sent event.
#[derive(Debug, Default)]
pub(crate) struct Event {
    id: Option<String>,
    data: String,
    retry: Option<u64>,
}

impl Event {
    pub(crate) fn message(&self) -> Option<Value> {
        serde_json::from_str(&self.data).ok()
    }
}

/// Reads a response's server-sent events as they come, one at a time.
pub(crate) struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    pub(crate) fn new(response: reqwest::Response) -> Self {
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next event (keep-alive comments passed over), or `None` when the stream ends.
    pub(crate) async fn next(&mut self) -> Option<Event> {
        loop {
            let normalized = self.buffer.replace("\r\n", "\n");
            if let Some(end) = normalized.find("\n\n") {
                let block = normalized[..end].to_owned();
                normalized[end + 2..].clone_into(&mut self.buffer);
                let mut event = Event::default();
                let mut fields = false;
                for line in block.lines() {
                    let (name, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match name {
                        "id" => event.id = Some(value.to_owned()),
                        "data" => event.data.push_str(value),
                        "retry" => event.retry = value.parse().ok(),
                        _ => continue,
                    }
                    fields = true;
                }
                if fields {
                    return Some(event);
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.response.chunk())
                .await
                .expect("an event or the stream's end within 10 s")
                .unwrap()?;
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// Every event until the stream ends.
    pub(crate) async fn rest(mut self) -> Vec<Event> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            events.push(event);
        }
        events
    }
}

/// A client of one session at `url`, sending `token` when it has one.
struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
    token: Option<String>,
}

impl Session {
    async fn open(url: String) -> Self {
        Self::open_with(url, None).await
    }

    async fn open_with(url: String, token: Option<&str>) -> Self {
        let http = reqwest::Client::new();
        let mut init = http.post(&url);
        if let Some(token) = token {
            init = init.bearer_auth(token);
        }
        let init = init
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .json(&tool_test_support::mcp_initialize("2025-11-25"))
            .send()
            .await
            .unwrap();
        assert_eq!(init.status(), 200);
        let id = init.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let session = Self {
            http,
            url,
            id,
            token: token.map(str::to_owned),
        };
        let done = session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(done.status(), 202);
        session
    }

    /// The same session, its requests sent with `token`.
    fn with_token(&self, token: &str) -> Self {
        Self {
            http: self.http.clone(),
            url: self.url.clone(),
            id: self.id.clone(),
            token: Some(token.to_owned()),
        }
    }

    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    async fn post(&self, body: &Value) -> reqwest::Response {
        self.authorized(self.http.post(&self.url))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-11-25")
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// `GET` with `Last-Event-ID`.
    async fn resume(&self, last_event_id: &str) -> reqwest::Response {
        self.authorized(self.http.get(&self.url))
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-11-25")
            .header("last-event-id", last_event_id)
            .send()
            .await
            .unwrap()
    }

    /// Starts `slow_count` with a progress token; its stream.
    async fn call(&self) -> Events {
        self.call_tool("slow_count").await
    }

    /// Starts `tool` with a progress token; its stream.
    async fn call_tool(&self, tool: &str) -> Events {
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": tool, "arguments": {}, "_meta": {"progressToken": "p"}}});
        let response = self.post(&call).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Events::new(response)
    }
}

/// The progress messages and the answer among `events`: `"one"`, `"two"`, ..., then
/// `"answer"` (`slow_count`'s) or `"closed: {bool}"` (`polled`'s).
fn what(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(Event::message)
        .map(|m| {
            if m["id"] == 7 {
                match &m["result"]["structuredContent"]["result"] {
                    Value::String(s) if s == "counted" => "answer".to_owned(),
                    Value::Bool(closed) => format!("closed: {closed}"),
                    _ => panic!("{m}"),
                }
            } else {
                m["params"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            }
        })
        .collect()
}

async fn serve(options: ServerOptions) -> String {
    let base = tool_test_support::serve_on_loopback(app::router(registry(), options)).await;
    format!("{base}/mcp")
}

#[tokio::test]
async fn a_call_whose_stream_broke_off_is_resumed_with_last_event_id() {
    let session = Session::open(serve(ServerOptions::default()).await).await;
    let mut stream = session.call().await;

    // The priming event: an id, no data, and the time to wait before reconnecting.
    let priming = stream.next().await.unwrap();
    assert!(priming.id.is_some(), "{priming:?}");
    assert_eq!(priming.data, "");
    assert_eq!(priming.retry, Some(3000));

    // The first progress report, then the connection is dropped mid-call.
    let first = stream.next().await.unwrap();
    assert_eq!(what(std::slice::from_ref(&first)), ["one"]);
    let last_seen = first.id.clone().expect("every event has an id");
    drop(stream);

    // Back before the call ends: what was missed, then the rest as it comes, and the stream
    // ends with the answer.
    let resumed = session.resume(&last_seen).await;
    assert_eq!(resumed.status(), 200);
    let rest = Events::new(resumed).rest().await;
    assert_eq!(what(&rest), ["two", "three", "answer"], "{rest:?}");
    assert!(rest.iter().all(|e| e.id.is_some()));

    // Back again after the answer, from the first report: the same events, the same ids.
    let again = Events::new(session.resume(&last_seen).await).rest().await;
    assert_eq!(what(&again), ["two", "three", "answer"]);
    let ids = |events: &[Event]| events.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&again), ids(&rest));

    // From the priming event, after the call: everything it sent.
    let all = Events::new(session.resume(priming.id.as_deref().unwrap()).await)
        .rest()
        .await;
    assert_eq!(what(&all), ["one", "two", "three", "answer"]);
}

#[tokio::test]
async fn an_event_id_not_kept_resumes_nothing() {
    let session = Session::open(serve(ServerOptions::default()).await).await;
    let mut stream = session.call().await;
    let priming = stream.next().await.unwrap().id.unwrap();
    drop(stream);
    // Ids are the server's: a guessed or altered one is unknown, answered with an empty stream.
    let (key, seq) = priming.rsplit_once('-').unwrap();
    for id in [
        "0".to_owned(),
        format!("{key}-{}", seq.parse::<u64>().unwrap() + 1000),
        format!("{}-{seq}", "0".repeat(key.len())),
    ] {
        let resumed = session.resume(&id).await;
        assert_eq!(resumed.status(), 200, "{id}");
        assert!(Events::new(resumed).rest().await.is_empty(), "{id}");
    }
}

#[tokio::test]
async fn without_an_event_store_a_stream_that_broke_off_is_lost_once_the_call_answers() {
    let session =
        Session::open(serve(ServerOptions::default().without_mcp_event_store()).await).await;
    let mut stream = session.call().await;
    let priming = stream.next().await.unwrap();
    assert_eq!(priming.retry, Some(3000));
    let first = stream.next().await.unwrap().id.unwrap();
    drop(stream);
    tokio::time::sleep(Duration::from_millis(800)).await;
    let resumed = session.resume(&first).await;
    assert_eq!(resumed.status(), 200);
    assert!(what(&Events::new(resumed).rest().await).is_empty());
}

#[tokio::test]
async fn a_tool_ends_its_stream_mid_call_and_the_client_resumes_it() {
    let session = Session::open(serve(ServerOptions::default()).await).await;
    // The server ends the stream after the first report: the client has seen this much.
    let seen = session.call_tool("polled").await.rest().await;
    assert_eq!(seen[0].retry, Some(3000));
    assert_eq!(what(&seen), ["one"], "{seen:?}");
    let last = seen.last().unwrap().id.clone().unwrap();
    let rest = Events::new(session.resume(&last).await).rest().await;
    assert_eq!(what(&rest), ["two", "closed: true"], "{rest:?}");
}

#[tokio::test]
async fn without_an_event_store_a_tool_cannot_end_its_stream() {
    let session =
        Session::open(serve(ServerOptions::default().without_mcp_event_store()).await).await;
    let seen = session.call_tool("polled").await.rest().await;
    assert_eq!(what(&seen), ["one", "two", "closed: false"], "{seen:?}");
}

#[tokio::test]
async fn only_the_principal_of_a_session_resumes_its_streams() {
    let auth = tool_runtime::http::Auth::from_toml(
        "[[tokens]]\ntoken = \"ann-1\"\nprincipal = \"ann\"\nroles = []\n\n\
         [[tokens]]\ntoken = \"ann-2\"\nprincipal = \"ann\"\nroles = []\n\n\
         [[tokens]]\ntoken = \"bob\"\nprincipal = \"bob\"\nroles = []\n",
    )
    .unwrap();
    let url = serve(ServerOptions::default().auth(auth)).await;
    let anns = Session::open_with(url.clone(), Some("ann-1")).await;
    let mut stream = anns.call().await;
    let _priming = stream.next().await.unwrap();
    let first = stream.next().await.unwrap();
    assert_eq!(what(std::slice::from_ref(&first)), ["one"]);
    let last_seen = first.id.unwrap();
    drop(stream);

    // Bob, with Ann's session id and event id: no such session.
    let refused = anns.with_token("bob").resume(&last_seen).await;
    assert_eq!(refused.status(), 404);
    // Bob, in a session of his own, with Ann's event id: nothing to resume.
    let bobs = Session::open_with(url, Some("bob")).await;
    let elsewhere = bobs.resume(&last_seen).await;
    assert_eq!(elsewhere.status(), 200);
    assert!(Events::new(elsewhere).rest().await.is_empty());
    // Ann, with another token of hers: the rest of her call.
    let resumed = anns.with_token("ann-2").resume(&last_seen).await;
    assert_eq!(resumed.status(), 200);
    let rest = Events::new(resumed).rest().await;
    assert_eq!(what(&rest), ["two", "three", "answer"], "{rest:?}");
}

#[tokio::test]
async fn an_event_id_resumes_only_in_the_session_it_was_sent_in() {
    let url = serve(ServerOptions::default()).await;
    let one = Session::open(url.clone()).await;
    let other = Session::open(url).await;
    let events = one.call().await.rest().await;
    assert_eq!(what(&events), ["one", "two", "three", "answer"]);
    let priming = events[0].id.clone().unwrap();
    // The same caller, in another session of its own: nothing.
    let resumed = other.resume(&priming).await;
    assert_eq!(resumed.status(), 200);
    assert!(Events::new(resumed).rest().await.is_empty());
    // In its own session: everything after it.
    let all = Events::new(one.resume(&priming).await).rest().await;
    assert_eq!(what(&all), ["one", "two", "three", "answer"]);
}
