//! The tasks in PostgreSQL, one table every replica's scheduler claims from: due runs are found
//! by the database's clock (`now()`), never a replica's, and claimed under row locks the other
//! schedulers skip (`FOR UPDATE SKIP LOCKED`), the due time moved on only where it is still the
//! one read, and the run recorded under the primary key (task, due time).

use futures_util::future::BoxFuture;
use tool_runtime::postgres::Postgres;
use tool_runtime::postgres::tokio_postgres::Row;
use tool_runtime::prelude::*;

use crate::store::tasks::{COLUMNS, next_due};
use crate::store::{self, Claim, LOG, ScheduleType, Task, TaskStore};

/// The name the tables' migrations are recorded under in `tool_schema_migrations`.
const COMPONENT: &str = "demo-app/scheduler";

/// The tables, as versioned migrations: times are Unix seconds, as in the SQLite engine.
const MIGRATIONS: &[&str] = &[
    // 1: the tasks and their runs.
    "CREATE TABLE tasks (
        task_id TEXT PRIMARY KEY,
        prompt TEXT NOT NULL,
        schedule_type TEXT NOT NULL,
        schedule_value TEXT NOT NULL,
        channel TEXT,
        chat_id TEXT,
        tier TEXT,
        status TEXT NOT NULL,
        next_run BIGINT,
        last_run BIGINT,
        last_outcome TEXT,
        runs INTEGER NOT NULL DEFAULT 0,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE INDEX tasks_due ON tasks (next_run) WHERE status = 'active';
    CREATE TABLE task_runs (
        task_id TEXT NOT NULL REFERENCES tasks (task_id),
        due BIGINT NOT NULL,
        started_at BIGINT NOT NULL,
        finished_at BIGINT,
        outcome TEXT,
        PRIMARY KEY (task_id, due)
    );",
];

/// The database's clock, in Unix seconds: one clock for every replica.
const NOW: &str = "floor(extract(epoch FROM now()))::bigint";

/// Tasks in PostgreSQL, shared by the schedulers of every replica on the database. Its tables
/// are made by [`PostgresTasks::migrate`], which `Stores::postgres` runs.
#[derive(Debug, Clone)]
pub struct PostgresTasks(pub Postgres);

impl PostgresTasks {
    /// Makes or updates the tables in `postgres` (component `demo-app/scheduler`; several
    /// processes starting at once apply each migration once).
    pub async fn migrate(postgres: &Postgres) -> Result<(), ToolError> {
        postgres.migrate(COMPONENT, MIGRATIONS).await
    }
}

fn task_row(r: &Row) -> Task {
    Task {
        task_id: r.get(0),
        prompt: r.get(1),
        schedule_type: ScheduleType::from_stored(r.get(2)),
        schedule_value: r.get(3),
        channel: r
            .get::<_, Option<String>>(4)
            .unwrap_or_else(|| LOG.to_owned()),
        chat_id: r.get(5),
        tier: r.get(6),
        status: r.get(7),
        next_run: r.get::<_, Option<i64>>(8).map(store::rfc3339),
        last_run: r.get::<_, Option<i64>>(9).map(store::rfc3339),
        last_outcome: r.get(10),
        runs: u32::try_from(r.get::<_, i32>(11)).unwrap_or(0),
    }
}

