//! MCP's tasks extension (`io.modelcontextprotocol/tasks`, protocol 2026-07-28): a `tools/call`
//! of a tool that may run as a task, from a request that declares the extension, answers a
//! task at once; `tasks/get`, `tasks/update` and `tasks/cancel` read, answer and cancel it for
//! the principal that started it, on any replica that shares the registry's task store.

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CancelTaskParams, ClientCapabilities, CreateTaskResult, DetailedTask,
    GetTaskParams, GetTaskResult, JsonObject, TaskPayload, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::results::{content, failure, success};
use super::{McpServer, caller_of, input};
use crate::task::{Task, TaskDetach, TaskMode, TaskStatus, rfc3339};
use crate::tool::caller::Caller;
use crate::tool::error::ToolError;

impl McpServer {
    /// Whether the call of `name` by `caller` runs as a task, and from where: when the tool may
    /// be one and the request (of 2026-07-28) declares the extension. A tool that is a task from
    /// its start, if destructive, only once the call is confirmed (its question is asked before
    /// the task exists); one that detaches itself asks everything before that point in rounds.
    /// A tool that must be a task, called by a request that does not declare the extension, is
    /// refused with `-32021`.
    pub(super) fn runs_as_task(
        &self,
        name: &str,
        caller: &Caller,
        context: &RequestContext<RoleServer>,
        confirmed: bool,
    ) -> Result<Option<TaskDetach>, ErrorData> {
        let registry = &self.inner.registry;
        // Most tools never run as tasks: for them the answer is known without the caller's
        // visibility check, which builds the caller's context.
        if registry
            .get(name)
            .is_none_or(|t| t.meta().task == TaskMode::Forbidden)
        {
            return Ok(None);
        }
        let Some(tool) = registry.visible_tool(name, caller) else {
            return Ok(None);
        };
        let meta = tool.meta();
        let declared = input::modern(context)
            && context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks());
        let ready = confirmed
            || meta.annotations.destructive != Some(true)
            || meta.detach == TaskDetach::Explicit;
        match (meta.task, declared) {
            (TaskMode::Forbidden, _) | (TaskMode::Optional, false) => Ok(None),
            (TaskMode::Optional | TaskMode::Required, true) => Ok(ready.then_some(meta.detach)),
            (TaskMode::Required, false) => Err(ErrorData::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            )),
        }
    }

    /// Starts the call of `name` as a task and answers it.
    pub(super) async fn start_task(
        &self,
        name: &str,
        args: Value,
        caller: Caller,
    ) -> Result<CallToolResponse, ErrorData> {
        match self.inner.registry.start_task(name, args, caller).await {
            Ok(task) => Ok(created(&task)),
            Err(e) => Ok(failure(&e).into()),
        }
    }

    pub(super) async fn task_get(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let caller = caller_of(&context);
        let task = found(
            &request.task_id,
            self.tasks_get(&request.task_id, &caller).await,
        )?;
        Ok(GetTaskResult::new(self.detailed(&task, &caller)))
    }

    pub(super) async fn task_update(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = caller_of(&context);
        let answers = request.input_responses.into_iter().collect();
        let found = self
            .inner
            .registry
            .tasks()
            .answer(&request.task_id, caller.given_principal(), &answers)
            .await
            .map_err(|e| store_error(&e))?;
        if found {
            Ok(())
        } else {
            Err(unknown(&request.task_id))
        }
    }

    pub(super) async fn task_cancel(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = caller_of(&context);
        let cancelled = self
            .inner
            .registry
            .tasks()
            .cancel(&request.task_id, caller.given_principal())
            .await;
        found(&request.task_id, cancelled).map(|_| ())
    }

    async fn tasks_get(&self, id: &str, caller: &Caller) -> Result<Option<Task>, ToolError> {
        self.inner
            .registry
            .tasks()
            .get(id, caller.given_principal())
            .await
    }

    /// `task` as `tasks/get` answers it: with its questions, its result or its error.
    fn detailed(&self, task: &Task, caller: &Caller) -> DetailedTask {
        let payload = match task.status {
            TaskStatus::Working => TaskPayload::Working,
            TaskStatus::InputRequired => TaskPayload::InputRequired {
                input_requests: task
                    .questions
                    .iter()
                    .filter_map(|(key, q)| {
                        Some((key.clone(), serde_json::from_value(q.clone()).ok()?))
                    })
                    .collect(),
            },
            TaskStatus::Completed => TaskPayload::Completed {
                result: self.result(task, caller),
            },
            TaskStatus::Failed => TaskPayload::Failed {
                error: failed(task),
            },
            TaskStatus::Cancelled => TaskPayload::Cancelled,
        };
        DetailedTask::new(wire(task), payload)
    }

    /// The `CallToolResult` of a completed task, as `tools/call` would have answered it.
    fn result(&self, task: &Task, caller: &Caller) -> JsonObject {
        let tool = self.inner.registry.visible_tool(&task.tool, caller);
        let result = match (task.result(), task.error()) {
            (Some(value), _) => match &tool {
                Some(t) if t.meta().content => content(value),
                t => {
                    let wrapped = t
                        .as_ref()
                        .is_some_and(|t| crate::schema::walk::wraps_output(t.output_schema()));
                    success(value.clone(), wrapped)
                }
            },
            (None, error) => failure(&error.unwrap_or_else(|| ToolError::internal("no outcome"))),
        };
        match serde_json::to_value(result) {
            Ok(Value::Object(object)) => object,
            _ => JsonObject::new(),
        }
    }
}

/// The answer to a call that became the task `task`.
pub(super) fn created(task: &Task) -> CallToolResponse {
    CallToolResponse::Task(CreateTaskResult::new(wire(task)))
}

/// The task's metadata on the wire.
fn wire(task: &Task) -> rmcp::model::Task {
    let mut wire = rmcp::model::Task::new(
        task.id.clone(),
        status(task.status),
        rfc3339(task.created_ms),
        rfc3339(task.updated_ms),
    )
    .with_ttl_ms(task.ttl_ms)
    .with_poll_interval_ms(task.poll_ms);
    if let Some(message) = &task.message {
        wire = wire.with_status_message(message.clone());
    }
    wire
}

fn status(status: TaskStatus) -> rmcp::model::TaskStatus {
    match status {
        TaskStatus::Working => rmcp::model::TaskStatus::Working,
        TaskStatus::InputRequired => rmcp::model::TaskStatus::InputRequired,
        TaskStatus::Completed => rmcp::model::TaskStatus::Completed,
        TaskStatus::Failed => rmcp::model::TaskStatus::Failed,
        TaskStatus::Cancelled => rmcp::model::TaskStatus::Cancelled,
    }
}

/// The JSON-RPC error of a failed task: its error's type and message, as an internal error.
fn failed(task: &Task) -> JsonObject {
    let error = task
        .error()
        .unwrap_or_else(|| ToolError::internal("the task failed"));
    let object = json!({
        "code": rmcp::model::ErrorCode::INTERNAL_ERROR.0,
        "message": error.message(),
        "data": {"type": error.kind()},
    });
    match object {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// The task a request named, or its error: `-32602` for a task unknown to its caller.
fn found(id: &str, task: Result<Option<Task>, ToolError>) -> Result<Task, ErrorData> {
    task.map_err(|e| store_error(&e))?
        .ok_or_else(|| unknown(id))
}

fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown task: {id}"), None)
}

fn store_error(e: &ToolError) -> ErrorData {
    ErrorData::internal_error(e.message().to_owned(), Some(json!({"type": e.kind()})))
}
