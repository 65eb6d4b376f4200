//! The lease each process holds while it writes: renewed on a timer, the open intents of an
//! instance whose lease expired reported `unknown` once, this instance's own at its end, and
//! retention.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::{Shared, io_error};
use crate::layers::audit::UnknownOutcome;
use crate::tool::error::ToolError;

/// How often retention runs at most.
const RETENTION_EVERY: Duration = Duration::from_secs(3600);

/// Rows retention deletes per statement, so that each stays within the statement time limit.
const RETENTION_BATCH: i64 = 5000;

impl Shared {
    /// Renews this instance's lease while it is live; registers a new instance if it expired
    /// (the process stalled past it) or another replica resolved it, as an intent does.
    async fn renew(&self) -> Result<(), ToolError> {
        let instance = self.current();
        let client = self.postgres.client().await?;
        let renewed = client
            .execute(
                "UPDATE tool_audit_instances SET lease_until = now() + make_interval(secs => $2)
                 WHERE id = $1 AND resolved_at IS NULL AND lease_until > now()",
                &[&&*instance, &self.options.lease.as_secs_f64()],
            )
            .await
            .map_err(|e| self.postgres.error(e))?;
        drop(client);
        if renewed == 0 {
            self.replace(&instance).await?;
        }
        Ok(())
    }

    /// Resolves every instance, other than this one, whose lease expired and that no other
    /// replica is resolving now; returns the calls found.
    pub(super) async fn recover_expired(&self) -> io::Result<Vec<UnknownOutcome>> {
        let mut found = Vec::new();
        // Bounded, so one pass ends even should instances expire as fast as they are resolved.
        for _ in 0..100 {
            let mut client = self.postgres.client().await.map_err(|e| io_error(&e))?;
            let transaction = client.transaction().await.map_err(|e| self.db(e))?;
            let current = self.current();
            let expired = transaction
                .query_opt(
                    "SELECT id FROM tool_audit_instances
                     WHERE resolved_at IS NULL AND lease_until < now() AND id <> $1
                     ORDER BY lease_until LIMIT 1
                     FOR UPDATE SKIP LOCKED",
                    &[&&*current],
                )
                .await
                .map_err(|e| self.db(e))?;
            let Some(row) = expired else {
                break;
            };
            let instance: String = row.get(0);
            let unknown = self
                .resolve(&transaction, &instance)
                .await
                .map_err(|e| self.db(e))?;
            transaction.commit().await.map_err(|e| self.db(e))?;
            self.warn(&instance, &unknown);
            found.extend(unknown);
        }
        Ok(found)
    }

    /// At a clean end: this instance's own open intents reported, and the instance resolved.
    async fn end(&self) -> io::Result<()> {
        let instance = self.current();
        let mut client = self.postgres.client().await.map_err(|e| io_error(&e))?;
        let transaction = client.transaction().await.map_err(|e| self.db(e))?;
        let live = transaction
            .query_opt(
                "SELECT id FROM tool_audit_instances WHERE id = $1 AND resolved_at IS NULL
                 FOR UPDATE",
                &[&&*instance],
            )
            .await
            .map_err(|e| self.db(e))?;
        if live.is_none() {
            return Ok(());
        }
        let unknown = self
            .resolve(&transaction, &instance)
            .await
            .map_err(|e| self.db(e))?;
        transaction.commit().await.map_err(|e| self.db(e))?;
        self.warn(&instance, &unknown);
        Ok(())
    }

