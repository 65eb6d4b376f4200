//! The audit log in PostgreSQL, shared by every replica: records ordered by a database
//! sequence, and the intents of a replica that ended without its outcomes reported
//! `unknown` exactly once, by whichever replica finds its lease expired first.

use std::fmt;
use std::io;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::Mutex;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{Postgres, error_text, is_unavailable};
use crate::layers::audit::{Audit, AuditEvent, AuditRecord, UnknownOutcome};
use crate::tool::error::{ErrorKind, ToolError};

mod kept;
mod lease;

use lease::run;

/// The component name of the audit's migrations in `tool_schema_migrations`.
pub const AUDIT_COMPONENT: &str = "tool-runtime/audit";

/// The audit's tables; a migration is never edited once published, only appended to.
const MIGRATIONS: &[&str] = &["
CREATE TABLE tool_audit_instances (
    id text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    lease_until timestamptz NOT NULL,
    resolved_at timestamptz
);
CREATE INDEX tool_audit_instances_expiring ON tool_audit_instances (lease_until)
    WHERE resolved_at IS NULL;
CREATE TABLE tool_audit_records (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    instance text NOT NULL,
    event text NOT NULL CHECK (event IN ('intent', 'outcome')),
    time double precision NOT NULL,
    call text NOT NULL,
    request_id text NOT NULL,
    source text NOT NULL,
    principal text,
    tool text NOT NULL,
    arguments jsonb NOT NULL,
    outcome text,
    duration_ms double precision,
    dry_run boolean NOT NULL DEFAULT false,
    hidden text,
    trace_id text
);
CREATE INDEX tool_audit_records_open ON tool_audit_records (instance)
    WHERE event = 'intent' AND NOT dry_run;
CREATE UNIQUE INDEX tool_audit_records_outcome ON tool_audit_records (call, outcome)
    WHERE event = 'outcome';
CREATE INDEX tool_audit_records_tool ON tool_audit_records (tool, seq)
    WHERE event = 'outcome';
CREATE INDEX tool_audit_records_age ON tool_audit_records USING brin (recorded_at);
"];

/// An intent is written only while its instance is live (its lease neither expired nor
/// resolved): the row lock it takes (`FOR KEY SHARE`) makes it wait for a recovery resolving
/// that instance, and then write nothing, so that no intent lands behind a recovery that has
/// already looked, nor under a lease a recovery may take at any moment.
const INSERT_INTENT: &str = "
INSERT INTO tool_audit_records
    (instance, event, time, call, request_id, source, principal, tool, arguments, outcome,
     duration_ms, dry_run, hidden, trace_id)
SELECT id, 'intent', $2::float8, $3::text, $4::text, $5::text, $6::text, $7::text, $8::jsonb,
       $9::text, $10::float8, $11::bool, $12::text, $13::text
FROM tool_audit_instances WHERE id = $1 AND resolved_at IS NULL AND lease_until > now()
FOR KEY SHARE";

/// An outcome is always written, a late one of a call already reported `unknown` included;
/// writing the same outcome twice (a retry after a lost answer) keeps one row.
const INSERT_OUTCOME: &str = "
INSERT INTO tool_audit_records
    (instance, event, time, call, request_id, source, principal, tool, arguments, outcome,
     duration_ms, dry_run, hidden, trace_id)
VALUES ($1, 'outcome', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (call, outcome) WHERE event = 'outcome' DO NOTHING";

const COLUMNS: &str = "event, time, call, request_id, source, principal, tool, arguments, \
                       outcome, duration_ms, dry_run, hidden, trace_id";

/// How the PostgreSQL audit keeps its lease, and how long it keeps records.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::postgres::AuditOptions;
///
/// let options = AuditOptions::default()
///     .lease(Duration::from_secs(20))
///     .renew(Duration::from_secs(5))
///     .retention(90);
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuditOptions {
    lease: Duration,
    renew: Duration,
    retention: Option<u32>,
}

impl Default for AuditOptions {
    /// A 10 s lease renewed every 3 s; records kept for ever.
    fn default() -> Self {
        Self {
            lease: Duration::from_secs(10),
            renew: Duration::from_secs(3),
            retention: None,
        }
    }
}

impl AuditOptions {
    /// How long an instance counts as live after its last renewal (default 10 s): once it has
    /// passed, another replica reports the instance's open intents `unknown`. Longer than
    /// [`renew`](Self::renew), with room for a slow renewal.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// How often the lease is renewed and recovery and retention run (default 3 s).
    #[must_use]
    pub fn renew(mut self, every: Duration) -> Self {
        self.renew = every;
        self
    }

    /// Deletes records (and resolved instances) older than `days` days by the database's
    /// clock, checked at most once an hour. Without it records are kept for ever.
    #[must_use]
    pub fn retention(mut self, days: u32) -> Self {
        self.retention = Some(days);
        self
    }
}

/// An [`Audit`] sink in PostgreSQL that every replica of an application shares.
///
/// Each record is one row of `tool_audit_records`, committed before
/// [`record`](Audit::record) returns: the intent before the tool runs, the outcome after. Rows
/// are ordered by `seq` (a database identity), and stamped `recorded_at` by the database's
/// clock, never by a replica's. Each sink is an *instance* (a random 128-bit id; a restarted
/// process is a new one) holding a lease that a background task renews; on the same timer it
/// reports the open intents of instances whose lease expired. Cheap to clone; the task ends
/// when the last clone is dropped, reporting its own open intents `unknown` first.
///
/// ```no_run
/// # async fn start() -> Result<(), Box<dyn std::error::Error>> {
/// use tool_runtime::Registry;
/// use tool_runtime::postgres::{AuditOptions, Postgres, PostgresAudit, PostgresOptions};
///
/// let postgres = Postgres::connect(PostgresOptions::from_env("DATABASE_URL")?).await?;
/// let audit = PostgresAudit::start(&postgres, AuditOptions::default().retention(90)).await?;
/// let registry = Registry::builder().audit(audit).build()?;
/// # let _ = registry;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PostgresAudit {
    shared: Arc<Shared>,
    /// Stops the background task when the last clone is dropped.
    _task: Arc<DropGuard>,
}

impl fmt::Debug for PostgresAudit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresAudit")
            .field("location", &self.shared.postgres.location())
            .field("instance", &self.instance())
            .field("options", &self.shared.options)
            .finish_non_exhaustive()
    }
}

