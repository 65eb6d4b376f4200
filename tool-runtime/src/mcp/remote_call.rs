//! A call of a mounted server's tool, to its end: the input-required rounds of 2026-07-28
//! answered by our caller, and a tool the server runs as a task (the tasks extension, which this
//! client declares) followed until it ends: its questions asked of our caller and answered with
//! `tasks/update`, the task cancelled on the server when our call is dropped.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, GetTaskParams,
    InputRequests, InputResponses, TaskPayload, UpdateTaskParams,
};
use rmcp::service::{Peer, RoleClient, ServiceError};

use super::relay;
use crate::tool::context::CallContext;

/// How many input-required rounds a call may take.
const MAX_ROUNDS: usize = 16;

/// The fastest a task is polled, whatever interval the server suggests.
const MIN_POLL: Duration = Duration::from_millis(100);

/// Calls the tool of `params` on `peer` to its end, for the call `ctx` belongs to.
pub(super) async fn call(
    peer: &Peer<RoleClient>,
    mut params: CallToolRequestParams,
    ctx: &CallContext,
    span: &tracing::Span,
) -> Result<CallToolResult, ServiceError> {
    for _ in 0..MAX_ROUNDS {
        match peer.call_tool_once(params.clone()).await? {
            CallToolResponse::Complete(result) => return Ok(result),
            CallToolResponse::InputRequired(asked) => {
                let answers = answers(asked.input_requests.unwrap_or_default(), ctx, span).await?;
                params.input_responses = (!answers.is_empty()).then_some(answers);
                params.request_state = asked.request_state;
            }
            CallToolResponse::Task(created) => {
                return follow(peer, created.task.task_id, ctx, span).await;
            }
            _ => return Err(ServiceError::UnexpectedResponse),
        }
    }
    Err(ServiceError::InputRequiredRoundsExceeded {
        max_rounds: MAX_ROUNDS,
    })
}

/// Our caller's answers to `requests`.
async fn answers(
    requests: InputRequests,
    ctx: &CallContext,
    span: &tracing::Span,
) -> Result<InputResponses, ServiceError> {
    let mut answers = InputResponses::new();
    for (key, request) in requests {
        let answer = relay::answer(ctx, span.clone(), request)
            .await
            .map_err(ServiceError::McpError)?;
        answers.insert(key, answer);
    }
    Ok(answers)
}

/// Follows the server's task `id` until it ends, answering its questions; cancels it on the
/// server when dropped before.
async fn follow(
    peer: &Peer<RoleClient>,
    id: String,
    ctx: &CallContext,
    span: &tracing::Span,
) -> Result<CallToolResult, ServiceError> {
    let mut cancel = CancelOnDrop(Some((peer.clone(), id.clone())));
    let mut answered = std::collections::BTreeSet::new();
    loop {
        let task = peer.get_task(GetTaskParams::new(id.clone())).await?.task;
        let poll = task
            .task
            .poll_interval_ms
            .map_or(MIN_POLL, Duration::from_millis)
            .max(MIN_POLL);
        match task.payload {
            TaskPayload::Completed { result } => {
                cancel.0 = None;
                return serde_json::from_value(serde_json::Value::Object(result))
                    .map_err(|_| ServiceError::UnexpectedResponse);
            }
            TaskPayload::Failed { error } => {
                cancel.0 = None;
                let message = error
                    .get("message")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("the task failed")
                    .to_owned();
                return Err(ServiceError::McpError(rmcp::ErrorData::internal_error(
                    message, None,
                )));
            }
            TaskPayload::Cancelled => {
                cancel.0 = None;
                return Err(ServiceError::McpError(rmcp::ErrorData::internal_error(
                    "the task was cancelled on the server",
                    None,
                )));
            }
            TaskPayload::InputRequired { input_requests } => {
                let new: InputRequests = input_requests
                    .into_iter()
                    .filter(|(key, _)| !answered.contains(key))
                    .collect();
                if !new.is_empty() {
                    answered.extend(new.keys().cloned());
                    let answers = answers(new, ctx, span).await?;
                    peer.update_task(UpdateTaskParams::new(id.clone(), answers))
                        .await?;
                    continue;
                }
            }
            _ => {}
        }
        tokio::time::sleep(poll).await;
    }
}

/// Cancels the server's task it holds when dropped: our call was cancelled or timed out.
struct CancelOnDrop(Option<(Peer<RoleClient>, String)>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some((peer, id)) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = peer.cancel_task(CancelTaskParams::new(id)).await;
            });
        }
    }
}
