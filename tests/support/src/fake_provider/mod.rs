//! Local fake model providers, one per wire format, on loopback: each replays a script of
//! replies in its API's own format and checks every request against the API's contract
//! (headers, message roles and order, tool results answering exactly the calls made, the tools
//! sent). A request that breaks the contract is answered 400 and recorded; tests end with
//! [`FakeProvider::assert_clean`].

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tool_runtime::agent::Api;

mod contract;

use contract::check;

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Step {
    /// A reply: text (may be empty) and tool calls as `(name, arguments text)`.
    Reply {
        /// The text.
        text: String,
        /// The calls.
        calls: Vec<(String, String)>,
    },
    /// An error status, with a `Retry-After` header if given.
    Status {
        /// The status.
        status: u16,
        /// `Retry-After`'s value.
        retry_after: Option<String>,
    },
    /// Answers after a pause (the reply that follows in the script).
    Pause(Duration),
    /// A reply fixture (`tests/fixtures/agent/*.json`, made with the provider's SDK): its
    /// `reply` as the body, or its `events` as server-sent events, sent a few bytes at a time
    /// so that events are cut across network reads. The calls in it are recorded as issued.
    Fixture(Value),
    /// A fixture's events, the stream broken off after the first `n`.
    Cut(Value, usize),
}

impl Step {
    /// The fixture `tests/fixtures/agent/{name}.json`.
    ///
    /// # Panics
    ///
    /// If there is no such fixture.
    #[must_use]
    pub fn fixture(name: &str) -> Step {
        Step::Fixture(fixture(name))
    }

    /// The fixture `name`'s events, broken off after the first `n`.
    #[must_use]
    pub fn cut(name: &str, n: usize) -> Step {
        Step::Cut(fixture(name), n)
    }
}

