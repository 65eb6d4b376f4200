//! Anthropic Messages (`POST /v1/messages`, `anthropic-version: 2023-06-01`):
//! <https://docs.claude.com/en/api/messages>. Tool results travel as `tool_result` blocks at
//! the start of the next user message, before any text, one per `tool_use` block.

use serde_json::{Value, json};

use super::{Reply, Request, arguments_object, native_for, result_text, u64_at};
use crate::agent::model::Api;
use crate::agent::transcript::{Message, Refusal, ToolCall, Usage};

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
                    let blocks = content.as_array().into_iter().flatten();
                    ("assistant", blocks.filter_map(request_block).collect())
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
    if super::streams(request.model) {
        body["stream"] = json!(true);
    }
    body
}

/// A block of a reply as the next request sends it back: the fields the request's block type
/// defines, and nothing a reply may carry besides (citations, which requests word otherwise,
/// or any field a newer API adds). Thinking keeps its signature, a call its id; a block of a
/// type requests do not take is left out.
fn request_block(block: &Value) -> Option<Value> {
    let keep: &[&str] = match block.get("type").and_then(Value::as_str)? {
        "text" => &["type", "text"],
        "tool_use" => &["type", "id", "name", "input"],
        "thinking" => &["type", "thinking", "signature"],
        "redacted_thinking" => &["type", "data"],
        _ => return None,
    };
    let fields = block.as_object()?;
    Some(Value::Object(
        keep.iter()
            .filter_map(|k| fields.get(*k).map(|v| ((*k).to_owned(), v.clone())))
            .collect(),
    ))
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
    reply.usage = usage(body.get("usage").unwrap_or(&Value::Null));
    if body.get("stop_reason").and_then(Value::as_str) == Some("refusal") {
        reply.refusal = Some(Refusal::new(std::mem::take(&mut reply.text), "refusal"));
        reply.tool_calls.clear();
    }
    reply.native = Some(Value::Array(content.clone()));
    Ok(reply)
}

/// Anthropic usage: `input_tokens` counts only what was neither read from nor written to the
/// prompt cache, so the three are added.
pub(super) fn usage(usage: &Value) -> Usage {
    let read = u64_at(usage, "/cache_read_input_tokens");
    let written = u64_at(usage, "/cache_creation_input_tokens");
    Usage {
        input_tokens: u64_at(usage, "/input_tokens") + read + written,
        output_tokens: u64_at(usage, "/output_tokens"),
        cache_read_tokens: read,
        cache_write_tokens: written,
        reasoning_tokens: 0,
    }
}

/// A streamed Messages reply, put back together into the message it streams: `message_start`
/// (the message, its input usage), `content_block_start` / `_delta` / `_stop` per block (text,
/// a tool call's input as JSON in pieces, thinking and its signature), `message_delta` (the
/// stop reason, the output usage), `message_stop`. `ping`s are skipped (an `error` event is
/// read by `Stream`).
#[derive(Debug, Default)]
pub(crate) struct AnthropicStream {
    message: Option<Value>,
    blocks: Vec<Value>,
    /// Per block, a tool call's input as streamed so far.
    inputs: Vec<String>,
    stopped: bool,
}

impl AnthropicStream {
    /// Takes one event's data; returns the text it adds.
    pub(crate) fn event(&mut self, data: &str) -> Result<Option<String>, String> {
        let event: Value = serde_json::from_str(data)
            .map_err(|e| format!("a streamed event is not JSON ({e})"))?;
        let index = || {
            event
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .ok_or("a content block event without `index`")
        };
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                let message = event
                    .get("message")
                    .ok_or("a `message_start` without its message")?;
                self.message = Some(message.clone());
            }
            Some("content_block_start") => {
                let i = index()?;
                if i > self.blocks.len() + 64 {
                    return Err(format!("a streamed content block has index {i}"));
                }
                while self.blocks.len() <= i {
                    self.blocks.push(Value::Null);
                    self.inputs.push(String::new());
                }
                self.blocks[i] = event
                    .get("content_block")
                    .cloned()
                    .ok_or("a `content_block_start` without its block")?;
            }
            Some("content_block_delta") => {
                let i = index()?;
                let block = self
                    .blocks
                    .get_mut(i)
                    .ok_or_else(|| format!("a delta for content block {i}, never started"))?;
                let delta = event.get("delta").unwrap_or(&Value::Null);
                let piece = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        append(block, "text", piece("text"));
                        return Ok(Some(piece("text").to_owned()));
                    }
                    Some("input_json_delta") => self.inputs[i].push_str(piece("partial_json")),
                    Some("thinking_delta") => append(block, "thinking", piece("thinking")),
                    Some("signature_delta") => append(block, "signature", piece("signature")),
                    _ => {}
                }
            }
            Some("content_block_stop") => {
                let i = index()?;
                if let Some(block) = self.blocks.get_mut(i)
                    && block.get("type").and_then(Value::as_str) == Some("tool_use")
                    && !self.inputs[i].is_empty()
                {
                    block["input"] = serde_json::from_str(&self.inputs[i]).map_err(|e| {
                        format!("the streamed input of content block {i} is not JSON ({e})")
                    })?;
                }
            }
            Some("message_delta") => {
                let message = self
                    .message
                    .as_mut()
                    .ok_or("a `message_delta` before `message_start`")?;
                if let Some(delta) = event.get("delta").and_then(Value::as_object) {
                    for (k, v) in delta {
                        message[k] = v.clone();
                    }
                }
                // Cumulative counts: they replace the start's.
                if let Some(usage) = event.get("usage").and_then(Value::as_object) {
                    for (k, v) in usage {
                        if !v.is_null() {
                            message["usage"][k] = v.clone();
                        }
                    }
                }
            }
            Some("message_stop") => self.stopped = true,
            _ => {}
        }
        Ok(None)
    }

    /// Whether the last event came.
    pub(crate) fn is_done(&self) -> bool {
        self.stopped
    }

    pub(crate) fn finish(self) -> Result<Reply, String> {
        if !self.stopped {
            return Err("the stream ended before `message_stop`".to_owned());
        }
        let mut message = self.message.ok_or("the stream had no `message_start`")?;
        message["content"] =
            Value::Array(self.blocks.into_iter().filter(|b| !b.is_null()).collect());
        parse(&message)
    }
}

fn append(block: &mut Value, key: &str, piece: &str) {
    let mut text = block
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    text.push_str(piece);
    block[key] = json!(text);
}
