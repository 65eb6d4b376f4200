//! Calls run as tasks over HTTP: `POST /tools/{name}` with `Prefer: respond-async` (RFC 7240)
//! answers `202 Accepted` with `Location: /tasks/{id}` for a tool that may run as a task (a
//! tool that must always does); `GET /tasks/{id}` reads the task, `POST /tasks/{id}/input`
//! answers the questions it waits on (`input_required`), `DELETE /tasks/{id}` asks for it to be
//! cancelled. Only the principal that started a task sees it; to anyone else it is unknown
//! (`404`).

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::ServedRegistry;
use super::front::context_of;
use super::response::{error_response, json_response};
use crate::registry::Registry;
use crate::task::{Task, TaskMode};
use crate::tool::caller::Caller;
use crate::tool::error::ToolError;

/// Whether `headers` prefer an answer before the call ends (`Prefer: respond-async`).
pub(super) fn prefers_async(headers: &HeaderMap) -> bool {
    headers
        .get_all("prefer")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| {
            p.split(';')
                .next()
                .is_some_and(|token| token.trim().eq_ignore_ascii_case("respond-async"))
        })
}

/// Whether the call of `name` by `caller` runs as a task: a tool that must always does; one
/// that may, when the request prefers it. Never a dry run, and a destructive call only once
/// confirmed (unconfirmed, it is answered `confirmation_required` at once).
pub(super) fn runs_as_task(
    registry: &Registry,
    name: &str,
    caller: &Caller,
    prefers_async: bool,
) -> bool {
    let Some(tool) = registry.visible_tool(name, caller) else {
        return false;
    };
    let meta = tool.meta();
    let wanted = match meta.task {
        TaskMode::Forbidden => false,
        TaskMode::Optional => prefers_async,
        TaskMode::Required => true,
    };
    wanted
        && !caller.is_dry_run()
        && (caller.confirms() || meta.annotations.destructive != Some(true))
}

/// The answer to a call started as a task: `202` with its `Location`.
pub(super) fn started(started: Result<Task, ToolError>, tool: &str, request_id: &str) -> Response {
    match started {
        Ok(task) => {
            let mut response = task_response(StatusCode::ACCEPTED, &task);
            if let Ok(location) = HeaderValue::from_str(&format!("/tasks/{}", task.id)) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            response
        }
        Err(e) => error_response(Some(tool), e, request_id),
    }
}

/// `GET /tasks/{id}`.
pub(super) async fn get_task(
    State(state): State<Arc<ServedRegistry>>,
    Path(id): Path<String>,
    mut request: Request,
) -> Response {
    let ctx = context_of(&mut request);
    let caller = ctx.caller(crate::tool::caller::Source::Http);
    let found = state.registry.tasks().get(&id, caller.given_principal());
    answered(found.await, StatusCode::OK, &id, &ctx.id)
}

/// `DELETE /tasks/{id}`: `202`, the task as it was when the cancel was asked for (an ended
/// task stays as it ended).
pub(super) async fn cancel_task(
    State(state): State<Arc<ServedRegistry>>,
    Path(id): Path<String>,
    mut request: Request,
) -> Response {
    let ctx = context_of(&mut request);
    let caller = ctx.caller(crate::tool::caller::Source::Http);
    let found = state.registry.tasks().cancel(&id, caller.given_principal());
    answered(found.await, StatusCode::ACCEPTED, &id, &ctx.id)
}

/// The task `found` with `status`, or why there is none: `404` for a task unknown to the
/// caller.
fn answered(
    found: Result<Option<Task>, ToolError>,
    status: StatusCode,
    id: &str,
    request_id: &str,
) -> Response {
    match found {
        Ok(Some(task)) => task_response(status, &task),
        Ok(None) => error_response(None, unknown(id), request_id),
        Err(e) => error_response(None, e, request_id),
    }
}

/// `POST /tasks/{id}/input`: answers, by the keys of the task's questions, in the forms MCP
/// gives them (an elicitation's `{"action": "accept", "content": {...}}`); answers to questions
/// it does not wait on are ignored. `202`, the task as it is after the answers.
pub(super) async fn answer_task(
    State(state): State<Arc<ServedRegistry>>,
    Path(id): Path<String>,
    mut request: Request,
) -> Response {
    let ctx = context_of(&mut request);
    let caller = ctx.caller(crate::tool::caller::Source::Http);
    let o = &state.options.requests;
    let json = super::body::is_json(request.headers());
    let answers =
        match super::body::json_bytes(json, request.into_body(), o.body_limit, o.max_depth, false)
            .await
            .and_then(|bytes| super::body::object_of(&bytes))
        {
            Ok(answers) => answers,
            Err(e) => return error_response(None, e, &ctx.id),
        };
    let tasks = state.registry.tasks();
    let principal = caller.given_principal();
    let found = match tasks.answer(&id, principal, &answers).await {
        Ok(true) => tasks.get(&id, principal).await,
        Ok(false) => Ok(None),
        Err(e) => Err(e),
    };
    answered(found, StatusCode::ACCEPTED, &id, &ctx.id)
}

fn unknown(id: &str) -> ToolError {
    ToolError::not_found(format!("no task `{id}`"))
}

/// `task` as HTTP shows it, with `Retry-After` while it runs.
fn task_response(status: StatusCode, task: &Task) -> Response {
    let mut response = json_response(status, &task.to_json());
    if !task.status.is_terminal() {
        let seconds = task.poll_ms.div_ceil(1000).max(1);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}
