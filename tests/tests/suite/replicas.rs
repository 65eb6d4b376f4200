//! Servers side by side behind a load balancer, in one process: MCP sessions restored from a
//! shared session store on a replica that did not make them, a client's answer relayed to the
//! replica that asked, session ids and `X-Replica` naming the replica, `GET /readyz` with its
//! checks, and the drain at shutdown.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::app;
use tool_runtime::http::ServerOptions;
use tool_runtime::mcp::{MemoryAnswerRelay, MemorySessionStore};
use tool_runtime::{Registry, tool};

use crate::mcp_resume::Events;

/// Says hello.
#[tool(annotations(read_only))]
async fn hello(name: String) -> String {
    format!("hello {name}")
}

pub(crate) fn registry() -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(hello::descriptor())
            .tool(crate::pipeline::ask_user::descriptor())
            .build()
            .unwrap(),
    )
}

/// The tokens of [`auth`]: Ann's two (one principal: either opens and uses her sessions) and
/// Bob's.
pub(crate) const ANN: &str = "ann-token";
const ANN_AGAIN: &str = "ann-other-token";
const BOB: &str = "bob-token";

/// Who may call: Ann with either of her tokens, Bob with his.
pub(crate) fn auth() -> tool_runtime::http::Auth {
    tool_runtime::http::Auth::from_toml(&format!(
        "[[tokens]]\ntoken = \"{ANN}\"\nprincipal = \"ann\"\nroles = []\n\n\
         [[tokens]]\ntoken = \"{ANN_AGAIN}\"\nprincipal = \"ann\"\nroles = [\"ops\"]\n\n\
         [[tokens]]\ntoken = \"{BOB}\"\nprincipal = \"bob\"\nroles = []\n"
    ))
    .unwrap()
}

/// A replica's options: tag `id`, [`auth`], and `store` when given.
fn options(id: &str, store: Option<&Arc<MemorySessionStore>>) -> ServerOptions {
    let options = ServerOptions::default().replica_id(id).auth(auth());
    match store {
        Some(store) => options.mcp_session_store(store.clone()),
        None => options,
    }
}

/// A JSON-RPC message posted to `{base}/mcp` with `token`, in `session` when given.
pub(crate) async fn rpc(
    base: &str,
    token: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(body);
    if let Some(s) = session {
        request = request
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-11-25");
    }
    request.send().await.unwrap()
}

/// A session opened on `base` with `token` (`initialize`, then `notifications/initialized`):
/// its id.
pub(crate) async fn open_session(base: &str, token: &str) -> String {
    let init = tool_test_support::mcp_initialize("2025-11-25");
    open_session_as(base, token, init).await
}

