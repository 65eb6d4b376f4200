//! A call that becomes a task part-way (`#[tool(detach = "explicit")]`): it answers in its
//! request until the tool calls [`CallContext::detach`](crate::CallContext::detach); there its
//! task is made, its questions from then on go to the task, and its caller is answered with the
//! task while the call goes on.

use std::sync::{Arc, RwLock};

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::sync::{Mutex, oneshot};

use super::{Task, Tasks};
use crate::tool::context::Detach;
use crate::tool::error::ToolError;
use crate::tool::peer::{
    Elicited, InputRequest, InputResponse, LogLevel, Peer, Root, Sample, Sampled, unsupported,
};

/// Where a call may become a task: given to the call as its
/// [`DetachHook`](crate::tool::context::DetachHook).
pub(crate) struct DetachPoint {
    tasks: Tasks,
    tool: String,
    principal: Option<String>,
    peer: Arc<SwitchPeer>,
    /// Taken when the call detaches: the task goes to the front end waiting for it.
    waiting: Mutex<Option<oneshot::Sender<Task>>>,
}

impl DetachPoint {
    /// The point of a call of `tool` for `principal`, whose peer is `peer` until it detaches,
    /// and the receiver its task comes to.
    pub(crate) fn new(
        tasks: Tasks,
        tool: &str,
        principal: Option<&str>,
        peer: Arc<SwitchPeer>,
    ) -> (Self, oneshot::Receiver<Task>) {
        let (sender, receiver) = oneshot::channel();
        let point = Self {
            tasks,
            tool: tool.to_owned(),
            principal: principal.map(str::to_owned),
            peer,
            waiting: Mutex::new(Some(sender)),
        };
        (point, receiver)
    }

    /// Makes the call a task, once: the task's record, its peer, and the front end told.
    async fn detach_once(&self) -> Result<(), ToolError> {
        let mut waiting = self.waiting.lock().await;
        if waiting.is_none() {
            return Ok(());
        }
        let task = self
            .tasks
            .create(&self.tool, self.principal.as_deref())
            .await?;
        self.peer.switch(self.tasks.peer(&task.id));
        if let Some(sender) = waiting.take() {
            // The front end stopped waiting only when its request was cancelled, which
            // cancels the call too: the task then ends as cancelled.
            let _ = sender.send(task);
        }
        Ok(())
    }
}

impl Detach for DetachPoint {
    fn detach(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(self.detach_once())
    }
}

/// A peer that can be replaced while the call runs: the request's until the call detaches,
/// the task's after.
pub(crate) struct SwitchPeer {
    current: RwLock<Option<Arc<dyn Peer>>>,
}

impl SwitchPeer {
    pub(crate) fn new(peer: Option<Arc<dyn Peer>>) -> Self {
        Self {
            current: RwLock::new(peer),
        }
    }

    fn switch(&self, peer: Arc<dyn Peer>) {
        *self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(peer);
    }

    fn current(&self) -> Option<Arc<dyn Peer>> {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Peer for SwitchPeer {
    fn log(&self, level: LogLevel, data: Value) {
        if let Some(peer) = self.current() {
            peer.log(level, data);
        }
    }

    fn sample(&self, request: Sample) -> BoxFuture<'_, Result<Sampled, ToolError>> {
        let peer = self.current();
        Box::pin(async move {
            match peer {
                Some(peer) => peer.sample(request).await,
                None => Err(unsupported("sampling")),
            }
        })
    }

    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicited<Map<String, Value>>, ToolError>> {
        let peer = self.current();
        Box::pin(async move {
            match peer {
                Some(peer) => peer.elicit(message, schema).await,
                None => Err(unsupported("elicitation")),
            }
        })
    }

    fn list_roots(&self) -> BoxFuture<'_, Result<Vec<Root>, ToolError>> {
        let peer = self.current();
        Box::pin(async move {
            match peer {
                Some(peer) => peer.list_roots().await,
                None => Err(unsupported("roots")),
            }
        })
    }

    fn ask(
        &self,
        key: &str,
        request: InputRequest,
    ) -> BoxFuture<'_, Result<InputResponse, ToolError>> {
        let peer = self.current();
        let key = key.to_owned();
        Box::pin(async move {
            match peer {
                Some(peer) => peer.ask(&key, request).await,
                None => Err(unsupported(match request {
                    InputRequest::Sample(_) => "sampling",
                    InputRequest::Elicit { .. } => "elicitation",
                    InputRequest::ListRoots => "roots",
                })),
            }
        })
    }

    fn close_stream(&self) -> bool {
        self.current().is_some_and(|peer| peer.close_stream())
    }
}
