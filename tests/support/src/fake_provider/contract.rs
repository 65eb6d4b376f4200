//! The API contracts a fake provider checks every request against: headers, path and key,
//! message roles and order, and tool results answering exactly the calls the script made.

use std::collections::VecDeque;

use axum::http::HeaderMap;
use serde_json::{Value, json};
use tool_runtime::agent::Api;

use super::{ISSUED, Shared};

/// Every way `body` breaks `api`'s contract.
pub(super) fn check(s: &Shared, path: &str, headers: &HeaderMap, body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if !header("content-type").is_some_and(|c| c.starts_with("application/json")) {
        problems.push("content-type is not application/json".to_owned());
    }
    let (expected_path, auth_ok) = match s.api {
        Api::OpenAiChat | Api::OpenAiCompatible => (
            "/v1/chat/completions".to_owned(),
            header("authorization") == Some(&format!("Bearer {}", s.key)),
        ),
        Api::OpenAiResponses => (
            "/v1/responses".to_owned(),
            header("authorization") == Some(&format!("Bearer {}", s.key)),
        ),
        Api::Anthropic => {
            if header("anthropic-version") != Some("2023-06-01") {
                problems.push("anthropic-version is not 2023-06-01".to_owned());
            }
            // The key as `x-api-key`, or a token (`ANTHROPIC_AUTH_TOKEN`) as a bearer.
            (
                "/v1/messages".to_owned(),
                header("x-api-key") == Some(&s.key)
                    || header("authorization") == Some(&format!("Bearer {}", s.key)),
            )
        }
        _ => (
            if path.ends_with(":streamGenerateContent") {
                "/v1beta/models/fake-model:streamGenerateContent".to_owned()
            } else {
                "/v1beta/models/fake-model:generateContent".to_owned()
            },
            header("x-goog-api-key") == Some(&s.key),
        ),
    };
    if path != expected_path {
        problems.push(format!("posted to {path}, not {expected_path}"));
    }
    if !auth_ok {
        problems.push("the API key header is missing or wrong".to_owned());
    }
    if let Some(expected) = &s.expected_tools {
        let sent = match s.api {
            Api::Gemini => body.pointer("/tools/0/functionDeclarations"),
            _ => body.get("tools"),
        };
        if sent != Some(expected) {
            problems.push(format!(
                "the tools sent are not the lowered specs: sent {}",
                sent.map_or("nothing".to_owned(), Value::to_string)
            ));
        }
    }
    match s.api {
        Api::OpenAiChat | Api::OpenAiCompatible => check_chat(s, body, &mut problems),
        Api::OpenAiResponses => check_responses(s, body, &mut problems),
        Api::Anthropic => check_anthropic(s, body, &mut problems),
        _ => check_gemini(s, body, &mut problems),
    }
    problems
}

fn issued(_: &Shared, id: &str, name: &str) -> bool {
    ISSUED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .any(|(i, n)| i == id && n == name)
}

fn check_chat(s: &Shared, body: &Value, problems: &mut Vec<String>) {
    if !body["model"].is_string() {
        problems.push("no `model`".to_owned());
    }
    let Some(messages) = body["messages"].as_array() else {
        problems.push("no `messages` array".to_owned());
        return;
    };
    let mut waiting: VecDeque<String> = VecDeque::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role != "tool" && !waiting.is_empty() {
            problems.push(format!(
                "message {i} ({role}) comes before the results of calls {waiting:?}"
            ));
            waiting.clear();
        }
        match role {
            "system" if i == 0 => {}
            "user" => {}
            "assistant" => {
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    let (id, name) = (
                        c["id"].as_str().unwrap_or(""),
                        c["function"]["name"].as_str().unwrap_or(""),
                    );
                    if !issued(s, id, name) || c["type"] != "function" {
                        problems.push(format!("message {i} has a call the model never made: {c}"));
                    }
                    waiting.push_back(id.to_owned());
                }
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap_or("");
                if waiting.pop_front().as_deref() != Some(id) {
                    problems.push(format!(
                        "message {i} answers `{id}`, which is not the next call waiting"
                    ));
                }
                if !m["content"].is_string() {
                    problems.push(format!(
                        "message {i}: a tool result's content is not a string"
                    ));
                }
            }
            other => problems.push(format!("message {i} has role `{other}`")),
        }
    }
    if !waiting.is_empty() {
        problems.push(format!("calls {waiting:?} have no result"));
    }
    if messages.last().is_some_and(|m| m["role"] == "assistant") {
        problems.push("the conversation ends with the assistant".to_owned());
    }
}