    /// Within `transaction`, which holds `instance`'s row lock: an `unknown` outcome for each
    /// of its intents without an outcome (dry runs aside: they change nothing), and the
    /// instance marked resolved.
    async fn resolve(
        &self,
        transaction: &deadpool_postgres::Transaction<'_>,
        instance: &str,
    ) -> Result<Vec<UnknownOutcome>, tokio_postgres::Error> {
        let rows = transaction
            .query(
                "WITH open AS (
                     SELECT i.call, i.request_id, i.source, i.principal, i.tool, i.arguments,
                            i.time, i.trace_id
                     FROM tool_audit_records i
                     WHERE i.instance = $1 AND i.event = 'intent' AND NOT i.dry_run
                       AND NOT EXISTS (SELECT 1 FROM tool_audit_records o
                                       WHERE o.call = i.call AND o.event = 'outcome')
                 ), written AS (
                     INSERT INTO tool_audit_records
                         (instance, event, time, call, request_id, source, principal, tool,
                          arguments, outcome, trace_id)
                     SELECT $1, 'outcome', extract(epoch FROM clock_timestamp()), call,
                            request_id, source, principal, tool, arguments, 'unknown', trace_id
                     FROM open
                     ON CONFLICT (call, outcome) WHERE event = 'outcome' DO NOTHING
                 )
                 SELECT call, tool, request_id, time FROM open ORDER BY time",
                &[&instance],
            )
            .await?;
        transaction
            .execute(
                "UPDATE tool_audit_instances SET resolved_at = now() WHERE id = $1",
                &[&instance],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|row| UnknownOutcome {
                call: row.get(0),
                tool: row.get(1),
                request_id: row.get(2),
                time: row.get(3),
            })
            .collect())
    }

    fn warn(&self, instance: &str, unknown: &[UnknownOutcome]) {
        for u in unknown {
            tracing::warn!(
                target: "tool_runtime::layers::audit",
                database = %self.location(),
                instance,
                call = %u.call,
                tool = %u.tool,
                request_id = %u.request_id,
                started = u.time,
                "outcome unknown: the process ended while this call ran; check its effect"
            );
        }
    }

    /// Deletes records and resolved instances older than the retention, in batches.
    async fn apply_retention(&self, days: u32) -> Result<u64, ToolError> {
        let client = self.postgres.client().await?;
        let days = i32::try_from(days).unwrap_or(i32::MAX);
        let mut deleted = 0;
        loop {
            let n = client
                .execute(
                    "DELETE FROM tool_audit_records WHERE seq IN (
                         SELECT seq FROM tool_audit_records
                         WHERE recorded_at < now() - make_interval(days => $1) LIMIT $2)",
                    &[&days, &RETENTION_BATCH],
                )
                .await
                .map_err(|e| self.postgres.error(e))?;
            deleted += n;
            if n < u64::try_from(RETENTION_BATCH).unwrap_or(u64::MAX) {
                break;
            }
        }
        client
            .execute(
                "DELETE FROM tool_audit_instances
                 WHERE resolved_at < now() - make_interval(days => $1)",
                &[&days],
            )
            .await
            .map_err(|e| self.postgres.error(e))?;
        Ok(deleted)
    }
}

/// The background task: every `renew`, the lease renewed, expired instances recovered, and
/// retention applied when an hour has passed; at the end, this instance resolved.
pub(super) async fn run(shared: Arc<Shared>, stop: CancellationToken) {
    let mut tick = tokio::time::interval(shared.options.renew);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut retained: Option<Instant> = None;
    let mut failing = false;
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            _ = tick.tick() => {}
        }
        let pass = async {
            shared.renew().await.map_err(|e| e.message().to_owned())?;
            shared.write_kept().await.map_err(|e| e.to_string())?;
            shared.recover_expired().await.map_err(|e| e.to_string())?;
            if let Some(days) = shared.options.retention
                && retained.is_none_or(|at| at.elapsed() >= RETENTION_EVERY)
            {
                let deleted = shared
                    .apply_retention(days)
                    .await
                    .map_err(|e| e.message().to_owned())?;
                retained = Some(Instant::now());
                if deleted > 0 {
                    tracing::info!(target: "tool_runtime::layers::audit", database = %shared.location(), deleted, days, "audit records past their retention deleted");
                }
            }
            Ok::<(), String>(())
        };
        let result = tokio::select! {
            () = stop.cancelled() => break,
            result = pass => result,
        };
        match result {
            Ok(()) if failing => {
                failing = false;
                tracing::info!(target: "tool_runtime::layers::audit", database = %shared.location(), "the audit lease is renewed again");
            }
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(target: "tool_runtime::layers::audit", error = %e, "the audit lease could not be renewed, nor recovery run; trying again every {:?}", shared.options.renew);
            }
            // Still failing (said once), or still fine.
            Ok(()) | Err(_) => {}
        }
    }
    // What is still kept gets one more try, then goes to the log whole.
    let _ = shared.write_kept().await;
    shared.log_kept();
    if let Err(e) = shared.end().await {
        tracing::warn!(target: "tool_runtime::layers::audit", error = %e, "this instance's audit lease could not be released; another replica resolves it once it expires");
    }
}
