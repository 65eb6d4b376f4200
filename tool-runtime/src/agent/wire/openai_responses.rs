//! The OpenAI Responses API (`POST /v1/responses`), stateless (`store: false`: the whole
//! conversation is sent each turn): <https://platform.openai.com/docs/api-reference/responses>.

use serde_json::{Value, json};

use super::{Reply, Request, result_text, u64_at};
use crate::agent::transcript::{Message, ToolCall, Usage};

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
    body
}

pub(super) fn parse(body: &Value) -> Result<Reply, String> {
    let output = body
        .get("output")
        .and_then(Value::as_array)
        .ok_or("the reply has no `output` array")?;
    let mut reply = Reply::default();
    for (i, item) in output.iter().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if part.get("type").and_then(Value::as_str) == Some("output_text")
                        && let Some(text) = part.get("text").and_then(Value::as_str)
                    {
                        reply.text.push_str(text);
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
    reply.usage = Usage {
        input_tokens: u64_at(body, "/usage/input_tokens"),
        output_tokens: u64_at(body, "/usage/output_tokens"),
    };
    Ok(reply)
}
