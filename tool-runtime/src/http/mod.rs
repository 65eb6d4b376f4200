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

mod auth;
mod body;
#[cfg(feature = "mcp")]
mod drain;
pub mod openapi;

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::{MethodRouter, get, post};
use serde::Deserialize;
use serde_json::{Map, Value, json};

pub use auth::{Auth, Identity};

use crate::context::{CallContext, Caller, Source};
use crate::envelope::Envelope;
use crate::error::{ToolError, kind};
use crate::parsed::Node;
use crate::pipeline::Input;
use crate::registry::{RegisteredTool, Registry};

/// The request id header, read and returned on every response.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Limits and authentication of the HTTP front end.
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
    /// Serve callers on other machines without authentication. Off by default: without `auth`,
    /// only loopback peers are served ([`crate::safety`]); turn it on only when something else
    /// guards the network.
    pub allow_remote_without_auth: bool,
    /// Cancel it when shutting down: `/mcp` then ends its sessions and their open event
    /// streams, which graceful shutdown would otherwise wait out (`serve` in the CLI does this).
    pub shutdown: tokio_util::sync::CancellationToken,
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
            allow_remote_without_auth: false,
            shutdown: tokio_util::sync::CancellationToken::new(),
        }
    }
}

struct Shared {
    registry: Arc<Registry>,
    options: HttpOptions,
    /// The OpenAPI document of every tool and the registry version it was made for.
    openapi: Mutex<Option<(u64, Arc<Value>)>>,
}

type AppState = Arc<Shared>;

/// The router of every route above. Add your own layers and routes to it as to any axum router.
pub fn router(registry: Arc<Registry>, options: HttpOptions) -> Router {
    #[cfg(feature = "mcp")]
    let mcp = mcp_route(&registry, &options);
    let state: AppState = Arc::new(Shared {
        registry,
        options,
        openapi: Mutex::default(),
    });
    let router = Router::new();
    #[cfg(feature = "mcp")]
    let router = router.route("/mcp", mcp);
    let mut router = router
        .route("/healthz", get(healthz))
        .route("/openapi.json", get(openapi_json))
        .route("/tools", get(list_tools))
        .route("/tools/{name}", get(get_tool).post(call_tool))
        .route("/invoke", post(invoke))
        .fallback(not_found)
        .layer(FrontLayer(state.clone()));
    // Each tool also gets a static route: matching `/tools/{name}` builds a URL-parameter map
    // per request, about 4 % of a small call's work. The pattern still answers unknown names and
    // percent-encoded ones. Registered names are path-safe (`is_valid_name`). Added after the
    // front layer, which they apply themselves (`named_tool_routes`).
    for tool in state.registry.tools() {
        let name: Arc<str> = Arc::from(&*tool.meta().name);
        router = router.route(&format!("/tools/{name}"), named_tool_routes(&state, name));
    }
    router.with_state(state)
}

