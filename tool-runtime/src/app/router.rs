//! The one router `serve` serves: the HTTP tool routes, with MCP at `/mcp` and the agent at
//! `POST /agent` beside them, behind the same front layer.

use std::sync::Arc;

use axum::Router;

use crate::http::{self, ServerOptions};
use crate::registry::Registry;

#[cfg(feature = "agent")]
impl ServerOptions {
    /// The agent `POST /agent` runs in [`app::router`](crate::app::router) (see
    /// [`agent`](crate::agent)); without one the route answers 400.
    #[must_use]
    pub fn agent(mut self, agent: crate::agent::Agent) -> Self {
        self.mounted.insert(agent);
        self
    }
}

/// The tool routes of [`http::router`], with `/mcp` (feature `mcp`: MCP over streamable HTTP,
/// see [`McpServer::http_route`](crate::mcp::McpServer::http_route)), `POST /agent` (feature
/// `agent`: one run of the [`agent`](ServerOptions::agent), its events streamed as server-sent
/// events) and, when [`console`](ServerOptions::console) is on, the browser console beside
/// them, all behind the same request id, authentication and peer rule. The `api_title` and
/// `api_version` of `options` are also the MCP `serverInfo`.
///
/// ```no_run
/// # async fn run(registry: std::sync::Arc<tool_runtime::Registry>) -> std::io::Result<()> {
/// use tool_runtime::{app, http};
/// let options = http::ServerOptions::default().max_sessions(64);
/// let app = app::router(registry, options.clone());
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// // Cancels the options' shutdown token at shutdown: `/mcp` ends its sessions.
/// http::serve(listener, app, http::shutdown_signal(), &options).await
/// # }
/// ```
pub fn router(registry: Arc<Registry>, options: ServerOptions) -> Router {
    let routes = Router::new();
    #[cfg(feature = "mcp")]
    let routes = routes.route(
        "/mcp",
        crate::mcp::McpServer::named(
            registry.clone(),
            options.info.title.clone(),
            options.info.version.clone(),
        )
        .http_route(&options),
    );
    #[cfg(feature = "agent")]
    let agent = options.mounted.get::<crate::agent::Agent>().cloned();
    #[cfg(feature = "agent")]
    let has_agent = agent.is_some();
    #[cfg(not(feature = "agent"))]
    let has_agent = false;
    #[cfg(feature = "agent")]
    let routes = routes.route("/agent", super::agent_route::route(agent, &options));
    let routes = if options.console {
        routes.merge(super::console::routes(
            registry.clone(),
            &options,
            has_agent,
        ))
    } else {
        routes
    };
    http::router_with(registry, options, routes)
}
