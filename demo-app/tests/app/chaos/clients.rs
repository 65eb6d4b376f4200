//! The clients of the chaos run and what each saw: HTTP calls recorded one by one, MCP
//! clients of both protocol eras counted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use serde_json::{Value, json};

use super::{SESSION_CALL_LIMIT, SESSION_CLIENTS};

/// What a client saw of one call.
#[derive(Debug, Clone)]
pub(super) struct Call {
    /// What the client did: `add`, `pair`, `ask`, `confirm`, `reuse`, `list`.
    pub(super) kind: &'static str,
    /// Its `X-Request-Id`.
    pub(super) id: String,
    /// The HTTP status (0: no answer at all).
    pub(super) status: u16,
    /// The replica that answered (`None`: nginx did, or no one).
    pub(super) replica: Option<String>,
    /// The error's message, when it was one.
    pub(super) message: String,
    /// From sending to the end of the answer.
    pub(super) took: Duration,
}

/// The calls every client made, and what the MCP clients saw.
#[derive(Default)]
pub(super) struct Record {
    pub(super) calls: Vec<Call>,
    /// A token redeemed a second time and the tool ran: never expected.
    pub(super) reused: Vec<String>,
    /// MCP: (client, calls answered, elicitations accepted, errors, sessions opened).
    pub(super) mcp: Vec<String>,
    /// Devices paired, that the confirmers revoke.
    pub(super) devices: Vec<String>,
    /// MCP session calls that got no answer: when, and what the client said.
    pub(super) lost: Vec<String>,
}

pub(super) type Shared = Arc<Mutex<Record>>;

/// A `POST /tools/{tool}` through `base`, recorded.
async fn call(
    http: &reqwest::Client,
    base: &str,
    kind: &'static str,
    id: String,
    tool: &str,
    body: &Value,
    token: Option<&str>,
) -> (Call, Value) {
    let sent = Instant::now();
    let mut request = http
        .post(format!("{base}/tools/{tool}"))
        .header("x-request-id", &id)
        .timeout(Duration::from_secs(60))
        .json(body);
    if let Some(token) = token {
        request = request.header("x-confirmation", token);
    }
    let (status, replica, answer) = match request.send().await {
        Ok(response) => {
            let replica =
                (response.headers().get("x-replica")).map(|v| v.to_str().unwrap().to_owned());
            let status = response.status().as_u16();
            let answer = response.json::<Value>().await.unwrap_or(Value::Null);
            (status, replica, answer)
        }
        Err(_) => (0, None, Value::Null),
    };
    let message = answer["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let call = Call {
        kind,
        id,
        status,
        replica,
        message,
        took: sent.elapsed(),
    };
    (call, answer)
}

/// Adds a device code and pairs it, again and again.
async fn adder(c: usize, base: String, stop: Arc<AtomicBool>, record: Shared) {
    let http = reqwest::Client::new();
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let id = format!("add-{c}-{i}");
        let body = json!({"workspace": id});
        let (added, answer) = call(&http, &base, "add", id, "device_add", &body, None).await;
        let ok = added.status == 200;
        record.lock().unwrap().calls.push(added);
        if !ok {
            continue;
        }
        let code = answer["result"]["code"].as_str().unwrap();
        let body = json!({"code": code, "device_name": format!("sensor {c}-{i}")});
        let id = format!("pair-{c}-{i}");
        let (paired, answer) = call(&http, &base, "pair", id, "device_pair", &body, None).await;
        let mut record = record.lock().unwrap();
        if paired.status == 200 {
            let device = answer["result"]["device_id"].as_str().unwrap().to_owned();
            record.devices.push(device);
        }
        record.calls.push(paired);
    }
}