impl PostgresAudit {
    /// Applies the audit's migrations (component `tool-runtime/audit`), registers a new
    /// instance with its lease, and starts the task that renews it, recovers and applies
    /// retention. Fails when PostgreSQL cannot be reached (`unavailable`, naming it), or when
    /// the lease is not longer than the renewal period.
    pub async fn start(postgres: &Postgres, options: AuditOptions) -> Result<Self, ToolError> {
        if options.lease <= options.renew {
            return Err(ToolError::new(
                ErrorKind::INTERNAL,
                format!(
                    "the audit's lease ({:?}) must be longer than its renewal period ({:?})",
                    options.lease, options.renew
                ),
            ));
        }
        postgres.migrate(AUDIT_COMPONENT, MIGRATIONS).await?;
        let shared = Arc::new(Shared {
            postgres: postgres.clone(),
            instance: RwLock::new(Arc::from("")),
            registering: Mutex::new(()),
            options,
            kept: kept::Kept::default(),
        });
        shared.register().await?;
        let stop = CancellationToken::new();
        tokio::spawn(run(shared.clone(), stop.clone()));
        Ok(Self {
            shared,
            _task: Arc::new(stop.drop_guard()),
        })
    }

    /// The id of the instance this sink writes as now: a new one after its lease was taken
    /// over.
    #[must_use]
    pub fn instance(&self) -> String {
        self.shared.current().to_string()
    }
}

impl Audit for PostgresAudit {
    /// Commits the row before resolving; an error names PostgreSQL, never where it is (that is logged).
    fn record<'a>(&'a self, record: &'a AuditRecord<'a>) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            let deadline = self.shared.deadline();
            let written = tokio::time::timeout(deadline, self.shared.write(record))
                .await
                .unwrap_or_else(|_| Err(self.shared.no_answer(deadline)));
            match written {
                // The call has run and been answered: its outcome is kept for later.
                Err(e) if record.event == AuditEvent::Outcome => self.shared.keep(record, e),
                written => written,
            }
        })
    }

    /// The newest outcome rows by `seq`, shaped as [`JsonLinesAudit`](crate::layers::audit::JsonLinesAudit)
    /// writes its records.
    fn recent<'a>(
        &'a self,
        limit: usize,
        tool: Option<&'a str>,
    ) -> BoxFuture<'a, io::Result<Vec<Value>>> {
        Box::pin(async move {
            let deadline = self.shared.deadline();
            tokio::time::timeout(deadline, self.shared.recent(limit, tool))
                .await
                .unwrap_or_else(|_| Err(self.shared.no_answer(deadline)))
        })
    }

    /// Reports now the open intents of every instance whose lease expired (the background task
    /// does this on its timer too); each is returned by exactly one replica.
    fn recover(&self) -> BoxFuture<'_, io::Result<Vec<UnknownOutcome>>> {
        Box::pin(self.shared.recover_expired())
    }
}

struct Shared {
    postgres: Postgres,
    /// The instance this process writes as.
    instance: RwLock<Arc<str>>,
    /// Held while a new instance is registered, so that concurrent writers register one.
    registering: Mutex<()>,
    options: AuditOptions,
    /// Outcomes that could not be written yet.
    kept: kept::Kept,
}

