//! Gemini `generateContent` (API `v1beta`):
//! <https://ai.google.dev/api/generate-content>. Tool calls are `functionCall` parts of a
//! `model` turn; results are `functionResponse` parts of the next `user` turn, with the result
//! under `response.output` or the failure under `response.error`.

use serde_json::{Value, json};

use super::{Reply, Request, arguments_object, native_for, u64_at};
use crate::agent::model::Api;
use crate::agent::transcript::{Message, Refusal, ToolCall, Usage};

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
                    (
                        "model",
                        parts
                            .into_iter()
                            .flatten()
                            .filter_map(request_part)
                            .collect(),
                    )
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

/// A part of a reply as the next request sends it back: the `Part` fields a model turn's
/// content takes, the thought signature among them; a call with its id, name and arguments
/// only. Fields a newer API adds to replies are not sent back; a part left with none of these
/// is left out.
fn request_part(part: &Value) -> Option<Value> {
    const KEEP: &[&str] = &[
        "text",
        "thought",
        "thoughtSignature",
        "functionCall",
        "executableCode",
        "codeExecutionResult",
        "inlineData",
        "fileData",
    ];
    let mut kept: serde_json::Map<String, Value> = part
        .as_object()?
        .iter()
        .filter(|(k, _)| KEEP.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(Value::Object(call)) = kept.get_mut("functionCall") {
        call.retain(|k, _| matches!(k.as_str(), "id" | "name" | "args"));
    }
    (!kept.is_empty()).then_some(Value::Object(kept))
}

/// The `finishReason`s that stop a reply for what it would have said.
const SAFETY_STOPS: &[&str] = &[
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
];

pub(super) fn parse(body: &Value) -> Result<Reply, String> {
    let mut reply = Reply {
        usage: usage(body),
        ..Reply::default()
    };
    let Some(candidate) = body.pointer("/candidates/0") else {
        return match body
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
        {
            Some(reason) => {
                reply.refusal = Some(Refusal {
                    prompt_blocked: true,
                    safety_ratings: body.pointer("/promptFeedback/safetyRatings").cloned(),
                    ..Refusal::new("", reason)
                });
                Ok(reply)
            }
            None => Err("the reply has no `candidates[0]`".to_owned()),
        };
    };
    let finish = candidate.get("finishReason").and_then(Value::as_str);
    if let Some(reason) = finish.filter(|f| SAFETY_STOPS.contains(f)) {
        let mut refusal = Refusal::new("", reason);
        refusal.safety_ratings = candidate.get("safetyRatings").cloned();
        if let Some(content) = candidate.get("content") {
            read_parts(content, &mut reply)?;
            refusal.text = std::mem::take(&mut reply.text);
            reply.tool_calls.clear();
        }
        reply.refusal = Some(refusal);
        return Ok(reply);
    }
    let content = candidate.get("content").ok_or_else(|| match finish {
        Some(reason) => format!("the reply has no content (finishReason {reason})"),
        None => "the reply has no `candidates[0].content`".to_owned(),
    })?;
    read_parts(content, &mut reply)?;
    reply.native = Some(content.clone());
    Ok(reply)
}

/// The text and the calls of a candidate's `content`.
fn read_parts(content: &Value, reply: &mut Reply) -> Result<(), String> {
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
    Ok(())
}

/// Gemini usage: `promptTokenCount` includes the cached tokens; tool-use prompts and thoughts
/// are counted apart and added here.
fn usage(body: &Value) -> Usage {
    let thoughts = u64_at(body, "/usageMetadata/thoughtsTokenCount");
    Usage {
        input_tokens: u64_at(body, "/usageMetadata/promptTokenCount")
            + u64_at(body, "/usageMetadata/toolUsePromptTokenCount"),
        output_tokens: u64_at(body, "/usageMetadata/candidatesTokenCount") + thoughts,
        cache_read_tokens: u64_at(body, "/usageMetadata/cachedContentTokenCount"),
        cache_write_tokens: 0,
        reasoning_tokens: thoughts,
    }
}

/// A streamed Gemini reply (`streamGenerateContent?alt=sse`): each event a response whose
/// candidate holds the parts written since the last; put back together into one response (the
/// parts in order, adjacent plain text joined; the last finish reason, safety ratings and
/// usage) and read as a whole one.
#[derive(Debug, Default)]
pub(crate) struct GeminiStream {
    parts: Vec<Value>,
    last: Option<Value>,
}

impl GeminiStream {
    /// Takes one event's data; returns the text it adds.
    pub(crate) fn event(&mut self, data: &str) -> Result<Option<String>, String> {
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| format!("a streamed chunk is not JSON ({e})"))?;
        let mut text = String::new();
        for part in chunk
            .pointer("/candidates/0/content/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let plain = |p: &Value| {
                p.as_object()
                    .is_some_and(|o| o.len() == 1 && o.contains_key("text"))
            };
            if plain(part) {
                let piece = part["text"].as_str().unwrap_or_default();
                text.push_str(piece);
                if let Some(last) = self.parts.last_mut().filter(|l| plain(l)) {
                    let joined = format!("{}{piece}", last["text"].as_str().unwrap_or_default());
                    last["text"] = json!(joined);
                    continue;
                }
            }
            self.parts.push(part.clone());
        }
        self.last = Some(chunk);
        Ok((!text.is_empty()).then_some(text))
    }

    /// Whether the last chunk came (it names a finish reason, or the prompt was blocked).
    pub(crate) fn is_done(&self) -> bool {
        self.last.as_ref().is_some_and(|c| {
            c.pointer("/candidates/0/finishReason").is_some()
                || c.pointer("/promptFeedback/blockReason").is_some()
        })
    }

    pub(crate) fn finish(self) -> Result<Reply, String> {
        let done = self.is_done();
        let mut response = self.last.ok_or("the stream had no chunk")?;
        if !done {
            return Err("the stream ended before a finish reason".to_owned());
        }
        if let Some(candidate) = response.pointer_mut("/candidates/0") {
            candidate["content"] = json!({"role": "model", "parts": self.parts});
        }
        parse(&response)
    }
}
