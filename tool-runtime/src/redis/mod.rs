//! Redis as the store several replicas share (feature `redis`): the rate limits' counts, the
//! confirmation tokens not yet redeemed and, with `mcp`, the MCP sessions.
#![doc = include_str!("../../docs/redis.md")]

#[cfg(feature = "mcp")]
mod answers;
mod confirm;
mod notify;
mod rate;
#[cfg(feature = "mcp")]
mod sessions;
mod tasks;
#[cfg(feature = "mcp-oauth")]
mod tokens;

use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::{AsyncConnectionConfig, Client, ConnectionAddr, RedisError, TlsCertificates};

use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::secret::Secret;

#[cfg(feature = "mcp")]
pub use answers::RedisAnswerRelay;
pub use confirm::RedisConfirmationStore;
pub use notify::RedisNotifier;
pub use rate::RedisRateLimiter;
#[cfg(feature = "mcp")]
pub use sessions::RedisSessionStore;
pub use tasks::RedisTaskStore;
#[cfg(feature = "mcp-oauth")]
pub use tokens::RedisTokenStore;

/// The key prefix unless the options set another: every key this crate writes starts with it.
pub const DEFAULT_PREFIX: &str = "tool-runtime:";

/// How to reach Redis: its URL, the prefix of every key, the time limits, and the CA that
/// `rediss://` trusts instead of the system's roots.
///
/// The URL (`redis://[:password@]host[:port][/db]`, `rediss://` for TLS) is a [`Secret`]: it
/// may hold a password, so `Debug` and every error show only `host:port/db`.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::redis::RedisOptions;
///
/// let options = RedisOptions::new("redis://:hunter2@cache.internal:6379/2")
///     .prefix("billing:")
///     .command_timeout(Duration::from_millis(500));
/// assert_eq!(options.location().unwrap(), "cache.internal:6379/2");
/// assert!(!format!("{options:?}").contains("hunter2"));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct RedisOptions {
    url: Secret<String>,
    prefix: String,
    connect_timeout: Duration,
    command_timeout: Duration,
    pool_wait: Duration,
    ca_certificate: Option<PathBuf>,
}