/// A session opened on `base` with `token` by the `initialize` request `init`: its id.
async fn open_session_as(base: &str, token: &str, init: Value) -> String {
    let init = rpc(base, token, None, &init).await;
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let done = rpc(
        base,
        token,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(done.status(), 202);
    session
}

pub(crate) async fn tools_list(base: &str, token: &str, session: &str) -> (u16, String) {
    let response = rpc(
        base,
        token,
        Some(session),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    (response.status().as_u16(), response.text().await.unwrap())
}

/// The status of `session`'s event stream (`GET /mcp`) asked for with `token`.
async fn stream_status(base: &str, token: &str, session: &str) -> u16 {
    let response = reqwest::Client::new()
        .get(format!("{base}/mcp"))
        .bearer_auth(token)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

/// The status of `session`'s `DELETE` with `token`.
async fn delete(base: &str, token: &str, session: &str) -> u16 {
    reqwest::Client::new()
        .delete(format!("{base}/mcp"))
        .bearer_auth(token)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_session_made_on_one_replica_continues_on_another_through_the_shared_store() {
    let store = Arc::new(MemorySessionStore::default());
    let a =
        tool_test_support::serve_on_loopback(app::router(registry(), options("a", Some(&store))))
            .await;
    let b =
        tool_test_support::serve_on_loopback(app::router(registry(), options("b", Some(&store))))
            .await;
    let session = open_session(&a, ANN).await;
    assert!(session.starts_with("a."), "{session}");
    assert_eq!(store.len(), 1);

    // B never saw the session. Another principal presenting its id is told it does not exist,
    // as for any unknown session, and B restores nothing for it.
    let (status, body) = tools_list(&b, BOB, &session).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(stream_status(&b, BOB, &session).await, 404);
    assert_eq!(delete(&b, BOB, &session).await, 404);
    assert_eq!(
        store.len(),
        1,
        "another principal's DELETE leaves the session"
    );

    // Its owner, with another token of hers: B restores it from the store and serves it.
    let (status, body) = tools_list(&b, ANN_AGAIN, &session).await;
    assert_eq!(status, 200, "{body}");
    let listed = tool_test_support::sse_message(&body);
    assert_eq!(
        tool_test_support::tool_names(&listed["result"]),
        ["ask_user", "hello"],
        "{listed}"
    );
    let called = rpc(
        &b,
        ANN,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "hello", "arguments": {"name": "bea"}}}),
    )
    .await;
    assert_eq!(called.status(), 200);
    let called = tool_test_support::sse_message(&called.text().await.unwrap());
    assert_eq!(
        called["result"]["structuredContent"]["result"], "hello bea",
        "{called}"
    );
    // Restored, it is still hers alone on B; and A still serves it, to her alone.
    assert_eq!(tools_list(&b, BOB, &session).await.0, 404);
    assert_eq!(tools_list(&a, BOB, &session).await.0, 404);
    assert_eq!(tools_list(&a, ANN, &session).await.0, 200);

    // A session's DELETE removes it from the store: no replica restores it again.
    assert_eq!(delete(&b, BOB, &session).await, 404);
    assert_eq!(delete(&b, ANN_AGAIN, &session).await, 204);
    assert!(store.is_empty());
    assert_eq!(delete(&b, ANN, &session).await, 404, "an unknown session");
}

#[tokio::test]
async fn an_answer_to_a_request_the_replica_never_sent_is_refused_not_accepted() {
    let store = Arc::new(MemorySessionStore::default());
    let a =
        tool_test_support::serve_on_loopback(app::router(registry(), options("a", Some(&store))))
            .await;
    let b =
        tool_test_support::serve_on_loopback(app::router(registry(), options("b", Some(&store))))
            .await;
    let session = open_session(&a, ANN).await;
    // An elicitation's answer, a result and an error, that no replica asked for: on the
    // session's own replica and on another that restores it, each is refused, not taken with
    // a 202 the client would then wait on for ever.
    for base in [&a, &b] {
        for answer in [
            json!({"jsonrpc": "2.0", "id": 7, "result": {"action": "accept", "content": {}}}),
            json!({"jsonrpc": "2.0", "id": "s-1", "error": {"code": -1, "message": "no"}}),
        ] {
            let response = rpc(base, ANN, Some(&session), &answer).await;
            assert_eq!(response.status(), 400, "{base}: {answer}");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"]["code"], -32600, "{body}");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains("sent no request with id"), "{message}");
        }
    }
    // The session goes on.
    assert_eq!(tools_list(&a, ANN, &session).await.0, 200);
    assert_eq!(tools_list(&b, ANN, &session).await.0, 200);
}

/// A session made on `a` (by a client that answers elicitations) is restored on `b`, where a
/// call asks its client a question. The client's answer reaches `a`, as the balancer sends
/// every request of the session there once `a` is back: `a` did not ask, and the relay carries
/// the answer to `b`, whose call goes on and answers. An answer no replica asked for is still
/// refused.
pub(crate) async fn an_answer_reaching_another_replica_is_taken_by_the_one_that_asked(
    a: ServerOptions,
    b: ServerOptions,
) {
    let a = tool_test_support::serve_on_loopback(app::router(registry(), a)).await;
    let b = tool_test_support::serve_on_loopback(app::router(registry(), b)).await;
    let mut init = tool_test_support::mcp_initialize("2025-11-25");
    init["params"]["capabilities"] = json!({"elicitation": {}});
    let session = open_session_as(&a, ANN, init).await;

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "ask_user", "arguments": {}}});
    let mut events = Events::new(rpc(&b, ANN, Some(&session), &call).await);
    let question = loop {
        let event = events.next().await.expect("the call's question");
        if let Some(message) = event.message()
            && message["method"] == "elicitation/create"
        {
            break message;
        }
    };
    let answer = json!({"jsonrpc": "2.0", "id": question["id"],
                        "result": {"action": "accept", "content": {"n": 7}}});
    let response = rpc(&a, ANN, Some(&session), &answer).await;
    assert_eq!(response.status(), 202, "{}", response.text().await.unwrap());
    let result = events
        .rest()
        .await
        .iter()
        .filter_map(crate::mcp_resume::Event::message)
        .find(|m| m["id"] == 2)
        .expect("the call's result");
    assert_eq!(
        result["result"]["structuredContent"]["result"], "picked 7",
        "{result}"
    );

    // Taken once: the same answer again, and one to a request never sent, are refused.
    for answer in [
        answer,
        json!({"jsonrpc": "2.0", "id": 99, "result": {"action": "accept", "content": {}}}),
    ] {
        let response = rpc(&a, ANN, Some(&session), &answer).await;
        assert_eq!(response.status(), 400, "{answer}");
    }
}

