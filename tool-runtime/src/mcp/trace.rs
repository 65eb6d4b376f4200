//! The spans and durations of MCP requests, in the MCP semantic conventions: a server span for
//! each request this server handles, a client span for each request to a mounted server, named
//! `{mcp.method.name} {target}` (`tools/call device_add`), and their durations
//! (`mcp.server.operation.duration`, `mcp.client.operation.duration`). A target is a tool's or
//! a prompt's name, and only one that names an item the caller may see: a name a caller made up
//! is never in a span's name nor a metric's attribute (`_unknown` there). A resource's URI is
//! never in a span's name, only in its `mcp.resource.uri`. Trace context travels in
//! `params._meta` (`traceparent`, `tracestate`). The spans are `tracing` spans of target
//! `tool_runtime::mcp`; what only OpenTelemetry gives (a remote parent, links, the metrics) is
//! done by [`Telemetry`] alone, which does nothing without the `otel` feature or when telemetry
//! is not installed.

use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, InitializeResult, ListToolsResult};
use rmcp::service::{RequestContext, RoleServer};
use tracing::Instrument as _;
use tracing::field::Empty;

use crate::tool::error::ErrorKind;

/// A request this server is handling: its span, and what its duration is measured by.
pub(super) struct Served {
    span: tracing::Span,
    started: Instant,
    method: &'static str,
    /// The tool or prompt the request names, named on the span (and a `tools/call`'s measured)
    /// once the answer shows the caller may see it ([`names_nothing`]).
    target: Option<String>,
    protocol: Option<String>,
}

impl Served {
    /// The server span of request `method` in `context`, about `target`: the name of the tool
    /// (`tools/call`) or prompt (`prompts/get`, `completion/complete`) it asks for, or the URI
    /// of the resource (`resources/*`). Its parent is the trace context of the request's `_meta`
    /// when it has one the server trusts (linked then to the HTTP request's span), else over
    /// HTTP the HTTP request's span, else none.
    ///
    /// The span is named after its method alone until the request is answered: a tool's or
    /// prompt's name is in its name (and a tool's in the duration's attributes) only if the
    /// answer does not say no such item is one the caller may see, and a URI never is.
    pub(super) fn new(
        method: &'static str,
        target: Option<&str>,
        context: &RequestContext<RoleServer>,
    ) -> Self {
        let http = http_of(context);
        let parent = http.as_ref().and_then(|h| h.span?.id());
        let span = tracing::info_span!(
            target: "tool_runtime::mcp",
            parent: parent,
            "mcp.request",
            otel.name = Empty,
            otel.kind = "server",
            mcp.method.name = method,
            mcp.session.id = Empty,
            jsonrpc.request.id = %context.id,
            gen_ai.tool.name = Empty,
            gen_ai.operation.name = Empty,
            gen_ai.prompt.name = Empty,
            mcp.resource.uri = Empty,
            network.transport = if http.is_some() { "tcp" } else { "pipe" },
            request_id = Empty,
        );
        let measured = Telemetry::on();
        let uri = matches!(
            method,
            "resources/read" | "resources/subscribe" | "resources/unsubscribe"
        );
        if !span.is_disabled() {
            name(&span, method, None);
            if uri {
                span.record("mcp.resource.uri", target);
            }
            if let Some(http) = &http {
                span.record("mcp.session.id", http.session.map(session_digest));
                span.record("request_id", http.request_id);
            }
            if measured {
                Telemetry::continue_trace(&span, context, http.as_ref());
            }
        }
        let protocol = context
            .protocol_version()
            .filter(|_| measured)
            .map(|v| v.as_str().to_owned());
        let target = target
            .filter(|_| !uri && (measured || !span.is_disabled()))
            .map(str::to_owned);
        Self {
            span,
            started: Instant::now(),
            method,
            target,
            protocol,
        }
    }