/// `/mcp`: rmcp's streamable-HTTP service, with what the official clients expect of it around
/// it. At shutdown (`options.shutdown` cancelled) its sessions end, closing idle clients' event
/// streams that graceful shutdown would otherwise wait out, but only once every `POST` answer in
/// flight has been delivered. Unreadable bodies get JSON-RPC errors; a session's `DELETE`, 204.
#[cfg(feature = "mcp")]
fn mcp_route<S: Clone + Send + Sync + 'static>(
    registry: &Arc<Registry>,
    options: &HttpOptions,
) -> MethodRouter<S> {
    use tower::ServiceExt;
    let runtime = tokio::runtime::Handle::try_current().ok();
    // Built outside a runtime, nothing can wait for the answers: sessions end with shutdown.
    let sessions = if runtime.is_some() {
        tokio_util::sync::CancellationToken::new()
    } else {
        options.shutdown.child_token()
    };
    let posts = Arc::new(drain::Posts::default());
    let service = crate::mcp::McpServer::named(
        registry.clone(),
        options.api_title.clone(),
        options.api_version.clone(),
    )
    .http_service(
        options.mcp_allowed_hosts.clone(),
        options.body_limit,
        sessions.clone(),
    );
    if let Some(runtime) = runtime {
        let (shutdown, posts) = (options.shutdown.clone(), posts.clone());
        runtime.spawn(async move {
            shutdown.cancelled().await;
            posts.idle().await;
            sessions.cancel();
        });
    }
    axum::routing::any_service(tower::service_fn(move |request: Request| {
        let method = request.method().clone();
        let guard = (method == axum::http::Method::POST).then(|| posts.enter());
        let json = body::is_json(request.headers());
        let call = service.clone().oneshot(request);
        async move {
            let response = call.await?;
            if json && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
                return Ok(parse_error(response).await);
            }
            if method == axum::http::Method::DELETE && response.status() == StatusCode::ACCEPTED {
                // The SDK answers a session's DELETE with 202; the official clients expect
                // 200 or 204 (and log a failure otherwise). The session is closed either way.
                return Ok(axum::response::IntoResponse::into_response(
                    StatusCode::NO_CONTENT,
                ));
            }
            Ok::<_, std::convert::Infallible>(match guard {
                // The guard lives as long as the body: until the answer is sent (or dropped).
                Some(guard) => response.map(|body| {
                    Body::new(http_body_util::BodyExt::map_frame(body, move |frame| {
                        let _held = &guard;
                        frame
                    }))
                }),
                None => response.map(Body::new),
            })
        }
    }))
}

/// The SDK answers a JSON body it cannot read (malformed, nested too deep, not JSON-RPC) with a
/// plain-text 415; clients expect JSON-RPC errors. Same message, as `-32700` (parse error) or
/// `-32600` (invalid request) with status 400.
#[cfg(feature = "mcp")]
async fn parse_error<B>(response: axum::http::Response<B>) -> Response
where
    B: axum::body::HttpBody,
{
    let detail = match http_body_util::BodyExt::collect(response.into_body()).await {
        Ok(body) => String::from_utf8_lossy(&body.to_bytes()).into_owned(),
        Err(_) => String::new(),
    };
    // Valid JSON that is no JSON-RPC message is an invalid request, not a parse error.
    let (code, what) = if detail.contains("unrecognized JSON-RPC message") {
        (-32600, "invalid request")
    } else {
        (-32700, "parse error")
    };
    let error = json!({"jsonrpc": "2.0", "id": null, "error": {
        "code": code,
        "message": format!("{what}: {}", detail.trim()),
    }});
    json_response(StatusCode::BAD_REQUEST, &error)
}

