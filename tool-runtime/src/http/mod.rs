//! The HTTP front end: every registered tool served by axum, through the same call pipeline as
//! every other caller (source `http`). This module owns transport only.
//!
//! | route | what |
//! | --- | --- |
//! | `GET /tools`, `GET /tools/{name}` | tool descriptions with `params`, `input_schema`, `output_schema` |
//! | `POST /invoke` | `{"tool": "...", "params": {...}, "confirm": true}` → the envelope |
//! | `POST /tools/{name}` | the params object as the body (`?confirm=true` or `x-confirm: true`; `?dry_run=true` or `x-dry-run: true`) |
//! | `GET /openapi.json` | an OpenAPI 3.1 document |
//! | `GET /resources` | the resources and resource templates the caller may see |
//! | `GET /resources/read?uri=` | a resource's contents as they are, with their media type and caching; `&format=json`: `{"contents": [...]}` |
//! | `GET /prompts`, `POST /prompts/{name}` | the prompts; one prompt's messages for an object of string arguments |
//! | `POST /complete` | values for a prompt argument or a template variable, as MCP's `completion/complete` |
//! | `GET`, `DELETE /tasks/{id}`; `POST /tasks/{id}/input` | a call run as a task (`Prefer: respond-async` on `POST /tools/{name}`): read, cancel, answer its questions ([`task`](crate::registry::task)) |
//! | `GET /healthz` | 200 once the registry is built (liveness) |
//! | `GET /readyz` | 200 when ready for traffic; 503 while draining at shutdown or while a [readiness check](ServerOptions::ready_check) fails |
//! | `GET /toolsets` | the mounted [toolsets](crate::toolset): tool count, availability, last error; for operators |
//! | `GET /audit?limit=&tool=` | the latest calls in the audit log; for operators |
//! | `GET /metrics` | every metric in the Prometheus text format (feature `otel`, with telemetry on); for operators |
//!
//! The operator endpoints (`/toolsets`, `/audit`, `/metrics`) answer, on a server with authentication,
//! callers with the operator role only ([`ServerOptions::operator_role`], [`OPERATOR_ROLE`] by
//! default), and `403 forbidden` to the others.
//!
//! [`router_with`] puts routes of your own behind the same front layer (request id,
//! authentication, peer rule); [`app::router`](crate::app::router) mounts MCP at `/mcp` and the
//! agent at `POST /agent` that way, beside these.
//!
//! ```no_run
//! # async fn run(registry: std::sync::Arc<tool_runtime::Registry>) -> std::io::Result<()> {
//! use tool_runtime::http::{self, ServerOptions};
//! let options = ServerOptions::default();
//! let app = http::router(registry, options.clone());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! http::serve(listener, app, http::shutdown_signal(), &options).await
//! # }
//! ```

pub(crate) mod body;
mod calls;
pub(crate) mod front;
mod items;
mod listing;
pub mod openapi;
pub(crate) mod response;
mod serve;
mod tasks;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue};
use axum::routing::{MethodRouter, get, post};
use serde_json::Value;

pub use crate::front::auth::Identity;
#[cfg(feature = "oauth")]
pub use crate::front::auth::oauth::{OAuth, OAuthBuilder};
pub use crate::front::auth::tokens::Auth;
pub use crate::front::requester::Requester;
pub use crate::front::safety::{AllowedHosts, OPERATOR_ROLE};
pub use crate::front::server::ServerOptions;

use crate::registry::Registry;

pub use serve::{serve, shutdown_signal};

use calls::{call_named, call_request_with, call_tool, invoke, named_tool_routes, not_found};
use front::{FrontLayer, exposure, request_id_of};
use listing::{get_tool, healthz, list_tools, list_toolsets, openapi_json, readyz, recent_calls};

/// The header naming the replica that answered, on every response of a server with a
/// [`replica_id`](ServerOptions::replica_id).
pub const REPLICA: HeaderName = HeaderName::from_static("x-replica");

/// The request id header, read and returned on every response.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The registry as the routes serve it: with the server's options, and the documents made from
/// it kept until it changes.
struct ServedRegistry {
    registry: Arc<Registry>,
    options: ServerOptions,
    /// The OpenAPI document of every tool and the registry version it was made for.
    openapi: Mutex<Option<(u64, Arc<Value>)>>,
    /// `GET /tools?format=`: the tools lowered for model providers.
    specs: crate::llm::SpecCache,
}

impl ServedRegistry {
    /// With OAuth, the URL of the protected resource metadata a challenge on the MCP endpoint
    /// (`mcp`) or another route names.
    #[allow(clippy::unused_self)]
    fn metadata_url(&self, mcp: bool) -> Option<String> {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.options.access.oauth {
            return Some(oauth.metadata_url(mcp));
        }
        let _ = mcp;
        None
    }
}

