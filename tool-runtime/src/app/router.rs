//! The one router `serve` serves: the HTTP tool routes, with MCP at `/mcp` and the agent at
//! `POST /agent` beside them, behind the same front layer.

use std::sync::Arc;

use axum::Router;

use crate::http::{self, HttpOptions};
use crate::registry::Registry;

/// What [`router`] serves beside the tool routes, and how.
#[derive(Debug, Clone, Default)]
pub struct RouterOptions {
    /// The tool routes' limits and authentication, which `/mcp` and `POST /agent` share; its
    /// `api_title` and `api_version` are also the MCP `serverInfo`.
    pub http: HttpOptions,
    /// The `Host` headers `/mcp` accepts, against DNS rebinding: `None` (the default) accepts
    /// loopback names only; an empty list accepts every host (`serve` uses it with an auth file
    /// or a non-loopback address).
    #[cfg(feature = "mcp")]
    pub mcp_allowed_hosts: Option<Vec<String>>,
    /// How many MCP sessions `/mcp` keeps open, and for how long.
    #[cfg(feature = "mcp")]
    pub mcp_sessions: crate::mcp::SessionLimits,
    /// Cancel it when shutting down: `/mcp` then ends its sessions and their open event
    /// streams, which graceful shutdown would otherwise wait out (`serve` does this).
    #[cfg(feature = "mcp")]
    pub shutdown: tokio_util::sync::CancellationToken,
    /// The agent `POST /agent` runs (see [`agent`](crate::agent)); without one the route
    /// answers 400.
    #[cfg(feature = "agent")]
    pub agent: Option<crate::agent::Agent>,
    /// Serve the browser console at `/` and `GET /whoami` (off by default; `serve` turns it
    /// on).
    pub console: bool,
}

/// The tool routes of [`http::router`], with `/mcp` (feature `mcp`: MCP over streamable HTTP,
/// see [`McpServer::http_route`](crate::mcp::McpServer::http_route)) and `POST /agent`
/// (feature `agent`: one run, its events streamed as server-sent events) beside them, all
/// behind the same request id, authentication and peer rule.
///
/// ```no_run
/// # async fn run(registry: std::sync::Arc<tool_runtime::Registry>) -> std::io::Result<()> {
/// use tool_runtime::{app, http};
/// let app = app::router(registry, app::RouterOptions::default());
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// http::serve(listener, app, http::shutdown_signal(), std::time::Duration::from_secs(10)).await
/// # }
/// ```
pub fn router(registry: Arc<Registry>, options: RouterOptions) -> Router {
    let routes = Router::new();
    #[cfg(feature = "mcp")]
    let routes = routes.route(
        "/mcp",
        crate::mcp::McpServer::named(
            registry.clone(),
            options.http.api_title.clone(),
            options.http.api_version.clone(),
        )
        .http_route(
            options.mcp_allowed_hosts,
            options.http.body_limit,
            options.mcp_sessions,
            options.shutdown,
        ),
    );
    #[cfg(feature = "agent")]
    let has_agent = options.agent.is_some();
    #[cfg(not(feature = "agent"))]
    let has_agent = false;
    #[cfg(feature = "agent")]
    let routes = routes.route(
        "/agent",
        super::agent_route::route(options.agent, &options.http),
    );
    let routes = if options.console {
        routes.merge(super::console::routes(
            registry.clone(),
            &options.http,
            has_agent,
        ))
    } else {
        routes
    };
    http::router_with(registry, options.http, routes)
}
