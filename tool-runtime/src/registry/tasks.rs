//! Calls run as tasks: started here, through the pipeline like every call.

use std::sync::Arc;

use serde_json::Value;

use super::{CallTool, Registry};
use crate::task::{Task, TaskMode, Tasks};
use crate::tool::caller::Caller;
use crate::tool::error::ToolError;

impl Registry {
    /// The calls run as tasks: read, answer and cancel them for their principal.
    #[must_use]
    pub fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// Whether the calls of `name` may run as tasks, if `caller` may see that tool.
    #[must_use]
    pub fn task_mode(&self, name: &str, caller: &Caller) -> Option<TaskMode> {
        self.visible_tool(name, caller).map(|t| t.meta().task)
    }

    /// Starts the call of `name` with `args` by `caller` as a task, and answers it at once,
    /// `working`. The call runs on this process, through the whole pipeline once, as a call
    /// would (its request id the task's id, its cancellation and its questions the task's),
    /// and its envelope is the task's outcome. A front end confirms a destructive call before
    /// it starts one: unconfirmed, the call ends `confirmation_required`.
    ///
    /// # Errors
    ///
    /// The task store's, when it cannot keep the task.
    pub async fn start_task(
        self: &Arc<Self>,
        name: &str,
        args: Value,
        caller: Caller,
    ) -> Result<Task, ToolError> {
        let principal = caller.given_principal().map(str::to_owned);
        let registry = Arc::clone(self);
        let tool = name.to_owned();
        self.tasks
            .start(name, principal.as_deref(), move |id, cancel, peer| {
                let caller = caller.for_task(id, cancel, peer);
                Box::pin(async move {
                    registry
                        .handle(CallTool::new(&tool, args), caller)
                        .await
                        .envelope
                })
            })
            .await
    }
}
