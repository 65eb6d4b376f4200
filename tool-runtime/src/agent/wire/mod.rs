//! The providers' wire formats: a neutral conversation written as each API's request, and each
//! API's reply read back. One file per API; nothing here sends anything (see `client`).

mod anthropic;
mod gemini;
mod openai_chat;
mod openai_responses;

use serde_json::{Value, json};

use anthropic::AnthropicStream;
use gemini::GeminiStream;
use openai_chat::ChatStream;
use openai_responses::ResponsesStream;

use super::model::{Api, Model};
use super::transcript::{Message, Refusal, ToolCall, ToolResult, Usage};

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
    /// The model refused, or the provider stopped the reply for safety.
    pub refusal: Option<Refusal>,
}

/// What a reply says of itself, whatever the API: its id, the model that wrote it, why it
/// stopped. Read for the reply's span only; nothing else depends on it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ResponseInfo {
    pub id: Option<String>,
    pub model: Option<String>,
    pub finish_reasons: Vec<String>,
}

impl ResponseInfo {
    /// Takes what `value`, a whole reply or one streamed event of `api`, says of the reply.
    /// Later events win: a stream's last finish reason, not an `in_progress` status.
    pub(crate) fn note(&mut self, api: Api, value: &Value) {
        let text = |pointer: &str| value.pointer(pointer).and_then(Value::as_str);
        let (id, model, finish) = match api {
            Api::OpenAiChat | Api::OpenAiCompatible => (
                text("/id"),
                text("/model"),
                text("/choices/0/finish_reason"),
            ),
            // A whole response, or a streamed `response.*` event holding one.
            Api::OpenAiResponses => {
                let at = if value.get("response").is_some_and(Value::is_object) {
                    "/response"
                } else {
                    ""
                };
                let field = |name: &str| text(&format!("{at}/{name}"));
                let finish = field("incomplete_details/reason").or_else(|| field("status"));
                (field("id"), field("model"), finish)
            }
            // A whole message, `message_start` (`message`) or `message_delta` (`delta`).
            Api::Anthropic => (
                text("/message/id").or_else(|| text("/id")),
                text("/message/model").or_else(|| text("/model")),
                text("/delta/stop_reason").or_else(|| text("/stop_reason")),
            ),
            Api::Gemini => (
                text("/responseId"),
                text("/modelVersion"),
                text("/candidates/0/finishReason"),
            ),
        };
        if let Some(id) = id {
            self.id = Some(id.to_owned());
        }
        if let Some(model) = model {
            self.model = Some(model.to_owned());
        }
        if let Some(finish) = finish {
            self.finish_reasons = vec![finish.to_owned()];
        }
    }
}

