//! The front layer every request passes once: request id, authentication, the peer rule, the
//! log line.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::Response;

use crate::tool::error::{ErrorKind, ToolError};

use super::response::error_response;
use super::{Identity, REQUEST_ID, Requester, ServedRegistry};
use crate::front::auth::challenge::{self, ScopeChallenge};

/// The request id of a request and its `x-request-id` response header: the request's own
/// header if sensible (1 to 128 visible ASCII characters), returned without a copy; else a new
/// id.
pub(super) fn request_id_of(headers: &HeaderMap) -> (String, HeaderValue) {
    if let Some(value) = header_of(headers, &REQUEST_ID)
        && let Ok(id) = value.to_str()
        && !id.is_empty()
        && id.len() <= 128
        && id.bytes().all(|b| b.is_ascii_graphic())
    {
        return (id.to_owned(), value.clone());
    }
    let id = crate::tool::caller::next_request_id();
    // Made of visible ASCII: always a valid header value.
    let echo = HeaderValue::from_str(&id).unwrap_or_else(|_| HeaderValue::from_static("invalid"));
    (id, echo)
}

/// The trace id of a W3C `traceparent` header (`00-<32 hex trace id>-<16 hex parent id>-<2 hex
/// flags>`), if the request sent a valid one: lower-case hex, the trace and parent ids not all
/// zeros. A later version may append fields, which are ignored.
pub(super) fn trace_id_of(headers: &HeaderMap) -> Option<String> {
    let value = header_of(headers, &TRACEPARENT)?.to_str().ok()?;
    let mut fields = value.split('-');
    let (version, trace, parent, flags) = (
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next()?,
    );
    let hex = |s: &str, len: usize| {
        s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let valid = hex(version, 2)
        && version != "ff"
        && (version != "00" || fields.next().is_none())
        && hex(trace, 32)
        && trace.bytes().any(|b| b != b'0')
        && hex(parent, 16)
        && parent.bytes().any(|b| b != b'0')
        && hex(flags, 2);
    valid.then(|| trace.to_owned())
}

const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// The first value of header `name`. A request carries a handful of headers: comparing their
/// names is cheaper than hashing `name` for a lookup, on every request.
pub(super) fn header_of<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Option<&'h HeaderValue> {
    if headers.keys_len() > 8 {
        return headers.get(name);
    }
    headers.iter().find_map(|(n, v)| (n == name).then_some(v))
}

/// Every request passes here once: the request id is read or made and returned on the
/// response; with an auth file, every route but `/healthz` and the console's page needs
/// `Authorization: Bearer <token>`; axum's bare 405 gets an envelope; one line is logged.
///
/// A plain tower layer rather than `middleware::from_fn`: it is on every request's path, and
/// this costs one allocation per request where `from_fn` costs several.
#[derive(Clone)]
pub(super) struct FrontLayer(pub(super) Arc<ServedRegistry>);

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
pub(super) struct Front<S> {
    inner: S,
    state: Arc<ServedRegistry>,
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
    type Future = FrontFuture<S, S::Future>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let (admitted, finish) = front(&self.state, &request);
        let (inner, refusal, waiting) = match admitted {
            Admission::Ready(Ok(ctx)) => {
                // Moved, not copied: the handler moves it on into the call's context.
                request.extensions_mut().insert(ctx);
                // `inner` is an axum `Route` (this layer is private, applied by `Router::layer`
                // only): always ready, and its `call` clones what it runs. The usual tower
                // hand-over (serve with the polled service, keep a fresh clone) would clone a
                // boxed service a second time on every request.
                (Some(self.inner.call(request)), None, None)
            }
            Admission::Ready(Err(refusal)) => (None, Some(refusal), None),
            // The token is checked once keys or an introspection answer are fetched; the
            // route is called then, by a clone of it.
            Admission::Waiting(verifying, id) => (
                None,
                None,
                Some(Box::new(Waiting {
                    verifying,
                    request: Some(request),
                    service: self.inner.clone(),
                    id,
                })),
            ),
        };
        FrontFuture {
            inner,
            refusal,
            waiting,
            finish: Some(finish),
        }
    }
}

/// A request whose token is being checked: the check, then the route.
pub(super) struct Waiting<S> {
    verifying: futures_util::future::BoxFuture<'static, Result<Option<Identity>, Box<Response>>>,
    request: Option<Request>,
    service: S,
    id: String,
}

/// Whether a request is admitted, refused, or waits for its token to be checked.
pub(super) enum Admission {
    Ready(Result<Requester, Box<Response>>),
    Waiting(
        futures_util::future::BoxFuture<'static, Result<Option<Identity>, Box<Response>>>,
        String,
    ),
}

