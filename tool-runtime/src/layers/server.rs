//! The options of a server: one type for the HTTP routes, `/mcp`, the accept loop and the
//! CLI's `serve`.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::layers::auth::Auth;
use crate::layers::safety::{Access, AllowedHosts};

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
/// | MCP sessions (`/mcp`) | [`max_sessions`](Self::max_sessions) | 256 |
/// | | [`session_handshake_timeout`](Self::session_handshake_timeout) | 10 s |
/// | | [`session_idle_timeout`](Self::session_idle_timeout) | 5 min |
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
    /// What a composed router mounts beside the tools, by type (the agent of `POST /agent`).
    #[cfg_attr(not(feature = "agent"), allow(dead_code))]
    pub(crate) mounted: axum::http::Extensions,
}

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
    pub(crate) header_timeout: Duration,
    pub(crate) body_timeout: Duration,
    pub(crate) max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            grace: Duration::from_secs(10),
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
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_sessions: 256,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
        }
    }
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

/// Access: who may reach what (`layers::safety`).
impl ServerOptions {
    /// Bearer tokens: every route but `/healthz` and the console's page then needs
    /// `Authorization: Bearer <token>`, and callers on other machines are served. Without
    /// (the default), only this machine's callers are served.
    #[must_use]
    pub fn auth(mut self, auth: impl Into<Arc<Auth>>) -> Self {
        self.access.auth = Some(auth.into());
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
