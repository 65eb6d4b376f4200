//! Long calls as tasks: what a task is, where it is kept, how it runs. Public as
//! [`registry::task`](crate::registry::task), where it is described.

mod detach;
mod memory;
mod run;

pub use crate::tool::{TaskDetach, TaskMode};
pub(crate) use detach::{DetachPoint, SwitchPeer};
pub use memory::MemoryTaskStore;
pub(crate) use run::TaskSettings;
pub use run::Tasks;

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::tool::error::ToolError;

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for answers to its questions.
    InputRequired,
    /// Ended with the tool's answer (its own error included).
    Completed,
    /// Ended without the tool's answer: a panic, its time limit, or its outcome unknown.
    Failed,
    /// Cancelled before it ended.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended.
    #[must_use]
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// The name the wire uses: `working`, `input_required`, `completed`, `failed`, `cancelled`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// A task as its store keeps it. Times are milliseconds since the Unix epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Task {
    /// Its id: `task-` and 32 random hexadecimal digits.
    pub id: String,
    /// The tool called.
    pub tool: String,
    /// Who started it; `None` for a caller without one.
    pub principal: Option<String>,
    /// Where it is.
    pub status: TaskStatus,
    /// A word on its status, for people.
    pub message: Option<String>,
    /// When it was created.
    pub created_ms: u64,
    /// When its status last changed.
    pub updated_ms: u64,
    /// How long it is kept after its creation.
    pub ttl_ms: u64,
    /// How often a caller should ask for it.
    pub poll_ms: u64,
    /// Until when the replica running it answers for it; renewed while it runs.
    pub lease_until_ms: u64,
    /// The call's envelope, as JSON, once it ended (completed, failed or cancelled).
    pub outcome: Option<Value>,
    /// The questions it waits on, by key, in MCP's `inputRequests` form.
    pub questions: BTreeMap<String, Value>,
    /// Answers given and not yet taken by the running call, by key.
    pub answers: BTreeMap<String, Value>,
    /// A cancel was asked for.
    pub cancel_requested: bool,
    /// A call started detached, waiting for a server to take it: what it runs. `None` once a
    /// server has claimed it, and for a task started where it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued: Option<QueuedCall>,
}

/// A call started detached ([`Registry::queue_task`](crate::Registry::queue_task)), as a server
/// that claims it runs it: its arguments and its caller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct QueuedCall {
    /// The call's arguments.
    pub arguments: Value,
    /// The front end it came through ([`Source::as_str`](crate::Source::as_str)).
    pub source: String,
    /// The caller's roles.
    pub roles: Vec<String>,
    /// Whether the caller confirmed it (a destructive tool's `--yes`).
    pub confirmed: bool,
}

impl Task {
    /// Whether `principal` may read, answer or cancel it: the principal that started it.
    #[must_use]
    pub fn belongs_to(&self, principal: Option<&str>) -> bool {
        self.principal.as_deref() == principal
    }

    /// When it is gone.
    #[must_use]
    pub fn expires_ms(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }

    /// Adds the question `key` the running call asks, making it `input_required`, unless it
    /// has ended: what [`TaskStore::ask`] does to the task.
    pub fn ask(&mut self, key: &str, question: &Value) {
        if !self.status.is_terminal() {
            self.questions.insert(key.to_owned(), question.clone());
            self.status = TaskStatus::InputRequired;
            self.updated_ms = now_ms();
        }
    }

    /// Gives `answers` to the questions they name, ignoring the others; without questions left
    /// it is `working` again: what [`TaskStore::answer`] does to the task.
    pub fn give(&mut self, answers: &Map<String, Value>) {
        for (key, answer) in answers {
            if self.questions.remove(key).is_some() {
                self.answers.insert(key.clone(), answer.clone());
            }
        }
        if self.questions.is_empty() && self.status == TaskStatus::InputRequired {
            self.status = TaskStatus::Working;
            self.updated_ms = now_ms();
        }
    }

    /// Ends it with `status` and `outcome`, unless it has already ended; `true` when this ended
    /// it: what [`TaskStore::finish`] does to the task.
    pub fn end(&mut self, status: TaskStatus, message: Option<&str>, outcome: &Value) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.status = status;
        self.message = message.map(str::to_owned);
        self.outcome = Some(outcome.clone());
        self.questions.clear();
        self.answers.clear();
        self.updated_ms = now_ms();
        true
    }

    /// Its JSON as HTTP and the command line show it: `id`, `tool`, `status`, `message`,
    /// `created_at`, `updated_at`, `ttl_ms`, `poll_interval_ms`, its `questions` while it
    /// waits, its `outcome` (the call's envelope) once it ended.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let mut body = serde_json::json!({
            "id": self.id,
            "tool": self.tool,
            "status": self.status.as_str(),
            "created_at": rfc3339(self.created_ms),
            "updated_at": rfc3339(self.updated_ms),
            "ttl_ms": self.ttl_ms,
            "poll_interval_ms": self.poll_ms,
        });
        if let Some(message) = &self.message {
            body["message"] = Value::from(message.as_str());
        }
        if self.status == TaskStatus::InputRequired {
            body["questions"] = Value::Object(Map::from_iter(self.questions.clone()));
        }
        if let Some(outcome) = &self.outcome {
            body["outcome"] = outcome.clone();
        }
        body
    }

    /// The tool's result, once it completed with one.
    #[must_use]
    pub fn result(&self) -> Option<&Value> {
        self.outcome.as_ref()?.get("result")
    }

    /// Why it has no result, once it ended without one: the tool's error, the pipeline's, or
    /// its outcome unknown.
    #[must_use]
    pub fn error(&self) -> Option<ToolError> {
        self.outcome
            .as_ref()?
            .get("error")
            .map(ToolError::from_wire)
    }
}