impl TaskStore for PostgresTasks {
    fn add(&self, task: Task, next_run: i64) -> BoxFuture<'_, Result<Task, ToolError>> {
        Box::pin(async move {
            let pg = &self.0;
            let client = pg.client().await?;
            let statement = client
                .prepare_cached(&format!(
                    "INSERT INTO tasks (task_id, prompt, schedule_type, schedule_value, channel,
                     chat_id, tier, status, next_run)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, 'active', $8)
                     RETURNING {COLUMNS}"
                ))
                .await
                .map_err(|e| pg.error(e))?;
            let row = client
                .query_one(
                    &statement,
                    &[
                        &task.task_id,
                        &task.prompt,
                        &task.schedule_type.as_str(),
                        &task.schedule_value,
                        &task.channel,
                        &task.chat_id,
                        &task.tier,
                        &next_run,
                    ],
                )
                .await
                .map_err(|e| pg.error(e))?;
            Ok(task_row(&row))
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<Task>, ToolError>> {
        Box::pin(async move {
            let pg = &self.0;
            let client = pg.client().await?;
            let statement = client
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM tasks ORDER BY created_at DESC, task_id"
                ))
                .await
                .map_err(|e| pg.error(e))?;
            let rows = client
                .query(&statement, &[])
                .await
                .map_err(|e| pg.error(e))?;
            Ok(rows.iter().map(task_row).collect())
        })
    }

    fn cancel(&self, task_id: String) -> BoxFuture<'_, Result<Option<Task>, ToolError>> {
        Box::pin(async move {
            let pg = &self.0;
            let client = pg.client().await?;
            // The task as it is after the update, cancelled now or before.
            let statement = client
                .prepare_cached(&format!(
                    "WITH cancelled AS (
                         UPDATE tasks SET status = 'cancelled', next_run = NULL
                         WHERE task_id = $1 AND status = 'active' RETURNING {COLUMNS}
                     )
                     SELECT {COLUMNS} FROM cancelled
                     UNION ALL
                     SELECT {COLUMNS} FROM tasks
                     WHERE task_id = $1 AND NOT EXISTS (SELECT 1 FROM cancelled)"
                ))
                .await
                .map_err(|e| pg.error(e))?;
            let row = client
                .query_opt(&statement, &[&task_id])
                .await
                .map_err(|e| pg.error(e))?;
            Ok(row.as_ref().map(task_row))
        })
    }

    fn claim_due(&self, limit: usize) -> BoxFuture<'_, Result<Vec<Claim>, ToolError>> {
        Box::pin(async move {
            let pg = &self.0;
            let mut client = pg.client().await?;
            let tx = client.transaction().await.map_err(|e| pg.error(e))?;
            // Rows another scheduler has locked are its claims in the making: skipped, not
            // waited for. One that it claimed meanwhile no longer matches `next_run <= now`.
            let due = tx
                .prepare_cached(&format!(
                    "SELECT {COLUMNS}, {NOW} FROM tasks
                     WHERE status = 'active' AND next_run <= {NOW}
                     ORDER BY next_run LIMIT $1
                     FOR UPDATE SKIP LOCKED"
                ))
                .await
                .map_err(|e| pg.error(e))?;
            let claim = tx
                .prepare_cached(
                    "UPDATE tasks SET next_run = $1, last_run = $2, runs = runs + 1,
                     status = CASE WHEN $1::bigint IS NULL THEN 'done' ELSE status END
                     WHERE task_id = $3 AND next_run = $4 AND status = 'active'",
                )
                .await
                .map_err(|e| pg.error(e))?;
            let record = tx
                .prepare_cached(
                    "INSERT INTO task_runs (task_id, due, started_at) VALUES ($1, $2, $3)
                     ON CONFLICT (task_id, due) DO NOTHING",
                )
                .await
                .map_err(|e| pg.error(e))?;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = tx.query(&due, &[&limit]).await.map_err(|e| pg.error(e))?;
            let mut claims = Vec::new();
            for row in &rows {
                let task = task_row(row);
                let due: i64 = row.get(8);
                let now: i64 = row.get(12);
                let next = next_due(&task, due, now);
                let claimed = tx
                    .execute(&claim, &[&next, &now, &task.task_id, &due])
                    .await
                    .map_err(|e| pg.error(e))?;
                if claimed != 1 {
                    continue;
                }
                let recorded = tx
                    .execute(&record, &[&task.task_id, &due, &now])
                    .await
                    .map_err(|e| pg.error(e))?;
                if recorded == 1 {
                    claims.push(Claim { task, due });
                } else {
                    tracing::warn!(target: "demo_app::scheduler", task = %task.task_id, due, "a run for this due time is already recorded; not run again");
                }
            }
            tx.commit().await.map_err(|e| pg.error(e))?;
            Ok(claims)
        })
    }

    fn finish(
        &self,
        task_id: String,
        due: i64,
        outcome: String,
    ) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(async move {
            let pg = &self.0;
            let client = pg.client().await?;
            let statement = client
                .prepare_cached(&format!(
                    "WITH run AS (
                         UPDATE task_runs SET outcome = $3, finished_at = {NOW}
                         WHERE task_id = $1 AND due = $2
                     )
                     UPDATE tasks SET last_outcome = $3 WHERE task_id = $1"
                ))
                .await
                .map_err(|e| pg.error(e))?;
            client
                .execute(&statement, &[&task_id, &due, &outcome])
                .await
                .map_err(|e| pg.error(e))?;
            Ok(())
        })
    }
}
