//! The options of a server: one type for the HTTP routes, `/mcp`, the accept loop and the
//! CLI's `serve`.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::front::auth::tokens::Auth;
use crate::front::readiness::{Readiness, ReadyCheck};
use crate::front::safety::{Access, AllowedHosts};

/// How a server is run: who may reach it, what a request and a connection may hold, its MCP
/// sessions, how it names itself and what it serves beside the tools. Taken by
/// [`http::router`](crate::http::router), [`http::router_with`](crate::http::router_with),
/// [`http::serve`](crate::http::serve), [`app::router`](crate::app::router) and
/// [`McpServer::http_route`](crate::mcp::McpServer::http_route); the CLI's `serve` builds one
/// from its flags. Start from [`default`](Self::default) and set what differs:
///
/// ```no_run
/// # async fn run(registry: std::sync::Arc<tool_runtime::Registry>) -> std::io::Result<()> {
/// use std::time::Duration;
/// use tool_runtime::http::{self, Auth, ServerOptions};
///
/// let options = ServerOptions::default()
///     .auth(Auth::from_file("auth.toml".as_ref()).expect("an auth file"))
///     .operator_role("ops")
///     .body_limit(256 * 1024)
///     .max_connections(128)
///     .grace(Duration::from_secs(5));
/// let app = http::router(registry, options.clone());
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
/// http::serve(listener, app, http::shutdown_signal(), &options).await
/// # }
/// ```
///
/// | group | setting | default |
/// | --- | --- | --- |
/// | access | [`auth`](Self::auth) | none: loopback callers only |
/// | | [`allow_remote_without_auth`](Self::allow_remote_without_auth) | off |
/// | | [`allowed_hosts`](Self::allowed_hosts) (`/mcp`'s `Host` names) | loopback names |
/// | | [`operator_role`](Self::operator_role) | `admin` ([`OPERATOR_ROLE`](crate::http::OPERATOR_ROLE)) |
/// | requests | [`body_limit`](Self::body_limit) | 1 MiB |
/// | | [`max_depth`](Self::max_depth) | 64 |
/// | connections ([`serve`](crate::http::serve)) | [`max_connections`](Self::max_connections) | 512 |
/// | | [`header_timeout`](Self::header_timeout) | 10 s |
/// | | [`body_timeout`](Self::body_timeout) | 30 s |
/// | | [`grace`](Self::grace) | 10 s |
/// | | [`drain`](Self::drain) | 0 s |
/// | MCP sessions (`/mcp`) | [`max_sessions`](Self::max_sessions) | 256 |
/// | | [`session_handshake_timeout`](Self::session_handshake_timeout) | 10 s |
/// | | [`session_idle_timeout`](Self::session_idle_timeout) | 5 min |
/// | | [`max_subscriptions`](Self::max_subscriptions) (resource URIs one session follows) | the server's: 1,000 |
/// | | `mcp_session_store` (feature `mcp`) | none: a session lives on the replica that made it |
/// | | `mcp_answer_relay` (feature `mcp`) | none: a client's answer is taken by the replica it reaches |
/// | | `mcp_event_store` (feature `mcp`) | a `MemoryEventStore` in this process |
/// | | `mcp_request_state_key` (feature `mcp`) | a random key of this process |
/// | replicas | [`replica_id`](Self::replica_id) | none |
/// | | [`ready_check`](Self::ready_check) (`GET /readyz`) | none |
/// | the server | [`api_title`](Self::api_title), [`api_version`](Self::api_version) | `tools`, this crate's version |
/// | | [`console`](Self::console) | off |
/// | | [`shutdown`](Self::shutdown) | a token of its own |
/// | | `agent` (feature `agent`, [`app::router`](crate::app::router)) | none |
///
#[doc = include_str!("../../docs/security.md")]
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Who may reach what.
    pub(crate) access: Access,
    /// What a request may hold.
    pub(crate) requests: RequestLimits,
    /// What a connection may hold, and the end of serving.
    pub(crate) connections: ConnectionLimits,
    /// The sessions of `/mcp`.
    pub(crate) sessions: SessionLimits,
    /// How the server names itself.
    pub(crate) info: Info,
    /// Serve the browser console at `/` and `GET /whoami`.
    pub(crate) console: bool,
    /// Cancelled when the server begins to shut down.
    pub(crate) shutdown: CancellationToken,
    /// This replica's tag, the prefix of the MCP session ids it makes and its `X-Replica`.
    pub(crate) replica_id: Option<Arc<str>>,
    /// What `GET /readyz` reports: draining, and the checks of the engines the server needs.
    pub(crate) readiness: Readiness,
    /// Where `/mcp` keeps what another replica needs to restore a session it did not make.
    #[cfg(feature = "mcp")]
    pub(crate) session_store: Option<SessionStoreOption>,
    /// What carries a client's answer to the replica that sent the request it answers.
    #[cfg(feature = "mcp")]
    pub(crate) answer_relay: Option<AnswerRelayOption>,
    /// Where `/mcp` keeps the events of its streams for clients that resume one.
    #[cfg(feature = "mcp")]
    pub(crate) event_store: EventStoreOption,
    /// What seals `/mcp`'s input-required request states.
    #[cfg(feature = "mcp")]
    pub(crate) request_state_key: Option<crate::front::state_key::RequestStateKey>,
    /// Pages served without a token, each signing its visitor in itself (the pages where
    /// callers connect accounts).
    pub(crate) pages: Vec<Arc<dyn PublicPages>>,
}

