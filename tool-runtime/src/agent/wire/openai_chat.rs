//! OpenAI Chat Completions (`POST /v1/chat/completions`), also spoken by OpenAI-compatible
//! servers: <https://platform.openai.com/docs/api-reference/chat/create>.

use serde_json::{Value, json};

use super::{Reply, Request, result_text, u64_at};
use crate::agent::model::Api;
use crate::agent::transcript::{Message, Refusal, ToolCall, Usage};

pub(super) fn body(request: &Request<'_>) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in request.messages {
        match message {
            Message::User { text } => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let mut m = json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { json!(text) },
                });
                if !tool_calls.is_empty() {
                    m["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments},
                            })
                        })
                        .collect();
                }
                messages.push(m);
            }
            Message::Tool { results } => {
                for r in results {
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": r.call_id,
                        "content": result_text(r),
                    }));
                }
            }
        }
    }
    let mut body = json!({"model": request.model.name, "messages": messages});
    if !request.tools.is_empty() {
        body["tools"] = Value::Array(request.tools.to_vec());
    }
    let limit = if request.model.api == Api::OpenAiCompatible {
        "max_tokens"
    } else {
        "max_completion_tokens"
    };
    body[limit] = json!(request.model.max_output_tokens);
    if super::streams(request.model) {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

pub(super) fn parse(body: &Value) -> Result<Reply, String> {
    let message = body
        .pointer("/choices/0/message")
        .ok_or("the reply has no `choices[0].message`")?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut tool_calls = Vec::new();
    for (i, call) in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("tool call {i} has no `function.name`"))?;
        tool_calls.push(ToolCall {
            id: call
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{i}"), str::to_owned),
            name: name.to_owned(),
            arguments: match call.pointer("/function/arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            },
        });
    }
    let said = message
        .get("refusal")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let finish = body
        .pointer("/choices/0/finish_reason")
        .and_then(Value::as_str);
    let refusal = refusal(said, finish, &text, tool_calls.is_empty());
    Ok(Reply {
        text,
        tool_calls,
        usage: usage(body),
        native: None,
        refusal,
    })
}

/// A refusal: the model's own (`refusal`, whole or streamed), or a reply the content filter
/// stopped (`finish_reason: content_filter`) with no call to run.
fn refusal(said: &str, finish: Option<&str>, text: &str, no_calls: bool) -> Option<Refusal> {
    if !said.is_empty() {
        Some(Refusal::new(said, "refusal"))
    } else if finish == Some("content_filter") && no_calls {
        Some(Refusal::new(text, "content_filter"))
    } else {
        None
    }
}

/// Chat Completions usage: `prompt_tokens` includes those read from and written to the cache,
/// `completion_tokens` the reasoning ones.
fn usage(body: &Value) -> Usage {
    Usage {
        input_tokens: u64_at(body, "/usage/prompt_tokens"),
        output_tokens: u64_at(body, "/usage/completion_tokens"),
        cache_read_tokens: u64_at(body, "/usage/prompt_tokens_details/cached_tokens"),
        cache_write_tokens: u64_at(body, "/usage/prompt_tokens_details/cache_write_tokens"),
        reasoning_tokens: u64_at(body, "/usage/completion_tokens_details/reasoning_tokens"),
    }
}

/// A streamed reply being assembled from its chunks: text deltas in order, tool calls by
/// `index` (the id and name come first, the arguments in pieces), usage in the last chunk.
#[derive(Debug, Default)]
pub(crate) struct ChatStream {
    text: String,
    calls: Vec<(String, String, String)>,
    usage: Usage,
    refusal: String,
    finish: Option<String>,
    done: bool,
}

impl ChatStream {
    /// Takes one chunk (the `data` of one server-sent event); returns the text it adds.
    pub(crate) fn chunk(&mut self, data: &str) -> Result<Option<String>, String> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(None);
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| format!("a streamed chunk is not JSON ({e})"))?;
        if chunk.get("usage").is_some_and(Value::is_object) {
            self.usage = usage(&chunk);
        }
        if let Some(finish) = chunk
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
        {
            self.finish = Some(finish.to_owned());
        }
        let Some(delta) = chunk.pointer("/choices/0/delta") else {
            return Ok(None);
        };
        if let Some(said) = delta.get("refusal").and_then(Value::as_str) {
            self.refusal.push_str(said);
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(self.calls.len());
            if index > self.calls.len() + 64 {
                return Err(format!("a streamed tool call has index {index}"));
            }
            while self.calls.len() <= index {
                self.calls.push(Default::default());
            }
            let slot = &mut self.calls[index];
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                id.clone_into(&mut slot.0);
            }
            if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                slot.1.push_str(name);
            }
            if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str) {
                slot.2.push_str(args);
            }
        }
        match delta.get("content").and_then(Value::as_str) {
            Some(text) if !text.is_empty() => {
                self.text.push_str(text);
                Ok(Some(text.to_owned()))
            }
            _ => Ok(None),
        }
    }

    /// Whether `[DONE]` came.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// The reply. Servers that send no `[DONE]` end with the finish reason (and usage).
    pub(crate) fn finish(self) -> Result<Reply, String> {
        if !self.done && self.finish.is_none() {
            return Err("the stream ended before the reply's finish reason".to_owned());
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (i, (id, name, arguments)) in self.calls.into_iter().enumerate() {
            if name.is_empty() {
                return Err(format!("streamed tool call {i} has no name"));
            }
            tool_calls.push(ToolCall {
                id: if id.is_empty() {
                    format!("call_{i}")
                } else {
                    id
                },
                name,
                arguments,
            });
        }
        let refusal = refusal(
            &self.refusal,
            self.finish.as_deref(),
            &self.text,
            tool_calls.is_empty(),
        );
        Ok(Reply {
            text: self.text,
            tool_calls,
            usage: self.usage,
            native: None,
            refusal,
        })
    }
}
