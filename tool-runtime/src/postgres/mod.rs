//! PostgreSQL as the database several replicas share (feature `postgres`): a pool of
//! connections, versioned migrations, the audit log, the tasks, and the readiness check of a
//! server that needs it.
#![doc = include_str!("../../docs/postgres.md")]

mod audit;
mod tasks;
mod tls;
#[cfg(feature = "mcp-oauth")]
mod tokens;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use tokio_postgres::config::Host;
use tokio_postgres::error::SqlState;

use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::secret::{REDACTED, Secret};

use tls::{Mode, Tls};

pub use audit::{AUDIT_COMPONENT, AuditOptions, PostgresAudit};
pub use tasks::{PostgresTaskStore, TASKS_COMPONENT};
#[cfg(feature = "mcp-oauth")]
pub use tokens::{PostgresTokenStore, TOKENS_COMPONENT};

/// The client this module's pool hands out, re-exported so that users name the same version.
pub use tokio_postgres;

/// A pooled connection: derefs to [`tokio_postgres::Client`], with `prepare_cached` (statements
/// prepared once per connection). Dropping it returns the connection to the pool.
pub type Client = deadpool_postgres::Client;

/// The table every component's migrations are recorded in.
pub const MIGRATIONS_TABLE: &str = "tool_schema_migrations";

/// The advisory lock every [`Postgres::migrate`] takes for its transaction: one for all
/// components, so that creating the migrations table itself is serialised too.
const MIGRATION_LOCK: i64 = 0x746f_6f6c_5f6d_6967; // "tool_mig"

/// How to reach PostgreSQL: its URL, the password if the URL does not carry it, and the time
/// limits.
///
/// The URL is `postgres://user[:password]@host[:port]/database[?sslmode=...&sslrootcert=...]`
/// (the other parameters `tokio-postgres` reads, such as `application_name`, pass through).
/// `sslmode` is `disable`, `prefer` (the default), `require`, `verify-ca` or `verify-full`, and
/// `sslrootcert` the PEM file of the CA certificates trusted in place of the system's roots,
/// as with libpq; but `prefer` and `require` verify the certificate's chain and host name as
/// `verify-full` does (see the [module](self)'s TLS section).
/// It is a [`Secret`]: `Debug`, errors and logs show only `user@host:port/database`.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::postgres::PostgresOptions;
///
/// let options = PostgresOptions::new("postgres://app:hunter2@db.internal/billing")
///     .statement_timeout(Duration::from_millis(500))
///     .pool_size(8);
/// assert_eq!(options.location().unwrap(), "app@db.internal:5432/billing");
/// assert!(!format!("{options:?}").contains("hunter2"));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct PostgresOptions {
    url: Secret<String>,
    password: Option<Secret<String>>,
    connect_timeout: Duration,
    statement_timeout: Duration,
    pool_wait: Duration,
    pool_size: usize,
}