/// Pages a component serves under [`PUBLIC_PAGES`] without a token: each signs its visitor
/// in itself. The HTTP router merges their routes.
pub(crate) trait PublicPages: Send + Sync + std::fmt::Debug {
    /// The pages' routes on a server with `options`.
    fn routes(&self, options: &ServerOptions) -> axum::Router;
}

/// Where public pages are served: the front layer lets requests under it through without a
/// token.
pub(crate) const PUBLIC_PAGES: &str = "/oauth/connect/";

/// What a request may hold.
#[derive(Debug, Clone)]
pub(crate) struct RequestLimits {
    pub(crate) body_limit: usize,
    pub(crate) max_depth: usize,
}

impl Default for RequestLimits {
    fn default() -> Self {
        Self {
            body_limit: 1024 * 1024,
            max_depth: 64,
        }
    }
}

/// What a connection may hold.
#[derive(Debug, Clone)]
pub(crate) struct ConnectionLimits {
    pub(crate) grace: Duration,
    pub(crate) drain: Duration,
    pub(crate) header_timeout: Duration,
    pub(crate) body_timeout: Duration,
    pub(crate) max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            grace: Duration::from_secs(10),
            drain: Duration::ZERO,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 512,
        }
    }
}

/// How many MCP sessions `/mcp` keeps, and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionLimits {
    pub(crate) max_sessions: usize,
    pub(crate) handshake_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    /// The resource URIs one session follows at most; `None`: the server's own cap.
    pub(crate) max_subscriptions: Option<usize>,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_sessions: 256,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            max_subscriptions: None,
        }
    }
}

/// The SDK's session store, in a type that can say `Debug`.
#[cfg(feature = "mcp")]
#[derive(Clone)]
pub(crate) struct SessionStoreOption(
    pub(crate) Arc<dyn rmcp::transport::streamable_http_server::session::SessionStore>,
);

#[cfg(feature = "mcp")]
impl std::fmt::Debug for SessionStoreOption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionStore")
    }
}

/// The relay of answers between replicas, in a type that can say `Debug`.
#[cfg(feature = "mcp")]
#[derive(Clone)]
pub(crate) struct AnswerRelayOption(pub(crate) Arc<dyn crate::answers::AnswerRelay>);

#[cfg(feature = "mcp")]
impl std::fmt::Debug for AnswerRelayOption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AnswerRelay")
    }
}

