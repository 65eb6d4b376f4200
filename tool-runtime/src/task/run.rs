//! Running a task: its record made, its call run on this process under a lease, the answers
//! and the cancel given to any replica brought to the call, and its outcome kept.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{MemoryTaskStore, QueuedCall, Task, TaskStatus, TaskStore, now_ms};
use crate::tool::envelope::{Envelope, EnvelopeMeta};
use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::input::{expected, read, wire};
use crate::tool::peer::{InputRequest, InputResponse, Peer};

/// What a task whose replica died says, once its lease has expired.
pub(crate) const OUTCOME_UNKNOWN: &str =
    "outcome unknown: the server running the task stopped before it ended";

/// What a detached task says when no server took it within [`QUEUE_WAIT`].
pub(crate) const NOT_TAKEN: &str =
    "no server took the task: none was running on the task store it waited in";

/// How long a detached task waits for a server to take it.
pub(crate) const QUEUE_WAIT: Duration = Duration::from_secs(60);

/// Where a registry keeps its tasks, and for how long.
#[derive(Clone)]
pub(crate) struct TaskSettings {
    pub(crate) store: Arc<dyn TaskStore>,
    /// How long a task is kept after its creation.
    pub(crate) ttl: Duration,
    /// How often a caller should ask for a task, and a running call for its answers.
    pub(crate) poll: Duration,
    /// How long a replica answers for a running task without renewing its lease.
    pub(crate) lease: Duration,
}

impl Default for TaskSettings {
    fn default() -> Self {
        Self {
            store: Arc::new(MemoryTaskStore::new()),
            ttl: Duration::from_secs(3600),
            poll: Duration::from_millis(500),
            lease: Duration::from_secs(15),
        }
    }
}

/// A registry's tasks: started by the front ends through
/// [`Registry::start_task`](crate::Registry::start_task), read, answered and cancelled here on
/// behalf of a principal, who sees only the tasks it started.
#[derive(Clone)]
pub struct Tasks {
    settings: Arc<TaskSettings>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("ttl", &self.settings.ttl)
            .field("poll", &self.settings.poll)
            .field("lease", &self.settings.lease)
            .finish_non_exhaustive()
    }
}

impl Tasks {
    pub(crate) fn new(settings: TaskSettings) -> Self {
        Self {
            settings: Arc::new(settings),
        }
    }

    /// A new task calling `tool` for `principal`, `working`, answered for until `lease`
    /// from now.
    fn record(
        &self,
        tool: &str,
        principal: Option<&str>,
        lease: Duration,
        queued: Option<QueuedCall>,
    ) -> Result<Task, ToolError> {
        let now = now_ms();
        Ok(Task {
            id: new_id()?,
            tool: tool.to_owned(),
            principal: principal.map(str::to_owned),
            status: TaskStatus::Working,
            message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: millis(self.settings.ttl),
            poll_ms: millis(self.settings.poll),
            lease_until_ms: now + millis(lease),
            outcome: None,
            questions: BTreeMap::new(),
            answers: BTreeMap::new(),
            cancel_requested: false,
            queued,
        })
    }

    /// Creates a task calling `tool` for `principal`, then runs the call `run` makes (given
    /// the task's id, its cancellation and its peer) on this process, keeping its outcome.
    pub(crate) async fn start(
        &self,
        tool: &str,
        principal: Option<&str>,
        run: impl FnOnce(&str, CancellationToken, Arc<dyn Peer>) -> BoxFuture<'static, Envelope>,
    ) -> Result<Task, ToolError> {
        let task = self.create(tool, principal).await?;
        self.run(&task.id, run);
        Ok(task)
    }

    /// Creates a task calling `tool` for `principal`, `working`, run by this process.
    pub(crate) async fn create(
        &self,
        tool: &str,
        principal: Option<&str>,
    ) -> Result<Task, ToolError> {
        let task = self.record(tool, principal, self.settings.lease, None)?;
        self.settings.store.create(&task).await?;
        Ok(task)
    }

