//! The HTTP front end: every registered tool served by axum, through the same call pipeline as
//! every other caller (source `http`). This module owns transport only.
//!
//! | route | what |
//! | --- | --- |
//! | `GET /tools`, `GET /tools/{name}` | tool descriptions with `params`, `input_schema`, `output_schema` |
//! | `POST /invoke` | `{"tool": "...", "params": {...}, "confirm": true}` → the envelope |
//! | `POST /tools/{name}` | the params object as the body (`?confirm=true` or `x-confirm: true`; `?dry_run=true` or `x-dry-run: true`) |
//! | `GET /openapi.json` | an OpenAPI 3.1 document |
//! | `GET /healthz` | 200 once the registry is built |
//! | `POST/GET/DELETE /mcp` | MCP over streamable HTTP (feature `mcp`): see [`crate::mcp`] |
//!
//! ```no_run
//! # async fn run(registry: std::sync::Arc<tool_runtime::Registry>) -> std::io::Result<()> {
//! use tool_runtime::http::{self, HttpOptions};
//! let app = http::router(registry, HttpOptions::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! http::serve(listener, app, http::shutdown_signal(), std::time::Duration::from_secs(10)).await
//! # }
//! ```

#[cfg(feature = "agent")]
mod agent;
mod auth;
mod body;
mod calls;
mod front;
mod listing;
pub mod openapi;
mod response;
mod serve;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::HeaderName;
use axum::routing::{MethodRouter, get, post};
use serde_json::Value;

pub use crate::tool::context::Requester;
pub use auth::{Auth, Identity};

use crate::registry::Registry;

pub use serve::{ServeOptions, serve, serve_with, shutdown_signal};

use calls::{call_named, call_request_with, call_tool, invoke, named_tool_routes, not_found};
use front::{FrontContext, FrontLayer, exposure, request_id_of};
use listing::{get_tool, healthz, list_tools, openapi_json};

/// The request id header, read and returned on every response.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Limits and authentication of the HTTP front end.
///
#[doc = include_str!("../../docs/security.md")]
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Largest accepted body, in bytes (default 1 MiB); larger → 413.
    pub body_limit: usize,
    /// Deepest accepted nesting of arrays and objects (default 64); deeper → 400.
    pub max_depth: usize,
    /// Bearer tokens; `None` serves without authentication.
    pub auth: Option<Arc<Auth>>,
    /// `info.title` and `info.version` of the OpenAPI document (and the MCP `serverInfo`).
    pub api_title: String,
    /// See `api_title`.
    pub api_version: String,
    /// The `Host` headers `/mcp` accepts, against DNS rebinding: `None` (the default) accepts
    /// loopback names only; an empty list accepts every host (`serve` uses it with an auth file
    /// or a non-loopback address).
    pub mcp_allowed_hosts: Option<Vec<String>>,
    /// How many MCP sessions `/mcp` keeps open, and for how long.
    #[cfg(feature = "mcp")]
    pub mcp_sessions: crate::mcp::SessionLimits,
    /// Serve callers on other machines without authentication. Off by default: without `auth`,
    /// only loopback peers are served; turn it on only when something else
    /// guards the network.
    pub allow_remote_without_auth: bool,
    /// Cancel it when shutting down: `/mcp` then ends its sessions and their open event
    /// streams, which graceful shutdown would otherwise wait out (`serve` in the CLI does this).
    pub shutdown: tokio_util::sync::CancellationToken,
    /// The agent `POST /agent` runs (see [`agent`](crate::agent)); without one the route
    /// answers 400.
    #[cfg(feature = "agent")]
    pub agent: Option<crate::agent::Agent>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            body_limit: 1024 * 1024,
            max_depth: 64,
            auth: None,
            api_title: "tools".into(),
            api_version: env!("CARGO_PKG_VERSION").into(),
            mcp_allowed_hosts: None,
            #[cfg(feature = "mcp")]
            mcp_sessions: crate::mcp::SessionLimits::default(),
            allow_remote_without_auth: false,
            shutdown: tokio_util::sync::CancellationToken::new(),
            #[cfg(feature = "agent")]
            agent: None,
        }
    }
}

struct Shared {
    registry: Arc<Registry>,
    options: HttpOptions,
    /// The OpenAPI document of every tool and the registry version it was made for.
    openapi: Mutex<Option<(u64, Arc<Value>)>>,
    /// `GET /tools?format=`: the tools lowered for model providers.
    specs: crate::llm::SpecCache,
}