impl RedisOptions {
    /// Options for the Redis at `url`, with the default prefix ([`DEFAULT_PREFIX`]) and time
    /// limits (connect 5 s, command 2 s, waiting for a connection 2 s).
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: Secret::new(url.into()),
            prefix: DEFAULT_PREFIX.to_owned(),
            connect_timeout: Duration::from_secs(5),
            command_timeout: Duration::from_secs(2),
            pool_wait: Duration::from_secs(2),
            ca_certificate: None,
        }
    }

    /// Options for the URL in the environment variable `name` (such as `REDIS_URL`). Fails,
    /// naming the variable, when it is unset or not Unicode.
    pub fn from_env(name: &str) -> Result<Self, ToolError> {
        std::env::var(name).map(Self::new).map_err(|_| {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!("the environment variable `{name}` does not hold a Redis URL"),
            )
        })
    }

    /// The prefix of every key (default [`DEFAULT_PREFIX`]), so that several applications can
    /// share one Redis: their counts, tokens and sessions never meet.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long connecting may take, at start and on each reconnection attempt (default 5 s).
    #[must_use]
    pub fn connect_timeout(mut self, limit: Duration) -> Self {
        self.connect_timeout = limit;
        self
    }

    /// How long Redis may take to answer one command once it is sent (default 2 s).
    #[must_use]
    pub fn command_timeout(mut self, limit: Duration) -> Self {
        self.command_timeout = limit;
        self
    }

    /// How long an operation may wait for a connection while the one connection is being
    /// re-established (default 2 s). The handle multiplexes every operation over one
    /// connection rather than keeping a pool, so this is the wait for that connection: an
    /// operation as a whole is given this plus the command timeout, and is answered
    /// `unavailable` past it.
    #[must_use]
    pub fn pool_wait(mut self, limit: Duration) -> Self {
        self.pool_wait = limit;
        self
    }

    /// A CA certificate file (PEM: one certificate or several) that a `rediss://` connection
    /// trusts instead of the system's root certificates, as `redis-cli --cacert` and libpq's
    /// `sslrootcert` do: a private CA's, which the system does not know, and then no public CA
    /// can vouch for the server. The server's certificate must be signed by one of them and
    /// name the URL's host. Read when [`Redis::connect`] starts, which fails, naming this option and
    /// the path, when the file cannot be read or holds no certificate, or when the URL is
    /// `redis://` (no TLS to apply it to).
    #[must_use]
    pub fn ca_certificate(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca_certificate = Some(path.into());
        self
    }

    /// Where the URL points, as errors and logs show it: `host:port/db` (or the socket's path),
    /// never the password. Fails when the URL does not parse.
    pub fn location(&self) -> Result<String, ToolError> {
        self.client().map(|(_, location)| location)
    }

    /// [`Self::client`], with the CA certificate file read and trusted alone when one is set.
    fn connecting_client(&self) -> Result<(Client, String), ToolError> {
        let (client, location) = self.client()?;
        let Some(path) = &self.ca_certificate else {
            return Ok((client, location));
        };
        if !matches!(
            client.get_connection_info().addr(),
            ConnectionAddr::TcpTls { .. }
        ) {
            return Err(ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!(
                    "the Redis option ca_certificate ({}) is for TLS, and the URL of Redis at \
                     {location} is not rediss://",
                    path.display()
                ),
            ));
        }
        let roots = trusted(path)?;
        let certificates = TlsCertificates {
            client_tls: None,
            root_cert: Some(roots),
        };
        let client =
            Client::build_with_tls(self.url.expose().as_str(), certificates).map_err(|e| {
                ToolError::new(
                    ErrorKind::UNAVAILABLE,
                    format!(
                        "cannot set up TLS for Redis at {location}: {}",
                        self.scrub(&e.to_string())
                    ),
                )
            })?;
        Ok((client, location))
    }

    fn client(&self) -> Result<(Client, String), ToolError> {
        let client = Client::open(self.url.expose().as_str()).map_err(|e| {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!(
                    "the Redis URL does not parse ({}): expected redis://[:password@]host[:port][/db] or rediss://...",
                    self.scrub(&e.to_string())
                ),
            )
        })?;
        let info = client.get_connection_info();
        let db = info.redis_settings().db();
        let location = match info.addr() {
            ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
                format!("{host}:{port}/{db}")
            }
            ConnectionAddr::Unix(path) => format!("{}/{db}", path.display()),
            other => format!("{other}/{db}"),
        };
        Ok((client, location))
    }

    /// `text` without the URL's password, should a message ever quote it.
    fn scrub(&self, text: &str) -> String {
        let password = Client::open(self.url.expose().as_str()).ok().and_then(|c| {
            c.get_connection_info()
                .redis_settings()
                .password()
                .map(str::to_owned)
        });
        match password {
            Some(p) if !p.is_empty() => text.replace(&p, crate::tool::secret::REDACTED),
            _ => text.to_owned(),
        }
    }
}

impl fmt::Debug for RedisOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let location = self
            .location()
            .unwrap_or_else(|_| "(a URL that does not parse)".to_owned());
        f.debug_struct("RedisOptions")
            .field("location", &location)
            .field("prefix", &self.prefix)
            .field("connect_timeout", &self.connect_timeout)
            .field("command_timeout", &self.command_timeout)
            .field("pool_wait", &self.pool_wait)
            .field("ca_certificate", &self.ca_certificate)
            .finish_non_exhaustive()
    }
}

/// The roots a `rediss://` connection with a CA file trusts, as the PEM the `redis` crate
/// reads: the file's certificates, checked to be usable as trust anchors.
fn trusted(path: &Path) -> Result<Vec<u8>, ToolError> {
    crate::tls::ca_file(path, "the Redis option ca_certificate")?;
    std::fs::read(path).map_err(|e| {
        ToolError::new(
            ErrorKind::UNAVAILABLE,
            format!(
                "the Redis option ca_certificate ({}): cannot read it: {e}",
                path.display()
            ),
        )
    })
}

