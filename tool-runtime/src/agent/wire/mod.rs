//! The providers' wire formats: a neutral conversation written as each API's request, and each
//! API's reply read back. One file per API; nothing here sends anything (see `client`).

mod anthropic;
mod gemini;
mod openai_chat;
mod openai_responses;

use serde_json::{Value, json};

pub(crate) use openai_chat::ChatStream;

use super::model::{Api, Model};
use super::transcript::{Message, ToolCall, ToolResult, Usage};

/// One request: the model, the system prompt, the conversation and the tool specs (entries of
/// the lowered specs for the model's API; for Gemini, the function declarations).
pub(crate) struct Request<'a> {
    pub model: &'a Model,
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [Value],
}

/// A model's reply, read from any API.
#[derive(Debug, Default)]
pub(crate) struct Reply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// The reply in the API's own form, when it must be sent back as is.
    pub native: Option<Value>,
}

/// The URL a request for `model` goes to.
pub(crate) fn url(model: &Model) -> String {
    let base = &model.base_url;
    match model.api {
        Api::OpenAiChat | Api::OpenAiCompatible => format!("{base}/chat/completions"),
        Api::OpenAiResponses => format!("{base}/responses"),
        Api::Anthropic => format!("{base}/v1/messages"),
        Api::Gemini => format!("{base}/v1beta/models/{}:generateContent", model.name),
    }
}

/// The headers the API wants besides `content-type`: the key (marked sensitive) and versions.
pub(crate) fn headers(model: &Model) -> Vec<(&'static str, String, bool)> {
    let key = model.api_key.as_ref().map(|k| k.expose().clone());
    let mut headers = Vec::new();
    match model.api {
        Api::OpenAiChat | Api::OpenAiResponses | Api::OpenAiCompatible => {
            if let Some(key) = key {
                headers.push(("authorization", format!("Bearer {key}"), true));
            }
        }
        Api::Anthropic => {
            if let Some(key) = key {
                headers.push(("x-api-key", key, true));
            }
            headers.push(("anthropic-version", anthropic::VERSION.to_owned(), false));
        }
        Api::Gemini => {
            if let Some(key) = key {
                headers.push(("x-goog-api-key", key, true));
            }
        }
    }
    headers
}

/// The request body.
pub(crate) fn body(request: &Request<'_>) -> Value {
    match request.model.api {
        Api::OpenAiChat | Api::OpenAiCompatible => openai_chat::body(request),
        Api::OpenAiResponses => openai_responses::body(request),
        Api::Anthropic => anthropic::body(request),
        Api::Gemini => gemini::body(request),
    }
}

/// Whether requests to `model` stream.
pub(crate) fn streams(model: &Model) -> bool {
    model.stream && matches!(model.api, Api::OpenAiChat | Api::OpenAiCompatible)
}

/// Reads a whole (not streamed) reply.
pub(crate) fn parse(api: Api, body: &Value) -> Result<Reply, String> {
    match api {
        Api::OpenAiChat | Api::OpenAiCompatible => openai_chat::parse(body),
        Api::OpenAiResponses => openai_responses::parse(body),
        Api::Anthropic => anthropic::parse(body),
        Api::Gemini => gemini::parse(body),
    }
}

/// The message of a provider's error answer: every API nests it as `error.message`.
pub(crate) fn error_message(body: &[u8]) -> String {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.pointer("/message"))
            .and_then(Value::as_str)
    });
    if let Some(m) = message {
        return m.to_owned();
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match text.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// What the model is told of a result: a string result as it is, anything else as JSON text.
pub(crate) fn result_text(result: &ToolResult) -> String {
    match &result.content {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A call's arguments as a JSON object, for APIs that send them as one (arguments that are not
/// an object, from a model on another API, become `{}`).
pub(crate) fn arguments_object(call: &ToolCall) -> Value {
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

/// The native form of an assistant message, if it came from `api`.
pub(crate) fn native_for(api: Api, message_native: Option<&(Api, Value)>) -> Option<&Value> {
    message_native.filter(|(a, _)| *a == api).map(|(_, v)| v)
}

fn u64_at(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}
