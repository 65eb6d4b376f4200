//! Local fake model providers, one per wire format, on loopback: each replays a script of
//! replies in its API's own format and checks every request against the API's contract
//! (headers, message roles and order, tool results answering exactly the calls made, the tools
//! sent). A request that breaks the contract is answered 400 and recorded; tests end with
//! [`FakeProvider::assert_clean`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tool_runtime::agent::Api;

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
    let stream = api == Api::OpenAiChat || api == Api::OpenAiCompatible;
    let streaming = stream
        && shared
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
    if streaming {
        return sse(chat_chunks(text, calls, &ids));
    }
    let reply = reply(api, text, calls, &ids, n);
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

/// Every way `body` breaks `api`'s contract.
fn check(s: &Shared, path: &str, headers: &HeaderMap, body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if !header("content-type").is_some_and(|c| c.starts_with("application/json")) {
        problems.push("content-type is not application/json".to_owned());
    }
    let (expected_path, auth_ok) = match s.api {
        Api::OpenAiChat | Api::OpenAiCompatible => (
            "/v1/chat/completions".to_owned(),
            header("authorization") == Some(&format!("Bearer {}", s.key)),
        ),
        Api::OpenAiResponses => (
            "/v1/responses".to_owned(),
            header("authorization") == Some(&format!("Bearer {}", s.key)),
        ),
        Api::Anthropic => {
            if header("anthropic-version") != Some("2023-06-01") {
                problems.push("anthropic-version is not 2023-06-01".to_owned());
            }
            (
                "/v1/messages".to_owned(),
                header("x-api-key") == Some(&s.key),
            )
        }
        _ => (
            "/v1beta/models/fake-model:generateContent".to_owned(),
            header("x-goog-api-key") == Some(&s.key),
        ),
    };
    if path != expected_path {
        problems.push(format!("posted to {path}, not {expected_path}"));
    }
    if !auth_ok {
        problems.push("the API key header is missing or wrong".to_owned());
    }
    if let Some(expected) = &s.expected_tools {
        let sent = match s.api {
            Api::Gemini => body.pointer("/tools/0/functionDeclarations"),
            _ => body.get("tools"),
        };
        if sent != Some(expected) {
            problems.push(format!(
                "the tools sent are not the lowered specs: sent {}",
                sent.map_or("nothing".to_owned(), Value::to_string)
            ));
        }
    }
    match s.api {
        Api::OpenAiChat | Api::OpenAiCompatible => check_chat(s, body, &mut problems),
        Api::OpenAiResponses => check_responses(s, body, &mut problems),
        Api::Anthropic => check_anthropic(s, body, &mut problems),
        _ => check_gemini(s, body, &mut problems),
    }
    problems
}

fn issued(_: &Shared, id: &str, name: &str) -> bool {
    ISSUED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .any(|(i, n)| i == id && n == name)
}

fn check_chat(s: &Shared, body: &Value, problems: &mut Vec<String>) {
    if !body["model"].is_string() {
        problems.push("no `model`".to_owned());
    }
    let Some(messages) = body["messages"].as_array() else {
        problems.push("no `messages` array".to_owned());
        return;
    };
    let mut waiting: VecDeque<String> = VecDeque::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role != "tool" && !waiting.is_empty() {
            problems.push(format!(
                "message {i} ({role}) comes before the results of calls {waiting:?}"
            ));
            waiting.clear();
        }
        match role {
            "system" if i == 0 => {}
            "user" => {}
            "assistant" => {
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    let (id, name) = (
                        c["id"].as_str().unwrap_or(""),
                        c["function"]["name"].as_str().unwrap_or(""),
                    );
                    if !issued(s, id, name) || c["type"] != "function" {
                        problems.push(format!("message {i} has a call the model never made: {c}"));
                    }
                    waiting.push_back(id.to_owned());
                }
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap_or("");
                if waiting.pop_front().as_deref() != Some(id) {
                    problems.push(format!(
                        "message {i} answers `{id}`, which is not the next call waiting"
                    ));
                }
                if !m["content"].is_string() {
                    problems.push(format!(
                        "message {i}: a tool result's content is not a string"
                    ));
                }
            }
            other => problems.push(format!("message {i} has role `{other}`")),
        }
    }
    if !waiting.is_empty() {
        problems.push(format!("calls {waiting:?} have no result"));
    }
    if messages.last().is_some_and(|m| m["role"] == "assistant") {
        problems.push("the conversation ends with the assistant".to_owned());
    }
}

