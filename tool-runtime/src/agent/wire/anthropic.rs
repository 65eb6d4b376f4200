//! Anthropic Messages (`POST /v1/messages`, `anthropic-version: 2023-06-01`):
//! <https://docs.claude.com/en/api/messages>. Tool results travel as `tool_result` blocks at
//! the start of the next user message, before any text, one per `tool_use` block.

use serde_json::{Value, json};

use super::{Reply, Request, arguments_object, native_for, result_text, u64_at};
use crate::agent::model::Api;
use crate::agent::transcript::{Message, ToolCall, Usage};

/// The API version sent in `anthropic-version`.
pub(super) const VERSION: &str = "2023-06-01";

pub(super) fn body(request: &Request<'_>) -> Value {
    let mut messages: Vec<Value> = Vec::with_capacity(request.messages.len());
    for message in request.messages {
        let (role, blocks) = match message {
            Message::User { text } => ("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant {
                text,
                tool_calls,
                native,
                ..
            } => {
                if let Some(content) = native_for(Api::Anthropic, native.as_ref()) {
                    ("assistant", content.as_array().cloned().unwrap_or_default())
                } else {
                    let mut blocks = Vec::new();
                    if !text.is_empty() {
                        blocks.push(json!({"type": "text", "text": text}));
                    }
                    for c in tool_calls {
                        blocks.push(json!({
                            "type": "tool_use",
                            "id": c.id,
                            "name": c.name,
                            "input": arguments_object(c),
                        }));
                    }
                    ("assistant", blocks)
                }
            }
            Message::Tool { results } => (
                "user",
                results
                    .iter()
                    .map(|r| {
                        json!({
                            "type": "tool_result",
                            "tool_use_id": r.call_id,
                            "content": result_text(r),
                            "is_error": r.is_error,
                        })
                    })
                    .collect(),
            ),
        };
        // Roles alternate: a user's text after tool results joins their message, after them.
        match messages.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(content) = last["content"].as_array_mut() {
                    content.extend(blocks);
                }
            }
            _ => messages.push(json!({"role": role, "content": blocks})),
        }
    }
    let mut body = json!({
        "model": request.model.name,
        "max_tokens": request.model.max_output_tokens,
        "messages": messages,
    });
    if !request.system.is_empty() {
        body["system"] = json!(request.system);
    }
    if !request.tools.is_empty() {
        body["tools"] = Value::Array(request.tools.to_vec());
    }
    body
}

pub(super) fn parse(body: &Value) -> Result<Reply, String> {
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or("the reply has no `content` array")?;
    let mut reply = Reply::default();
    for (i, block) in content.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = block.get("text").and_then(Value::as_str) {
                    reply.text.push_str(text);
                }
            }
            Some("tool_use") => {
                let (Some(id), Some(name)) = (
                    block.get("id").and_then(Value::as_str),
                    block.get("name").and_then(Value::as_str),
                ) else {
                    return Err(format!(
                        "content block {i} is a `tool_use` without id or name"
                    ));
                };
                reply.tool_calls.push(ToolCall {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    arguments: block.get("input").unwrap_or(&json!({})).to_string(),
                });
            }
            _ => {}
        }
    }
    reply.usage = Usage {
        input_tokens: u64_at(body, "/usage/input_tokens"),
        output_tokens: u64_at(body, "/usage/output_tokens"),
    };
    reply.native = Some(Value::Array(content.clone()));
    Ok(reply)
}