/// What the front does before a request is served: its request id read or made, its caller
/// authenticated (or the 401 to answer), its log line started; and what it does to the
/// response ([`Finish`]).
pub(super) fn front(state: &Arc<ServedRegistry>, request: &Request) -> (Admission, Finish) {
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
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(axum::extract::MatchedPath::as_str);
    let method = known_method(request.method());
    let span = request_span(request, method, route, &id);
    #[cfg(feature = "otel")]
    let measured = crate::otel::installed()
        .map(|_| Box::new((Instant::now(), method, route.map(str::to_owned))));
    let admitted = match exposure(state, request, &id) {
        Err(refusal) => Admission::Ready(Err(refusal)),
        Ok(()) => match authenticate(state, request, &id) {
            Authenticated::Now(identity) => {
                Admission::Ready(identity.map(|identity| requester(request, &span, id, identity)))
            }
            Authenticated::Later(verifying) => Admission::Waiting(verifying, id),
        },
    };
    (
        admitted,
        Finish {
            echo,
            mcp,
            log,
            span,
            scope_metadata: state.metadata_url(mcp),
            #[cfg(feature = "otel")]
            measured,
        },
    )
}

/// What the front learned of an admitted request.
pub(super) fn requester(
    request: &Request,
    span: &tracing::Span,
    id: String,
    identity: Option<Identity>,
) -> Requester {
    let trace_id = continue_trace(span, request, identity.is_some())
        .or_else(|| trace_id_of(request.headers()));
    Requester {
        id,
        trace_id,
        identity,
        span: span.clone(),
    }
}

/// `http.request.method` in the HTTP conventions: the request's method when it is one they
/// know (RFC 9110's, `PATCH` and `QUERY`; method names are case-sensitive), else `_OTHER`, so
/// that a method a caller made up is never a metric's attribute nor in a span's name. The
/// routes of this crate take none of the others.
fn known_method(method: &Method) -> &'static str {
    match method.as_str() {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        "QUERY" => "QUERY",
        "TRACE" => "TRACE",
        "CONNECT" => "CONNECT",
        _ => OTHER_METHOD,
    }
}

/// What [`known_method`] says of a method the conventions do not know.
const OTHER_METHOD: &str = "_OTHER";

/// The server span of a request, in the HTTP conventions: `{method} {route}` (`HTTP {route}`
/// for a method they do not know, whose own name is then `http.request.method_original`; the
/// method alone, or `HTTP`, without a route), kind server. Recorded when telemetry (or a log
/// at `info` for `tool_runtime::request`) wants it.
fn request_span(
    request: &Request,
    method: &'static str,
    route: Option<&str>,
    id: &str,
) -> tracing::Span {
    let span = tracing::info_span!(
        target: "tool_runtime::request",
        "http.request",
        otel.name = tracing::field::Empty,
        otel.kind = "server",
        http.request.method = method,
        http.request.method_original = tracing::field::Empty,
        http.route = route,
        url.path = request.uri().path(),
        http.response.status_code = tracing::field::Empty,
        request_id = id,
    );
    if !span.is_disabled() {
        let named = if method == OTHER_METHOD {
            span.record("http.request.method_original", request.method().as_str());
            "HTTP"
        } else {
            method
        };
        span.record(
            "otel.name",
            match route {
                Some(route) => format!("{named} {route}"),
                None => named.to_owned(),
            },
        );
    }
    span
}

/// Makes the caller's `traceparent` the parent of `span` when the server trusts it
/// ([`InboundTrace`](crate::otel::InboundTrace)), and returns the span's trace id; `None`
/// without telemetry.
#[allow(unused_variables)]
fn continue_trace(span: &tracing::Span, request: &Request, authenticated: bool) -> Option<String> {
    #[cfg(feature = "otel")]
    {
        use crate::otel::InboundTrace;
        let telemetry = crate::otel::installed()?;
        let trusted = match telemetry.inbound() {
            InboundTrace::Accept => true,
            InboundTrace::Authenticated => authenticated,
            InboundTrace::Ignore => false,
        };
        if trusted {
            crate::otel::adopt(span, crate::otel::from_headers(request.headers()));
        }
        crate::otel::trace_id(span)
    }
    #[cfg(not(feature = "otel"))]
    None
}

/// The core's rule on unauthenticated remote callers (`front::safety`), for a request whose
/// peer is known ([`serve`] records it; a router served another way without `ConnectInfo` has
/// no peer to check).
pub(super) fn exposure(
    state: &ServedRegistry,
    request: &Request,
    id: &str,
) -> Result<(), Box<Response>> {
    let Some(peer) = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
    else {
        return Ok(());
    };
    state
        .options
        .access
        .admit_peer(peer.0.ip())
        .map_err(|e| Box::new(error_response(None, e, id)))
}