#[tokio::test]
async fn an_answer_reaching_another_replica_is_relayed_in_memory() {
    let store = Arc::new(MemorySessionStore::default());
    let relay = Arc::new(MemoryAnswerRelay::default());
    an_answer_reaching_another_replica_is_taken_by_the_one_that_asked(
        options("a", Some(&store)).mcp_answer_relay(relay.clone()),
        options("b", Some(&store)).mcp_answer_relay(relay),
    )
    .await;
}

#[tokio::test]
async fn without_a_store_a_session_lives_on_its_replica_only() {
    let a = tool_test_support::serve_on_loopback(app::router(
        registry(),
        ServerOptions::default().auth(auth()),
    ))
    .await;
    let b = tool_test_support::serve_on_loopback(app::router(registry(), options("b", None))).await;
    let session = open_session(&a, ANN).await;
    assert!(
        !session.contains('.'),
        "no replica id, the SDK's own ids: {session}"
    );
    assert_eq!(tools_list(&b, ANN, &session).await.0, 404);
    assert_eq!(tools_list(&a, BOB, &session).await.0, 404);
    assert_eq!(tools_list(&a, ANN, &session).await.0, 200);
}

#[tokio::test]
async fn restored_sessions_count_against_the_cap() {
    let store = Arc::new(MemorySessionStore::default());
    let capped = |id: &str| options(id, Some(&store)).max_sessions(1);
    let a = tool_test_support::serve_on_loopback(app::router(registry(), capped("a"))).await;
    let b = tool_test_support::serve_on_loopback(app::router(registry(), capped("b"))).await;
    let first = open_session(&a, ANN).await;
    let second = open_session(&b, BOB).await;
    // Another principal presenting A's session at B is told it does not exist, not to come back.
    assert_eq!(tools_list(&b, BOB, &first).await.0, 404);
    // B's one place is taken by its own session: A's is not restored there, and its owner is
    // told to come back later, as for an `initialize` at the cap.
    let refused = rpc(
        &b,
        ANN,
        Some(&first),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "5");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32000, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("MCP sessions open, the most it keeps"),
        "{body}"
    );
    assert_eq!(tools_list(&b, BOB, &second).await.0, 200);
    assert_eq!(tools_list(&b, ANN, &second).await.0, 404);
}

#[tokio::test]
async fn every_answer_names_the_replica() {
    let base = tool_test_support::serve_on_loopback(app::router(
        registry(),
        ServerOptions::default().replica_id("r-7"),
    ))
    .await;
    for path in ["/healthz", "/tools", "/no-such-route"] {
        let response = reqwest::get(format!("{base}{path}")).await.unwrap();
        assert_eq!(response.headers()["x-replica"], "r-7", "{path}");
    }
    let plain =
        tool_test_support::serve_on_loopback(app::router(registry(), ServerOptions::default()))
            .await;
    let response = reqwest::get(format!("{plain}/healthz")).await.unwrap();
    assert!(response.headers().get("x-replica").is_none());
}

#[test]
#[should_panic(expected = "a replica id is ASCII letters")]
fn a_replica_id_with_a_dot_is_refused() {
    let _ = ServerOptions::default().replica_id("a.b");
}