    /// Runs the handler `answer` under the span, then ends the span with its outcome and
    /// measures it.
    pub(super) async fn run<T: Answer>(
        self,
        answer: impl Future<Output = Result<T, ErrorData>>,
    ) -> Result<T, ErrorData> {
        let result = answer.instrument(self.span.clone()).await;
        let (error, code) = match &result {
            Err(e) => (Some(e.code.0.to_string()), Some(e.code.0)),
            Ok(answer) => (answer.error().map(str::to_owned), None),
        };
        let protocol = match &result {
            Ok(answer) => answer.protocol().or(self.protocol),
            Err(_) => self.protocol,
        };
        let target = self
            .target
            .as_deref()
            .filter(|_| result.as_ref().err().is_none_or(|e| !names_nothing(e)));
        if let Some(target) = target
            && !self.span.is_disabled()
        {
            let named = name(&self.span, self.method, Some(target));
            Telemetry::renamed(&self.span, named);
        }
        let tool = (self.method == "tools/call").then(|| target.unwrap_or(UNKNOWN));
        Telemetry::ended(
            &Ended {
                span: &self.span,
                client: false,
                method: self.method,
                tool,
                error: error.as_deref(),
                code,
                protocol: protocol.as_deref(),
            },
            self.started.elapsed(),
        );
        result
    }
}

/// What an answer says of how its request ended, beyond a JSON-RPC error.
pub(super) trait Answer {
    /// `error.type` of an answer that reports a failure: `tool_error` for a tool result with
    /// `isError`.
    fn error(&self) -> Option<&'static str> {
        None
    }
    /// The protocol version the answer agrees (an `initialize`'s).
    fn protocol(&self) -> Option<String> {
        None
    }
}

impl Answer for () {}
impl Answer for ListToolsResult {}
impl Answer for rmcp::model::DiscoverResult {}
impl Answer for rmcp::model::ListResourcesResult {}
impl Answer for rmcp::model::ListResourceTemplatesResult {}
impl Answer for rmcp::model::ReadResourceResponse {}
impl Answer for rmcp::model::ListPromptsResult {}
impl Answer for rmcp::model::GetPromptResponse {}
impl Answer for rmcp::model::CompleteResult {}
impl Answer for rmcp::model::GetTaskResult {}

impl Answer for CallToolResponse {
    fn error(&self) -> Option<&'static str> {
        match self {
            CallToolResponse::Complete(result) if result.is_error == Some(true) => {
                Some("tool_error")
            }
            _ => None,
        }
    }
}

impl Answer for InitializeResult {
    fn protocol(&self) -> Option<String> {
        Some(self.protocol_version.as_str().to_owned())
    }
}

/// The tool of a `tools/call` whose name names no tool the caller may see, in the duration's
/// attributes (as in `tool_runtime.calls`).
const UNKNOWN: &str = "_unknown";

/// Whether `error` answers a request naming a tool or prompt that is not one the caller may
/// see: the pipeline's `unknown_tool` (`tools/call`) or `not_found` (`prompts/get`,
/// `completion/complete`), which MCP answers as JSON-RPC errors whose `data.type` says so
/// (`results::protocol_error`, `results::item_error`). A prompt's own `not_found` leaves its
/// name out too.
fn names_nothing(error: &ErrorData) -> bool {
    let kind = error.data.as_ref().and_then(|d| d.get("type"));
    kind.and_then(serde_json::Value::as_str).is_some_and(|k| {
        k == ErrorKind::UNKNOWN_TOOL.as_str() || k == ErrorKind::NOT_FOUND.as_str()
    })
}

/// Names `span` `{method} {target}`, or the method alone, and returns the name; a
/// `tools/call` is also the conventions' `execute_tool` of its tool, a `prompts/get` names its
/// prompt. `target` is a tool's or prompt's name known to exist, never a URI.
fn name(span: &tracing::Span, method: &str, target: Option<&str>) -> String {
    let name = match target {
        Some(target) => format!("{method} {target}"),
        None => method.to_owned(),
    };
    span.record("otel.name", name.as_str());
    match method {
        "tools/call" => {
            span.record("gen_ai.tool.name", target);
            span.record("gen_ai.operation.name", "execute_tool");
        }
        "prompts/get" => {
            span.record("gen_ai.prompt.name", target);
        }
        _ => {}
    }
    name
}