/// One tool as a `POST` handler to mount anywhere in your own axum router, still through the
/// pipeline, with default limits and no authentication of its own (put yours in a layer):
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
        let call = call_request_with(&state, &name, request, ctx);
        let name = name.clone();
        async move {
            let mut response = match call {
                Ok(call) => call_named(&state, &name, call).await,
                Err(refused) => *refused,
            };
            if let Some(echo) = echo {
                response.headers_mut().insert(REQUEST_ID, echo);
            }
            response
        }
    })
    .with_state(state)
}

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting and lets calls in
/// flight finish for at most `grace`. Sets `TCP_NODELAY` on every connection, and gives every
/// request its peer address, so a router without authentication serves loopback callers only
/// ([`crate::safety`]).
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let (signalled_tx, signalled_rx) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        shutdown.await;
        tracing::info!(target: "tool_runtime::http", "shutting down: no new connections; finishing calls in flight");
        let _ = signalled_tx.send(());
    };
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    // Each request knows its peer, for the rule on unauthenticated remote callers.
    let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    let server = axum::serve(listener, app).with_graceful_shutdown(shutdown);
    let server = std::pin::pin!(server.into_future());
    let deadline = async move {
        if signalled_rx.await.is_ok() {
            tokio::time::sleep(grace).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        r = server => r,
        () = deadline => {
            tracing::warn!(target: "tool_runtime::http", ?grace, "grace period over; dropping calls still in flight");
            Ok(())
        }
    }
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

/// The request id of a request and its `x-request-id` response header: the request's own
/// header if sensible (1 to 128 visible ASCII characters), returned without a copy; else a new
/// id.
fn request_id_of(headers: &HeaderMap) -> (String, HeaderValue) {
    if let Some(value) = header_of(headers, &REQUEST_ID)
        && let Ok(id) = value.to_str()
        && !id.is_empty()
        && id.len() <= 128
        && id.bytes().all(|b| b.is_ascii_graphic())
    {
        return (id.to_owned(), value.clone());
    }
    let id = crate::context::next_request_id();
    // Made of visible ASCII: always a valid header value.
    let echo = HeaderValue::from_str(&id).unwrap_or_else(|_| HeaderValue::from_static("invalid"));
    (id, echo)
}

/// The first value of header `name`. A request carries a handful of headers: comparing their
/// names is cheaper than hashing `name` for a lookup, which for a custom name costs ~100
/// instructions, on every request.
fn header_of<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Option<&'h HeaderValue> {
    if headers.keys_len() > 8 {
        return headers.get(name);
    }
    headers.iter().find_map(|(n, v)| (n == name).then_some(v))
}

/// What the front middleware learned about a request, for the handlers (and the MCP adapter,
/// which finds it in the request's extensions).
pub(crate) use crate::context::Requester as FrontContext;

/// Every request passes here once: the request id is read or made and returned on the
/// response; with an auth file, every route but `/healthz` needs `Authorization: Bearer
/// <token>`; axum's bare 405 gets an envelope; one line is logged.
///
/// A plain tower layer rather than `middleware::from_fn`: it is on every request's path, and
/// this costs one allocation per request where `from_fn` costs several.
#[derive(Clone)]
struct FrontLayer(AppState);

impl<S> tower::Layer<S> for FrontLayer {
    type Service = Front<S>;
    fn layer(&self, inner: S) -> Front<S> {
        Front {
            inner,
            state: self.0.clone(),
        }
    }
}

#[derive(Clone)]
struct Front<S> {
    inner: S,
    state: AppState,
}

impl<S> tower::Service<Request> for Front<S>
where
    S: tower::Service<Request, Response = Response, Error = std::convert::Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = FrontFuture<S::Future>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let (admitted, finish) = front(&self.state, &request);
        let (inner, refusal) = match admitted {
            Ok(ctx) => {
                // Moved, not copied: the handler moves it on into the call's context.
                request.extensions_mut().insert(ctx);
                // `inner` is an axum `Route` (this layer is private, applied by `Router::layer`
                // only): always ready, and its `call` clones what it runs. The usual tower
                // hand-over (serve with the polled service, keep a fresh clone) would clone a
                // boxed service a second time on every request.
                (Some(self.inner.call(request)), None)
            }
            Err(refusal) => (None, Some(refusal)),
        };
        FrontFuture {
            inner,
            refusal,
            finish: Some(finish),
        }
    }
}

/// What the front does before a request is served: its request id read or made, its caller
/// authenticated (or the 401 to answer), its log line started; and what it does to the
/// response ([`Finish`]).
fn front(state: &Shared, request: &Request) -> (Result<FrontContext, Box<Response>>, Finish) {
    let (id, echo) = request_id_of(request.headers());
    // `/mcp` answers in JSON-RPC: its statuses are the MCP SDK's, left as they are.
    let mcp = request.uri().path() == "/mcp";
    let log = tracing::enabled!(target: "tool_runtime::http", tracing::Level::INFO).then(|| {
        Box::new((
            Instant::now(),
            request.method().clone(),
            request.uri().path().to_owned(),
        ))
    });
    let admitted = exposure(state, request, &id)
        .and_then(|()| authenticate(state, request, &id))
        .map(|identity| FrontContext { id, identity });
    (admitted, Finish { echo, mcp, log })
}