impl PostgresOptions {
    /// Options for the PostgreSQL at `url`, with the default time limits (connect 5 s, a
    /// statement 2 s, waiting for a pooled connection 2 s) and at most 16 connections.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: Secret::new(url.into()),
            password: None,
            connect_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(2),
            pool_wait: Duration::from_secs(2),
            pool_size: 16,
        }
    }

    /// Options for the URL in the environment variable `name` (such as `DATABASE_URL`). Fails,
    /// naming the variable, when it is unset or not Unicode.
    pub fn from_env(name: &str) -> Result<Self, ToolError> {
        std::env::var(name).map(Self::new).map_err(|_| {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!("the environment variable `{name}` does not hold a PostgreSQL URL"),
            )
        })
    }

    /// The password, in place of the URL's own: an application reads it from its own
    /// environment variable or secret file and keeps it out of the URL.
    #[must_use]
    pub fn password(mut self, password: impl Into<String>) -> Self {
        self.password = Some(Secret::new(password.into()));
        self
    }

    /// How long opening one connection may take, TLS and authentication included (default 5 s).
    #[must_use]
    pub fn connect_timeout(mut self, limit: Duration) -> Self {
        self.connect_timeout = limit;
        self
    }

    /// How long one statement may run on the server before the server cancels it (default 2 s):
    /// PostgreSQL's own `statement_timeout`, set on every connection the pool opens. A statement
    /// cancelled this way fails as `unavailable` (see [`Postgres::error`]).
    #[must_use]
    pub fn statement_timeout(mut self, limit: Duration) -> Self {
        self.statement_timeout = limit;
        self
    }

    /// How long [`Postgres::client`] waits for a free connection when all are in use (default
    /// 2 s); it then fails as `unavailable`.
    #[must_use]
    pub fn pool_wait(mut self, limit: Duration) -> Self {
        self.pool_wait = limit;
        self
    }

    /// How many connections the pool keeps open at most (default 16; at least 1).
    #[must_use]
    pub fn pool_size(mut self, size: usize) -> Self {
        self.pool_size = size.max(1);
        self
    }

    /// Where the URL points, as errors and logs show it: `user@host:port/database`, never the
    /// password. Fails when the URL does not parse.
    pub fn location(&self) -> Result<String, ToolError> {
        self.config().map(|(config, _)| location_of(&config))
    }

    /// The URL parsed, with the password and the statement time limit applied, and its TLS
    /// settings (`sslmode`, `sslrootcert`), which this module reads itself.
    fn config(&self) -> Result<(tokio_postgres::Config, Tls), ToolError> {
        let expected = "expected postgres://user[:password]@host[:port]/database\
                        [?sslmode=disable|prefer|require|verify-ca|verify-full&sslrootcert=PATH]";
        let (url, mode, root_cert) = Tls::split(self.url.expose()).map_err(|why| {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!("the PostgreSQL URL does not parse ({why}): {expected}"),
            )
        })?;
        let mut config = tokio_postgres::Config::from_str(&url).map_err(|e| {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!(
                    "the PostgreSQL URL does not parse ({}): {expected}",
                    self.scrub(&error_text(&e))
                ),
            )
        })?;
        let tls = Tls::new(mode, config.get_ssl_mode(), root_cert);
        config.ssl_mode(tls.mode.ssl_mode());
        if let Some(password) = &self.password {
            config.password(password.expose().as_bytes());
        }
        let timeout = format!(
            "-c statement_timeout={}",
            self.statement_timeout.as_millis()
        );
        let options = match config.get_options() {
            Some(own) if !own.trim().is_empty() => format!("{own} {timeout}"),
            _ => timeout,
        };
        config
            .options(options)
            .connect_timeout(self.connect_timeout);
        if config.get_application_name().is_none() {
            config.application_name("tool-runtime");
        }
        Ok((config, tls))
    }

    /// `text` without a password, should a message ever quote one.
    fn scrub(&self, text: &str) -> String {
        let mut text = text.to_owned();
        let from_url = Tls::split(self.url.expose())
            .ok()
            .and_then(|(url, _, _)| tokio_postgres::Config::from_str(&url).ok())
            .and_then(|c| {
                c.get_password()
                    .map(|p| String::from_utf8_lossy(p).into_owned())
            });
        let own = self.password.as_ref().map(|p| p.expose().clone());
        for password in [from_url, own].into_iter().flatten() {
            if !password.is_empty() {
                text = text.replace(&password, REDACTED);
            }
        }
        text
    }
}

impl fmt::Debug for PostgresOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let location = self
            .location()
            .unwrap_or_else(|_| "(a URL that does not parse)".to_owned());
        f.debug_struct("PostgresOptions")
            .field("location", &location)
            .field("connect_timeout", &self.connect_timeout)
            .field("statement_timeout", &self.statement_timeout)
            .field("pool_wait", &self.pool_wait)
            .field("pool_size", &self.pool_size)
            .finish_non_exhaustive()
    }
}

/// `user@host:port/database` of a parsed URL (the first host when it names several).
fn location_of(config: &tokio_postgres::Config) -> String {
    let user = config.get_user().unwrap_or("postgres");
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(host)) => host.clone(),
        Some(Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let database = config.get_dbname().unwrap_or(user);
    format!("{user}@{host}:{port}/{database}")
}

/// An error with its causes, as one line: `tokio-postgres` keeps the detail in the source.
fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

/// A pool of connections to PostgreSQL; cheap to clone, every clone sharing the pool.
///
/// Connections are opened as they are needed, up to the options' pool size, and a connection
/// found closed is replaced: while PostgreSQL cannot be reached [`client`](Self::client) fails
/// as `unavailable` (503) naming it, and the first call after it is back succeeds on the same
/// `Postgres`.
///
/// ```no_run
/// # async fn start() -> Result<(), tool_runtime::ToolError> {
/// use tool_runtime::postgres::{Postgres, PostgresOptions};
///
/// let postgres = Postgres::connect(PostgresOptions::from_env("DATABASE_URL")?).await?;
/// postgres
///     .migrate("billing", &["CREATE TABLE invoices (id bigint PRIMARY KEY, total numeric)"])
///     .await?;
/// let client = postgres.client().await?;
/// let rows = client
///     .query("SELECT id FROM invoices", &[])
///     .await
///     .map_err(|e| postgres.error(e))?;
/// # let _ = rows;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Postgres {
    pool: Pool,
    location: Arc<str>,
    options: Arc<PostgresOptions>,
}

impl fmt::Debug for Postgres {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = self.pool.status();
        f.debug_struct("Postgres")
            .field("location", &self.location)
            .field("connections", &status.size)
            .field("idle", &status.available)
            .finish_non_exhaustive()
    }
}