/// Where `/mcp` keeps its streams' events.
#[cfg(feature = "mcp")]
#[derive(Debug, Clone, Default)]
pub(crate) enum EventStoreOption {
    /// A `MemoryEventStore` of the route's own, with its default bounds.
    #[default]
    Memory,
    /// The store given.
    Given(Arc<dyn rmcp::transport::streamable_http_server::session::EventStore>),
    /// None.
    Off,
}

/// How the server names itself.
#[derive(Debug, Clone)]
pub(crate) struct Info {
    pub(crate) title: String,
    pub(crate) version: String,
}

impl Default for Info {
    fn default() -> Self {
        Self {
            title: "tools".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// Access: who may reach what (`front::safety`).
impl ServerOptions {
    /// Bearer tokens: every route but `/healthz` and the console's page then needs
    /// `Authorization: Bearer <token>`, and callers on other machines are served. Without
    /// (the default), only this machine's callers are served.
    #[must_use]
    pub fn auth(mut self, auth: impl Into<Arc<Auth>>) -> Self {
        self.access.auth = Some(auth.into());
        self
    }

    /// OAuth 2.1 access tokens from an authorization server, beside the static tokens of
    /// [`auth`](Self::auth) if any: every route but the public ones then needs a token, the
    /// protected resource metadata (RFC 9728) is served at
    /// `/.well-known/oauth-protected-resource` (the base URL) and
    /// `/.well-known/oauth-protected-resource/mcp` (the MCP URL), and a request without a valid
    /// token is answered 401 with `WWW-Authenticate: Bearer resource_metadata="…"`, which
    /// MCP clients start their login from.
    #[cfg(feature = "oauth")]
    #[must_use]
    pub fn oauth(mut self, oauth: crate::front::auth::oauth::OAuth) -> Self {
        self.access.oauth = Some(oauth);
        self
    }

    /// Serve callers on other machines without authentication. Off by default: turn it on only
    /// when something else guards the network.
    #[must_use]
    pub fn allow_remote_without_auth(mut self, allow: bool) -> Self {
        self.access.allow_remote_without_auth = allow;
        self
    }

    /// The `Host` headers `/mcp` accepts, against DNS rebinding: by default
    /// [`Loopback`](AllowedHosts::Loopback) names only ([`AllowedHosts`] says what each choice
    /// accepts).
    ///
    /// ```
    /// use tool_runtime::http::{AllowedHosts, ServerOptions};
    /// let behind_a_proxy = ServerOptions::default()
    ///     .allowed_hosts(AllowedHosts::only(["tools.example", "tools.example:8443"]));
    /// ```
    #[must_use]
    pub fn allowed_hosts(mut self, hosts: AllowedHosts) -> Self {
        self.access.allowed_hosts = hosts;
        self
    }

    /// The role that opens the read-only operator endpoints (`GET /audit`, `GET /toolsets`,
    /// and those to come) on a server with [`auth`](Self::auth): default `admin`. Give it to a
    /// monitoring token without the roles that call tools. Without authentication these
    /// endpoints follow the peer rule, like every route.
    #[must_use]
    pub fn operator_role(mut self, role: impl Into<String>) -> Self {
        self.access.operator_role = role.into();
        self
    }
}

/// Requests and connections.
impl ServerOptions {
    /// The largest accepted body, in bytes (default 1 MiB); larger → 413. `/mcp` too.
    #[must_use]
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.requests.body_limit = bytes;
        self
    }

    /// The deepest accepted nesting of arrays and objects (default 64); deeper → 400.
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.requests.max_depth = depth;
        self
    }

    /// Connections [`serve`](crate::http::serve) serves at once (default 512, at least 1); at
    /// the cap, new ones wait in the kernel's backlog to be accepted.
    #[must_use]
    pub fn max_connections(mut self, max: usize) -> Self {
        self.connections.max_connections = max.max(1);
        self
    }

    /// How long a request's head may take to arrive, and how long a kept-alive connection may
    /// wait idle for its next request (default 10 s).
    #[must_use]
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.connections.header_timeout = timeout;
        self
    }