/// A change of one task, applied by [`TaskStore::modify`].
pub type TaskChange<'a> = &'a mut (dyn FnMut(&mut Task) + Send);

/// Where tasks are kept: [`MemoryTaskStore`] in the process (the default), or an engine
/// several replicas share. An engine writes new tasks, reads them, changes one atomically
/// ([`modify`](Self::modify)) and hands queued ones out; every other change is one `modify`
/// (overridable, for an engine that does better). A task past its time to live is as if it had
/// never been.
pub trait TaskStore: Send + Sync + 'static {
    /// Keeps a new task.
    fn create<'a>(&'a self, task: &'a Task) -> BoxFuture<'a, Result<(), ToolError>>;

    /// The task `id`, unless unknown or expired.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Task>, ToolError>>;

    /// Applies `change` to the task `id` as one atomic step, never over another's change made
    /// meanwhile (the change may be applied again to the task as it then is). `false` when the
    /// task is unknown.
    fn modify<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange<'a>,
    ) -> BoxFuture<'a, Result<bool, ToolError>>;

    /// Takes one queued task ([`Task::queued`]) for this replica to run, its lease until
    /// `lease_until_ms`: answered with its queued call, while the store keeps it taken (no
    /// longer queued). `None` when none waits. No two replicas take the same task.
    fn claim(&self, lease_until_ms: u64) -> BoxFuture<'_, Result<Option<Task>, ToolError>>;

    /// Whether replicas in other processes see these tasks: a detached call waits in a store
    /// that a running server shares.
    fn shared(&self) -> bool {
        true
    }

    /// Adds the question `key` the running call asks, and makes the task `input_required`
    /// ([`Task::ask`]).
    fn ask<'a>(
        &'a self,
        id: &'a str,
        key: &'a str,
        question: &'a Value,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            self.modify(id, &mut |t| t.ask(key, question))
                .await
                .map(drop)
        })
    }

    /// Gives `answers` to the questions they name ([`Task::give`]). `false` when the task is
    /// unknown.
    fn answer<'a>(
        &'a self,
        id: &'a str,
        answers: &'a Map<String, Value>,
    ) -> BoxFuture<'a, Result<bool, ToolError>> {
        Box::pin(async move { self.modify(id, &mut |t| t.give(answers)).await })
    }

    /// The answers given since the running call last took them, taken.
    fn take_answers<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<BTreeMap<String, Value>, ToolError>> {
        Box::pin(async move {
            // Read first: most polls find nothing to take, and need no change.
            if self.get(id).await?.is_none_or(|t| t.answers.is_empty()) {
                return Ok(BTreeMap::new());
            }
            let mut taken = BTreeMap::new();
            self.modify(id, &mut |t| taken = std::mem::take(&mut t.answers))
                .await?;
            Ok(taken)
        })
    }

    /// Asks for the task to be cancelled. `false` when the task is unknown.
    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, ToolError>> {
        Box::pin(async move { self.modify(id, &mut |t| t.cancel_requested = true).await })
    }

    /// Renews the lease of the replica running the task, to `until_ms`.
    fn renew<'a>(&'a self, id: &'a str, until_ms: u64) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            self.modify(id, &mut |t| t.lease_until_ms = until_ms)
                .await
                .map(drop)
        })
    }

    /// Ends the task with `status` and `outcome`, unless it has already ended ([`Task::end`]).
    /// `true` when this ended it.
    fn finish<'a>(
        &'a self,
        id: &'a str,
        status: TaskStatus,
        message: Option<&'a str>,
        outcome: &'a Value,
    ) -> BoxFuture<'a, Result<bool, ToolError>> {
        Box::pin(async move {
            let mut ended = false;
            self.modify(id, &mut |t| ended = t.end(status, message, outcome))
                .await?;
            Ok(ended)
        })
    }

    /// Resolves when the task `id` may have been answered or cancelled, or after `within`,
    /// whichever comes first. The default waits `within`: the running call polls.
    fn changed<'a>(&'a self, id: &'a str, within: Duration) -> BoxFuture<'a, ()> {
        let _ = id;
        Box::pin(tokio::time::sleep(within))
    }
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// `ms` (since the Unix epoch) as an RFC 3339 time, to the millisecond, in UTC.
#[must_use]
pub fn rfc3339(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