/// `GET /readyz` until it answers `status` (a report is kept for a second), with `token` if
/// given: the status and body.
async fn readyz_until(base: &str, token: Option<&str>, status: u16) -> (u16, Value) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let mut request = reqwest::Client::new().get(format!("{base}/readyz"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let got = response.status().as_u16();
        let body: Value = response.json().await.unwrap();
        if got == status || std::time::Instant::now() > deadline {
            return (got, body);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn readyz_answers_503_while_a_check_fails_naming_the_check_not_why() {
    let up = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (flag, counted) = (up.clone(), runs.clone());
    let auth = tool_runtime::http::Auth::from_toml(
        "[[tokens]]\ntoken = \"user\"\nprincipal = \"u\"\nroles = []\n\n\
         [[tokens]]\ntoken = \"op\"\nprincipal = \"o\"\nroles = [\"admin\"]\n",
    )
    .unwrap();
    let options = ServerOptions::default()
        .auth(auth)
        .ready_check("store", move || {
            let up = flag.load(std::sync::atomic::Ordering::SeqCst);
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move {
                if up {
                    Ok(())
                } else {
                    Err("store at 10.0.0.7:6379 refused the connection".to_owned())
                }
            }
        })
        .ready_check("other", || async { Ok(()) });
    let base = tool_test_support::serve_on_loopback(app::router(registry(), options)).await;
    // A probe, and a caller without the operator role, learn which check fails, not where.
    let hidden = json!({"status": "unavailable", "checks": {"store": "unavailable"}});
    for token in [None, Some("user"), Some("not a token")] {
        assert_eq!(readyz_until(&base, token, 503).await, (503, hidden.clone()));
    }
    // The operator is told why.
    let (status, body) = readyz_until(&base, Some("op"), 503).await;
    assert_eq!(status, 503);
    assert_eq!(
        body["checks"]["store"],
        "store at 10.0.0.7:6379 refused the connection"
    );
    // A flood of probes runs the checks about once a second, not once a probe.
    let before = runs.load(std::sync::atomic::Ordering::SeqCst);
    let probes = (0..200).map(|_| reqwest::get(format!("{base}/readyz")));
    for response in futures_util::future::join_all(probes).await {
        assert_eq!(response.unwrap().status(), 503);
    }
    let ran = runs.load(std::sync::atomic::Ordering::SeqCst) - before;
    assert!(ran <= 10, "200 probes ran the checks {ran} times");
    // Liveness is another question.
    assert_eq!(
        reqwest::get(format!("{base}/healthz"))
            .await
            .unwrap()
            .status(),
        200
    );
    up.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        readyz_until(&base, None, 200).await,
        (200, json!({"status": "ready"}))
    );
}

#[tokio::test]
async fn readyz_needs_no_token_and_is_in_the_openapi_document() {
    let auth = tool_runtime::http::Auth::from_toml(
        "[[tokens]]\ntoken = \"t\"\nprincipal = \"p\"\nroles = []\n",
    )
    .unwrap();
    let base = tool_test_support::serve_on_loopback(app::router(
        registry(),
        ServerOptions::default().auth(auth),
    ))
    .await;
    assert_eq!(
        reqwest::get(format!("{base}/readyz"))
            .await
            .unwrap()
            .status(),
        200
    );
    let doc: Value = reqwest::Client::new()
        .get(format!("{base}/openapi.json"))
        .bearer_auth("t")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let readyz = &doc["paths"]["/readyz"]["get"];
    assert_eq!(readyz["operationId"], "readyz", "{doc}");
    assert!(readyz["responses"]["503"].is_object());
}

#[tokio::test]
async fn at_shutdown_the_server_drains_not_ready_and_closing_connections_then_stops() {
    let options = ServerOptions::default()
        .drain(Duration::from_millis(1500))
        .grace(Duration::from_secs(1));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(tool_runtime::http::serve(
        listener,
        app::router(registry(), options.clone()),
        async {
            let _ = stopped.await;
        },
        &options,
    ));
    let http = reqwest::Client::new();
    let before = http.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(before.status(), 200);
    assert!(before.headers().get("connection").is_none());

    stop.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Draining: not ready, still serving calls, each answer closing its connection.
    let readyz = http.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(readyz.status(), 503);
    assert_eq!(readyz.headers()["connection"], "close");
    assert_eq!(
        readyz.json::<Value>().await.unwrap(),
        json!({"status": "draining"})
    );
    let call = http
        .post(format!("{base}/tools/hello"))
        .json(&json!({"name": "dee"}))
        .send()
        .await
        .unwrap();
    assert_eq!(call.status(), 200);
    assert_eq!(call.headers()["connection"], "close");
    assert!(!served.is_finished());

    // Then it stops.
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("stopped after the drain")
        .unwrap()
        .unwrap();
    assert!(http.get(format!("{base}/readyz")).send().await.is_err());
}

/// Once shutdown has ended its sessions, a request in one is answered 404, as for a session that
/// does not exist (the official SDKs then open a new session and send the request again, which
/// the balancer gives another replica), not 500.
#[tokio::test]
async fn a_request_in_a_session_ended_at_shutdown_is_told_the_session_is_gone() {
    let store = Arc::new(MemorySessionStore::default());
    let shutdown = tokio_util::sync::CancellationToken::new();
    let base = tool_test_support::serve_on_loopback(app::router(
        registry(),
        options("a", Some(&store)).shutdown(shutdown.clone()),
    ))
    .await;
    let session = open_session(&base, ANN).await;
    assert_eq!(tools_list(&base, ANN, &session).await.0, 200);
    shutdown.cancel();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = tools_list(&base, ANN, &session).await;
        if status == 404 {
            break;
        }
        assert_eq!(status, 200, "{body}");
        assert!(std::time::Instant::now() < deadline, "still served");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