/// What a request over HTTP brings: the front layer's span, request id and whether it
/// authenticated its sender ([`Requester`](crate::front::requester::Requester)), and the session's id.
struct Http<'a> {
    span: Option<&'a tracing::Span>,
    request_id: Option<&'a str>,
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    authenticated: bool,
    session: Option<&'a str>,
}

/// What a span carries of a session's id: the first 64 bits of its SHA-256, as hex. Enough to
/// tell one session's requests from another's; the id itself is what a client presents to use
/// the session, and traces leave the process.
fn session_digest(id: &str) -> String {
    use sha2::{Digest as _, Sha256};
    crate::tool::hex(&Sha256::digest(id.as_bytes())[..8])
}

#[cfg(feature = "http")]
fn http_of(context: &RequestContext<RoleServer>) -> Option<Http<'_>> {
    let parts = context.extensions.get::<axum::http::request::Parts>()?;
    let requester = parts.extensions.get::<crate::front::requester::Requester>();
    Some(Http {
        span: requester.map(|r| &r.span),
        request_id: requester.map(|r| r.id.as_str()),
        authenticated: requester.is_some_and(|r| r.identity.is_some()),
        session: parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok()),
    })
}

#[cfg(not(feature = "http"))]
fn http_of(_: &RequestContext<RoleServer>) -> Option<Http<'_>> {
    None
}

/// A request to a mounted server: its client span, and what its duration is measured by.
#[cfg(feature = "mcp-client")]
pub(super) struct Sent {
    pub(super) span: tracing::Span,
    started: Instant,
    method: &'static str,
    tool: Option<String>,
}

#[cfg(feature = "mcp-client")]
impl Sent {
    /// The client span of request `method` (about `target`) to the server at `url` (over
    /// HTTP; `None` for a child process), a child of the current span.
    pub(super) fn new(method: &'static str, target: Option<&str>, url: Option<&str>) -> Self {
        let address = url
            .and_then(|u| reqwest::Url::parse(u).ok())
            .and_then(|u| Some((u.host_str()?.to_owned(), u.port_or_known_default()?)));
        let span = tracing::info_span!(
            target: "tool_runtime::mcp",
            "mcp.send",
            otel.name = Empty,
            otel.kind = "client",
            mcp.method.name = method,
            gen_ai.tool.name = Empty,
            gen_ai.operation.name = Empty,
            network.transport = if url.is_some() { "tcp" } else { "pipe" },
            server.address = Empty,
            server.port = Empty,
        );
        let measured = Telemetry::on();
        if !span.is_disabled() {
            name(&span, method, target);
            if let Some((host, port)) = &address {
                span.record("server.address", host.as_str());
                span.record("server.port", i64::from(*port));
            }
        }
        Self {
            span,
            started: Instant::now(),
            method,
            tool: target
                .filter(|_| measured && method == "tools/call")
                .map(str::to_owned),
        }
    }

    /// The request's `_meta` with the span's trace context in it, for the server to continue.
    pub(super) fn meta(
        &self,
        meta: Option<rmcp::model::RequestMetaObject>,
    ) -> Option<rmcp::model::RequestMetaObject> {
        let mut meta = meta.unwrap_or_default();
        Telemetry::inject(&self.span, &mut meta.0.0);
        (!meta.0.0.is_empty()).then_some(meta)
    }

    /// Ends the span: `error` is the JSON-RPC code of an error answer, `tool_error` for a tool
    /// result with `isError`, or what else went wrong (`unavailable`); `protocol` the session's
    /// protocol version.
    pub(super) fn ended(self, error: Option<&str>, code: Option<i32>, protocol: Option<&str>) {
        Telemetry::ended(
            &Ended {
                span: &self.span,
                client: true,
                method: self.method,
                tool: self.tool.as_deref(),
                error,
                code,
                protocol,
            },
            self.started.elapsed(),
        );
    }
}

