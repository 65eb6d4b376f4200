//! The OpenAPI description of tasks (`http::tasks`): their routes, the task's schema, and the
//! `Prefer` header and `202` of a tool that may run as one.

use serde_json::{Map, Value, json};

use super::{error_response, with_errors};
use crate::tool::TaskMode;

/// The OpenAPI paths of tasks, and the task's schema.
pub(super) fn describe(
    paths: &mut Map<String, Value>,
    schemas: &mut Map<String, Value>,
    auth: bool,
) {
    schemas.insert("Task".into(), json!({
        "type": "object",
        "required": ["id", "tool", "status", "created_at", "updated_at", "ttl_ms", "poll_interval_ms"],
        "properties": {
            "id": {"type": "string"},
            "tool": {"type": "string"},
            "status": {"enum": ["working", "input_required", "completed", "failed", "cancelled"]},
            "message": {"type": "string"},
            "created_at": {"type": "string", "format": "date-time"},
            "updated_at": {"type": "string", "format": "date-time"},
            "ttl_ms": {"type": "integer"},
            "poll_interval_ms": {"type": "integer"},
            "questions": {"type": "object", "description": "While `input_required`: the questions, by key, as MCP's `inputRequests`"},
            "outcome": {"type": "object", "description": "Once ended: the call's envelope"}
        }
    }));
    let task = json!({"description": "The task", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Task"}}}});
    let answered = |status: &str| {
        let mut responses = with_errors(json!({ status: task }), auth, false);
        responses["404"]["description"] = json!("No such task for this caller (`not_found`)");
        responses
    };
    let mut input = answered("202");
    for (status, description) in [
        ("400", "The body is not one JSON object (`invalid_request`)"),
        ("413", "The body is too large (`payload_too_large`)"),
        ("415", "The body is not JSON (`unsupported_media_type`)"),
    ] {
        input[status] = error_response(description);
    }
    let id = json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]);
    paths.insert(
        "/tasks/{id}".into(),
        json!({
            "get": {"operationId": "get_task", "summary": "Read a task", "parameters": id,
                    "responses": answered("200")},
            "delete": {"operationId": "cancel_task", "summary": "Cancel a task", "parameters": id,
                       "responses": answered("202")}
        }),
    );
    paths.insert(
        "/tasks/{id}/input".into(),
        json!({
            "post": {"operationId": "answer_task", "summary": "Answer a task's questions",
                     "parameters": id,
                     "requestBody": {"required": true, "content": {"application/json": {"schema": {
                         "type": "object",
                         "description": "Answers by question key, as MCP's `inputResponses`"}}}},
                     "responses": input}
        }),
    );
}

/// `op`, the `POST /tools/{name}` of a tool in `mode`, with the `Prefer` header and its `202`.
pub(super) fn describe_call(op: &mut Value, mode: TaskMode) {
    if mode == TaskMode::Forbidden {
        return;
    }
    if let Some(parameters) = op["parameters"].as_array_mut() {
        parameters.push(json!({"name": "Prefer", "in": "header", "required": false,
            "schema": {"type": "string"},
            "description": "`respond-async`: run the call as a task, answered `202` with its `Location`"}));
    }
    op["responses"]["202"] = json!({
        "description": if mode == TaskMode::Required { "Always: the call runs as a task" } else { "With `Prefer: respond-async`: the call runs as a task" },
        "headers": {"Location": {"schema": {"type": "string"}, "description": "`/tasks/{id}`"}},
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Task"}}}
    });
}