pin_project_lite::pin_project! {
    /// The response future of [`Front`]: the route's own future, then [`Finish`]. A named type
    /// rather than a boxed `async` block, which cost an allocation and a copy per request.
    pub(super) struct FrontFuture<S, F> {
        #[pin]
        inner: Option<F>,
        refusal: Option<Box<Response>>,
        waiting: Option<Box<Waiting<S>>>,
        finish: Option<Finish>,
    }
}

impl<S, F> Future for FrontFuture<S, F>
where
    S: tower::Service<Request, Future = F>,
    F: Future<Output = Result<Response, std::convert::Infallible>>,
{
    type Output = Result<Response, std::convert::Infallible>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let mut this = self.project();
        if let Some(waiting) = this.waiting.as_mut() {
            let checked = std::task::ready!(waiting.verifying.as_mut().poll(cx));
            let mut waiting = this.waiting.take().expect("checked above");
            let mut request = waiting.request.take().expect("taken once");
            match checked {
                Ok(identity) => {
                    let span = &this
                        .finish
                        .as_ref()
                        .expect("FrontFuture polled after it completed")
                        .span;
                    let ctx = requester(&request, span, std::mem::take(&mut waiting.id), identity);
                    request.extensions_mut().insert(ctx);
                    this.inner.set(Some(waiting.service.call(request)));
                }
                Err(refusal) => *this.refusal = Some(refusal),
            }
        }
        let entered = this.finish.as_ref().map(|f| f.span.enter());
        let response = match this.inner.as_pin_mut() {
            Some(inner) => std::task::ready!(inner.poll(cx))?,
            None => *this
                .refusal
                .take()
                .expect("FrontFuture polled after it completed"),
        };
        drop(entered);
        let finish = this
            .finish
            .take()
            .expect("FrontFuture polled after it completed");
        std::task::Poll::Ready(Ok(finish.response(response)))
    }
}