/// A reply fixture by name.
///
/// # Panics
///
/// If there is no such fixture.
#[must_use]
pub fn fixture(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/agent")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

impl Step {
    /// A reply with text only.
    #[must_use]
    pub fn text(text: &str) -> Step {
        Step::Reply {
            text: text.to_owned(),
            calls: Vec::new(),
        }
    }

    /// A reply with tool calls only.
    #[must_use]
    pub fn calls(calls: &[(&str, &str)]) -> Step {
        Step::Reply {
            text: String::new(),
            calls: calls
                .iter()
                .map(|(n, a)| ((*n).to_owned(), (*a).to_owned()))
                .collect(),
        }
    }
}

/// Tokens every reply reports: input, output.
pub const USAGE: (u64, u64) = (100, 20);

#[derive(Debug)]
struct Shared {
    api: Api,
    key: String,
    script: VecDeque<Step>,
    requests: Vec<Value>,
    headers: Vec<HeaderMap>,
    violations: Vec<String>,
    expected_tools: Option<Value>,
    /// Gemini: the calls sent with a thought signature, which must come back with them.
    signed: Vec<(Value, String)>,
    /// This fake's number, which its call ids carry.
    number: usize,
    replies: usize,
}

/// Every call id any fake handed out, with its tool name: a conversation may move from one
/// provider to another, and each must accept the calls the other made.
static ISSUED: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Numbers the fakes, so their call ids differ.
static FAKES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A fake provider serving on `base_url`.
#[derive(Debug, Clone)]
pub struct FakeProvider {
    /// The base URL to give the model (`Model::with_base_url`).
    pub base_url: String,
    shared: Arc<Mutex<Shared>>,
}

impl FakeProvider {
    /// Starts a fake of `api` that accepts `key` and answers with `script`, in order.
    pub async fn start(api: Api, key: &str, script: Vec<Step>) -> FakeProvider {
        let shared = Arc::new(Mutex::new(Shared {
            api,
            key: key.to_owned(),
            script: script.into(),
            requests: Vec::new(),
            headers: Vec::new(),
            violations: Vec::new(),
            expected_tools: None,
            signed: Vec::new(),
            number: FAKES.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            replies: 0,
        }));
        let app = axum::Router::new()
            .fallback(axum::routing::post(handle))
            .with_state(shared.clone());
        let root = crate::serve_on_loopback(app).await;
        let base_url = match api {
            Api::OpenAiChat | Api::OpenAiResponses | Api::OpenAiCompatible => format!("{root}/v1"),
            _ => root,
        };
        FakeProvider { base_url, shared }
    }

    /// Every request must carry exactly these tools (the `tools` member as the API has it).
    pub fn expect_tools(&self, tools: Value) {
        self.lock().expected_tools = Some(tools);
    }

    /// The request bodies received.
    #[must_use]
    pub fn requests(&self) -> Vec<Value> {
        self.lock().requests.clone()
    }

    /// The headers of every request.
    #[must_use]
    pub fn headers(&self) -> Vec<HeaderMap> {
        self.lock().headers.clone()
    }

    /// Contract violations seen.
    #[must_use]
    pub fn violations(&self) -> Vec<String> {
        self.lock().violations.clone()
    }

    /// Panics if any request broke the contract or the script was not used up.
    pub fn assert_clean(&self) {
        let s = self.lock();
        assert!(
            s.violations.is_empty(),
            "requests broke the {} contract:\n{}",
            s.api,
            s.violations.join("\n")
        );
        assert!(
            s.script.is_empty(),
            "{} scripted answers were never asked for: {:?}",
            s.script.len(),
            s.script
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

async fn handle(
    State(shared): State<Arc<Mutex<Shared>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (api, mut step) = {
        let mut s = shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let body: Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                s.violations.push(format!("the body is not JSON: {e}"));
                return (StatusCode::BAD_REQUEST, "not JSON").into_response();
            }
        };
        let problems = check(&s, uri.path(), &headers, &body);
        s.requests.push(body.clone());
        s.headers.push(headers.clone());
        if !problems.is_empty() {
            let message = problems.join("; ");
            s.violations.extend(problems);
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"error": {"message": message}})),
            )
                .into_response();
        }
        (s.api, s.script.pop_front())
    };
    while let Some(Step::Pause(pause)) = step {
        tokio::time::sleep(pause).await;
        step = shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .script
            .pop_front();
    }
    let streaming = uri.path().ends_with(":streamGenerateContent")
        || shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .requests
            .last()
            .is_some_and(|b| b["stream"] == json!(true));
    match step {
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(json!({"error": {"message": "the fake's script is used up"}})),
        )
            .into_response(),
        Some(Step::Status {
            status,
            retry_after,
        }) => {
            let mut response = (
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                axum::Json(json!({"error": {"message": format!("scripted {status}")}})),
            )
                .into_response();
            if let Some(wait) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", wait.parse().expect("header value"));
            }
            response
        }
        Some(Step::Pause(_)) => unreachable!("pauses are taken above"),
        Some(Step::Reply { text, calls }) => answer(&shared, api, streaming, &text, &calls),
        Some(Step::Fixture(fixture)) => replay(&shared, api, &fixture, None),
        Some(Step::Cut(fixture, n)) => replay(&shared, api, &fixture, Some(n)),
    }
}

/// A fixture as the answer: its calls recorded as issued (and Gemini's signed ones as needing
/// their signature back), then its reply, or its events a few bytes at a time.
fn replay(shared: &Mutex<Shared>, api: Api, fixture: &Value, cut: Option<usize>) -> Response {
    let mut calls = Vec::new();
    calls_in(fixture, &mut calls);
    ISSUED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .extend(calls);
    signed_in(
        fixture,
        &mut shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .signed,
    );
    if let Some(reply) = fixture.get("reply") {
        return axum::Json(reply.clone()).into_response();
    }
    let events = fixture["events"]
        .as_array()
        .expect("a fixture has `reply` or `events`");
    let mut body = String::new();
    for event in events.iter().take(cut.unwrap_or(usize::MAX)) {
        let name = event["type"]
            .as_str()
            .filter(|_| matches!(api, Api::Anthropic | Api::OpenAiResponses));
        if let Some(name) = name {
            let _ = writeln!(body, "event: {name}");
        }
        let _ = match event {
            Value::String(raw) => write!(body, "data: {raw}\n\n"),
            other => write!(body, "data: {other}\n\n"),
        };
    }
    let bytes = body.into_bytes();
    let pieces: Vec<Result<Bytes, std::io::Error>> = bytes
        .chunks(7)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let stream = futures_util::stream::iter(pieces).then(|piece| async move {
        // Apart in time, so the client reads them apart.
        tokio::time::sleep(Duration::from_micros(200)).await;
        piece
    });
    (
        [("content-type", "text/event-stream")],
        axum::body::Body::from_stream(stream),
    )
        .into_response()
}