/// The core's rule on unauthenticated remote callers ([`crate::safety`]), for a request whose
/// peer is known ([`serve`] records it; a router served another way without `ConnectInfo` has
/// no peer to check).
fn exposure(state: &Shared, request: &Request, id: &str) -> Result<(), Box<Response>> {
    let Some(peer) = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
    else {
        return Ok(());
    };
    let o = &state.options;
    crate::safety::admit_peer(peer.0.ip(), o.auth.is_some(), o.allow_remote_without_auth)
        .map_err(|e| Box::new(error_response(None, e, id)))
}

pin_project_lite::pin_project! {
    /// The response future of [`Front`]: the route's own future, then [`Finish`]. A named type
    /// rather than a boxed `async` block, which cost an allocation and a copy per request.
    struct FrontFuture<F> {
        #[pin]
        inner: Option<F>,
        refusal: Option<Box<Response>>,
        finish: Option<Finish>,
    }
}

impl<F> Future for FrontFuture<F>
where
    F: Future<Output = Result<Response, std::convert::Infallible>>,
{
    type Output = Result<Response, std::convert::Infallible>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.project();
        let response = match this.inner.as_pin_mut() {
            Some(inner) => std::task::ready!(inner.poll(cx))?,
            None => *this
                .refusal
                .take()
                .expect("FrontFuture polled after it completed"),
        };
        let finish = this
            .finish
            .take()
            .expect("FrontFuture polled after it completed");
        std::task::Poll::Ready(Ok(finish.response(response)))
    }
}

/// What [`Front`] does to every response.
struct Finish {
    echo: HeaderValue,
    mcp: bool,
    /// Boxed: only when the line is logged, and this is kept in every request's future.
    log: Option<Box<(Instant, axum::http::Method, String)>>,
}

impl Finish {
    fn response(self, mut response: Response) -> Response {
        let Finish { echo, mcp, log } = self;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED && !mcp {
            // axum's own 405 carries the `Allow` header; give it an envelope body as well.
            let allow = response.headers().get(header::ALLOW).cloned();
            response = error_response(
                None,
                ToolError::new(
                    "method_not_allowed",
                    "this route does not take that method; see GET /openapi.json",
                )
                .with_status(405),
                echo.to_str().unwrap_or_default(),
            );
            if let Some(allow) = allow {
                response.headers_mut().insert(header::ALLOW, allow);
            }
        }
        if let Some(log) = log {
            let (started, method, path) = *log;
            tracing::info!(
                target: "tool_runtime::http",
                %method,
                path,
                status = response.status().as_u16(),
                duration_ms = started.elapsed().as_secs_f64() * 1000.0,
                request_id = echo.to_str().unwrap_or_default(),
                "request"
            );
        }
        response.headers_mut().insert(REQUEST_ID, echo);
        response
    }
}

/// The caller's identity, `None` without an auth file; or the 401 response.
fn authenticate(
    state: &Shared,
    request: &Request,
    id: &str,
) -> Result<Option<Identity>, Box<Response>> {
    let Some(auth) = &state.options.auth else {
        return Ok(None);
    };
    if request.uri().path() == "/healthz" {
        return Ok(None);
    }
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    if let Some(identity) = token.and_then(|t| auth.check(t)) {
        return Ok(Some(identity.clone()));
    }
    let message = if token.is_some() {
        "the bearer token is not valid"
    } else {
        "this server needs `Authorization: Bearer <token>`"
    };
    let mut response = error_response(None, ToolError::new(kind::UNAUTHENTICATED, message), id);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"tools\""),
    );
    Err(Box::new(response))
}

/// The context the front middleware left, or a fresh one (routes used without it).
fn context_of(request: &mut Request) -> FrontContext {
    request
        .extensions_mut()
        .remove::<FrontContext>()
        .unwrap_or_else(|| FrontContext {
            id: request_id_of(request.headers()).0,
            identity: None,
        })
}

