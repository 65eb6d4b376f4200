//! Tasks kept in PostgreSQL, so that every replica answers for every task: one row per task
//! (`tool_tasks`, the task as JSON), each change one transaction that locks the row. A running
//! call learns of an answer or a cancel by reading its row at least once a second.

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::Postgres;
use crate::task::{Task, TaskChange, TaskStore};
use crate::tool::error::{ErrorKind, ToolError};

/// The component whose migrations create the tasks' table.
pub const TASKS_COMPONENT: &str = "tool-runtime/tasks";

const MIGRATIONS: &[&str] = &["
CREATE TABLE tool_tasks (
    id text PRIMARY KEY,
    task jsonb NOT NULL,
    expires_at timestamptz NOT NULL,
    queued boolean NOT NULL DEFAULT false
);
CREATE INDEX tool_tasks_expiry ON tool_tasks (expires_at);
CREATE INDEX tool_tasks_queued ON tool_tasks (id) WHERE queued;
"];

/// A [`TaskStore`] in PostgreSQL: every replica on the same database reads and changes the
/// same tasks. A task past its time to live is not read, and is deleted by a later creation.
#[derive(Clone, Debug)]
pub struct PostgresTaskStore {
    postgres: Postgres,
}

impl PostgresTaskStore {
    /// Applies the store's migrations (component `tool-runtime/tasks`, the table `tool_tasks`).
    /// Fails when PostgreSQL cannot be reached (`unavailable`, naming it).
    pub async fn start(postgres: &Postgres) -> Result<Self, ToolError> {
        postgres.migrate(TASKS_COMPONENT, MIGRATIONS).await?;
        Ok(Self {
            postgres: postgres.clone(),
        })
    }

    /// Changes the task `id` with `change`, in one transaction holding its row; `None` when it
    /// is unknown or expired.
    async fn apply<T: Send>(
        &self,
        id: &str,
        change: impl FnOnce(&mut Task) -> T + Send,
    ) -> Result<Option<T>, ToolError> {
        let mut client = self.postgres.client().await?;
        let transaction = client
            .transaction()
            .await
            .map_err(|e| self.postgres.error(e))?;
        let row = transaction
            .query_opt(
                "SELECT task FROM tool_tasks WHERE id = $1 AND expires_at > now() FOR UPDATE",
                &[&id],
            )
            .await
            .map_err(|e| self.postgres.error(e))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let mut task = read(row.get(0))?;
        let answer = change(&mut task);
        transaction
            .execute(
                "UPDATE tool_tasks SET task = $2 WHERE id = $1",
                &[&id, &written(&task)?],
            )
            .await
            .map_err(|e| self.postgres.error(e))?;
        transaction
            .commit()
            .await
            .map_err(|e| self.postgres.error(e))?;
        Ok(Some(answer))
    }
}

fn read(value: Value) -> Result<Task, ToolError> {
    serde_json::from_value(value).map_err(|e| {
        ToolError::new(
            ErrorKind::INTERNAL,
            format!("a task kept in PostgreSQL does not read as one: {e}"),
        )
    })
}

fn written(task: &Task) -> Result<Value, ToolError> {
    serde_json::to_value(task).map_err(ToolError::internal)
}

impl TaskStore for PostgresTaskStore {
    fn create<'a>(&'a self, task: &'a Task) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            let client = self.postgres.client().await?;
            let ttl_ms = i64::try_from(task.ttl_ms).unwrap_or(i64::MAX);
            client
                .execute(
                    "INSERT INTO tool_tasks (id, task, expires_at, queued) \
                     VALUES ($1, $2, now() + $3::bigint * interval '1 millisecond', $4)",
                    &[&task.id, &written(task)?, &ttl_ms, &task.queued.is_some()],
                )
                .await
                .map_err(|e| self.postgres.error(e))?;
            // The expired, a few at a time: the table holds no more than what lives.
            client
                .execute(
                    "DELETE FROM tool_tasks WHERE id IN \
                     (SELECT id FROM tool_tasks WHERE expires_at < now() LIMIT 100)",
                    &[],
                )
                .await
                .map_err(|e| self.postgres.error(e))?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Task>, ToolError>> {
        Box::pin(async move {
            let client = self.postgres.client().await?;
            let row = client
                .query_opt(
                    "SELECT task FROM tool_tasks WHERE id = $1 AND expires_at > now()",
                    &[&id],
                )
                .await
                .map_err(|e| self.postgres.error(e))?;
            row.map(|row| read(row.get(0))).transpose()
        })
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
            let client = self.postgres.client().await?;
            let until = i64::try_from(lease_until_ms).unwrap_or(i64::MAX);
            // The oldest queued task no other replica holds, taken: no longer queued, its lease
            // this replica's; answered as it was, with its queued call.
            let row = client
                .query_opt(
                    "WITH taken AS (
                         SELECT id, task FROM tool_tasks
                          WHERE queued AND expires_at > now()
                          ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
                     UPDATE tool_tasks AS t
                        SET queued = false,
                            task = jsonb_set(t.task - 'queued', '{lease_until_ms}', to_jsonb($1::bigint))
                       FROM taken WHERE t.id = taken.id
                     RETURNING taken.task",
                    &[&until],
                )
                .await
                .map_err(|e| self.postgres.error(e))?;
            row.map(|row| read(row.get(0))).transpose()
        })
    }
}