    /// Creates a task calling `tool` for `principal` that waits, `queued`, for a server sharing
    /// the store to claim and run it, for at most [`QUEUE_WAIT`].
    pub(crate) async fn queue(
        &self,
        tool: &str,
        principal: Option<&str>,
        queued: QueuedCall,
    ) -> Result<Task, ToolError> {
        let task = self.record(tool, principal, QUEUE_WAIT, Some(queued))?;
        self.settings.store.create(&task).await?;
        Ok(task)
    }

    /// A queued task this replica now runs, if one waits.
    pub(crate) async fn claim(&self) -> Result<Option<Task>, ToolError> {
        let until = now_ms() + millis(self.settings.lease);
        self.settings.store.claim(until).await
    }

    /// How often to look for queued tasks.
    pub(crate) fn poll(&self) -> Duration {
        self.settings.poll
    }

    /// Runs the call `run` makes as the task `id`'s, on this process.
    pub(crate) fn run(
        &self,
        id: &str,
        run: impl FnOnce(&str, CancellationToken, Arc<dyn Peer>) -> BoxFuture<'static, Envelope>,
    ) {
        let cancel = CancellationToken::new();
        let call = run(id, cancel.clone(), self.peer(id));
        self.keep(id, cancel, call);
    }

    /// The peer of the task `id`'s call: its questions go to the task's record, and their
    /// answers come from there.
    pub(crate) fn peer(&self, id: &str) -> Arc<dyn Peer> {
        Arc::new(TaskPeer {
            store: Arc::clone(&self.settings.store),
            id: id.to_owned(),
            poll: self.settings.poll,
            given: Mutex::new(BTreeMap::new()),
        })
    }

    /// Keeps the task `id` while `call`, its call, runs on: renews its lease, cancels `cancel`
    /// when the task is cancelled, and keeps its outcome.
    pub(crate) fn keep(
        &self,
        id: &str,
        cancel: CancellationToken,
        call: BoxFuture<'static, Envelope>,
    ) {
        tokio::spawn(keep(
            Arc::clone(&self.settings),
            id.to_owned(),
            cancel,
            call,
        ));
    }

    /// Whether other processes share these tasks.
    pub(crate) fn shared(&self) -> bool {
        self.settings.store.shared()
    }

    /// The task `id`, if `principal` started it and it is kept. A task whose lease expired
    /// before it ended is `failed`, its outcome unknown.
    pub async fn get(&self, id: &str, principal: Option<&str>) -> Result<Option<Task>, ToolError> {
        let store = &self.settings.store;
        let Some(task) = store.get(id).await? else {
            return Ok(None);
        };
        if !task.belongs_to(principal) {
            return Ok(None);
        }
        if task.status.is_terminal() || task.lease_until_ms >= now_ms() {
            return Ok(Some(task));
        }
        let why = if task.queued.is_some() {
            NOT_TAKEN
        } else {
            OUTCOME_UNKNOWN
        };
        let lost = Envelope {
            tool: task.tool.clone(),
            outcome: Err(ToolError::new(ErrorKind::UNAVAILABLE, why)),
            meta: EnvelopeMeta {
                request_id: id.to_owned(),
                duration_ms: None,
                truncated: false,
            },
        };
        store
            .finish(id, TaskStatus::Failed, Some(why), &lost.to_json())
            .await?;
        store.get(id).await
    }

    /// Gives `answers` to the questions of the task `id`; answers to questions it does not
    /// wait on are ignored. `false` when `principal` has no such task.
    pub async fn answer(
        &self,
        id: &str,
        principal: Option<&str>,
        answers: &Map<String, Value>,
    ) -> Result<bool, ToolError> {
        if self.get(id, principal).await?.is_none() {
            return Ok(false);
        }
        self.settings.store.answer(id, answers).await
    }

