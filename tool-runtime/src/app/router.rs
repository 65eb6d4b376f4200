//! The one router `serve` serves: the HTTP tool routes, with MCP at `/mcp` and the agent at
//! `POST /agent` beside them, behind the same front layer.

use std::sync::Arc;

use axum::Router;

use crate::http::{self, ServerOptions};
use crate::registry::Registry;

/// The tool routes of [`http::router`], with `/mcp` (feature `mcp`: MCP over streamable HTTP,
/// see [`McpServer::http_route`](crate::mcp::McpServer::http_route)), `POST /agent` (feature
/// `agent`: answers 400, as no agent is given: see [`router_with_agent`]) and, when [`console`](ServerOptions::console) is on, the browser console beside
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
    compose(
        registry,
        options,
        #[cfg(feature = "agent")]
        None,
    )
}

/// [`router`] with the agent `POST /agent` runs (see [`agent`](crate::agent)): one run of
/// `agent` per request, its events streamed as server-sent events, and the console's agent
/// panel when the console is on.
#[cfg(feature = "agent")]
pub fn router_with_agent(
    registry: Arc<Registry>,
    options: ServerOptions,
    agent: crate::agent::Agent,
) -> Router {
    compose(registry, options, Some(agent))
}

fn compose(
    registry: Arc<Registry>,
    options: ServerOptions,
    #[cfg(feature = "agent")] agent: Option<crate::agent::Agent>,
) -> Router {
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