/// How a request ended.
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
struct Ended<'a> {
    span: &'a tracing::Span,
    client: bool,
    method: &'static str,
    tool: Option<&'a str>,
    error: Option<&'a str>,
    code: Option<i32>,
    protocol: Option<&'a str>,
}

/// MCP sessions opened (`1`) or closed (`-1`) on this process, for
/// `tool_runtime.mcp.sessions`.
pub(super) fn sessions(delta: i64) {
    #[cfg(feature = "otel")]
    crate::otel::metrics::mcp_sessions(delta);
    #[cfg(not(feature = "otel"))]
    let _ = delta;
}

/// A session open on this process (stdio's one) until dropped.
pub(super) struct OpenSession(());

impl OpenSession {
    pub(super) fn new() -> Self {
        sessions(1);
        Self(())
    }
}

impl Drop for OpenSession {
    fn drop(&mut self) {
        sessions(-1);
    }
}

/// What only OpenTelemetry does for MCP requests: nothing without the `otel` feature.
struct Telemetry;

#[cfg(not(feature = "otel"))]
impl Telemetry {
    fn on() -> bool {
        false
    }
    fn continue_trace(_: &tracing::Span, _: &RequestContext<RoleServer>, _: Option<&Http<'_>>) {}
    fn renamed(_: &tracing::Span, _: String) {}
    #[cfg(feature = "mcp-client")]
    fn inject(_: &tracing::Span, _: &mut serde_json::Map<String, serde_json::Value>) {}
    fn ended(_: &Ended<'_>, _: Duration) {}
}

#[cfg(feature = "otel")]
impl Telemetry {
    /// Whether telemetry is installed.
    fn on() -> bool {
        crate::otel::installed().is_some()
    }

    /// Makes the trace context of the request's `_meta` the span's parent when the server
    /// trusts it ([`InboundTrace`](crate::otel::InboundTrace); a client on stdio started this
    /// process and counts as authenticated), linking the span to the HTTP request's then.
    fn continue_trace(
        span: &tracing::Span,
        context: &RequestContext<RoleServer>,
        http: Option<&Http<'_>>,
    ) {
        use crate::otel::InboundTrace;
        use opentelemetry::trace::TraceContextExt as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let Some(telemetry) = crate::otel::installed() else {
            return;
        };
        let trusted = match telemetry.inbound() {
            InboundTrace::Accept => true,
            InboundTrace::Authenticated => http.is_none_or(|h| h.authenticated),
            InboundTrace::Ignore => false,
        };
        if trusted
            && crate::otel::adopt(span, crate::otel::from_meta(&context.meta.0.0))
            && let Some(request) = http.and_then(|h| h.span)
        {
            let request = request.context().span().span_context().clone();
            if request.is_valid() {
                span.add_link(request);
            }
        }
    }

    /// Renames `span`, already started, for the collector: its `otel.name` is read only until
    /// it starts.
    fn renamed(span: &tracing::Span, name: String) {
        crate::otel::spans::renamed(span, name);
    }

    #[cfg(feature = "mcp-client")]
    fn inject(span: &tracing::Span, meta: &mut serde_json::Map<String, serde_json::Value>) {
        if !span.is_disabled() {
            crate::otel::into_meta(span, meta);
        }
    }

    fn ended(ended: &Ended<'_>, elapsed: Duration) {
        use crate::otel::metrics::{McpOperation, mcp_sent, mcp_served};
        if !Self::on() {
            return;
        }
        if let Some(error) = ended.error {
            crate::otel::spans::failed(ended.span, error);
        }
        if let Some(code) = ended.code {
            crate::otel::spans::attribute(ended.span, "rpc.response.status_code", code.to_string());
        }
        if let Some(protocol) = ended.protocol {
            crate::otel::spans::attribute(ended.span, "mcp.protocol.version", protocol.to_owned());
        }
        let operation = McpOperation {
            method: ended.method,
            tool: ended.tool,
            error: ended.error,
            protocol: ended.protocol,
        };
        if ended.client {
            mcp_sent(&operation, elapsed);
        } else {
            mcp_served(&operation, elapsed);
        }
    }
}