impl Shared {
    fn current(&self) -> Arc<str> {
        self.instance
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The longest one operation may take: a connection, opened if need be, and a statement.
    fn deadline(&self) -> Duration {
        let options = &self.postgres.options;
        options.pool_wait + options.connect_timeout + options.statement_timeout
    }

    fn location(&self) -> &str {
        self.postgres.location()
    }

    /// Registers a new instance and writes as it from now on.
    async fn register(&self) -> Result<Arc<str>, ToolError> {
        let mut random = [0u8; 16];
        getrandom::fill(&mut random).map_err(|e| {
            ToolError::internal(format!("no random source for an instance id: {e}"))
        })?;
        let id: Arc<str> = crate::tool::hex(&random).into();
        let client = self.postgres.client().await?;
        client
            .execute(
                "INSERT INTO tool_audit_instances (id, lease_until)
                 VALUES ($1, now() + make_interval(secs => $2))",
                &[&&*id, &self.options.lease.as_secs_f64()],
            )
            .await
            .map_err(|e| self.postgres.error(e))?;
        *self
            .instance
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = id.clone();
        Ok(id)
    }

    /// Replaces `lost`, whose lease expired (this process stalled past it) or was taken over
    /// by another replica, by a new instance (once, however many writers find it lost at the
    /// same time). The calls `lost` left open are reported `unknown` by whichever replica
    /// recovers it; nothing more is written as it.
    async fn replace(&self, lost: &str) -> Result<Arc<str>, ToolError> {
        let _one = self.registering.lock().await;
        let current = self.current();
        if &*current != lost {
            return Ok(current);
        }
        let id = self.register().await?;
        tracing::warn!(
            target: "tool_runtime::layers::audit",
            database = %self.location(),
            lost,
            instance = %id,
            "this process's audit lease expired (it was not renewed in time): its open intents \
             are reported as outcome unknown by whichever replica recovers it; writing as a new \
             instance"
        );
        Ok(id)
    }

    async fn write(&self, record: &AuditRecord<'_>) -> io::Result<()> {
        let client = self.postgres.client().await.map_err(|e| io_error(&e))?;
        if record.event == AuditEvent::Outcome {
            let statement = client
                .prepare_cached(INSERT_OUTCOME)
                .await
                .map_err(|e| self.db(e))?;
            self.insert(&client, &statement, &self.current(), record)
                .await?;
            return Ok(());
        }
        self.write_intent(&client, record).await
    }

    /// Writes `record`'s outcome as `instance`, within the deadline.
    async fn write_outcome(&self, instance: &str, record: &AuditRecord<'_>) -> io::Result<()> {
        let deadline = self.deadline();
        let write = async {
            let client = self.postgres.client().await.map_err(|e| io_error(&e))?;
            let statement = client
                .prepare_cached(INSERT_OUTCOME)
                .await
                .map_err(|e| self.db(e))?;
            self.insert(&client, &statement, instance, record).await
        };
        match tokio::time::timeout(deadline, write).await {
            Ok(written) => written.map(|_| ()),
            Err(_) => Err(self.no_answer(deadline)),
        }
    }

    /// Keeps an outcome that could not be written, to write it later; `error` if it cannot
    /// be kept either.
    fn keep(&self, record: &AuditRecord<'_>, error: io::Error) -> io::Result<()> {
        // A record PostgreSQL refuses (not one it could not be asked) is never kept.
        if error.kind() == io::ErrorKind::InvalidData {
            return Err(error);
        }
        match self.kept.keep(self.current(), record) {
            None => Err(error),
            Some(first) => {
                if first {
                    tracing::warn!(target: "tool_runtime::layers::audit", database = %self.location(), %error, "outcomes that cannot be written are kept, and written once PostgreSQL answers again");
                }
                Ok(())
            }
        }
    }

    /// Writes the kept outcomes, oldest first, until one fails again; how many were written.
    async fn write_kept(&self) -> io::Result<usize> {
        let mut written = 0;
        while let Some(owned) = self.kept.next() {
            match self.write_outcome(&owned.instance, &owned.record()).await {
                Ok(()) => written += 1,
                // Refused now that PostgreSQL answers: it would be refused forever, so it goes
                // to the log rather than hold back the outcomes behind it.
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    let record = serde_json::to_string(&owned.record()).unwrap_or_default();
                    tracing::error!(target: "tool_runtime::layers::audit", error = %e, %record, "the audit record of the outcome could not be written; here it is");
                }
                Err(e) => {
                    self.kept.put_back(owned);
                    return Err(e);
                }
            }
        }
        if written > 0 {
            tracing::info!(target: "tool_runtime::layers::audit", database = %self.location(), written, "kept outcomes written");
        }
        Ok(written)
    }