/// `body` as a JSON response with `status`.
///
/// Serialises straight into one buffer: `axum::Json` writes through `BytesMut`'s `io::Write`,
/// which costs about a thousand instructions more per envelope, on every call's path.
fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    let mut buf = Vec::with_capacity(256);
    let status = match serde_json::to_writer(&mut buf, body) {
        Ok(()) => status,
        // Our bodies are JSON values and envelopes, which always serialise; say so if one does not.
        Err(e) => {
            let error =
                ToolError::internal(format_args!("the response could not be serialised: {e}"));
            buf =
                serde_json::to_vec(&json!({"status": "error", "error": error})).unwrap_or_default();
            StatusCode::INTERNAL_SERVER_ERROR
        }
    };
    json_bytes(status, buf)
}

fn json_bytes(status: StatusCode, buf: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(buf));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn envelope_response(envelope: &Envelope) -> Response {
    let status =
        StatusCode::from_u16(envelope.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut buf = Vec::with_capacity(256);
    let mut response = match envelope.write_json(&mut buf) {
        Ok(()) => json_bytes(status, buf),
        Err(_) => json_response(status, envelope),
    };
    if let Some(e) = envelope.error()
        && e.kind() == kind::RATE_LIMITED
    {
        let after = e
            .details()
            .and_then(|d| d.get("retry_after"))
            .and_then(Value::as_f64)
            .map_or(1, |s| {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                // Reason: clamped to at least 1 first; seconds beyond u64 are not a real wait.
                let secs = s.ceil().max(1.0) as u64;
                secs
            });
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(after));
    }
    response
}

/// An error envelope for a request that never reached the pipeline.
#[allow(clippy::needless_pass_by_value)] // Reason: every caller builds the error for this call.
fn error_response(tool: Option<&str>, error: ToolError, request_id: &str) -> Response {
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let body = json!({
        "tool": tool,
        "status": "error",
        "error": error,
        "meta": {"request_id": request_id},
    });
    json_response(status, &body)
}

async fn healthz() -> Response {
    json_response(StatusCode::OK, &json!({"status": "ok"}))
}

/// The caller of a request, as listings see it.
fn caller_of(ctx: &FrontContext) -> Caller {
    ctx.caller(Source::Http)
}

async fn openapi_json(State(state): State<AppState>, mut request: Request) -> Response {
    let o = &state.options;
    let registry = &state.registry;
    let ctx = context_of(&mut request);
    // The document lists what this caller may see; without policies that is every tool, and
    // the document is kept until the registry changes.
    let cacheable = registry.policies.is_empty();
    let version = registry.version();
    if cacheable
        && let Some((v, doc)) = &*state.openapi.lock().unwrap_or_else(PoisonError::into_inner)
        && *v == version
    {
        return json_response(StatusCode::OK, &**doc);
    }
    let tools = registry.visible(&caller_of(&ctx));
    let doc = Arc::new(openapi::document_for(
        &tools,
        &o.api_title,
        &o.api_version,
        o.auth.is_some(),
    ));
    if cacheable {
        *state.openapi.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((version, doc.clone()));
    }
    json_response(StatusCode::OK, &*doc)
}