/// A connection to Redis shared by every store built on it; cheap to clone.
///
/// One multiplexed connection carries every operation, and is re-established by itself when
/// it is lost: while Redis cannot be reached each operation fails as `unavailable` (503)
/// naming Redis, and the next one after Redis is back succeeds on the same handle.
///
/// ```no_run
/// # async fn start() -> Result<(), tool_runtime::ToolError> {
/// use tool_runtime::redis::{Redis, RedisOptions};
///
/// let redis = Redis::connect(RedisOptions::from_env("REDIS_URL")?).await?;
/// let limits = redis.rate_limiter();
/// let tokens = redis.confirmation_store();
/// # let _ = (limits, tokens);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Redis {
    manager: ConnectionManager,
    location: String,
    prefix: String,
    deadline: Duration,
    options: RedisOptions,
}

impl fmt::Debug for Redis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redis")
            .field("location", &self.location)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// Connects, and checks that Redis answers `PING`. Fails, naming `host:port/db`, when the
    /// URL does not parse, Redis cannot be reached within the connect time limit or, over
    /// `rediss://`, its certificate is refused (why is in the message): an application stops
    /// at start with that error rather than serve without its shared state. A CA certificate
    /// file ([`RedisOptions::ca_certificate`]) that cannot be used fails it too, naming the
    /// option and the path.
    pub async fn connect(options: RedisOptions) -> Result<Self, ToolError> {
        let (client, location) = options.connecting_client()?;
        let cannot = |detail: &str| {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!("cannot connect to Redis at {location}: {detail}"),
            )
        };
        // One attempt first, so an unreachable Redis is reported at once rather than after the
        // manager's reconnection attempts.
        let once = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(options.connect_timeout))
            .set_response_timeout(Some(options.command_timeout));
        let first = async {
            let mut connection = client
                .get_multiplexed_async_connection_with_config(&once)
                .await?;
            ::redis::cmd("PING")
                .query_async::<String>(&mut connection)
                .await
        };
        match tokio::time::timeout(options.connect_timeout + options.command_timeout, first).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(cannot(&options.scrub(&e.to_string()))),
            Err(_) => return Err(cannot("no answer in time")),
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(options.connect_timeout))
            .set_response_timeout(Some(options.command_timeout))
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_secs(1));
        let manager = tokio::time::timeout(
            options.connect_timeout,
            ConnectionManager::new_with_config(client, config),
        )
        .await
        .map_err(|_| cannot("no answer in time"))?
        .map_err(|e| cannot(&options.scrub(&e.to_string())))?;
        Ok(Self {
            manager,
            prefix: options.prefix.clone(),
            deadline: options.pool_wait + options.command_timeout,
            location,
            options,
        })
    }

    /// `host:port/db`, as errors name it.
    #[must_use]
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The prefix of every key.
    #[must_use]
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Whether Redis answers now: `unavailable` naming Redis if not (where it is goes to
    /// the log).
    pub async fn ping(&self) -> Result<(), ToolError> {
        self.check()
            .await
            .map_err(|why| Self::unavailable("PING", &why))
    }

    /// Whether Redis answers `PING` now, or why not with its address: for the log and the
    /// operator (a readiness check), never for a caller.
    pub(crate) async fn check(&self) -> Result<(), String> {
        self.attempt("PING", |mut c| async move {
            ::redis::cmd("PING").query_async::<String>(&mut c).await
        })
        .await
        .map(drop)
    }

    /// The rate limiter every replica shares through this Redis.
    #[must_use]
    pub fn rate_limiter(&self) -> RedisRateLimiter {
        RedisRateLimiter::new(self.clone())
    }

    /// The confirmation tokens every replica shares through this Redis.
    #[must_use]
    pub fn confirmation_store(&self) -> RedisConfirmationStore {
        RedisConfirmationStore::new(self.clone())
    }

    /// The tasks every replica reads, answers and cancels through this Redis.
    #[must_use]
    pub fn task_store(&self) -> RedisTaskStore {
        RedisTaskStore::new(self.clone())
    }

    /// What a gateway keeps for its users' accounts (their tokens, sealed), shared by every
    /// replica through this Redis: the store of
    /// [`ConnectedAccounts`](crate::mcp::ConnectedAccounts).
    #[cfg(feature = "mcp-oauth")]
    #[must_use]
    pub fn token_store(&self) -> RedisTokenStore {
        RedisTokenStore::new(self.clone())
    }

    /// The change notifications every replica hears through this Redis's publish/subscribe
    /// (resource updates, resources and prompts added or removed), for
    /// [`RegistryBuilder::notifier`](crate::registry::RegistryBuilder::notifier).
    #[must_use]
    pub fn notifier(&self) -> RedisNotifier {
        RedisNotifier::new(self.clone())
    }

    /// The relay of `/mcp`'s answers through this Redis: a client's answer that reaches
    /// another replica than the one that sent the request it answers is carried there
    /// ([`ServerOptions::mcp_answer_relay`](crate::http::ServerOptions::mcp_answer_relay)).
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn answer_relay(&self) -> RedisAnswerRelay {
        RedisAnswerRelay::new(self.clone())
    }

    /// The MCP sessions every replica shares through this Redis; a session not used for `idle`
    /// is forgotten.
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn session_store(&self, idle: Duration) -> RedisSessionStore {
        RedisSessionStore::new(self.clone(), idle)
    }

    /// Writes `value` at `key` for `ttl_ms` milliseconds (at least one) unless the key holds a
    /// value already (`SET NX PX`): `false` then, and nothing written. `what` names the
    /// operation in errors.
    pub(crate) async fn set_new(
        &self,
        what: &str,
        key: String,
        value: String,
        ttl_ms: u64,
    ) -> Result<bool, ToolError> {
        let written: Option<String> = self
            .run(what, |mut c| async move {
                ::redis::cmd("SET")
                    .arg(key)
                    .arg(value)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl_ms.max(1))
                    .query_async(&mut c)
                    .await
            })
            .await?;
        Ok(written.is_some())
    }

    /// `{prefix}{rest}`.
    pub(crate) fn key(&self, rest: &str) -> String {
        let mut key = String::with_capacity(self.prefix.len() + rest.len());
        key.push_str(&self.prefix);
        key.push_str(rest);
        key
    }

    /// Runs one operation on the shared connection within the operation's deadline; any
    /// failure is `unavailable` naming Redis and what was being done ([`Self::unavailable`]).
    pub(crate) async fn run<T, F>(
        &self,
        what: &str,
        operation: impl FnOnce(ConnectionManager) -> F,
    ) -> Result<T, ToolError>
    where
        F: Future<Output = Result<T, RedisError>>,
    {
        self.attempt(what, operation)
            .await
            .map_err(|why| Self::unavailable(what, &why))
    }

    /// [`Self::run`], failing with why in the operator's words: Redis's address, what was
    /// being done, the client's error (credentials scrubbed) or the deadline.
    async fn attempt<T, F>(
        &self,
        what: &str,
        operation: impl FnOnce(ConnectionManager) -> F,
    ) -> Result<T, String>
    where
        F: Future<Output = Result<T, RedisError>>,
    {
        let detail =
            match tokio::time::timeout(self.deadline, operation(self.manager.clone())).await {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(e)) => self.options.scrub(&e.to_string()),
                Err(_) => format!("no answer within {:.1}s", self.deadline.as_secs_f64()),
            };
        Err(format!(
            "Redis at {} is unavailable ({what}): {detail}",
            self.location
        ))
    }

    /// The error a caller sees when Redis fails: `unavailable` (503, retryable) naming Redis
    /// and what was being done, never where Redis is; `why`, which does, is logged.
    pub(crate) fn unavailable(what: &str, why: &str) -> ToolError {
        tracing::warn!(target: "tool_runtime::redis", why, "Redis is unavailable");
        ToolError::new(
            ErrorKind::UNAVAILABLE,
            format!("Redis is unavailable ({what})"),
        )
    }
}
