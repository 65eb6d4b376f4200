//! The OpenAI Responses API (`POST /v1/responses`), stateless (`store: false`: the whole
//! conversation is sent each turn): <https://platform.openai.com/docs/api-reference/responses>.

use serde_json::{Value, json};

use super::{Reply, Request, result_text, u64_at};
use crate::agent::transcript::{Message, Refusal, ToolCall, Usage};

pub(super) fn body(request: &Request<'_>) -> Value {
    let mut input = Vec::with_capacity(request.messages.len());
    for message in request.messages {
        match message {
            Message::User { text } => input.push(json!({"role": "user", "content": text})),
            Message::Assistant {
                text, tool_calls, ..
            } => {
                if !text.is_empty() {
                    input.push(json!({"role": "assistant", "content": text}));
                }
                for c in tool_calls {
                    input.push(json!({
                        "type": "function_call",
                        "call_id": c.id,
                        "name": c.name,
                        "arguments": c.arguments,
                    }));
                }
            }
            Message::Tool { results } => {
                for r in results {
                    input.push(json!({
                        "type": "function_call_output",
                        "call_id": r.call_id,
                        "output": result_text(r),
                    }));
                }
            }
        }
    }
    let mut body = json!({
        "model": request.model.name,
        "input": input,
        "store": false,
        "max_output_tokens": request.model.max_output_tokens,
    });
    if !request.system.is_empty() {
        body["instructions"] = json!(request.system);
    }
    if !request.tools.is_empty() {
        body["tools"] = Value::Array(request.tools.to_vec());
    }
    if super::streams(request.model) {
        body["stream"] = json!(true);
    }
    body
}

pub(super) fn parse(body: &Value) -> Result<Reply, String> {
    let output = body
        .get("output")
        .and_then(Value::as_array)
        .ok_or("the reply has no `output` array")?;
    let mut reply = Reply::default();
    let mut refused = String::new();
    for (i, item) in output.iter().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => {
                            if let Some(text) = part.get("text").and_then(Value::as_str) {
                                reply.text.push_str(text);
                            }
                        }
                        Some("refusal") => {
                            if let Some(said) = part.get("refusal").and_then(Value::as_str) {
                                refused.push_str(said);
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some("function_call") => {
                let name = item
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("output item {i} is a function call without `name`"))?;
                reply.tool_calls.push(ToolCall {
                    id: item
                        .get("call_id")
                        .and_then(Value::as_str)
                        .map_or_else(|| format!("call_{i}"), str::to_owned),
                    name: name.to_owned(),
                    arguments: item
                        .get("arguments")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                });
            }
            // Reasoning and other items are not sent back: without `store` they could not be
            // referred to.
            _ => {}
        }
    }
    reply.usage = usage(body);
    let filtered = body
        .pointer("/incomplete_details/reason")
        .and_then(Value::as_str)
        == Some("content_filter");
    if !refused.is_empty() {
        reply.refusal = Some(Refusal::new(refused, "refusal"));
    } else if filtered && reply.tool_calls.is_empty() {
        reply.refusal = Some(Refusal::new(reply.text.clone(), "content_filter"));
    }
    Ok(reply)
}

/// Responses usage (also in `response.completed`): `input_tokens` includes those read from and
/// written to the cache, `output_tokens` the reasoning ones.
pub(super) fn usage(response: &Value) -> Usage {
    Usage {
        input_tokens: u64_at(response, "/usage/input_tokens"),
        output_tokens: u64_at(response, "/usage/output_tokens"),
        cache_read_tokens: u64_at(response, "/usage/input_tokens_details/cached_tokens"),
        cache_write_tokens: u64_at(response, "/usage/input_tokens_details/cache_write_tokens"),
        reasoning_tokens: u64_at(response, "/usage/output_tokens_details/reasoning_tokens"),
    }
}

/// A streamed Responses reply: text from `response.output_text.delta` events as it comes; the
/// reply itself from the response that `response.completed` (or `response.incomplete`) carries
/// whole. (`error` and `response.failed` are read by `Stream`.)
#[derive(Debug, Default)]
pub(crate) struct ResponsesStream {
    done: Option<Value>,
}

impl ResponsesStream {
    /// Takes one event's data; returns the text it adds.
    pub(crate) fn event(&mut self, data: &str) -> Result<Option<String>, String> {
        let event: Value = serde_json::from_str(data)
            .map_err(|e| format!("a streamed event is not JSON ({e})"))?;
        match event.get("type").and_then(Value::as_str) {
            Some("response.output_text.delta") => Ok(event
                .get("delta")
                .and_then(Value::as_str)
                .map(str::to_owned)),
            Some("response.completed" | "response.incomplete") => {
                let response = event
                    .get("response")
                    .ok_or("a `response.completed` event without its response")?;
                self.done = Some(response.clone());
                Ok(None)
            }
            _ => Ok(None),
        }
    }

    /// Whether the last event came.
    pub(crate) fn is_done(&self) -> bool {
        self.done.is_some()
    }

    pub(crate) fn finish(self) -> Result<Reply, String> {
        let response = self
            .done
            .ok_or("the stream ended before `response.completed`")?;
        parse(&response)
    }
}