/// A tool as `GET /tools` describes it.
fn describe(tool: &RegisteredTool) -> Value {
    let meta = tool.meta();
    let input = tool.input_schema();
    let required: Vec<&str> = input["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut params = Map::new();
    if let Some(props) = input["properties"].as_object() {
        for (name, prop) in props {
            let mut p = json!({
                "type": simple_type(prop),
                "description": prop["description"].as_str().unwrap_or_default(),
                "required": required.contains(&name.as_str()),
            });
            if let Some(d) = prop.get("default") {
                p["default"] = d.clone();
            }
            params.insert(name.clone(), p);
        }
    }
    json!({
        "name": meta.name,
        "title": meta.title,
        "description": meta.description,
        "params": params,
        "input_schema": input,
        "output_schema": tool.output_schema(),
        "annotations": meta.annotations,
        "tags": meta.tags,
    })
}

/// The one-word type of a property for simple UIs: `string`, `integer`, ..., or `json`.
fn simple_type(prop: &Value) -> String {
    match crate::schema::non_null_type(prop) {
        Some(t) => t.to_owned(),
        None if prop.get("enum").is_some() || prop.get("oneOf").is_some() => "string".into(),
        None => "json".into(),
    }
}

/// `GET /tools`: the tools this caller may see, with an `ETag` (a hash of the body): a client
/// polling with `If-None-Match` gets `304` until the listing changes for it.
async fn list_tools(State(state): State<AppState>, mut request: Request) -> Response {
    let ctx = context_of(&mut request);
    let tools: Vec<Value> = state
        .registry
        .visible(&caller_of(&ctx))
        .iter()
        .map(|t| describe(t))
        .collect();
    let body = serde_json::to_vec(&json!({ "tools": tools })).unwrap_or_default();
    let etag = format!("\"{:016x}\"", crate::registry::stable_hash(&body));
    let fresh = request
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim().trim_start_matches("W/") == etag)
        });
    let mut response = if fresh {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        json_bytes(StatusCode::OK, body)
    };
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response.headers_mut().insert(header::ETAG, value);
    }
    response
}

async fn get_tool(
    State(state): State<AppState>,
    Path(name): Path<String>,
    mut request: Request,
) -> Response {
    describe_named(&state, &name, &context_of(&mut request))
}

fn describe_named(state: &Shared, name: &str, ctx: &FrontContext) -> Response {
    let caller = caller_of(ctx);
    if let Some(tool) = state.registry.visible_tool(name, &caller) {
        return json_response(StatusCode::OK, &describe(&tool));
    }
    let error = state
        .registry
        .unknown_tool(name, &state.registry.context(caller));
    error_response(Some(name), error, &ctx.id)
}

/// `GET` and `POST /tools/<name>` for one tool, without a URL parameter to extract. `GET` (and
/// the 405 of other methods) behind the front layer; `POST` does the front's work itself
/// ([`CallService`]).
fn named_tool_routes(state: &AppState, name: Arc<str>) -> MethodRouter<AppState> {
    let described = name.clone();
    get(move |State(state): State<AppState>, mut request: Request| {
        let name = described.clone();
        async move { describe_named(&state, &name, &context_of(&mut request)) }
    })
    .layer(FrontLayer(state.clone()))
    // After the layer, so not under it.
    .post_service(CallService {
        state: state.clone(),
        name,
    })
}

/// `POST /tools/<name>` of one tool as a tower service rather than an axum handler behind the
/// front layer: it does what [`Front`] does (request id, authentication, the log line) on its
/// own, without passing a context through the request's extensions, and boxes only the call's
/// own future, where a handler's is boxed with the request it was given and the machinery of
/// its extractors, and the layer's in a box of its own: on every call.
#[derive(Clone)]
struct CallService {
    state: AppState,
    name: Arc<str>,
}

impl tower::Service<Request> for CallService {
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = futures_util::future::BoxFuture<'static, Result<Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let (admitted, finish) = front(&self.state, &request);
        let call =
            admitted.and_then(|ctx| call_request_with(&self.state, &self.name, request, ctx));
        let (state, name) = (self.state.clone(), self.name.clone());
        Box::pin(async move {
            let response = match call {
                Ok(call) => call_named(&state, &name, call).await,
                Err(refused) => *refused,
            };
            Ok(finish.response(response))
        })
    }
}

/// The query of `POST /tools/{name}`: `confirm` and `dry_run` (`true` or `false`), and
/// `confirmation` (a token).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CallQuery {
    confirm: Option<bool>,
    dry_run: Option<bool>,
    confirmation: Option<String>,
}