fn check_responses(s: &Shared, body: &Value, problems: &mut Vec<String>) {
    if body["store"] != json!(false) {
        problems.push("`store` is not false, yet the whole conversation is sent".to_owned());
    }
    let Some(items) = body["input"].as_array() else {
        problems.push("no `input` array".to_owned());
        return;
    };
    let mut open: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item["type"].as_str() {
            Some("function_call") => {
                let id = item["call_id"].as_str().unwrap_or("");
                if !issued(s, id, item["name"].as_str().unwrap_or("")) {
                    problems.push(format!("item {i} is a call the model never made"));
                }
                open.push(id.to_owned());
            }
            Some("function_call_output") => {
                let id = item["call_id"].as_str().unwrap_or("");
                match open.iter().position(|o| o == id) {
                    Some(p) => {
                        open.remove(p);
                    }
                    None => problems.push(format!("item {i} answers `{id}`, which is not open")),
                }
                if !item["output"].is_string() {
                    problems.push(format!("item {i}: `output` is not a string"));
                }
            }
            _ => {
                if !open.is_empty() {
                    problems.push(format!("item {i} comes before the results of {open:?}"));
                }
                if !matches!(item["role"].as_str(), Some("user" | "assistant")) {
                    problems.push(format!("item {i} has no known role or type"));
                }
            }
        }
    }
    if !open.is_empty() {
        problems.push(format!("calls {open:?} have no output"));
    }
}

fn check_anthropic(s: &Shared, body: &Value, problems: &mut Vec<String>) {
    if !body["max_tokens"].is_u64() {
        problems.push("no `max_tokens`".to_owned());
    }
    let Some(messages) = body["messages"].as_array() else {
        problems.push("no `messages` array".to_owned());
        return;
    };
    let mut expected_role = "user";
    let mut pending: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role != expected_role {
            problems.push(format!(
                "message {i} is `{role}`; roles must alternate from `user`"
            ));
        }
        expected_role = if role == "user" { "assistant" } else { "user" };
        let blocks = m["content"].as_array().cloned().unwrap_or_default();
        if role == "user" {
            let results: Vec<&Value> = blocks
                .iter()
                .take_while(|b| b["type"] == "tool_result")
                .collect();
            if blocks
                .iter()
                .skip(results.len())
                .any(|b| b["type"] == "tool_result")
            {
                problems.push(format!("message {i} has text before a tool_result"));
            }
            let answered: Vec<String> = results
                .iter()
                .map(|b| b["tool_use_id"].as_str().unwrap_or("").to_owned())
                .collect();
            if answered != pending {
                problems.push(format!(
                    "message {i} answers {answered:?}; the calls waiting were {pending:?}"
                ));
            }
            for b in results {
                if !b["is_error"].is_boolean() && !b["is_error"].is_null() {
                    problems.push(format!("message {i}: `is_error` is not a boolean"));
                }
            }
            pending.clear();
        } else {
            pending = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| {
                    let id = b["id"].as_str().unwrap_or("").to_owned();
                    if !issued(s, &id, b["name"].as_str().unwrap_or("")) || !b["input"].is_object()
                    {
                        problems.push(format!(
                            "message {i} has a tool_use the model never made: {b}"
                        ));
                    }
                    id
                })
                .collect();
        }
    }
    if !pending.is_empty() {
        problems.push(format!("calls {pending:?} have no tool_result"));
    }
}

fn check_gemini(s: &Shared, body: &Value, problems: &mut Vec<String>) {
    let Some(contents) = body["contents"].as_array() else {
        problems.push("no `contents` array".to_owned());
        return;
    };
    let mut pending: Vec<String> = Vec::new();
    for (i, c) in contents.iter().enumerate() {
        let parts = c["parts"].as_array().cloned().unwrap_or_default();
        match c["role"].as_str() {
            Some("model") => {
                if !pending.is_empty() {
                    problems.push(format!("content {i}: calls {pending:?} were not answered"));
                }
                pending = parts
                    .iter()
                    .filter_map(|p| p["functionCall"]["name"].as_str().map(str::to_owned))
                    .collect();
                for p in &parts {
                    let signed = s.signed.iter().find(|(call, _)| *call == p["functionCall"]);
                    if let Some((_, signature)) = signed
                        && p["thoughtSignature"] != json!(signature)
                    {
                        problems.push(format!(
                            "content {i}: the thought signature of the model's call was not sent back"
                        ));
                    }
                }
            }
            Some("user") => {
                let answered: Vec<String> = parts
                    .iter()
                    .take_while(|p| p.get("functionResponse").is_some())
                    .map(|p| {
                        let r = &p["functionResponse"]["response"];
                        if r.get("output").is_some() == r.get("error").is_some() {
                            problems.push(format!(
                                "content {i}: a functionResponse needs exactly one of `output` and `error`"
                            ));
                        }
                        p["functionResponse"]["name"].as_str().unwrap_or("").to_owned()
                    })
                    .collect();
                if answered != pending {
                    problems.push(format!(
                        "content {i} answers {answered:?}; the calls waiting were {pending:?}"
                    ));
                }
                pending.clear();
            }
            other => problems.push(format!("content {i} has role {other:?}")),
        }
    }
}
