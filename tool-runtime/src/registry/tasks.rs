//! Calls run as tasks: started here, through the pipeline like every call.

use std::sync::Arc;

use serde_json::Value;

use tokio_util::sync::CancellationToken;

use super::{CallTool, Registry};
use crate::pipeline::Called;
use crate::task::{DetachPoint, QueuedCall, SwitchPeer, Task, TaskDetach, TaskMode, Tasks};
use crate::tool::caller::{Caller, Source};
use crate::tool::context::DetachHook;
use crate::tool::envelope::{Envelope, EnvelopeMeta};
use crate::tool::error::{ErrorKind, ToolError};

/// What [`Registry::begin_task`] came to.
#[derive(Debug)]
pub enum Started {
    /// The call ended, or asked its caller, before it detached: answer it as a call.
    Answered(Called),
    /// The task the call goes on as.
    Task(Task),
}

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

    /// Runs the call of `name` with `args` by `caller` as a task: from its start, as
    /// [`start_task`](Self::start_task) does, or, for a tool of `#[tool(detach = "explicit")]`,
    /// from where it calls [`CallContext::detach`](crate::CallContext::detach), answering as a
    /// call if it ends or asks before (a front end without a way to ask in the foreground gets
    /// the tool's `unsupported` error for its question).
    ///
    /// # Errors
    ///
    /// The task store's, when it cannot keep a task that starts with its call.
    pub async fn begin_task(
        self: &Arc<Self>,
        name: &str,
        args: Value,
        caller: Caller,
    ) -> Result<Started, ToolError> {
        let explicit = self
            .visible_tool(name, &caller)
            .is_some_and(|t| t.meta().detach == TaskDetach::Explicit);
        if explicit {
            Ok(self.handle_detachable(name, args, caller).await)
        } else {
            self.start_task(name, args, caller).await.map(Started::Task)
        }
    }

    /// Runs the call of `name` with `args` by `caller`, a tool of `#[tool(detach = "explicit")]`
    /// that may run as a task, until it ends or detaches
    /// ([`CallContext::detach`](crate::CallContext::detach)): then the call goes on, as the
    /// task answered here, cancelled by the task's cancel rather than by the request's.
    pub(crate) async fn handle_detachable(
        self: &Arc<Self>,
        name: &str,
        args: Value,
        caller: Caller,
    ) -> Started {
        let request = caller.cancellation_token().cloned().unwrap_or_default();
        let cancel = CancellationToken::new();
        let peer = Arc::new(SwitchPeer::new(caller.given_peer().cloned()));
        let (point, mut detached) = DetachPoint::new(
            self.tasks.clone(),
            name,
            caller.given_principal(),
            Arc::clone(&peer),
        );
        let caller = caller
            .cancellation(cancel.clone())
            .peer(peer)
            .extension(DetachHook(Arc::new(point)));
        let registry = Arc::clone(self);
        let tool = name.to_owned();
        let mut run =
            tokio::spawn(async move { registry.handle(CallTool::new(&tool, args), caller).await });
        let task = tokio::select! {
            answer = &mut run => return Started::Answered(joined(name, answer)),
            task = &mut detached => task.ok(),
            () = request.cancelled() => {
                cancel.cancel();
                detached.try_recv().ok()
            }
        };
        let Some(task) = task else {
            return Started::Answered(joined(name, run.await));
        };
        tracing::info!(target: "tool_runtime::task", task = %task.id, tool = %name, "the call goes on as a task");
        let tool = name.to_owned();
        self.tasks.keep(
            &task.id,
            cancel,
            Box::pin(async move { joined(&tool, run.await).envelope }),
        );
        Started::Task(task)
    }

    /// Leaves the call of `name` with `args` by `caller` as a task for a server sharing the
    /// task store to run ([`run_queued_tasks`](Self::run_queued_tasks)), and answers it at once:
    /// a call started detached, which outlives the process that started it. A server that
    /// takes it runs it through the whole pipeline as this caller (its source, principal,
    /// roles and confirmation); none within a minute, and the task fails saying so.
    ///
    /// # Errors
    ///
    /// `unavailable` when the task store is this process's own (nothing else would run the
    /// call), `unknown_tool` for a tool `caller` may not see, `invalid_request` for a tool
    /// that never runs as a task, and the store's own.
    pub async fn queue_task(
        &self,
        name: &str,
        args: Value,
        caller: &Caller,
    ) -> Result<Task, ToolError> {
        if !self.tasks.shared() {
            return Err(ToolError::new(
                ErrorKind::UNAVAILABLE,
                "a detached call waits for a server in a task store servers share \
                 (PostgreSQL or Redis); this one is this process's memory, which ends with it",
            ));
        }
        match self.task_mode(name, caller) {
            None => return Err(self.unknown_tool(name, caller)),
            Some(TaskMode::Forbidden) => {
                return Err(ToolError::new(
                    ErrorKind::INVALID_REQUEST,
                    format!("`{name}` does not run as a task (`#[tool(task = ...)]`)"),
                ));
            }
            Some(_) => {}
        }
        let queued = QueuedCall {
            arguments: args,
            source: caller.source().as_str().to_owned(),
            roles: caller.given_roles().to_vec(),
            confirmed: caller.confirms(),
        };
        self.tasks
            .queue(name, caller.given_principal(), queued)
            .await
    }

    /// Takes and runs the tasks left for a server ([`queue_task`](Self::queue_task)) until
    /// `stop` is cancelled: what `serve` does beside serving.
    pub async fn run_queued_tasks(self: Arc<Self>, stop: CancellationToken) {
        loop {
            loop {
                match self.tasks.claim().await {
                    Ok(Some(task)) => self.run_claimed(task),
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!(target: "tool_runtime::task", error = %e, "queued tasks could not be read");
                        break;
                    }
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(self.tasks.poll()) => {}
            }
        }
    }

    /// Runs a task this replica claimed, as the caller that left it.
    fn run_claimed(self: &Arc<Self>, task: Task) {
        let Some(queued) = task.queued else {
            return;
        };
        let mut caller = Caller::new(Source::from_name(&queued.source).unwrap_or(Source::Internal))
            .roles(queued.roles)
            .confirm(queued.confirmed);
        if let Some(principal) = task.principal {
            caller = caller.principal(principal);
        }
        let registry = Arc::clone(self);
        let tool = task.tool;
        let args = queued.arguments;
        self.tasks.run(&task.id, move |id, cancel, peer| {
            let caller = caller.for_task(id, cancel, peer);
            Box::pin(async move {
                registry
                    .handle(CallTool::new(&tool, args), caller)
                    .await
                    .envelope
            })
        });
    }
}

/// A spawned call's answer; an internal error if it did not end (its runtime shut down).
fn joined(name: &str, answer: Result<Called, tokio::task::JoinError>) -> Called {
    answer.unwrap_or_else(|e| Called {
        envelope: Envelope {
            tool: name.to_owned(),
            outcome: Err(ToolError::internal(format!("the call did not end: {e}"))),
            meta: EnvelopeMeta {
                request_id: String::new(),
                duration_ms: None,
                truncated: false,
            },
        },
        tool: None,
        question: None,
    })
}