/// The router of every route above. Add your own layers and routes to it as to any axum router;
/// routes added to it are not behind its authentication: put those in [`router_with`].
///
#[doc = include_str!("../../docs/http.md")]
pub fn router(registry: Arc<Registry>, options: ServerOptions) -> Router {
    router_with(registry, options, Router::new())
}

/// [`router`], with routes of your own (`yours`) behind the same front layer: each request gets its
/// request id (read, or made, and returned), is authenticated, and is refused by the peer rule
/// exactly as a tool call is. A handler reads who calls from the [`Requester`] in the
/// request's extensions. `yours` must not have a fallback of its own (unknown paths get the
/// tool routes' `404`).
///
/// ```no_run
/// # fn f(registry: std::sync::Arc<tool_runtime::Registry>) {
/// use axum::{Extension, Router, routing::get};
/// use tool_runtime::http::{self, Requester, ServerOptions};
///
/// let mine = Router::new().route(
///     "/whoami",
///     get(|Extension(who): Extension<Requester>| async move {
///         who.identity.map_or("anonymous".to_owned(), |i| i.principal)
///     }),
/// );
/// let app = http::router_with(registry, ServerOptions::default(), mine);
/// # }
/// ```
pub fn router_with(registry: Arc<Registry>, options: ServerOptions, yours: Router) -> Router {
    let state = Arc::new(ServedRegistry {
        registry,
        options,
        openapi: Mutex::default(),
        specs: crate::llm::SpecCache::new(),
    });
    let router = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/openapi.json", get(openapi_json))
        .route("/tools", get(list_tools))
        .route("/tools/{name}", get(get_tool).post(call_tool))
        .route("/invoke", post(invoke))
        .route("/resources", get(items::list_resources))
        .route("/resources/read", get(items::read_resource))
        .route("/prompts", get(items::list_prompts))
        .route("/prompts/{name}", post(items::get_prompt))
        .route("/complete", post(items::complete))
        .route("/toolsets", get(list_toolsets))
        .route("/audit", get(recent_calls))
        .route(
            "/tasks/{id}",
            get(tasks::get_task).delete(tasks::cancel_task),
        )
        .route("/tasks/{id}/input", post(tasks::answer_task));
    #[cfg(feature = "oauth")]
    let router = match &state.options.access.oauth {
        Some(oauth) => router
            .route(
                crate::front::auth::challenge::METADATA_PATH,
                get(listing::resource_metadata),
            )
            .route(
                &oauth.mcp_metadata_path(),
                get(listing::mcp_resource_metadata),
            ),
        None => router,
    };
    #[cfg(feature = "otel")]
    let router = router.route("/metrics", get(listing::metrics));
    let yours = (state.options.pages.iter()).fold(yours, |yours, pages| {
        yours.merge(pages.routes(&state.options))
    });
    let mut router = router
        .fallback(not_found)
        .with_state(state.clone())
        .merge(yours)
        .layer(FrontLayer(state.clone()));
    // Each tool also gets a static route, so a call does not build the URL-parameter map that
    // matching `/tools/{name}` makes. The pattern still answers unknown names and
    // percent-encoded ones. Registered names are path-safe (`is_valid_name`). Added after the
    // front layer, which they apply themselves (`named_tool_routes`).
    for tool in state.registry.tools() {
        let name: Arc<str> = Arc::from(&*tool.meta().name);
        router = router.route(
            &format!("/tools/{name}"),
            named_tool_routes(&state, name).with_state(state.clone()),
        );
    }
    // Last, so the tools' own routes carry it too.
    if let Some(replica) = &state.options.replica_id {
        let replica = HeaderValue::from_str(replica).expect("a replica id is a header value");
        router = router.layer(axum::middleware::map_response(
            move |mut response: axum::response::Response| {
                let replica = replica.clone();
                async move {
                    response.headers_mut().insert(REPLICA, replica);
                    response
                }
            },
        ));
    }
    router
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
    let state = Arc::new(ServedRegistry {
        registry,
        options: ServerOptions::default(),
        openapi: Mutex::default(),
        specs: crate::llm::SpecCache::new(),
    });
    let name = tool.to_owned();
    post(
        move |State(state): State<Arc<ServedRegistry>>, mut request: Request| {
            // Behind the front layer, the layer reads and returns the request id itself.
            let (ctx, echo) = if let Some(ctx) = request.extensions_mut().remove::<Requester>() {
                (ctx, None)
            } else {
                let (id, echo) = request_id_of(request.headers());
                let trace_id = front::trace_id_of(request.headers());
                (
                    Requester {
                        id,
                        trace_id,
                        identity: None,
                        span: tracing::Span::none(),
                    },
                    Some(echo),
                )
            };
            // No front layer and no `Requester` from an authentication layer of yours: the core's
            // rule on unauthenticated remote callers applies here (`front::safety`).
            let refused = echo
                .is_some()
                .then(|| exposure(&state, &request, &ctx.id))
                .and_then(Result::err);
            let call = call_request_with(&name, request, &ctx);
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
        },
    )
    .with_state(state)
}
