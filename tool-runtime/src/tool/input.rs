//! A question a call asks its caller (elicitation, sampling, the roots) and its answer as JSON,
//! in the forms MCP gives them (`inputRequests`, `inputResponses`): what an input-required
//! result carries and what a task waiting for input shows, on every front end.

use serde_json::{Map, Value, json};

use crate::tool::peer::{Elicited, InputRequest, InputResponse, Role, Root, Sample, Sampled};

/// `request` as the client receives it in `inputRequests`.
pub(crate) fn wire(request: &InputRequest) -> Value {
    match request {
        InputRequest::Elicit { message, schema } => json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": message, "requestedSchema": schema},
        }),
        InputRequest::Sample(sample) => json!({
            "method": "sampling/createMessage",
            "params": sampling_request(sample),
        }),
        // `roots/list` and any kind added later: the roots are what asks nothing.
        _ => json!({"method": "roots/list", "params": {}}),
    }
}

/// What an answer to `request` must be, for the error when it is not.
pub(crate) fn expected(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicit { .. } => {
            "an elicitation result: an object whose `action` is accept, decline or cancel"
        }
        InputRequest::Sample(_) => "a sampling result: an object with the message's `content`",
        _ => "a roots/list result: an object whose `roots` lists objects with a `uri`",
    }
}

/// `answer` read as the answer to `request`, if it is one.
pub(crate) fn read(request: &InputRequest, answer: &Value) -> Option<InputResponse> {
    match request {
        InputRequest::Elicit { .. } => {
            let elicited = match answer.get("action")?.as_str()? {
                "accept" => Elicited::Accepted(match answer.get("content") {
                    Some(Value::Object(content)) => content.clone(),
                    None | Some(Value::Null) => Map::new(),
                    Some(_) => return None,
                }),
                "decline" => Elicited::Declined,
                "cancel" => Elicited::Cancelled,
                _ => return None,
            };
            Some(InputResponse::Elicited(elicited))
        }
        InputRequest::Sample(_) => {
            answer.get("content")?;
            Some(InputResponse::Sampled(sampled(answer)))
        }
        _ => {
            let roots: Vec<Root> = serde_json::from_value(answer.get("roots")?.clone()).ok()?;
            Some(InputResponse::Roots(roots))
        }
    }
}

/// `sampling/createMessage`'s parameters for `request`.
pub(crate) fn sampling_request(request: &Sample) -> Value {
    let messages: Vec<Value> = request
        .turns()
        .iter()
        .map(|(role, text)| {
            let role = match role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": {"type": "text", "text": text}})
        })
        .collect();
    let mut params = json!({"messages": messages, "maxTokens": request.token_limit()});
    if let Some(system) = request.system_prompt() {
        params["systemPrompt"] = json!(system);
    }
    if let Some(t) = request.sampling_temperature() {
        params["temperature"] = json!(t);
    }
    params
}

/// A `sampling/createMessage` result as a [`Sampled`]: its text blocks joined.
pub(crate) fn sampled(answer: &Value) -> Sampled {
    let content = &answer["content"];
    let blocks = content
        .as_array()
        .map_or_else(|| vec![content], |a| a.iter().collect());
    let text = blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    Sampled {
        text,
        model: answer["model"].as_str().unwrap_or_default().to_owned(),
        stop_reason: answer["stopReason"].as_str().map(str::to_owned),
    }
}
