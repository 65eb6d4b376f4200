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
pub(super) fn front(
    state: &ServedRegistry,
    request: &Request,
) -> (Result<Requester, Box<Response>>, Finish) {
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
    let admitted = exposure(state, request, &id)
        .and_then(|()| authenticate(state, request, &id))
        .map(|identity| {
            let trace_id = continue_trace(&span, request, identity.is_some())
                .or_else(|| trace_id_of(request.headers()));
            Requester {
                id,
                trace_id,
                identity,
                span: span.clone(),
            }
        });
    (
        admitted,
        Finish {
            echo,
            mcp,
            log,
            span,
            #[cfg(feature = "otel")]
            measured,
        },
    )
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
    pub(super) struct FrontFuture<F> {
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

/// Paths served without a token: the health and readiness checks (probes carry no token), and
/// the browser console's page and assets, which hold no data (all the console shows comes from
/// routes that need one).
const PUBLIC: [&str; 5] = ["/healthz", "/readyz", "/", "/console.js", "/console.css"];

/// The caller's identity, `None` without an auth file; or the 401 response.
pub(super) fn authenticate(
    state: &ServedRegistry,
    request: &Request,
    id: &str,
) -> Result<Option<Identity>, Box<Response>> {
    let Some(auth) = &state.options.access.auth else {
        return Ok(None);
    };
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
    // A public path answers without a token; one that is given and valid says who asks (an
    // operator's probe of `/readyz` is told why a check fails).
    if PUBLIC.contains(&request.uri().path()) {
        return Ok(None);
    }
    let message = if token.is_some() {
        "the bearer token is not valid"
    } else {
        "this server needs `Authorization: Bearer <token>`"
    };
    let mut response = error_response(
        None,
        ToolError::new(ErrorKind::UNAUTHENTICATED, message),
        id,
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"tools\""),
    );
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
