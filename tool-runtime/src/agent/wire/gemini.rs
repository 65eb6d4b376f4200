//! Gemini `generateContent` (API `v1beta`):
//! <https://ai.google.dev/api/generate-content>. Tool calls are `functionCall` parts of a
//! `model` turn; results are `functionResponse` parts of the next `user` turn, with the result
//! under `response.output` or the failure under `response.error`.

use serde_json::{Value, json};

use super::{Reply, Request, arguments_object, native_for, u64_at};
use crate::agent::model::Api;
use crate::agent::transcript::{Message, ToolCall, Usage};

/// The prefix of ids made up for calls that came without one (they are not sent back).
const MADE_UP: &str = "gemini-call-";

pub(super) fn body(request: &Request<'_>) -> Value {
    let mut contents: Vec<Value> = Vec::with_capacity(request.messages.len());
    for message in request.messages {
        let (role, parts) = match message {
            Message::User { text } => ("user", vec![json!({"text": text})]),
            Message::Assistant {
                text,
                tool_calls,
                native,
                ..
            } => {
                if let Some(content) = native_for(Api::Gemini, native.as_ref()) {
                    let parts = content.get("parts").and_then(Value::as_array);
                    ("model", parts.cloned().unwrap_or_default())
                } else {
                    let mut parts = Vec::new();
                    if !text.is_empty() {
                        parts.push(json!({"text": text}));
                    }
                    for c in tool_calls {
                        let mut call = json!({"name": c.name, "args": arguments_object(c)});
                        if !c.id.starts_with(MADE_UP) {
                            call["id"] = json!(c.id);
                        }
                        parts.push(json!({"functionCall": call}));
                    }
                    ("model", parts)
                }
            }
            Message::Tool { results } => (
                "user",
                results
                    .iter()
                    .map(|r| {
                        let key = if r.is_error { "error" } else { "output" };
                        let mut response = json!({"name": r.name, "response": {key: r.content}});
                        if !r.call_id.starts_with(MADE_UP) {
                            response["id"] = json!(r.call_id);
                        }
                        json!({"functionResponse": response})
                    })
                    .collect(),
            ),
        };
        match contents.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(p) = last["parts"].as_array_mut() {
                    p.extend(parts);
                }
            }
            _ => contents.push(json!({"role": role, "parts": parts})),
        }
    }
    let mut body = json!({
        "contents": contents,
        "generationConfig": {"maxOutputTokens": request.model.max_output_tokens},
    });
    if !request.system.is_empty() {
        body["systemInstruction"] = json!({"parts": [{"text": request.system}]});
    }
    if !request.tools.is_empty() {
        body["tools"] = json!([{"functionDeclarations": request.tools}]);
    }
    body
}

pub(super) fn parse(body: &Value) -> Result<Reply, String> {
    let content = body.pointer("/candidates/0/content").ok_or_else(|| {
        match body
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
        {
            Some(reason) => format!("the prompt was blocked ({reason})"),
            None => "the reply has no `candidates[0].content`".to_owned(),
        }
    })?;
    let mut reply = Reply::default();
    for (i, part) in content
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(call) = part.get("functionCall") {
            let name = call
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("part {i} is a `functionCall` without `name`"))?;
            reply.tool_calls.push(ToolCall {
                id: call
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("{MADE_UP}{i}"), str::to_owned),
                name: name.to_owned(),
                arguments: call.get("args").unwrap_or(&json!({})).to_string(),
            });
        } else if part.get("thought").and_then(Value::as_bool) != Some(true)
            && let Some(text) = part.get("text").and_then(Value::as_str)
        {
            reply.text.push_str(text);
        }
    }
    reply.usage = Usage {
        input_tokens: u64_at(body, "/usageMetadata/promptTokenCount"),
        output_tokens: u64_at(body, "/usageMetadata/candidatesTokenCount")
            + u64_at(body, "/usageMetadata/thoughtsTokenCount"),
    };
    reply.native = Some(content.clone());
    Ok(reply)
}