/// The URL a request for `model` goes to.
pub(crate) fn url(model: &Model) -> String {
    let base = &model.base_url;
    match model.api {
        Api::OpenAiChat | Api::OpenAiCompatible => format!("{base}/chat/completions"),
        Api::OpenAiResponses => format!("{base}/responses"),
        Api::Anthropic => format!("{base}/v1/messages"),
        Api::Gemini if streams(model) => format!(
            "{base}/v1beta/models/{}:streamGenerateContent?alt=sse",
            model.name
        ),
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
            match key {
                Some(token) if model.bearer => {
                    headers.push(("authorization", format!("Bearer {token}"), true));
                }
                Some(key) => headers.push(("x-api-key", key, true)),
                None => {}
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
    model.stream
}

/// A streamed reply being put together from its server-sent events, whatever the API.
#[derive(Debug)]
pub(crate) enum Stream {
    Chat(ChatStream),
    Responses(ResponsesStream),
    Anthropic(AnthropicStream),
    Gemini(GeminiStream),
}

impl Stream {
    pub(crate) fn new(api: Api) -> Self {
        match api {
            Api::OpenAiChat | Api::OpenAiCompatible => Stream::Chat(ChatStream::default()),
            Api::OpenAiResponses => Stream::Responses(ResponsesStream::default()),
            Api::Anthropic => Stream::Anthropic(AnthropicStream::default()),
            Api::Gemini => Stream::Gemini(GeminiStream::default()),
        }
    }

    /// Takes one event's data; returns the text it adds.
    pub(crate) fn event(&mut self, data: &str) -> Result<Option<String>, Fault> {
        if data.contains("\"error\"")
            && let Some(message) = stream_error(data)
        {
            return Err(Fault::Provider(message));
        }
        match self {
            Stream::Chat(s) => s.chunk(data),
            Stream::Responses(s) => s.event(data),
            Stream::Anthropic(s) => s.event(data),
            Stream::Gemini(s) => s.event(data),
        }
        .map_err(Fault::Malformed)
    }

    /// Whether the API's last event came: the reply is whole.
    pub(crate) fn is_done(&self) -> bool {
        match self {
            Stream::Chat(s) => s.is_done(),
            Stream::Responses(s) => s.is_done(),
            Stream::Anthropic(s) => s.is_done(),
            Stream::Gemini(s) => s.is_done(),
        }
    }

    /// The reply; an error if the stream ended before it was whole.
    pub(crate) fn finish(self) -> Result<Reply, String> {
        match self {
            Stream::Chat(s) => s.finish(),
            Stream::Responses(s) => s.finish(),
            Stream::Anthropic(s) => s.finish(),
            Stream::Gemini(s) => s.finish(),
        }
    }
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

/// Why a stream could not be read.
#[derive(Debug)]
pub(crate) enum Fault {
    /// The provider reported an error in the stream (an `error` event, a failed response).
    Provider(String),
    /// An event that is not what the API promises.
    Malformed(String),
}

/// The message of an error event: `{"error": {"message"}}` (Chat Completions, Gemini, and
/// Anthropic's `error` event), `{"type": "error", "message"}` and `response.failed` (Responses).
fn stream_error(data: &str) -> Option<String> {
    let event: Value = serde_json::from_str(data).ok()?;
    let message = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    match event.get("type").and_then(Value::as_str) {
        Some("error") => message(event.pointer("/error/message"))
            .or_else(|| message(event.get("message")))
            .or_else(|| Some("the stream reported an error".to_owned())),
        Some("response.failed") => message(event.pointer("/response/error/message"))
            .or_else(|| Some("the response failed".to_owned())),
        Some(_) => None,
        None => message(event.pointer("/error/message")),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn noted(api: Api, values: &[Value]) -> ResponseInfo {
        let mut info = ResponseInfo::default();
        for v in values {
            info.note(api, v);
        }
        info
    }

    fn info(id: &str, model: &str, finish: &str) -> ResponseInfo {
        ResponseInfo {
            id: Some(id.to_owned()),
            model: Some(model.to_owned()),
            finish_reasons: vec![finish.to_owned()],
        }
    }

    #[test]
    fn response_info_is_read_from_whole_replies_and_streams_of_every_api() {
        let chunk = |finish: Value| json!({"id": "chatcmpl-1", "model": "gpt-x", "choices": [{"delta": {}, "finish_reason": finish}]});
        assert_eq!(
            noted(Api::OpenAiChat, &[chunk(Value::Null), chunk(json!("stop"))]),
            info("chatcmpl-1", "gpt-x", "stop")
        );
        let response = |status: &str| json!({"id": "resp_1", "model": "gpt-x", "status": status});
        assert_eq!(
            noted(Api::OpenAiResponses, &[response("completed")]),
            info("resp_1", "gpt-x", "completed")
        );
        let events = [
            json!({"type": "response.created", "response": response("in_progress")}),
            json!({"type": "response.output_item.added", "item": {"id": "fc_1"}}),
            json!({"type": "response.incomplete", "response": {
                "id": "resp_1", "model": "gpt-x", "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"}}}),
        ];
        assert_eq!(
            noted(Api::OpenAiResponses, &events),
            info("resp_1", "gpt-x", "max_output_tokens")
        );
        let message =
            json!({"id": "msg_1", "type": "message", "model": "claude-x", "stop_reason": null});
        let events = [
            json!({"type": "message_start", "message": message}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1"}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        ];
        assert_eq!(
            noted(Api::Anthropic, &events),
            info("msg_1", "claude-x", "tool_use")
        );
        let mut whole = message;
        whole["stop_reason"] = json!("end_turn");
        assert_eq!(
            noted(Api::Anthropic, &[whole]),
            info("msg_1", "claude-x", "end_turn")
        );
        let gemini = json!({"responseId": "r1", "modelVersion": "gemini-x",
                            "candidates": [{"finishReason": "STOP"}]});
        assert_eq!(
            noted(Api::Gemini, &[gemini]),
            info("r1", "gemini-x", "STOP")
        );
    }
}