/// What [`Front`] does to every response.
pub(super) struct Finish {
    echo: HeaderValue,
    mcp: bool,
    /// Boxed: only when the line is logged, and this is kept in every request's future.
    log: Option<Box<(Instant, axum::http::Method, String)>>,
    /// The request's span, entered while the route runs and the response is finished.
    pub(super) span: tracing::Span,
    /// With OAuth, the metadata URL a 403 for a missing scope names.
    scope_metadata: Option<String>,
    /// With telemetry, when the request came, its method ([`known_method`]) and its route, for
    /// `http.server.request.duration`.
    #[cfg(feature = "otel")]
    measured: Option<Box<(Instant, &'static str, Option<String>)>>,
}

impl Finish {
    pub(super) fn response(self, mut response: Response) -> Response {
        let Finish {
            echo,
            mcp,
            log,
            span,
            scope_metadata,
            #[cfg(feature = "otel")]
            measured,
        } = self;
        // The log line below is written inside the request's span.
        let _entered = span.enter();
        if response.status() == StatusCode::METHOD_NOT_ALLOWED && !mcp {
            // axum's own 405 carries the `Allow` header; give it an envelope body as well.
            let allow = response.headers().get(header::ALLOW).cloned();
            response = error_response(
                None,
                ToolError::new(
                    ErrorKind::METHOD_NOT_ALLOWED,
                    "this route does not take that method; see GET /openapi.json",
                ),
                echo.to_str().unwrap_or_default(),
            );
            if let Some(allow) = allow {
                response.headers_mut().insert(header::ALLOW, allow);
            }
        }
        if response.status() == StatusCode::FORBIDDEN
            && let Some(ScopeChallenge(scopes)) =
                response.extensions_mut().remove::<ScopeChallenge>()
        {
            let challenge = challenge::insufficient_scope(&scopes, scope_metadata.as_deref());
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
        }
        if !span.is_disabled() {
            let status = response.status().as_u16();
            span.record("http.response.status_code", i64::from(status));
            #[cfg(feature = "otel")]
            if status >= 500 {
                crate::otel::spans::failed(&span, &status.to_string());
            }
        }
        #[cfg(feature = "otel")]
        if let Some(measured) = measured {
            let (started, method, route) = *measured;
            crate::otel::metrics::http_request(
                method,
                route.as_deref(),
                response.status().as_u16(),
                started.elapsed(),
            );
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

/// Paths served without a token: the health and readiness checks (probes carry no token), the
/// browser console's page and assets, which hold no data (all the console shows comes from
/// routes that need one), the protected resource metadata, which tells a client where to
/// get a token, and the pages that connect accounts.
const PUBLIC: [&str; 5] = ["/healthz", "/readyz", "/", "/console.js", "/console.css"];

fn is_public(path: &str) -> bool {
    PUBLIC.contains(&path)
        || path.starts_with(challenge::METADATA_PATH)
        || path.starts_with(crate::front::server::PUBLIC_PAGES)
}

/// The caller's identity as authentication finds it (`None` on a server without
/// authentication, or on a public path without a valid token), or the response that refuses
/// the request: decided at once, or once the keys or an introspection answer it needs are
/// fetched.
pub(super) enum Authenticated {
    Now(Result<Option<Identity>, Box<Response>>),
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    Later(futures_util::future::BoxFuture<'static, Result<Option<Identity>, Box<Response>>>),
}

/// Why a token was refused, as the caller is told.
struct Refused<'a> {
    reason: &'a str,
    /// This server could not decide (the authorization server unreachable): 503.
    unavailable: bool,
}

/// Authenticates the request's bearer token: against the static tokens, then (with OAuth) as
/// an access token of the authorization server.
pub(super) fn authenticate(
    state: &Arc<ServedRegistry>,
    request: &Request,
    id: &str,
) -> Authenticated {
    let access = &state.options.access;
    if !access.authenticates() {
        return Authenticated::Now(Ok(None));
    }
    let path = request.uri().path();
    let (public, mcp) = (is_public(path), path == "/mcp");
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    let Some(token) = token else {
        return Authenticated::Now(refuse(state, public, mcp, None, id));
    };
    if let Some(identity) = access.auth.as_ref().and_then(|auth| auth.check(token)) {
        return Authenticated::Now(Ok(Some(identity.clone())));
    }
    #[cfg(feature = "oauth")]
    if let Some(oauth) = &access.oauth {
        use crate::front::auth::oauth::Verdict;
        let refused = |r: &crate::front::auth::oauth::Refusal| Refused {
            reason: r.reason,
            unavailable: r.unavailable,
        };
        return match oauth.verify(token) {
            Verdict::Known(identity) => Authenticated::Now(Ok(Some(identity))),
            Verdict::Refused(r) => {
                Authenticated::Now(refuse(state, public, mcp, Some(&refused(&r)), id))
            }
            Verdict::Pending(verifying) => {
                let state = Arc::clone(state);
                let id = id.to_owned();
                Authenticated::Later(Box::pin(async move {
                    match verifying.await {
                        Ok(identity) => Ok(Some(identity)),
                        Err(r) => refuse(&state, public, mcp, Some(&refused(&r)), &id),
                    }
                }))
            }
        };
    }
    let invalid = Refused {
        reason: "the bearer token is not valid",
        unavailable: false,
    };
    Authenticated::Now(refuse(state, public, mcp, Some(&invalid), id))
}

/// The answer to a request without a valid token: none on a public path (an operator's probe
/// of `/readyz` with a valid token is told why a check fails; without one, it is served
/// anonymously); 401 with the challenge elsewhere; 503 when the token could not be checked.
fn refuse(
    state: &ServedRegistry,
    public: bool,
    mcp: bool,
    refused: Option<&Refused<'_>>,
    id: &str,
) -> Result<Option<Identity>, Box<Response>> {
    if public {
        return Ok(None);
    }
    if let Some(&Refused {
        reason,
        unavailable: true,
    }) = refused
    {
        return Err(Box::new(error_response(
            None,
            ToolError::new(ErrorKind::UNAVAILABLE, reason),
            id,
        )));
    }
    let description = refused.map(|r| r.reason);
    let message = description.unwrap_or("this server needs `Authorization: Bearer <token>`");
    let mut response = error_response(
        None,
        ToolError::new(ErrorKind::UNAUTHENTICATED, message),
        id,
    );
    let metadata = state.metadata_url(mcp);
    let challenge = challenge::unauthorized(metadata.as_deref(), description);
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    Err(Box::new(response))
}

/// Who sent the request, as the front layer left it in its extensions (for the handlers, and for
/// MCP over HTTP, which finds it there too); or a fresh one, for routes used without the layer.
pub(crate) fn context_of(request: &mut Request) -> Requester {
    request
        .extensions_mut()
        .remove::<Requester>()
        .unwrap_or_else(|| Requester {
            id: request_id_of(request.headers()).0,
            trace_id: trace_id_of(request.headers()),
            identity: None,
            span: tracing::Span::none(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_the_conventions_do_not_know_is_other() {
        let method = |m: &str| known_method(&Method::from_bytes(m.as_bytes()).unwrap());
        for known in [
            "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "QUERY", "TRACE", "CONNECT",
        ] {
            assert_eq!(method(known), known);
        }
        // Method names are case-sensitive.
        for other in ["FOO", "get", "Post", "PROPFIND", "M-SEARCH"] {
            assert_eq!(method(other), "_OTHER");
        }
    }
}