fn check_responses(s: &Shared, body: &Value, problems: &mut Vec<String>) {
    if body["store"] != json!(false) {
        problems.push("`store` is not false, yet the whole conversation is sent".to_owned());
    }
    let Some(items) = body["input"].as_array() else {
        problems.push("no `input` array".to_owned());
        return;
    };
    let mut open: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item["type"].as_str() {
            Some("function_call") => {
                let id = item["call_id"].as_str().unwrap_or("");
                if !issued(s, id, item["name"].as_str().unwrap_or("")) {
                    problems.push(format!("item {i} is a call the model never made"));
                }
                open.push(id.to_owned());
            }
            Some("function_call_output") => {
                let id = item["call_id"].as_str().unwrap_or("");
                match open.iter().position(|o| o == id) {
                    Some(p) => {
                        open.remove(p);
                    }
                    None => problems.push(format!("item {i} answers `{id}`, which is not open")),
                }
                if !item["output"].is_string() {
                    problems.push(format!("item {i}: `output` is not a string"));
                }
            }
            _ => {
                if !open.is_empty() {
                    problems.push(format!("item {i} comes before the results of {open:?}"));
                }
                if !matches!(item["role"].as_str(), Some("user" | "assistant")) {
                    problems.push(format!("item {i} has no known role or type"));
                }
            }
        }
    }
    if !open.is_empty() {
        problems.push(format!("calls {open:?} have no output"));
    }
}

fn check_anthropic(s: &Shared, body: &Value, problems: &mut Vec<String>) {
    if !body["max_tokens"].is_u64() {
        problems.push("no `max_tokens`".to_owned());
    }
    let Some(messages) = body["messages"].as_array() else {
        problems.push("no `messages` array".to_owned());
        return;
    };
    let mut expected_role = "user";
    let mut pending: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role != expected_role {
            problems.push(format!(
                "message {i} is `{role}`; roles must alternate from `user`"
            ));
        }
        expected_role = if role == "user" { "assistant" } else { "user" };
        let blocks = m["content"].as_array().cloned().unwrap_or_default();
        if role == "user" {
            let results: Vec<&Value> = blocks
                .iter()
                .take_while(|b| b["type"] == "tool_result")
                .collect();
            if blocks
                .iter()
                .skip(results.len())
                .any(|b| b["type"] == "tool_result")
            {
                problems.push(format!("message {i} has text before a tool_result"));
            }
            let answered: Vec<String> = results
                .iter()
                .map(|b| b["tool_use_id"].as_str().unwrap_or("").to_owned())
                .collect();
            if answered != pending {
                problems.push(format!(
                    "message {i} answers {answered:?}; the calls waiting were {pending:?}"
                ));
            }
            for b in results {
                if !b["is_error"].is_boolean() && !b["is_error"].is_null() {
                    problems.push(format!("message {i}: `is_error` is not a boolean"));
                }
            }
            pending.clear();
        } else {
            pending = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| {
                    let id = b["id"].as_str().unwrap_or("").to_owned();
                    if !issued(s, &id, b["name"].as_str().unwrap_or("")) || !b["input"].is_object()
                    {
                        problems.push(format!(
                            "message {i} has a tool_use the model never made: {b}"
                        ));
                    }
                    id
                })
                .collect();
        }
    }
    if !pending.is_empty() {
        problems.push(format!("calls {pending:?} have no tool_result"));
    }
}

fn check_gemini(s: &Shared, body: &Value, problems: &mut Vec<String>) {
    let Some(contents) = body["contents"].as_array() else {
        problems.push("no `contents` array".to_owned());
        return;
    };
    let mut pending: Vec<String> = Vec::new();
    for (i, c) in contents.iter().enumerate() {
        let parts = c["parts"].as_array().cloned().unwrap_or_default();
        match c["role"].as_str() {
            Some("model") => {
                if !pending.is_empty() {
                    problems.push(format!("content {i}: calls {pending:?} were not answered"));
                }
                pending = parts
                    .iter()
                    .filter_map(|p| p["functionCall"]["name"].as_str().map(str::to_owned))
                    .collect();
                for p in &parts {
                    let signed = s.signed.iter().find(|(call, _)| *call == p["functionCall"]);
                    if let Some((_, signature)) = signed
                        && p["thoughtSignature"] != json!(signature)
                    {
                        problems.push(format!(
                            "content {i}: the thought signature of the model's call was not sent back"
                        ));
                    }
                }
            }
            Some("user") => {
                let answered: Vec<String> = parts
                    .iter()
                    .take_while(|p| p.get("functionResponse").is_some())
                    .map(|p| {
                        let r = &p["functionResponse"]["response"];
                        if r.get("output").is_some() == r.get("error").is_some() {
                            problems.push(format!(
                                "content {i}: a functionResponse needs exactly one of `output` and `error`"
                            ));
                        }
                        p["functionResponse"]["name"].as_str().unwrap_or("").to_owned()
                    })
                    .collect();
                if answered != pending {
                    problems.push(format!(
                        "content {i} answers {answered:?}; the calls waiting were {pending:?}"
                    ));
                }
                pending.clear();
            }
            other => problems.push(format!("content {i} has role {other:?}")),
        }
    }
}