type AppState = Arc<Shared>;

/// The router of every route above. Add your own layers and routes to it as to any axum router.
///
#[doc = include_str!("../../docs/http.md")]
pub fn router(registry: Arc<Registry>, options: HttpOptions) -> Router {
    // The one place HTTP meets MCP: the MCP front end's own streamable-HTTP route, mounted
    // behind the same front layer (request id, authentication, peer rule) as the other routes.
    #[cfg(feature = "mcp")]
    let mcp = crate::mcp::McpServer::named(
        registry.clone(),
        options.api_title.clone(),
        options.api_version.clone(),
    )
    .http_route(
        options.mcp_allowed_hosts.clone(),
        options.body_limit,
        options.mcp_sessions.clone(),
        options.shutdown.clone(),
    );
    let state: AppState = Arc::new(Shared {
        registry,
        options,
        openapi: Mutex::default(),
        specs: crate::llm::SpecCache::new(),
    });
    let router = Router::new();
    #[cfg(feature = "mcp")]
    let router = router.route("/mcp", mcp);
    let router = router
        .route("/healthz", get(healthz))
        .route("/openapi.json", get(openapi_json))
        .route("/tools", get(list_tools))
        .route("/tools/{name}", get(get_tool).post(call_tool))
        .route("/invoke", post(invoke));
    #[cfg(feature = "agent")]
    let router = router.route("/agent", post(agent::run_agent));
    let mut router = router.fallback(not_found).layer(FrontLayer(state.clone()));
    // Each tool also gets a static route, so a call does not build the URL-parameter map that
    // matching `/tools/{name}` makes. The pattern still answers unknown names and
    // percent-encoded ones. Registered names are path-safe (`is_valid_name`). Added after the
    // front layer, which they apply themselves (`named_tool_routes`).
    for tool in state.registry.tools() {
        let name: Arc<str> = Arc::from(&*tool.meta().name);
        router = router.route(&format!("/tools/{name}"), named_tool_routes(&state, name));
    }
    router.with_state(state)
}

/// One tool as a `POST` handler to mount anywhere in your own axum router, still through the
/// pipeline, with default limits and no authentication of its own. Put yours in a layer that
/// inserts a [`Requester`] (the request id and the caller's identity) into
/// the request's extensions: the call then runs as that caller. Without one, callers on other
/// machines are refused when the peer is known (served by [`serve`]), by
/// the loopback rule.
///
/// ```no_run
/// # fn f(registry: std::sync::Arc<tool_runtime::Registry>) {
/// let app: axum::Router = axum::Router::new()
///     .route("/api/pair", tool_runtime::http::tool_route(registry, "device_pair"))
///     .layer(axum::middleware::map_response(|mut r: axum::response::Response| async {
///         r.headers_mut().insert("x-served-by", "my-app".parse().unwrap());
///         r
///     }));
/// # }
/// ```
///
/// Panics if `registry` has no tool named `tool`: a route to nothing is a programming error.
pub fn tool_route(registry: Arc<Registry>, tool: &str) -> MethodRouter {
    assert!(
        registry.get(tool).is_some(),
        "tool_route: no tool named `{tool}` in the registry"
    );
    let state: AppState = Arc::new(Shared {
        registry,
        options: HttpOptions::default(),
        openapi: Mutex::default(),
        specs: crate::llm::SpecCache::new(),
    });
    let name = tool.to_owned();
    post(move |State(state): State<AppState>, mut request: Request| {
        // Behind the front layer, the layer reads and returns the request id itself.
        let (ctx, echo) = if let Some(ctx) = request.extensions_mut().remove::<FrontContext>() {
            (ctx, None)
        } else {
            let (id, echo) = request_id_of(request.headers());
            (FrontContext { id, identity: None }, Some(echo))
        };
        // No front layer and no `Requester` from an authentication layer of yours: the core's
        // rule on unauthenticated remote callers applies here (`layers::safety`).
        let refused = echo
            .is_some()
            .then(|| exposure(&state, &request, &ctx.id))
            .and_then(Result::err);
        let call = call_request_with(&state, &name, request, ctx);
        let name = name.clone();
        async move {
            let mut response = match (refused, call) {
                (Some(refused), _) | (None, Err(refused)) => *refused,
                (None, Ok(call)) => call_named(&state, &name, call).await,
            };
            if let Some(echo) = echo {
                response.headers_mut().insert(REQUEST_ID, echo);
            }
            response
        }
    })
    .with_state(state)
}