/// The calls a reply or its events make, as `(id, name)`, whatever the API.
fn calls_in(value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(o) => {
            let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
            let call = match o.get("type").and_then(Value::as_str) {
                Some("tool_use") => text(o.get("id")).zip(text(o.get("name"))),
                Some("function_call") => text(o.get("call_id")).zip(text(o.get("name"))),
                Some("function") => {
                    text(o.get("id")).zip(text(o.get("function").and_then(|f| f.get("name"))))
                }
                _ => None,
            };
            out.extend(call);
            for v in o.values() {
                calls_in(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| calls_in(v, out)),
        _ => {}
    }
}

/// Gemini's signed calls in a reply, as the request must carry them back: the call's own
/// fields only.
fn signed_in(value: &Value, out: &mut Vec<(Value, String)>) {
    match value {
        Value::Object(o) => {
            if let (Some(call), Some(sig)) = (
                o.get("functionCall"),
                o.get("thoughtSignature").and_then(Value::as_str),
            ) {
                let mut call = call.clone();
                if let Some(fields) = call.as_object_mut() {
                    fields.retain(|k, _| matches!(k.as_str(), "id" | "name" | "args"));
                }
                out.push((call, sig.to_owned()));
            }
            o.values().for_each(|v| signed_in(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| signed_in(v, out)),
        _ => {}
    }
}

/// A scripted reply, in `api`'s format (streamed if asked), its calls recorded.
fn answer(
    shared: &Mutex<Shared>,
    api: Api,
    streaming: bool,
    text: &str,
    calls: &[(String, String)],
) -> Response {
    let mut s = shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    s.replies += 1;
    let n = s.replies;
    let ids: Vec<String> = (0..calls.len())
        .map(|i| format!("call_{}_{n}_{i}", s.number))
        .collect();
    drop(s);
    let mut issued = ISSUED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for (id, (name, _)) in ids.iter().zip(calls) {
        issued.push((id.clone(), name.clone()));
    }
    drop(issued);
    if streaming && matches!(api, Api::OpenAiChat | Api::OpenAiCompatible) {
        return sse(chat_chunks(text, calls, &ids));
    }
    let reply = reply(api, text, calls, &ids, n);
    if streaming {
        return replay(
            shared,
            api,
            &json!({"events": events_of(api, &reply)}),
            None,
        );
    }
    if let Some(parts) = reply
        .pointer("/candidates/0/content/parts")
        .and_then(Value::as_array)
    {
        let mut s = shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for p in parts {
            if let Some(sig) = p["thoughtSignature"].as_str() {
                s.signed.push((p["functionCall"].clone(), sig.to_owned()));
            }
        }
    }
    axum::Json(reply).into_response()
}

/// The reply in `api`'s format.
fn reply(api: Api, text: &str, calls: &[(String, String)], ids: &[String], n: usize) -> Value {
    let (input, output) = USAGE;
    match api {
        Api::OpenAiChat | Api::OpenAiCompatible => {
            let mut message = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            if !calls.is_empty() {
                message["tool_calls"] = calls
                    .iter()
                    .zip(ids)
                    .map(|((name, args), id)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
                    .collect();
            }
            json!({
                "id": format!("chatcmpl-{n}"), "object": "chat.completion", "created": 0, "model": "fake",
                "choices": [{"index": 0, "message": message,
                             "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
                "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output},
            })
        }
        Api::OpenAiResponses => {
            let mut out = Vec::new();
            if !text.is_empty() {
                out.push(json!({"type": "message", "id": format!("msg_{n}"), "role": "assistant", "status": "completed",
                                "content": [{"type": "output_text", "text": text, "annotations": []}]}));
            }
            for ((name, args), id) in calls.iter().zip(ids) {
                out.push(
                    json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id,
                                "name": name, "arguments": args, "status": "completed"}),
                );
            }
            json!({"id": format!("resp_{n}"), "object": "response", "status": "completed", "output": out,
                   "usage": {"input_tokens": input, "output_tokens": output, "total_tokens": input + output}})
        }
        Api::Anthropic => {
            let mut content = Vec::new();
            if !text.is_empty() {
                content.push(json!({"type": "text", "text": text}));
            }
            for ((name, args), id) in calls.iter().zip(ids) {
                let input: Value = serde_json::from_str(args).expect("Anthropic sends objects");
                content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            json!({"id": format!("msg_{n}"), "type": "message", "role": "assistant", "model": "fake",
                   "content": content, "stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" },
                   "usage": {"input_tokens": input, "output_tokens": output}})
        }
        _ => {
            let mut parts = Vec::new();
            if !text.is_empty() {
                parts.push(json!({"text": text}));
            }
            for (i, (name, args)) in calls.iter().enumerate() {
                let args: Value = serde_json::from_str(args).expect("Gemini sends objects");
                let mut part = json!({"functionCall": {"name": name, "args": args}});
                if i == 0 {
                    // Gemini's thought signature, which must come back with the call.
                    part["thoughtSignature"] = json!(format!("sig-{n}"));
                }
                parts.push(part);
            }
            json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                   "usageMetadata": {"promptTokenCount": input, "candidatesTokenCount": output, "totalTokenCount": input + output}})
        }
    }
}

/// A whole Responses, Anthropic or Gemini reply as the events that stream it: Responses, its
/// text as deltas then `response.completed` with the reply; Anthropic, the message's events
/// block by block; Gemini, one chunk.
fn events_of(api: Api, reply: &Value) -> Vec<Value> {
    match api {
        Api::OpenAiResponses => {
            let mut events: Vec<Value> = reply["output"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|item| item["content"].as_array().cloned().unwrap_or_default())
                .filter_map(|part| part["text"].as_str().map(str::to_owned))
                .map(|text| json!({"type": "response.output_text.delta", "delta": text}))
                .collect();
            events.push(json!({"type": "response.completed", "response": reply}));
            events
        }
        Api::Anthropic => {
            let mut start = reply.clone();
            start["content"] = json!([]);
            start["stop_reason"] = Value::Null;
            let mut events = vec![json!({"type": "message_start", "message": start})];
            for (i, block) in reply["content"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let (empty, delta) = if block["type"] == "tool_use" {
                    let mut b = block.clone();
                    b["input"] = json!({});
                    (
                        b,
                        json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
                    )
                } else {
                    (
                        json!({"type": "text", "text": ""}),
                        json!({"type": "text_delta", "text": block["text"]}),
                    )
                };
                events.push(
                    json!({"type": "content_block_start", "index": i, "content_block": empty}),
                );
                events.push(json!({"type": "content_block_delta", "index": i, "delta": delta}));
                events.push(json!({"type": "content_block_stop", "index": i}));
            }
            events.push(
                json!({"type": "message_delta", "delta": {"stop_reason": reply["stop_reason"]},
                               "usage": {"output_tokens": reply["usage"]["output_tokens"]}}),
            );
            events.push(json!({"type": "message_stop"}));
            events
        }
        _ => vec![reply.clone()],
    }
}

/// A Chat Completions reply as stream chunks: text in small pieces, each call's id and name
/// first and its arguments in two pieces, then the finish reason, then usage.
fn chat_chunks(text: &str, calls: &[(String, String)], ids: &[String]) -> Vec<Value> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 0, "model": "fake",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut chunks = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(3) {
        chunks.push(chunk(
            json!({"content": piece.iter().collect::<String>()}),
            Value::Null,
        ));
    }
    for (i, ((name, args), id)) in calls.iter().zip(ids).enumerate() {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
        let cut = args
            .char_indices()
            .nth(args.chars().count() / 2)
            .map_or(0, |(c, _)| c);
        for part in [&args[..cut], &args[cut..]] {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": part}}]}),
                Value::Null,
            ));
        }
    }
    chunks.push(chunk(
        json!({}),
        json!(if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        }),
    ));
    let (input, output) = USAGE;
    chunks.push(json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "choices": [],
                       "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}}));
    chunks
}

fn sse(chunks: Vec<Value>) -> Response {
    let mut body = String::new();
    for c in chunks {
        body.push_str("data: ");
        body.push_str(&c.to_string());
        body.push_str("\n\n");
    }
    body.push_str("data: [DONE]\n\n");
    ([("content-type", "text/event-stream")], body).into_response()
}