    /// How long a request's body may take to arrive, counted from its head (default 30 s);
    /// past it, `408 request_timeout`.
    #[must_use]
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.connections.body_timeout = timeout;
        self
    }

    /// After shutdown begins, how long calls in flight may take before their connections are
    /// dropped (default 10 s).
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Self {
        self.connections.grace = grace;
        self
    }

    /// When shutdown begins, how long [`serve`](crate::http::serve) keeps serving before it
    /// stops accepting (default 0: none). Meanwhile `GET /readyz` answers 503 and every answer
    /// carries `Connection: close`, so a load balancer or orchestrator takes the replica out of
    /// rotation and clients reconnect elsewhere; calls that still arrive are served. Behind a
    /// balancer that polls `/readyz`, give it a few poll intervals (5 s is common). The
    /// [`grace`](Self::grace) period for calls in flight follows.
    #[must_use]
    pub fn drain(mut self, drain: Duration) -> Self {
        self.connections.drain = drain;
        self
    }
}

/// MCP sessions at `/mcp`.
impl ServerOptions {
    /// MCP sessions open at once (default 256). An `initialize` beyond it is answered `503`
    /// with a JSON-RPC error and `Retry-After`; the sessions already open are not disturbed.
    #[must_use]
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.sessions.max_sessions = max;
        self
    }

    /// How long a new session's client has, after the `initialize` answer, to send
    /// `notifications/initialized` (default 10 s); a session that never finishes its handshake
    /// is closed then, instead of holding its place until the idle timeout.
    #[must_use]
    pub fn session_handshake_timeout(mut self, timeout: Duration) -> Self {
        self.sessions.handshake_timeout = timeout;
        self
    }

    /// A session with no message for this long is closed (default 5 min).
    #[must_use]
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.sessions.idle_timeout = timeout;
        self
    }

    /// The resource URIs one session follows at most: those it subscribed to
    /// (`resources/subscribe`) and those of its open `subscriptions/listen` streams. Past it,
    /// a subscribe or a listen is refused with a JSON-RPC error naming the cap; the session's
    /// other subscriptions are not disturbed. Unset, the server's own holds (1,000 unless its
    /// `McpServer::max_subscriptions` says otherwise).
    #[must_use]
    pub fn max_subscriptions(mut self, max: usize) -> Self {
        self.sessions.max_subscriptions = Some(max);
        self
    }

    /// Keeps what a session needs to be restored (its client's `initialize` parameters) in
    /// `store`, shared by every replica behind a load balancer: a request carrying a session id
    /// this replica does not know is served after the session is restored from the store, as
    /// if it had been made here (counted against [`max_sessions`](Self::max_sessions)). Without
    /// one (the default), a session lives on the replica that made it, and another answers
    /// `404` to its requests. Any [`SessionStore`] of the MCP SDK fits: one over Redis, or a
    /// map in memory for servers in one process.
    ///
    /// The store keeps, with each session, the principal that opened it: every replica serves
    /// a session to that principal alone, and answers anyone else `404`, as for a session that
    /// does not exist.
    ///
    /// A restored session starts afresh: what it set (the log level of `logging/setLevel`),
    /// requests in flight on the replica that left, and its open event streams are not carried
    /// over.
    ///
    /// [`SessionStore`]: rmcp::transport::streamable_http_server::session::SessionStore
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn mcp_session_store(
        mut self,
        store: Arc<dyn rmcp::transport::streamable_http_server::session::SessionStore>,
    ) -> Self {
        self.session_store = Some(SessionStoreOption(store));
        self
    }

    /// Carries a client's answer to a request `/mcp` sent it mid-call (elicitation, sampling)
    /// through `relay` to the replica that sent the request, when the answer reaches another.
    /// The balancer routes a session's requests to the replica its id names, and a session
    /// restored elsewhere while that replica was away comes back to it on its return: an
    /// answer to a call still waiting on the replica that stood in would otherwise be refused
    /// (`400`), and the call would wait for it until its time runs out. Give every replica
    /// the same relay, beside the [session store](Self::mcp_session_store):
    /// [`MemoryAnswerRelay`](crate::mcp::MemoryAnswerRelay) for servers in one process, or
    /// [`Redis::answer_relay`](crate::redis::Redis::answer_relay) (set by
    /// [`redis`](Self::redis)).
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn mcp_answer_relay(mut self, relay: Arc<dyn crate::answers::AnswerRelay>) -> Self {
        self.answer_relay = Some(AnswerRelayOption(relay));
        self
    }

    /// Seals the request state of `/mcp`'s input-required results (protocol 2026-07-28) with
    /// `key` ([`McpServer::request_state_key`](crate::mcp::McpServer::request_state_key)): give
    /// every replica the same, so that any of them takes the next round of a call another
    /// began. Unset, each process has a random key of its own, and a round that reaches
    /// another replica is refused with a JSON-RPC error (the client makes the request over).
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn mcp_request_state_key(mut self, key: crate::front::state_key::RequestStateKey) -> Self {
        self.request_state_key = Some(key);
        self
    }

    /// Keeps the events of `/mcp`'s event streams in `store`, so that a client whose stream
    /// broke off mid-call resumes it with `Last-Event-ID` and receives the rest, the answer
    /// included. By default each `/mcp` route keeps them in a
    /// [`MemoryEventStore`](crate::mcp::MemoryEventStore) of its own with the default bounds;
    /// give one bounded as you need, or a store every replica shares.
    ///
    /// A call's event stream starts with a priming event (an id and no data) carrying a
    /// `retry` of 3 s, the time a client waits before it reconnects. Events are per process unless the store is
    /// shared: a session restored on another replica from a
    /// [session store](Self::mcp_session_store) resumes nothing the first replica sent, and
    /// a client that resumes there receives an empty stream.
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn mcp_event_store(
        mut self,
        store: Arc<dyn rmcp::transport::streamable_http_server::session::EventStore>,
    ) -> Self {
        self.event_store = EventStoreOption::Given(store);
        self
    }

    /// Keeps no events of `/mcp`'s event streams: a stream that breaks off mid-call is lost,
    /// and the client hears of the call no more (the SDK's own short memory of a stream
    /// serves only a call that has not answered yet).
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn without_mcp_event_store(mut self) -> Self {
        self.event_store = EventStoreOption::Off;
        self
    }
}