/// Revokes paired devices over HTTP: asked on one replica, confirmed with the token on
/// whichever nginx picks, then the same token tried again.
async fn confirmer(c: usize, base: String, stop: Arc<AtomicBool>, record: Shared) {
    let http = reqwest::Client::new();
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let device = record.lock().unwrap().devices.pop();
        let Some(device) = device else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let body = json!({"device_id": device});
        let id = format!("ask-{c}-{i}");
        let (asked, answer) = call(&http, &base, "ask", id, "device_revoke", &body, None).await;
        let token = answer["error"]["details"]["token"]
            .as_str()
            .map(str::to_owned);
        record.lock().unwrap().calls.push(asked);
        let Some(token) = token else { continue };
        let id = format!("confirm-{c}-{i}");
        let (confirmed, _) = call(
            &http,
            &base,
            "confirm",
            id,
            "device_revoke",
            &body,
            Some(&token),
        )
        .await;
        // The tool ran for the token (a confirm refused before the token was taken, for a
        // backend away, leaves it for the resend).
        let redeemed = confirmed.replica.is_some() && matches!(confirmed.status, 200 | 404);
        record.lock().unwrap().calls.push(confirmed);
        let id = format!("reuse-{c}-{i}");
        let (reused, _) = call(
            &http,
            &base,
            "reuse",
            id,
            "device_revoke",
            &body,
            Some(&token),
        )
        .await;
        let mut record = record.lock().unwrap();
        // A token that ran the tool again: the tool's own answer (a result, or its not-found).
        if redeemed && reused.replica.is_some() && matches!(reused.status, 200 | 404) {
            record.reused.push(reused.id.clone());
        }
        record.calls.push(reused);
    }
}

/// Lists devices as fast as the shared limit lets anyone.
async fn lister(c: usize, base: String, stop: Arc<AtomicBool>, record: Shared) {
    let http = reqwest::Client::new();
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let id = format!("list-{c}-{i}");
        let (listed, _) = call(&http, &base, "list", id, "device_list", &json!({}), None).await;
        record.lock().unwrap().calls.push(listed);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An MCP client of protocol 2026-07-28 (no session): a revocation asked through an
/// input-required result, accepted on whichever replica nginx picks, then the same accepted
/// state sent again, which must not run the tool again.
async fn sessionless(c: usize, base: String, stop: Arc<AtomicBool>, record: Shared) {
    let http = reqwest::Client::new();
    let (mut answered, mut accepted, mut errors) = (0, 0, 0);
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let args = json!({"device_id": format!("dev_{:016x}", 0xc000_0000 + c * 100_000 + i)});
        let Some(asked) = mcp_revoke(&http, &base, &args, &json!({})).await else {
            errors += 1;
            continue;
        };
        if asked["resultType"] != "input_required" {
            errors += 1;
            continue;
        }
        let state = asked["requestState"].as_str().unwrap().to_owned();
        let accept = json!({"inputResponses": {"confirm": {"action": "accept", "content": {}}},
                            "requestState": state});
        let Some(ran) = mcp_revoke(&http, &base, &args, &accept).await else {
            errors += 1;
            continue;
        };
        let text = ran["content"][0]["text"].as_str().unwrap_or_default();
        if text.starts_with("not_found:") {
            accepted += 1;
        } else {
            errors += 1;
            continue;
        }
        answered += 1;
        if let Some(again) = mcp_revoke(&http, &base, &args, &accept).await {
            let text = again["content"][0]["text"].as_str().unwrap_or_default();
            if text.starts_with("not_found:") {
                record.lock().unwrap().reused.push(format!("mcp-{c}-{i}"));
            }
        }
    }
    record.lock().unwrap().mcp.push(format!(
        "2026-07-28 client {c}: {answered} revocations confirmed, {accepted} accepted, \
         {errors} refused or unanswered"
    ));
}

/// A `tools/call` of `device_revoke` in protocol 2026-07-28, standing alone, its `retry`
/// fields added: the result, if one came.
async fn mcp_revoke(
    http: &reqwest::Client,
    base: &str,
    args: &Value,
    retry: &Value,
) -> Option<Value> {
    let response = crate::replicas::revoke_request(http, base, args, retry)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body = response.text().await.ok()?;
    let message = std::panic::catch_unwind(|| tool_test_support::sse_message(&body)).ok()?;
    let result = message.get("result")?.clone();
    Some(result)
}