    /// Logs, whole, each kept outcome that can no longer be written (the process ends).
    fn log_kept(&self) {
        for owned in self.kept.drain() {
            let record = serde_json::to_string(&owned.record()).unwrap_or_default();
            tracing::error!(target: "tool_runtime::layers::audit", %record, "the audit record of the outcome could not be written; here it is");
        }
    }

    async fn write_intent(
        &self,
        client: &super::Client,
        record: &AuditRecord<'_>,
    ) -> io::Result<()> {
        let statement = client
            .prepare_cached(INSERT_INTENT)
            .await
            .map_err(|e| self.db(e))?;
        let mut instance = self.current();
        for _ in 0..2 {
            if self.insert(client, &statement, &instance, record).await? == 1 {
                return Ok(());
            }
            instance = self.replace(&instance).await.map_err(|e| io_error(&e))?;
        }
        Err(io::Error::other(
            "the audit instance in PostgreSQL was taken over again as it was replaced",
        ))
    }

    /// Runs `statement`, [`INSERT_INTENT`] or [`INSERT_OUTCOME`] (which take the same
    /// parameters), for `record` written as `instance`; the rows written.
    async fn insert(
        &self,
        client: &super::Client,
        statement: &tokio_postgres::Statement,
        instance: &str,
        record: &AuditRecord<'_>,
    ) -> io::Result<u64> {
        client
            .execute(
                statement,
                &[
                    &instance,
                    &record.time,
                    &record.call,
                    &record.request_id,
                    &record.source,
                    &record.principal,
                    &record.tool,
                    record.arguments,
                    &record.outcome,
                    &record.duration_ms,
                    &record.dry_run,
                    &record.hidden,
                    &record.trace_id,
                ],
            )
            .await
            .map_err(|e| self.db(e))
    }

    async fn recent(&self, limit: usize, tool: Option<&str>) -> io::Result<Vec<Value>> {
        let client = self.postgres.client().await.map_err(|e| io_error(&e))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = if let Some(tool) = tool {
            let statement = client
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM tool_audit_records
                     WHERE event = 'outcome' AND tool = $2 ORDER BY seq DESC LIMIT $1"
                ))
                .await
                .map_err(|e| self.db(e))?;
            client.query(&statement, &[&limit, &tool]).await
        } else {
            let statement = client
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM tool_audit_records
                     WHERE event = 'outcome' ORDER BY seq DESC LIMIT $1"
                ))
                .await
                .map_err(|e| self.db(e))?;
            client.query(&statement, &[&limit]).await
        }
        .map_err(|e| self.db(e))?;
        rows.iter()
            .map(|row| {
                let arguments: Value = row.get(7);
                let event = if row.get::<_, &str>(0) == "intent" {
                    AuditEvent::Intent
                } else {
                    AuditEvent::Outcome
                };
                let record = AuditRecord {
                    event,
                    time: row.get(1),
                    call: row.get(2),
                    request_id: row.get(3),
                    source: row.get(4),
                    principal: row.get(5),
                    tool: row.get(6),
                    arguments: &arguments,
                    outcome: row.get(8),
                    duration_ms: row.get(9),
                    dry_run: row.get(10),
                    hidden: row.get(11),
                    trace_id: row.get(12),
                    read_only: false,
                };
                serde_json::to_value(&record).map_err(io::Error::other)
            })
            .collect()
    }

    /// A statement's failure as an I/O error naming PostgreSQL, which a refused call's caller
    /// reads: where PostgreSQL is, and why, are logged.
    fn db(&self, e: tokio_postgres::Error) -> io::Error {
        if is_unavailable(&e) {
            return io::Error::other(self.postgres.error(e).message().to_owned());
        }
        let detail = match e.as_db_error() {
            Some(db) => format!("{}: {}", db.code().code(), db.message()),
            None => self.postgres.options.scrub(&error_text(&e)),
        };
        tracing::error!(
            target: "tool_runtime::layers::audit",
            database = %self.location(),
            detail,
            "an audit statement failed"
        );
        // Not a lost connection: the same statement would be refused again.
        io::Error::new(
            io::ErrorKind::InvalidData,
            "PostgreSQL refused an audit statement",
        )
    }

    fn no_answer(&self, deadline: Duration) -> io::Error {
        tracing::warn!(
            target: "tool_runtime::layers::audit",
            database = %self.location(),
            "PostgreSQL gave the audit no answer within {:.1}s",
            deadline.as_secs_f64()
        );
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "PostgreSQL is unavailable: no answer within {:.1}s",
                deadline.as_secs_f64()
            ),
        )
    }
}

/// A failure to get a connection (its message names PostgreSQL) as an I/O error.
fn io_error(e: &ToolError) -> io::Error {
    io::Error::other(e.message().to_owned())
}