/// Replicas behind a load balancer.
impl ServerOptions {
    /// This replica's tag (default none): it prefixes the MCP session ids this replica makes
    /// (`{id}.{random}`), so a load balancer can send a session's requests to the replica that
    /// holds it (a request the server sends its client mid-call, such as elicitation, is
    /// answered there), and every answer carries `X-Replica: {id}`.
    ///
    /// # Panics
    ///
    /// If `id` is empty or holds anything but ASCII letters, digits, `-` and `_`.
    #[must_use]
    pub fn replica_id(mut self, id: impl Into<String>) -> Self {
        let id = id.into();
        assert!(
            is_replica_id(&id),
            "a replica id is ASCII letters, digits, `-` and `_`: {id:?}"
        );
        self.replica_id = Some(id.into());
        self
    }

    /// Adds a check `GET /readyz` runs: the server is ready only when every check returns
    /// `Ok`; an `Err` names what is down (`503`, with each failing check's name and message).
    /// For an engine the server cannot serve without, such as a shared store.
    ///
    /// ```
    /// use tool_runtime::http::ServerOptions;
    /// let options = ServerOptions::default().ready_check("store", || async { Ok(()) });
    /// ```
    #[must_use]
    pub fn ready_check<F, Fut>(mut self, name: impl Into<String>, check: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        let check: ReadyCheck = Arc::new(move || Box::pin(check()));
        self.readiness.checks.push((name.into().into(), check));
        self
    }
}