/// How a `POST /tools/{name}` asks for its call to run.
struct CallFlags {
    confirm: bool,
    dry_run: bool,
    confirmation: Option<String>,
}

/// The flags from `?confirm=`/`x-confirm:` and `?dry_run=`/`x-dry-run:`, each `true` or
/// `false` exactly, and `?confirmation=`/`x-confirmation:`; anything else is a bad request.
fn call_flags(uri: &axum::http::Uri, headers: &HeaderMap) -> Result<CallFlags, ToolError> {
    static CONFIRM: HeaderName = HeaderName::from_static("x-confirm");
    static DRY_RUN: HeaderName = HeaderName::from_static("x-dry-run");
    static CONFIRMATION: HeaderName = HeaderName::from_static("x-confirmation");
    let query = if uri.query().is_some() {
        Query::<CallQuery>::try_from_uri(uri)
            .map_err(|e| {
                body::invalid_request(format!(
                    "bad query string ({}); the parameters are `confirm` and `dry_run`, each `true` or `false`, and `confirmation`, a token",
                    e.body_text()
                ))
            })?
            .0
    } else {
        CallQuery::default()
    };
    let header = |name: &HeaderName| match header_of(headers, name).map(|v| v.to_str()) {
        Some(Ok("true")) => Ok(true),
        None | Some(Ok("false")) => Ok(false),
        Some(_) => Err(body::invalid_request(format!(
            "`{name}` must be `true` or `false`"
        ))),
    };
    let token = match header_of(headers, &CONFIRMATION).map(|v| v.to_str()) {
        None => None,
        Some(Ok(t)) => Some(t.to_owned()),
        Some(Err(_)) => {
            return Err(body::invalid_request(format!(
                "`{CONFIRMATION}` must be the token of a `confirmation_required` answer"
            )));
        }
    };
    Ok(CallFlags {
        confirm: query.confirm.unwrap_or(false) || header(&CONFIRM)?,
        dry_run: query.dry_run.unwrap_or(false) || header(&DRY_RUN)?,
        confirmation: query.confirmation.or(token),
    })
}

fn call_tool(
    State(state): State<AppState>,
    Path(name): Path<String>,
    request: Request,
) -> impl Future<Output = Response> {
    let call = call_request(&state, &name, request);
    async move {
        match call {
            Ok(call) => call_named(&state, &name, call).await,
            Err(refused) => *refused,
        }
    }
}

/// What a call takes from its request before the body is read: the request's parts are not
/// kept in the call's future, which is on every call's path and moved with it (the handlers
/// are plain fns returning futures for the same reason: an `async fn` keeps its arguments).
struct CallRequest {
    ctx: CallContext,
    json: bool,
    body: Body,
}

/// A refusal (a bad query or flag header) is boxed: it is rare, and the result is kept in the
/// call's future.
fn call_request(
    state: &Shared,
    name: &str,
    mut request: Request,
) -> Result<CallRequest, Box<Response>> {
    let ctx = context_of(&mut request);
    call_request_with(state, name, request, ctx)
}

fn call_request_with(
    state: &Shared,
    name: &str,
    request: Request,
    ctx: FrontContext,
) -> Result<CallRequest, Box<Response>> {
    let (parts, body) = request.into_parts();
    match call_flags(&parts.uri, &parts.headers) {
        Ok(flags) => {
            let mut caller = caller(ctx).confirm(flags.confirm).dry_run(flags.dry_run);
            if let Some(token) = flags.confirmation {
                caller = caller.confirmation(token);
            }
            Ok(CallRequest {
                json: body::is_json(&parts.headers),
                body,
                ctx: state.registry.context(caller),
            })
        }
        Err(e) => Err(Box::new(error_response(Some(name), e, &ctx.id))),
    }
}

