//! Tool results and pipeline errors as MCP answers them.

use std::fmt::Write as _;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use crate::tool::error::ToolError;

pub(super) fn success(value: Value, wrapped: bool) -> CallToolResult {
    let structured = if wrapped {
        // Moved in: `json!` would copy the value.
        Value::Object(serde_json::Map::from_iter([("result".to_owned(), value)]))
    } else {
        value
    };
    CallToolResult::structured(structured)
}

/// A result of content blocks ([`Content`](crate::Content)) as they are.
pub(super) fn content(value: &Value) -> CallToolResult {
    // A list of blocks, or one block.
    let one = std::slice::from_ref(value);
    let blocks = match value {
        Value::Array(items) => items.as_slice(),
        _ => one,
    };
    let blocks = blocks
        .iter()
        .map(|b| serde_json::from_value(b.clone()))
        .collect::<Result<Vec<ContentBlock>, _>>()
        .unwrap_or_else(|e| {
            vec![ContentBlock::text(format!(
                "unreadable content blocks: {e}"
            ))]
        });
    CallToolResult::success(blocks)
}

/// An `isError` result: `<type>: <message>`, then one line per violation the message does not
/// already say. Each thing is said once: a message that opens with its type in words
/// (`invalid arguments: ...`) is given without them after the type, and the one violation a
/// message names is not listed again (the CLI says it once too).
pub(super) fn failure(e: &ToolError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(failure_text(e))])
}

fn failure_text(e: &ToolError) -> String {
    let kind = e.kind();
    let message = e.message();
    let words = kind.as_str().replace('_', " ");
    let summary = message
        .strip_prefix(words.as_str())
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(message);
    let mut text = format!("{kind}: {summary}");
    let violations = match e.violations() {
        [one] if message.ends_with(&one.message) => &[],
        all => all,
    };
    for v in violations {
        let at = if v.path.is_empty() { "/" } else { &v.path };
        let _ = write!(text, "\n  {at}: {}", v.message);
    }
    if let Some(hint) = e.hint() {
        text.push_str("\n  hint: ");
        text.push_str(hint);
    }
    if e.is_retryable() {
        text.push_str("\n  (retryable)");
    }
    text
}

/// A pipeline error that MCP answers as a JSON-RPC error (an unknown tool), with the
/// pipeline's own message and details.
/// A call that needs the caller's account at another service
/// ([`AUTHORIZATION_REQUIRED`](crate::ErrorKind::AUTHORIZATION_REQUIRED)) as MCP's
/// `URLElicitationRequiredError`: `-32042`, the page to open as a URL elicitation in `data`.
pub(super) fn url_required(e: &ToolError) -> Option<ErrorData> {
    let details = e.details()?;
    let (url, id) = (
        details["url"].as_str()?,
        details["elicitation_id"].as_str()?,
    );
    let elicitation = json!({
        "mode": "url",
        "elicitationId": id,
        "url": url,
        "message": e.message(),
    });
    Some(ErrorData::new(
        rmcp::model::ErrorCode(-32042),
        e.message().to_owned(),
        Some(json!({ "elicitations": [elicitation] })),
    ))
}

pub(super) fn protocol_error(name: &str, e: &ToolError, code: i32) -> ErrorData {
    let mut data = json!({ "type": e.kind(), "tool": name });
    if let Some(Value::Object(details)) = e.details() {
        for (k, v) in details {
            data[k] = v.clone();
        }
    }
    ErrorData::new(
        rmcp::model::ErrorCode(code),
        e.message().to_owned(),
        Some(data),
    )
}

/// A pipeline error of a resource read, prompt get, completion or subscription as the JSON-RPC
/// error MCP answers it with: the pipeline's message, and in `data` its `type`, its details and
/// its violations. `not_found` with a `uri` (no resource there) is `-32002` for clients before
/// `2026-07-28` and `-32602` (invalid params) from it on; any other `not_found` (no such
/// prompt), `invalid_arguments` and the types with a code of their own
/// ([`ErrorKind::jsonrpc_code`](crate::ErrorKind::jsonrpc_code)) are `-32602`; everything else
/// (forbidden, rate limited, time-outs, panics, a resource's own error) `-32603`.
pub(super) fn item_error(e: &ToolError, modern: bool) -> ErrorData {
    use crate::tool::error::ErrorKind;
    use rmcp::model::ErrorCode;
    let kind = e.kind();
    let mut data = json!({ "type": kind });
    if let Some(Value::Object(details)) = e.details() {
        for (k, v) in details {
            data[k] = v.clone();
        }
    }
    if !e.violations().is_empty() {
        data["violations"] = json!(e.violations());
    }
    if e.is_retryable() {
        data["retryable"] = json!(true);
    }
    let code = if kind == ErrorKind::NOT_FOUND {
        if data.get("uri").is_some() && !modern {
            ErrorCode::RESOURCE_NOT_FOUND
        } else {
            ErrorCode::INVALID_PARAMS
        }
    } else if kind == ErrorKind::INVALID_ARGUMENTS {
        ErrorCode::INVALID_PARAMS
    } else {
        kind.jsonrpc_code()
            .map_or(ErrorCode::INTERNAL_ERROR, ErrorCode)
    };
    let message = if e.violations().is_empty() {
        e.message().to_owned()
    } else {
        // The violations in the message too: clients show the message and seldom `data`.
        failure_text(e)
    };
    ErrorData::new(code, message, Some(data))
}