/// Whether `id` can tag a replica: non-empty ASCII letters, digits, `-` and `_` (no `.`, which
/// ends the tag in a session id).
pub(crate) fn is_replica_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The server itself.
impl ServerOptions {
    /// `info.title` of the OpenAPI document and the MCP `serverInfo` name (default `tools`).
    #[must_use]
    pub fn api_title(mut self, title: impl Into<String>) -> Self {
        self.info.title = title.into();
        self
    }

    /// `info.version` of the OpenAPI document and the MCP `serverInfo` version (default this
    /// crate's version).
    #[must_use]
    pub fn api_version(mut self, version: impl Into<String>) -> Self {
        self.info.version = version.into();
        self
    }

    /// Serve the browser console at `/` and `GET /whoami` beside the tools
    /// ([`app::router`](crate::app::router); off by default, `serve` turns it on).
    #[must_use]
    pub fn console(mut self, console: bool) -> Self {
        self.console = console;
        self
    }

    /// The token cancelled when the server begins to shut down: `/mcp` then ends its sessions
    /// and their open event streams, which graceful shutdown would otherwise wait out.
    /// [`serve`](crate::http::serve) cancels the token of the options it is given when its
    /// shutdown future completes, so the same options given to the router and to `serve` need
    /// nothing more; set one to end the sessions yourself.
    #[must_use]
    pub fn shutdown(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }
}

/// The shares of the engines several replicas use: each hands the server values (its readiness
/// check, a session store), the engine itself adds nothing to these options.
impl ServerOptions {
    /// Puts the server's share of `redis` in place: a `GET /readyz` check named `redis` that
    /// answers 503 while Redis does not answer `PING` and, with `mcp`, `/mcp`'s sessions kept
    /// in Redis ([`mcp_session_store`](Self::mcp_session_store) with
    /// [`Redis::session_store`](crate::redis::Redis::session_store), forgetting a session after the
    /// [`session_idle_timeout`](Self::session_idle_timeout) set before this call) and their
    /// clients' answers relayed through it ([`mcp_answer_relay`](Self::mcp_answer_relay) with
    /// [`Redis::answer_relay`](crate::redis::Redis::answer_relay)). The rate
    /// limits and tokens go on the registry
    /// ([`RegistryBuilder::redis`](crate::registry::RegistryBuilder::redis)).
    ///
    /// ```no_run
    /// # async fn start() -> Result<(), tool_runtime::ToolError> {
    /// use tool_runtime::http::ServerOptions;
    /// use tool_runtime::redis::{Redis, RedisOptions};
    ///
    /// let redis = Redis::connect(RedisOptions::from_env("REDIS_URL")?).await?;
    /// let options = ServerOptions::default().replica_id("r1").redis(&redis);
    /// # let _ = options;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "redis")]
    #[must_use]
    pub fn redis(self, redis: &crate::redis::Redis) -> Self {
        let pinged = redis.clone();
        let options = self.ready_check("redis", move || {
            let redis = pinged.clone();
            async move { redis.check().await }
        });
        #[cfg(feature = "mcp")]
        let options = {
            let idle = options.sessions.idle_timeout;
            options
                .mcp_session_store(std::sync::Arc::new(redis.session_store(idle)))
                .mcp_answer_relay(std::sync::Arc::new(redis.answer_relay()))
        };
        options
    }

    /// Adds a `GET /readyz` check named `postgres` that answers 503 while PostgreSQL does not
    /// answer a query (or no pooled connection can be had).
    ///
    /// ```no_run
    /// # async fn start() -> Result<(), tool_runtime::ToolError> {
    /// use tool_runtime::http::ServerOptions;
    /// use tool_runtime::postgres::{Postgres, PostgresOptions};
    ///
    /// let postgres = Postgres::connect(PostgresOptions::from_env("DATABASE_URL")?).await?;
    /// let options = ServerOptions::default().replica_id("r1").postgres(&postgres);
    /// # let _ = options;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "postgres")]
    #[must_use]
    pub fn postgres(self, postgres: &crate::postgres::Postgres) -> Self {
        let pinged = postgres.clone();
        self.ready_check("postgres", move || {
            let postgres = pinged.clone();
            async move { postgres.check().await }
        })
    }
}
