//! `RedisTaskStore`: tasks in Redis, so that every replica answers for every task.

use futures_util::future::BoxFuture;

use super::Redis;
use crate::task::{Task, TaskChange, TaskStore};
use crate::tool::error::{ErrorKind, ToolError};

/// Replaces `KEYS[1]`'s value with `ARGV[2]`, keeping its expiry, only if it still is
/// `ARGV[1]`: a change made on a task as it was read, never over another's.
const SWAP: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0
";

/// How many times a change is tried again when another changed the task meanwhile.
const ATTEMPTS: usize = 32;

/// A [`TaskStore`] in Redis: each task is `{prefix}task:{id}`, its JSON, expiring with its time
/// to live. A change reads the task, changes it, and writes it back only if no one else wrote
/// it meanwhile (one small script), trying again otherwise. A running call learns of an answer
/// or a cancel by reading its task at least once a second.
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    redis: Redis,
    swap: ::redis::Script,
}

impl RedisTaskStore {
    /// The store on `redis`'s connection (also [`Redis::task_store`]).
    #[must_use]
    pub fn new(redis: Redis) -> Self {
        Self {
            redis,
            swap: ::redis::Script::new(SWAP),
        }
    }

    fn key(&self, id: &str) -> String {
        self.redis.key(&format!("task:{id}"))
    }

    async fn read(&self, id: &str) -> Result<Option<String>, ToolError> {
        let key = self.key(id);
        self.redis
            .run("reading a task", |mut c| async move {
                ::redis::cmd("GET").arg(key).query_async(&mut c).await
            })
            .await
    }

    /// Changes the task `id` with `change`; `None` when it is unknown or expired.
    async fn apply<T>(
        &self,
        id: &str,
        mut change: impl FnMut(&mut Task) -> T,
    ) -> Result<Option<T>, ToolError> {
        for _ in 0..ATTEMPTS {
            let Some(old) = self.read(id).await? else {
                return Ok(None);
            };
            let mut task = parse(&old)?;
            let answer = change(&mut task);
            let new = serde_json::to_string(&task).map_err(ToolError::internal)?;
            let key = self.key(id);
            let swap = &self.swap;
            let swapped: i64 = self
                .redis
                .run("changing a task", |mut c| async move {
                    swap.key(key).arg(old).arg(new).invoke_async(&mut c).await
                })
                .await?;
            if swapped == 1 {
                return Ok(Some(answer));
            }
        }
        Err(ToolError::new(
            ErrorKind::UNAVAILABLE,
            "the task changed too often to be changed; try again",
        ))
    }
}

fn parse(text: &str) -> Result<Task, ToolError> {
    serde_json::from_str(text).map_err(|e| {
        ToolError::new(
            ErrorKind::INTERNAL,
            format!("a task kept in Redis does not read as one: {e}"),
        )
    })
}

impl TaskStore for RedisTaskStore {
    fn create<'a>(&'a self, task: &'a Task) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            let key = self.key(&task.id);
            let value = serde_json::to_string(task).map_err(ToolError::internal)?;
            if !self
                .redis
                .set_new("keeping a task", key, value, task.ttl_ms)
                .await?
            {
                return Err(ToolError::internal("a task id was given twice"));
            }
            if task.queued.is_some() {
                let queue = self.redis.key("tasks:queued");
                let id = task.id.clone();
                self.redis
                    .run("queueing a task", |mut c| async move {
                        ::redis::cmd("RPUSH")
                            .arg(queue)
                            .arg(id)
                            .query_async::<i64>(&mut c)
                            .await
                    })
                    .await?;
            }
            Ok(())
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Task>, ToolError>> {
        Box::pin(async move { self.read(id).await?.as_deref().map(parse).transpose() })
    }

    fn modify<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange<'a>,
    ) -> BoxFuture<'a, Result<bool, ToolError>> {
        Box::pin(async move { Ok(self.apply(id, change).await?.is_some()) })
    }

    fn claim(&self, lease_until_ms: u64) -> BoxFuture<'_, Result<Option<Task>, ToolError>> {
        Box::pin(async move {
            // Each queued id is popped by one replica; one whose task expired meanwhile is
            // passed over.
            loop {
                let queue = self.redis.key("tasks:queued");
                let id: Option<String> = self
                    .redis
                    .run("taking a queued task", |mut c| async move {
                        ::redis::cmd("LPOP").arg(queue).query_async(&mut c).await
                    })
                    .await?;
                let Some(id) = id else {
                    return Ok(None);
                };
                let taken = self
                    .apply(&id, |t| {
                        let queued = t.clone();
                        t.queued = None;
                        t.lease_until_ms = lease_until_ms;
                        queued
                    })
                    .await?;
                if let Some(task) = taken.filter(|t| t.queued.is_some()) {
                    return Ok(Some(task));
                }
            }
        })
    }
}
