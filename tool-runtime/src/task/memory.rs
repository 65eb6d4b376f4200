//! Tasks kept in the process: the default store, for one replica.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use super::{Task, TaskChange, TaskStore, now_ms};
use crate::tool::error::{ErrorKind, ToolError};

/// How many tasks the store keeps at most: beyond, the oldest ended tasks are forgotten before
/// they expire, and when every task kept is still running a new one is refused as
/// `unavailable`.
const MAX_TASKS: usize = 10_000;

/// A [`TaskStore`] in the process's memory: the default. Tasks are gone with the process, and
/// other replicas do not see them; an answer or a cancel reaches the running call at once.
#[derive(Debug)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, Task>>,
    /// Bumped on every answer and cancel, to wake the calls waiting on one.
    changes: tokio::sync::watch::Sender<u64>,
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self {
            tasks: Mutex::new(HashMap::new()),
            changes: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl MemoryTaskStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `f` on the task `id` if it is kept and not expired.
    fn with<T>(&self, id: &str, f: impl FnOnce(&mut Task) -> T) -> Option<T> {
        let mut tasks = self
            .tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = now_ms();
        match tasks.get_mut(id) {
            Some(task) if task.expires_ms() > now => Some(f(task)),
            Some(_) => {
                tasks.remove(id);
                None
            }
            None => None,
        }
    }

    fn changed_now(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }
}

impl TaskStore for MemoryTaskStore {
    fn create<'a>(&'a self, task: &'a Task) -> BoxFuture<'a, Result<(), ToolError>> {
        let mut tasks = self
            .tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if tasks.len() >= MAX_TASKS {
            let now = now_ms();
            tasks.retain(|_, t| t.expires_ms() > now);
        }
        if tasks.len() >= MAX_TASKS {
            // The oldest ended tasks are forgotten first, a tenth of the store at a time.
            let mut ended: Vec<(u64, String)> = tasks
                .values()
                .filter(|t| t.status.is_terminal())
                .map(|t| (t.updated_ms, t.id.clone()))
                .collect();
            ended.sort_unstable();
            for (_, id) in ended.into_iter().take(MAX_TASKS / 10) {
                tasks.remove(&id);
            }
        }
        let result = if tasks.len() >= MAX_TASKS {
            Err(ToolError::new(
                ErrorKind::UNAVAILABLE,
                "too many tasks are kept; try again later",
            ))
        } else {
            tasks.insert(task.id.clone(), task.clone());
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Task>, ToolError>> {
        Box::pin(std::future::ready(Ok(self.with(id, |t| t.clone()))))
    }

    fn modify<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange<'a>,
    ) -> BoxFuture<'a, Result<bool, ToolError>> {
        Box::pin(std::future::ready(Ok(self.with(id, change).is_some())))
    }

    /// At once, and wakes the running call waiting for it.
    fn answer<'a>(
        &'a self,
        id: &'a str,
        answers: &'a Map<String, Value>,
    ) -> BoxFuture<'a, Result<bool, ToolError>> {
        let found = self.with(id, |t| t.give(answers)).is_some();
        self.changed_now();
        Box::pin(std::future::ready(Ok(found)))
    }

    /// At once, and wakes the running call so that it sees the cancel.
    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, ToolError>> {
        let found = self.with(id, |t| t.cancel_requested = true).is_some();
        self.changed_now();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn claim(&self, lease_until_ms: u64) -> BoxFuture<'_, Result<Option<Task>, ToolError>> {
        let mut tasks = self
            .tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = now_ms();
        let oldest = tasks
            .values()
            .filter(|t| t.queued.is_some() && t.expires_ms() > now)
            .min_by_key(|t| t.created_ms)
            .map(|t| t.id.clone());
        let claimed = oldest.and_then(|id| tasks.get_mut(&id)).map(|t| {
            let queued = t.clone();
            t.queued = None;
            t.lease_until_ms = lease_until_ms;
            queued
        });
        Box::pin(std::future::ready(Ok(claimed)))
    }

    fn shared(&self) -> bool {
        false
    }

    fn changed<'a>(&'a self, id: &'a str, within: Duration) -> BoxFuture<'a, ()> {
        let _ = id;
        let mut changes = self.changes.subscribe();
        Box::pin(async move {
            let _ = tokio::time::timeout(within, changes.changed()).await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::TaskStatus;
    use std::collections::BTreeMap;

    fn task(id: usize, status: TaskStatus) -> Task {
        let now = now_ms();
        Task {
            id: format!("task-{id}"),
            tool: "t".into(),
            principal: None,
            status,
            message: None,
            created_ms: now,
            updated_ms: now + u64::try_from(id).unwrap(),
            ttl_ms: 3_600_000,
            poll_ms: 500,
            lease_until_ms: now + 15_000,
            outcome: None,
            questions: BTreeMap::new(),
            answers: BTreeMap::new(),
            cancel_requested: false,
            queued: None,
        }
    }

    #[tokio::test]
    async fn a_full_store_forgets_its_oldest_ended_tasks_and_refuses_when_all_run() {
        let store = MemoryTaskStore::new();
        for i in 0..MAX_TASKS {
            store.create(&task(i, TaskStatus::Completed)).await.unwrap();
        }
        store
            .create(&task(MAX_TASKS, TaskStatus::Working))
            .await
            .unwrap();
        assert!(
            store.get("task-0").await.unwrap().is_none(),
            "the oldest is forgotten"
        );
        assert!(
            store
                .get(&format!("task-{}", MAX_TASKS - 1))
                .await
                .unwrap()
                .is_some()
        );
        let running = MemoryTaskStore::new();
        for i in 0..MAX_TASKS {
            running.create(&task(i, TaskStatus::Working)).await.unwrap();
        }
        let refused = running
            .create(&task(MAX_TASKS, TaskStatus::Working))
            .await
            .unwrap_err();
        assert_eq!(refused.kind(), &ErrorKind::UNAVAILABLE);
    }
}
