//! The tasks in the demo's SQLite database: one process's file, claimed under its write lock.

use rusqlite::{OptionalExtension, TransactionBehavior, params};
use tool_runtime::prelude::*;

use futures_util::future::BoxFuture;

use super::Store;
use crate::store::tasks::{COLUMNS, next_due};
use crate::store::{self, Claim, LOG, ScheduleType, Task, TaskStore};

/// Tasks in the demo's SQLite database.
#[derive(Debug, Clone)]
pub struct SqliteTasks(pub Store);

fn task_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Task> {
    Ok(Task {
        task_id: r.get(0)?,
        prompt: r.get(1)?,
        schedule_type: ScheduleType::from_stored(&r.get::<_, String>(2)?),
        schedule_value: r.get(3)?,
        channel: r
            .get::<_, Option<String>>(4)?
            .unwrap_or_else(|| LOG.to_owned()),
        chat_id: r.get(5)?,
        tier: r.get(6)?,
        status: r.get(7)?,
        next_run: r.get::<_, Option<i64>>(8)?.map(store::rfc3339),
        last_run: r.get::<_, Option<i64>>(9)?.map(store::rfc3339),
        last_outcome: r.get(10)?,
        runs: r.get(11)?,
    })
}

impl TaskStore for SqliteTasks {
    fn add(&self, task: Task, next_run: i64) -> BoxFuture<'_, Result<Task, ToolError>> {
        Box::pin(async move {
            let id = task.task_id.clone();
            self.0
                .run(move |c| {
                    c.execute(
                        "INSERT INTO tasks (task_id, prompt, schedule_type, schedule_value, channel,
                         chat_id, tier, status, next_run, created_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'active', ?8, ?9)",
                        params![
                            task.task_id,
                            task.prompt,
                            task.schedule_type.as_str(),
                            task.schedule_value,
                            task.channel,
                            task.chat_id,
                            task.tier,
                            next_run,
                            store::now()
                        ],
                    )?;
                    Ok(c.query_row(
                        &format!("SELECT {COLUMNS} FROM tasks WHERE task_id = ?1"),
                        params![id],
                        task_row,
                    )?)
                })
                .await
                .map_err(ToolError::from)
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<Task>, ToolError>> {
        Box::pin(async move {
            self.0
                .run(|c| {
                    let mut statement = c.prepare(&format!(
                        "SELECT {COLUMNS} FROM tasks ORDER BY created_at DESC, task_id"
                    ))?;
                    let rows = statement.query_map([], task_row)?;
                    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
                })
                .await
                .map_err(ToolError::from)
        })
    }

    fn cancel(&self, task_id: String) -> BoxFuture<'_, Result<Option<Task>, ToolError>> {
        Box::pin(async move {
            self.0
                .run(move |c| {
                    c.execute(
                        "UPDATE tasks SET status = 'cancelled', next_run = NULL
                         WHERE task_id = ?1 AND status = 'active'",
                        params![task_id],
                    )?;
                    Ok(c.query_row(
                        &format!("SELECT {COLUMNS} FROM tasks WHERE task_id = ?1"),
                        params![task_id],
                        task_row,
                    )
                    .optional()?)
                })
                .await
                .map_err(ToolError::from)
        })
    }

    fn claim_due(&self, limit: usize) -> BoxFuture<'_, Result<Vec<Claim>, ToolError>> {
        Box::pin(async move {
            self.0
                .run(move |c| {
                    // One process's file: its own clock is the only one.
                    let now = store::now();
                    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                    let due: Vec<(Task, i64)> = {
                        let mut statement = tx.prepare(&format!(
                            "SELECT {COLUMNS}, next_run FROM tasks
                             WHERE status = 'active' AND next_run <= ?1
                             ORDER BY next_run LIMIT ?2"
                        ))?;
                        let rows = statement.query_map(
                            params![now, i64::try_from(limit).unwrap_or(i64::MAX)],
                            |r| Ok((task_row(r)?, r.get::<_, i64>(12)?)),
                        )?;
                        rows.collect::<rusqlite::Result<Vec<_>>>()?
                    };
                    let mut claims = Vec::new();
                    for (task, due) in due {
                        let next = next_due(&task, due, now);
                        let claimed = tx.execute(
                            "UPDATE tasks SET next_run = ?1, last_run = ?2, runs = runs + 1,
                             status = CASE WHEN ?1 IS NULL THEN 'done' ELSE status END
                             WHERE task_id = ?3 AND next_run = ?4 AND status = 'active'",
                            params![next, now, task.task_id, due],
                        )?;
                        if claimed == 1 {
                            tx.execute(
                                "INSERT INTO task_runs (task_id, due, started_at) VALUES (?1, ?2, ?3)",
                                params![task.task_id, due, now],
                            )?;
                            claims.push(Claim { task, due });
                        }
                    }
                    tx.commit()?;
                    Ok(claims)
                })
                .await
                .map_err(ToolError::from)
        })
    }

    fn finish(
        &self,
        task_id: String,
        due: i64,
        outcome: String,
    ) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(async move {
            self.0
                .run(move |c| {
                    c.execute(
                        "UPDATE task_runs SET outcome = ?3, finished_at = ?4
                         WHERE task_id = ?1 AND due = ?2",
                        params![task_id, due, outcome, store::now()],
                    )?;
                    c.execute(
                        "UPDATE tasks SET last_outcome = ?2 WHERE task_id = ?1",
                        params![task_id, outcome],
                    )?;
                    Ok(())
                })
                .await
                .map_err(ToolError::from)
        })
    }
}