    /// Asks for the task `id` to be cancelled (an ended task stays as it ended). `None` when
    /// `principal` has no such task.
    pub async fn cancel(
        &self,
        id: &str,
        principal: Option<&str>,
    ) -> Result<Option<Task>, ToolError> {
        let Some(task) = self.get(id, principal).await? else {
            return Ok(None);
        };
        if !task.status.is_terminal() {
            self.settings.store.cancel(id).await?;
        }
        Ok(Some(task))
    }

    /// Waits until the task `id` may have changed, or `within`.
    pub async fn changed(&self, id: &str, within: Duration) {
        self.settings.store.changed(id, within).await;
    }
}

/// Runs `call`, the task `id`'s, to its end: renews the lease meanwhile, cancels the call when
/// a cancel was asked for, and keeps the outcome.
async fn keep(
    settings: Arc<TaskSettings>,
    id: String,
    cancel: CancellationToken,
    call: BoxFuture<'static, Envelope>,
) {
    let store = &settings.store;
    let every = (settings.lease / 3).min(Duration::from_secs(1));
    let mut call = call;
    let envelope = loop {
        tokio::select! {
            envelope = &mut call => break envelope,
            () = store.changed(&id, every) => {
                if let Err(e) = store.renew(&id, now_ms() + millis(settings.lease)).await {
                    tracing::warn!(target: "tool_runtime::task", task = %id, error = %e, "the task's lease could not be renewed");
                }
                if let Ok(Some(task)) = store.get(&id).await
                    && task.cancel_requested
                {
                    cancel.cancel();
                }
            }
        }
    };
    let status = if cancel.is_cancelled() {
        TaskStatus::Cancelled
    } else {
        match envelope.outcome.as_ref().map_err(ToolError::kind) {
            Err(kind)
                if *kind == ErrorKind::INTERNAL
                    || *kind == ErrorKind::TIMEOUT
                    || *kind == ErrorKind::UNAVAILABLE =>
            {
                TaskStatus::Failed
            }
            _ => TaskStatus::Completed,
        }
    };
    let outcome = envelope.to_json();
    // The store may be briefly unreachable: the outcome is worth a few tries.
    for attempt in 0..5u32 {
        match store.finish(&id, status, None, &outcome).await {
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(target: "tool_runtime::task", task = %id, error = %e, attempt, "the task's outcome could not be kept");
                tokio::time::sleep(Duration::from_millis(200) * 2u32.pow(attempt)).await;
            }
        }
    }
    tracing::error!(target: "tool_runtime::task", task = %id, %outcome, "the task's outcome was lost; here it is");
}

/// The peer of a task's call: its questions go to the task's record, and it waits for their
/// answers there, from whichever replica they were given to.
struct TaskPeer {
    store: Arc<dyn TaskStore>,
    id: String,
    poll: Duration,
    /// Answers taken from the store and not yet read, by key: calls waiting together share them.
    given: Mutex<BTreeMap<String, Value>>,
}

impl TaskPeer {
    fn given(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Value>> {
        self.given
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Peer for TaskPeer {
    fn ask(
        &self,
        key: &str,
        request: InputRequest,
    ) -> BoxFuture<'_, Result<InputResponse, ToolError>> {
        let key = key.to_owned();
        Box::pin(async move {
            self.store.ask(&self.id, &key, &wire(&request)).await?;
            loop {
                if let Some(answer) = self.given().remove(&key) {
                    return read(&request, &answer).ok_or_else(|| {
                        ToolError::new(
                            ErrorKind::INVALID_REQUEST,
                            format!("the answer to `{key}` is not {}", expected(&request)),
                        )
                    });
                }
                let taken = self.store.take_answers(&self.id).await?;
                if taken.is_empty() {
                    self.store.changed(&self.id, self.poll).await;
                } else {
                    self.given().extend(taken);
                }
            }
        })
    }
}

/// A new task id: `task-` and 128 random bits in hexadecimal.
fn new_id() -> Result<String, ToolError> {
    let mut random = [0u8; 16];
    getrandom::fill(&mut random).map_err(ToolError::internal)?;
    Ok(format!("task-{}", crate::tool::hex(&random)))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