async fn call_named(state: &Shared, name: &str, call: CallRequest) -> Response {
    let o = &state.options;
    let CallRequest { ctx, json, body } = call;
    let bytes = match body::json_bytes(json, body, o.body_limit, o.max_depth, true).await {
        Ok(b) => b,
        Err(e) => return error_response(Some(name), e, ctx.request_id()),
    };
    // Parsed without a `serde_json::Value` when nothing on the call's way needs one
    // (`crate::parsed`); any other body takes the `Value` path, which reports what is wrong.
    let registry = &state.registry;
    let parsed = registry.parsed_entry(name);
    let tree = parsed.as_ref().and_then(|_| Node::parse(&bytes));
    let (entry, input) = match &tree {
        Some(node @ Node::Object(_)) => (
            parsed,
            Input::Parsed {
                node,
                bytes: &bytes,
            },
        ),
        _ => match body::object_of(&bytes) {
            Ok(params) => (registry.get(name), Input::Value(Value::Object(params))),
            Err(e) => return error_response(Some(name), e, ctx.request_id()),
        },
    };
    envelope_response(&registry.call_in_context(name, entry, input, ctx).await)
}

fn caller(ctx: FrontContext) -> Caller {
    let mut caller = Caller::new(Source::Http).request_id(ctx.id);
    if let Some(who) = ctx.identity {
        caller = caller.principal(who.principal).roles(who.roles);
    }
    caller
}

async fn invoke(State(state): State<AppState>, mut request: Request) -> Response {
    let FrontContext { id, identity } = context_of(&mut request);
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    let o = &state.options;
    let mut request = match body::json_object(headers, body, o.body_limit, o.max_depth, false).await
    {
        Ok(r) => r,
        Err(e) => return error_response(None, e, &id),
    };
    let shape = |m: &str| {
        body::invalid_request(format!(
            "{m}; send {{\"tool\": \"name\", \"params\": {{...}}}}"
        ))
    };
    let tool = match request.remove("tool") {
        Some(Value::String(t)) => t,
        Some(other) => {
            return error_response(
                None,
                shape(&format!(
                    "`tool` must be a string, not {}",
                    crate::validate::value_kind(&other)
                )),
                &id,
            );
        }
        None => return error_response(None, shape("`tool` is missing"), &id),
    };
    let params = match request.remove("params") {
        None => Value::Object(Map::new()),
        Some(Value::Object(p)) => Value::Object(p),
        Some(other) => {
            return error_response(
                Some(&tool),
                shape(&format!(
                    "`params` must be an object, not {}",
                    crate::validate::value_kind(&other)
                )),
                &id,
            );
        }
    };
    let mut flags = [false; 2];
    for (slot, key) in flags.iter_mut().zip(["confirm", "dry_run"]) {
        match request.remove(key) {
            None => {}
            Some(Value::Bool(b)) => *slot = b,
            Some(other) => {
                return error_response(
                    Some(&tool),
                    shape(&format!(
                        "`{key}` must be a boolean, not {}",
                        crate::validate::value_kind(&other)
                    )),
                    &id,
                );
            }
        }
    }
    let confirmation = match request.remove("confirmation") {
        None => None,
        Some(Value::String(token)) => Some(token),
        Some(other) => {
            return error_response(
                Some(&tool),
                shape(&format!(
                    "`confirmation` must be the token string of a `confirmation_required` answer, not {}",
                    crate::validate::value_kind(&other)
                )),
                &id,
            );
        }
    };
    if let Some(unknown) = request.keys().next() {
        return error_response(
            Some(&tool),
            shape(&format!("unknown field `{unknown}`")),
            &id,
        );
    }
    let mut caller = caller(FrontContext { id, identity })
        .confirm(flags[0])
        .dry_run(flags[1]);
    if let Some(token) = confirmation {
        caller = caller.confirmation(token);
    }
    let envelope = state.registry.call(&tool, params, caller).await;
    envelope_response(&envelope)
}

async fn not_found(mut request: Request) -> Response {
    error_response(
        None,
        ToolError::new("not_found", "no such route; see GET /openapi.json").with_status(404),
        &context_of(&mut request).id,
    )
}