/// What a 2025-11-25 client answers when asked: always accept.
#[derive(Clone)]
struct Accepting(Arc<std::sync::atomic::AtomicUsize>);

impl rmcp::ClientHandler for Accepting {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        let mut elicitation = rmcp::model::ElicitationCapability::new();
        elicitation.form = Some(rmcp::model::FormElicitationCapability::default());
        capabilities.elicitation = Some(elicitation);
        let mut config = rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("chaos", "1"),
        );
        config.protocol_version = rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE;
        config
    }

    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(json!({})),
        )
    }
}

/// An MCP client of protocol 2025-11-25 in a session through nginx (the official Rust SDK):
/// revocations confirmed through elicitation; a session lost to a fault is opened again.
async fn in_session(c: usize, base: String, stop: Arc<AtomicBool>, record: Shared) {
    let elicited = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (mut answered, mut errors, mut sessions) = (0, 0, 0);
    let mut lost = Vec::new();
    let started = Instant::now();
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let transport =
            rmcp::transport::StreamableHttpClientTransport::from_uri(format!("{base}/mcp"));
        let connect = Accepting(elicited.clone()).serve(transport);
        let Ok(Ok(client)) = tokio::time::timeout(Duration::from_secs(30), connect).await else {
            errors += 1;
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        sessions += 1;
        while !stop.load(Ordering::Relaxed) {
            i += 1;
            let args = json!({"device_id": format!("dev_{:016x}", 0xd000_0000 + c * 100_000 + i)});
            let params = rmcp::model::CallToolRequestParams::new("device_revoke")
                .with_arguments(args.as_object().unwrap().clone());
            let args = &args["device_id"];
            let sent = Instant::now();
            // The client's own time limit: the SDK resumes a cut stream for as long as it waits.
            let outcome = tokio::time::timeout(SESSION_CALL_LIMIT, client.call_tool(params));
            match outcome.await {
                Ok(Ok(result)) => {
                    let text = serde_json::to_value(&result).unwrap()["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    if text.starts_with("not_found:") {
                        answered += 1;
                    } else {
                        errors += 1;
                    }
                }
                Ok(Err(e)) => {
                    lost.push(format!(
                        "{:.1} s: {e} after {:.1} s ({args})",
                        started.elapsed().as_secs_f64(),
                        sent.elapsed().as_secs_f64()
                    ));
                    break;
                }
                Err(_) => {
                    lost.push(format!(
                        "{:.1} s: no answer in {} s ({args})",
                        started.elapsed().as_secs_f64(),
                        SESSION_CALL_LIMIT.as_secs()
                    ));
                    break;
                }
            }
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
    }
    let mut record = record.lock().unwrap();
    record.mcp.push(format!(
        "2025-11-25 client {c}: {answered} revocations confirmed through {} elicitations, \
         {errors} refused, {sessions} sessions, {} lost",
        elicited.load(Ordering::Relaxed),
        lost.len()
    ));
    record.lost.extend(lost);
}

/// The clients, each calling until `stop`: four add and pair devices, two revoke them with
/// tokens, two list against the shared limit, two confirm through input-required results, and
/// the MCP clients in sessions.
pub(super) fn spawn_traffic(
    base: &str,
    stop: &Arc<AtomicBool>,
    record: &Shared,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut traffic = Vec::new();
    let (b, s, r) = (|| base.to_owned(), || stop.clone(), || record.clone());
    for c in 0..4 {
        traffic.push(tokio::spawn(adder(c, b(), s(), r())));
    }
    for c in 0..2 {
        traffic.push(tokio::spawn(confirmer(c, b(), s(), r())));
        traffic.push(tokio::spawn(lister(c, b(), s(), r())));
        traffic.push(tokio::spawn(sessionless(c, b(), s(), r())));
    }
    for c in 0..SESSION_CLIENTS {
        traffic.push(tokio::spawn(in_session(c, b(), s(), r())));
    }
    traffic
}