impl Postgres {
    /// Builds the pool and runs one query on it. Fails as `unavailable`, naming
    /// `PostgreSQL at user@host:port/database`, when the URL does not parse or the server
    /// cannot be reached, refuses the login, presents a certificate that `sslmode` refuses
    /// (why is in the message) or does not answer within the time limits: an application
    /// stops at start with that error rather than serve without its database. An `sslrootcert`
    /// file that cannot be used fails it too, naming `sslrootcert` and the path.
    pub async fn connect(options: PostgresOptions) -> Result<Self, ToolError> {
        let (config, tls) = options.config()?;
        let location: Arc<str> = location_of(&config).into();
        let manager_config = ManagerConfig {
            // Whether the connection is still open, without a round trip: a query on one
            // that broke since fails once, as `unavailable`, and the pool replaces it.
            recycling_method: RecyclingMethod::Fast,
        };
        let manager = if tls.mode == Mode::Disable {
            Manager::from_config(config, tokio_postgres::NoTls, manager_config)
        } else {
            Manager::from_config(config, tls.connector()?, manager_config)
        };
        let pool = Pool::builder(manager)
            .max_size(options.pool_size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.pool_wait))
            .create_timeout(Some(options.connect_timeout))
            .recycle_timeout(Some(options.pool_wait))
            .build()
            .map_err(|e| {
                ToolError::new(
                    ErrorKind::INTERNAL,
                    format!("cannot build the pool for PostgreSQL at {location}: {e}"),
                )
            })?;
        let postgres = Self {
            pool,
            location,
            options: Arc::new(options),
        };
        postgres.reach().await.map_err(|why| {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!(
                    "cannot connect to PostgreSQL at {}: {why}",
                    postgres.location
                ),
            )
        })?;
        Ok(postgres)
    }

    /// `user@host:port/database`, as errors name it.
    #[must_use]
    pub fn location(&self) -> &str {
        &self.location
    }

    /// A connection from the pool, opening one if none is free and the pool is not full.
    /// Fails as `unavailable` (503) naming PostgreSQL when none can be had within the pool
    /// wait (plus the connect time limit when a connection is being opened).
    pub async fn client(&self) -> Result<Client, ToolError> {
        self.pool.get().await.map_err(|e| match e {
            PoolError::Backend(e) => self.error(e),
            other => self.unavailable(&self.pool_detail(other)),
        })
    }

    /// Why no connection could be had, credentials scrubbed.
    fn pool_detail(&self, e: PoolError) -> String {
        match e {
            PoolError::Backend(e) => self.detail(&e),
            PoolError::Timeout(_) => format!(
                "no connection within {:.1}s",
                self.options.pool_wait.as_secs_f64()
            ),
            other => self.options.scrub(&other.to_string()),
        }
    }

    /// A client error's SQLSTATE and message, or its text, credentials scrubbed.
    fn detail(&self, e: &tokio_postgres::Error) -> String {
        self.options.scrub(&match e.as_db_error() {
            Some(db) => format!("{}: {}", db.code().code(), db.message()),
            None => error_text(e),
        })
    }

    /// The [`ToolError`] for an error of the client: a lost or refused connection, a time
    /// limit (a statement cancelled by the server's `statement_timeout` included), a server
    /// shutting down or out of connections are `unavailable` (503, retryable) naming
    /// PostgreSQL, and logged with where it is (`PostgreSQL at user@host:port/database`) and
    /// why, which callers never see; any other database error (a SQLSTATE: a constraint, a
    /// syntax error) or a value that does not convert is `internal`: logged with its detail,
    /// shown to callers as "internal error".
    #[must_use]
    #[allow(clippy::needless_pass_by_value)] // Reason: taken as `map_err` hands it over.
    pub fn error(&self, e: tokio_postgres::Error) -> ToolError {
        let detail = self.detail(&e);
        if is_unavailable(&e) {
            self.unavailable(&detail)
        } else {
            ToolError::internal(format!("PostgreSQL at {}: {detail}", self.location))
        }
    }

    /// Applies the migrations of `component` that this database has not recorded yet, in one
    /// transaction.
    ///
    /// `migrations[i]` is version `i + 1` of the component (any number of statements each);
    /// the versions applied are recorded in the table `tool_schema_migrations (component,
    /// version, applied_at)`. The transaction first takes a transaction-level advisory lock
    /// (`pg_advisory_xact_lock`), so that processes starting at once apply each migration
    /// exactly once: the others wait, then find it recorded. A migration that fails rolls
    /// back every migration of this call, and the error names the component and version.
    /// Migrations run without the statement time limit. Never edit a published migration:
    /// append a new one.
    pub async fn migrate(&self, component: &str, migrations: &[&str]) -> Result<(), ToolError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(|e| self.error(e))?;
        transaction
            .batch_execute(&format!(
                "SET LOCAL statement_timeout = 0;
                 SELECT pg_advisory_xact_lock({MIGRATION_LOCK});
                 CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} (
                     component text NOT NULL,
                     version integer NOT NULL,
                     applied_at timestamptz NOT NULL DEFAULT now(),
                     PRIMARY KEY (component, version)
                 )"
            ))
            .await
            .map_err(|e| self.error(e))?;
        let applied: i32 = transaction
            .query_one(
                &format!(
                    "SELECT coalesce(max(version), 0) FROM {MIGRATIONS_TABLE} WHERE component = $1"
                ),
                &[&component],
            )
            .await
            .map_err(|e| self.error(e))?
            .get(0);
        let applied = usize::try_from(applied).unwrap_or(0);
        if applied > migrations.len() {
            tracing::warn!(
                target: "tool_runtime::postgres",
                component,
                recorded = applied,
                known = migrations.len(),
                "PostgreSQL at {} records migrations of this component that this build does not know",
                self.location
            );
        }
        for (index, sql) in migrations.iter().enumerate().skip(applied) {
            let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
            let failed = |e: tokio_postgres::Error| {
                let detail = match e.as_db_error() {
                    Some(db) => format!("{}: {}", db.code().code(), db.message()),
                    None => return self.error(e),
                };
                ToolError::new(
                    ErrorKind::INTERNAL,
                    format!(
                        "PostgreSQL at {}: migration {version} of `{component}` failed: {detail}",
                        self.location
                    ),
                )
            };
            transaction.batch_execute(sql).await.map_err(failed)?;
            transaction
                .execute(
                    &format!("INSERT INTO {MIGRATIONS_TABLE} (component, version) VALUES ($1, $2)"),
                    &[&component, &version],
                )
                .await
                .map_err(|e| self.error(e))?;
            tracing::info!(
                target: "tool_runtime::postgres",
                component,
                version,
                "migration applied to PostgreSQL at {}",
                self.location
            );
        }
        transaction.commit().await.map_err(|e| self.error(e))
    }

    /// Whether PostgreSQL answers a query now: `unavailable` naming PostgreSQL if not (where
    /// it is, and why, go to the log).
    pub async fn ping(&self) -> Result<(), ToolError> {
        self.reach()
            .await
            .map_err(|detail| self.unavailable(&detail))
    }

    /// Whether PostgreSQL answers a query now, or why not with where it is: for the log and
    /// the operator (a readiness check), never for a caller.
    #[cfg(feature = "http")]
    pub(crate) async fn check(&self) -> Result<(), String> {
        self.reach().await.map_err(|detail| self.why(&detail))
    }

    /// One pooled connection and `SELECT 1`, or why not.
    async fn reach(&self) -> Result<(), String> {
        let client = self.pool.get().await.map_err(|e| self.pool_detail(e))?;
        client
            .simple_query("SELECT 1")
            .await
            .map(drop)
            .map_err(|e| self.detail(&e))
    }

    fn why(&self, detail: &str) -> String {
        format!("PostgreSQL at {} is unavailable: {detail}", self.location)
    }

    /// The error a caller sees when PostgreSQL cannot serve: `unavailable` (503, retryable)
    /// naming PostgreSQL, never where it is; that, and why, are logged.
    fn unavailable(&self, detail: &str) -> ToolError {
        tracing::warn!(target: "tool_runtime::postgres", why = self.why(detail), "PostgreSQL is unavailable");
        ToolError::new(ErrorKind::UNAVAILABLE, "PostgreSQL is unavailable")
    }
}

/// Whether `e` means the database cannot serve now, rather than that the statement is wrong.
fn is_unavailable(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(code) = e.code() {
        // 08: connection exception; 28: the login refused; 53: out of resources (connections,
        // memory, disk); 57: operator intervention (shutdown, a statement cancelled by
        // `statement_timeout`); 58: the server's own system error.
        let class = &code.code()[..2];
        return matches!(class, "08" | "28" | "53" | "57" | "58")
            || *code == SqlState::T_R_SERIALIZATION_FAILURE
            || *code == SqlState::T_R_DEADLOCK_DETECTED;
    }
    // No SQLSTATE: either the connection (I/O, TLS, the handshake, a time limit) or a value
    // that did not convert. tokio-postgres does not expose its error kinds, only their text.
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(cause) = source {
        if cause.is::<std::io::Error>() {
            return true;
        }
        source = cause.source();
    }
    let text = e.to_string();
    [
        "error communicating with the server",
        "error performing TLS handshake",
        "connection closed",
        "error connecting to server",
        "timeout waiting for server",
        "authentication error",
        "unexpected message from server",
    ]
    .iter()
    .any(|prefix| text.starts_with(prefix))
}
