//! The MCP front end: every registered tool served over the Model Context Protocol, through the
//! same call pipeline as every other caller (source `mcp`). The protocol itself (JSON-RPC,
//! version negotiation including `server/discover`, sessions, both transports) is the official
//! Rust SDK, [`rmcp`]; this module only maps tools and results.
//!
//! ```no_run
//! # async fn run(registry: std::sync::Arc<tool_runtime::Registry>) -> std::io::Result<()> {
//! // stdio (what `my-app mcp` does): stdout carries protocol messages only.
//! tool_runtime::mcp::McpServer::new(registry).serve_stdio().await
//! # }
//! ```
//!
//! Over HTTP, [`McpServer::http_route`] is the streamable-HTTP endpoint as an axum route;
//! [`app::router`](crate::app::router) mounts it at `/mcp`, behind the same authentication as
//! the other routes. Its sessions live in memory, within the limits of the
//! [`ServerOptions`](crate::http::ServerOptions) it is given: a cap on sessions open at once (an
//! `initialize` beyond it gets `503`), a short deadline for a new session's client to send
//! `notifications/initialized`, and an idle timeout.
//!
//! How tools map:
//!
//! - `tools/list`: every tool the caller's roles allow, sorted by name, with `name`, `title`,
//!   `description`, `inputSchema` (the validator's own schema), `outputSchema` and
//!   `annotations` (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`).
//! - MCP wants an object at the root of `outputSchema`. A tool whose output is not an object
//!   (a list, a string, a number, `()`) is described as `{"result": <its output>}` and its
//!   `structuredContent` is wrapped the same way.
//! - `tools/call` success: `structuredContent` plus one text block with the same JSON. Every
//!   pipeline error (invalid arguments, forbidden, rate limited, time-out, a panic, the tool's own
//!   error) is a result with `isError: true` whose text starts with the error type, then the
//!   message and one line per violation, each said once: `invalid_arguments: /ttl_seconds: 5
//!   is less than the minimum of 30` for one, `invalid_arguments: 2 violations` and a line for
//!   each for more. An unknown tool is the JSON-RPC error `-32602`, as the
//!   specification prescribes.
//! - Destructive tools are never run unconfirmed. When the client declares form elicitation,
//!   the user is asked through it (accept runs the tool; decline or cancel refuses, as
//!   `confirmation_declined`); on protocol `2026-07-28` the same question is an
//!   `InputRequiredResult` whose `requestState` is the call's confirmation token, and an accept
//!   runs the tool only when the retried call brings that state back for the same arguments
//!   and caller. Otherwise the call is refused with `confirmation_required`.
//! - A request's progress token turns the tool's progress reports into
//!   `notifications/progress`; `notifications/cancelled` cancels the running tool.
//! - A tool's [`CallContext::log`](crate::CallContext::log) messages are
//!   `notifications/message` at the level the client set with `logging/setLevel` (`info` until
//!   it does); [`sample`](crate::CallContext::sample) and
//!   [`elicit`](crate::CallContext::elicit) are `sampling/createMessage` and
//!   `elicitation/create` requests to the client, refused as `unsupported` when it did not
//!   declare the capability.

// Other servers mounted as toolsets: with the `mcp-client` feature.
#[cfg(feature = "mcp-client")]
mod client;
#[cfg(feature = "mcp-client")]
mod relay;
#[cfg(all(feature = "mcp-client", feature = "otel"))]
mod traced_http;
// The streamable-HTTP endpoint is an axum route: with the `http` feature.
#[cfg(feature = "http")]
mod drain;
#[cfg(feature = "http")]
mod events;
mod lines;
mod peer;
#[cfg(feature = "http")]
mod sessions;
#[cfg(feature = "http")]
mod streamable;
mod trace;

#[cfg(feature = "mcp-client")]
pub use client::RemoteServer;
#[cfg(feature = "http")]
pub use events::MemoryEventStore;
#[cfg(feature = "http")]
pub use rmcp::transport::streamable_http_server::session::{
    EventStore, EventStoreError, EventStream, ServerSseMessage,
};
#[cfg(feature = "http")]
pub use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};
#[cfg(feature = "http")]
pub use sessions::MemorySessionStore;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, InputRequiredResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

use crate::layers::confirm::{Answer, Ask, Confirmation};
use crate::registry::RegisteredTool;
use crate::registry::Registry;
use crate::tool::caller::{Caller, Source};
use crate::tool::error::ToolError;

/// The key of the confirmation question in an `InputRequiredResult` (protocol 2026-07-28).
const CONFIRM_INPUT: &str = "confirm";

/// An MCP server over a registry. Cheap to clone: the streamable-HTTP transport makes one per
/// session.
///
#[doc = include_str!("../../docs/mcp.md")]
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
    session: Arc<Session>,
}

struct Inner {
    registry: Arc<Registry>,
    name: String,
    version: String,
    /// MCP descriptions by tool name, made on first listing, for the registry version noted.
    descriptions: Mutex<(u64, HashMap<String, Tool>)>,
}

/// One session's own part of a server: whether it has been initialized, and the task that
/// tells its client when the tools change, stopped when the session ends (the transport drops
/// the session's server).
#[derive(Default)]
struct Session {
    initialized: AtomicBool,
    /// The lowest level of tool log messages the client hears (`logging/setLevel`).
    log_level: Arc<peer::SessionLevel>,
    watcher: Mutex<Option<tokio::task::AbortHandle>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(w) = self
            .watcher
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            w.abort();
        }
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.inner.name)
            .field("version", &self.inner.version)
            .field("tools", &self.inner.registry.tools().len())
            .field("toolsets", &self.inner.registry.toolsets())
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server for every tool of `registry`, introducing itself as `tool-runtime`.
    #[must_use]
    pub fn new(registry: Arc<Registry>) -> Self {
        Self::named(registry, "tool-runtime", env!("CARGO_PKG_VERSION"))
    }

    /// A server introducing itself (`serverInfo`) with this name and version.
    #[must_use]
    pub fn named(
        registry: Arc<Registry>,
        name: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                registry,
                name: name.into(),
                version: version.into(),
                descriptions: Mutex::default(),
            }),
            session: Arc::default(),
        }
    }

    /// The server for a new session: everything shared but the session's own part.
    fn new_session(&self) -> McpServer {
        McpServer {
            inner: Arc::clone(&self.inner),
            session: Arc::default(),
        }
    }

    /// Serves MCP on stdin/stdout until the client closes stdin. Nothing else may write to
    /// stdout meanwhile: send logs to stderr.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        let (read, write) = rmcp::transport::io::stdio_pipes();
        self.serve_on(read, write).await
    }

    /// Serves MCP as newline-delimited JSON-RPC on any byte stream (a Unix socket, a pipe, an
    /// in-memory duplex in tests) until the peer closes it.
    pub async fn serve_on<R, W>(self, read: R, write: W) -> std::io::Result<()>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        // A session of its own, whichever clone of the server serves it.
        let server = self.new_session();
        let running = match rmcp::serve_server(server, lines::Lines::new(read, write)).await {
            Ok(running) => running,
            // The peer left before starting a session: nothing went wrong here.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => return Err(std::io::Error::other(e)),
        };
        let _open = trace::OpenSession::new();
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    }

    /// The `tools/list` entries `caller` sees: [`Registry::visible`], described for MCP.
    #[must_use]
    pub fn list(&self, caller: &Caller) -> Vec<Tool> {
        let registry = &self.inner.registry;
        let version = registry.version();
        let visible = registry.visible(caller);
        let mut cache = self
            .inner
            .descriptions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.0 != version {
            *cache = (version, HashMap::new());
        }
        visible
            .iter()
            .map(|t| {
                cache
                    .1
                    .entry(t.name().to_owned())
                    .or_insert_with(|| describe(t))
                    .clone()
            })
            .collect()
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Progress reports and log messages go out in order, before the response.
        let peer = Arc::new(peer::CallPeer::new(
            &context,
            Arc::clone(&self.session.log_level),
        ));
        let response = self.call_with(request, &context, &peer).await;
        peer.finish().await;
        response
    }

    async fn call_with(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        peer: &Arc<peer::CallPeer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let registry = &self.inner.registry;
        let name = request.name.as_ref();
        let args = Value::Object(request.arguments.unwrap_or_default());
        let mut caller = caller_of(context)
            .cancellation(context.ct.clone())
            .peer(Arc::clone(peer) as _);
        if peer.wants_progress() {
            caller = caller.progress(Arc::clone(peer) as _);
        }
        // 2026-07-28: the answer to our question comes back with the retried call, and the
        // token it confirms in the request state. An accept redeems that token and nothing
        // else: without it, or with one issued for another call, the call is refused.
        let answered = request
            .input_responses
            .as_ref()
            .and_then(|r| r.get(CONFIRM_INPUT))
            .map(|answer| answer.get("action").and_then(Value::as_str) == Some("accept"));
        if answered == Some(true)
            && let Some(token) = request.request_state
        {
            caller = caller.confirmation(token);
        }
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let ask = Elicit {
            peer,
            answered,
            inline: modern && answered.is_none(),
            asked_inline: std::sync::Mutex::new(None),
        };
        let finished = registry.call_with_tool(name, args, caller, &ask).await;
        if let Some(question) = ask.asked_inline() {
            return Ok(question.into());
        }
        match (finished.envelope.outcome, finished.tool) {
            (Ok(value), Some(tool)) if tool.meta().content => Ok(content(&value).into()),
            (Ok(value), tool) => {
                let wrapped = tool.is_some_and(|t| crate::schema::wraps_output(t.output_schema()));
                Ok(success(value, wrapped).into())
            }
            (Err(e), tool) => match e.kind().jsonrpc_code() {
                // The pipeline's "no such tool" (a tool's own error of that type comes with its
                // tool): a protocol error.
                Some(code) if tool.is_none() => Err(protocol_error(name, &e, code)),
                _ => Ok(failure(&e).into()),
            },
        }
    }
}

/// The user behind an MCP client: asked through form elicitation when the client declares it
/// (on 2026-07-28 the question goes back with the result, and the answer comes with the
/// retried call); never, otherwise.
struct Elicit<'a> {
    /// The call's view of its client, which asks the question.
    peer: &'a peer::CallPeer,
    /// The answer a 2026-07-28 client sent with its retried call.
    answered: Option<bool>,
    /// Whether the question is asked inline, as an `InputRequiredResult`.
    inline: bool,
    /// The question asked inline: the call's answer.
    asked_inline: std::sync::Mutex<Option<InputRequiredResult>>,
}

impl Elicit<'_> {
    fn can_ask(&self) -> bool {
        self.peer.can_elicit()
    }

    /// The question put inline, which answers the call in place of its result.
    fn asked_inline(&self) -> Option<InputRequiredResult> {
        self.asked_inline
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }
}

impl Ask for Elicit<'_> {
    async fn ask(&self, confirmation: &Confirmation) -> Answer {
        match self.answered {
            Some(false) => return Answer::No,
            // The accept came without the token of this call (none, expired, used, or issued
            // for other arguments or another caller): it confirms nothing.
            Some(true) => {
                return Answer::Unasked(Some(
                    "the answer did not come with the request state of this call's question; call again to be asked"
                        .to_owned(),
                ));
            }
            None => {}
        }
        if !self.can_ask() {
            return Answer::Unasked(Some(
                "this client cannot ask its user (no elicitation capability), so destructive tools are refused"
                    .to_owned(),
            ));
        }
        // 2026-07-28: the question goes back as the call's answer, and the user's comes
        // with the retried call.
        if self.inline {
            *self
                .asked_inline
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) =
                Some(ask_inline(confirmation));
            return Answer::Unasked(None);
        }
        // A form with no fields: the question alone, answered by accepting or not.
        let form = json!({"type": "object", "properties": {}});
        match crate::peer::Peer::elicit(self.peer, confirmation.question.clone(), form).await {
            Ok(crate::peer::Elicited::Accepted(_)) => Answer::Yes,
            Ok(_) => Answer::No,
            Err(e) => Answer::Unasked(Some(format!("asking the user failed: {}", e.message()))),
        }
    }
}

impl ServerHandler for McpServer {
    #[allow(
        deprecated,
        reason = "MCP logging is deprecated from 2026-07-28 on; older clients use it"
    )]
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new(
            self.inner.name.clone(),
            self.inner.version.clone(),
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        trace::Served::new("initialize", None, &context)
            .run(async {
                // Once per session. The SDK would take a second `initialize`'s protocol version
                // as the session's, unnegotiated: an unknown one made the session answer `ping`
                // as unknown.
                if self.session.initialized.swap(true, Ordering::Relaxed) {
                    return Err(ErrorData::invalid_request(
                        "the session is already initialized; to initialize again, start a new \
                         session (a new connection, or over HTTP an `initialize` without \
                         `Mcp-Session-Id`)",
                        None,
                    ));
                }
                context.peer.set_peer_info(request.clone());
                self.negotiate_initialize(&request)
            })
            .await
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::DiscoverResult, ErrorData> {
        trace::Served::new("server/discover", None, &context)
            .run(async {
                Ok(rmcp::model::DiscoverResult::from_server_info(
                    self.supported_protocol_versions().into_owned(),
                    self.get_info(),
                ))
            })
            .await
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        trace::Served::new("ping", None, &context)
            .run(async { Ok(()) })
            .await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        trace::Served::new("tools/list", None, &context)
            .run(async {
                Ok(ListToolsResult::with_all_items(
                    self.list(&caller_of(&context)),
                ))
            })
            .await
    }

    /// Once the client is ready, it hears of every change to the tools
    /// (`notifications/tools/list_changed`) until its session ends.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut changes = self.inner.registry.changes();
        let peer = context.peer;
        let watcher = tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                if peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
            }
        });
        let old = self
            .session
            .watcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .replace(watcher.abort_handle());
        if let Some(old) = old {
            old.abort();
        }
    }

    /// The lowest level of the tools' log messages the client hears on this connection.
    #[allow(
        deprecated,
        reason = "MCP logging is deprecated from 2026-07-28 on; older clients use it"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        trace::Served::new("logging/setLevel", None, &context)
            .run(async {
                self.session.log_level.set(request.level);
                Ok(())
            })
            .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let served = trace::Served::new("tools/call", Some(request.name.as_ref()), &context);
        // Boxed: the SDK moves the future of every request into a task of its own, and the
        // pipeline's is large.
        served.run(Box::pin(self.call(request, context))).await
    }
}

/// The caller of an MCP request: over HTTP, who the front layer authenticated and the request's
/// id; on stdio, an anonymous caller.
fn caller_of(context: &RequestContext<RoleServer>) -> Caller {
    #[cfg(feature = "http")]
    if let Some(requester) = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<crate::tool::caller::Requester>())
    {
        return traced(requester.caller(Source::Mcp));
    }
    let _ = context;
    traced(Caller::new(Source::Mcp))
}

/// `caller` in the trace of the request's span (the current one), which may continue the trace
/// of its `_meta` rather than its HTTP request's.
fn traced(caller: Caller) -> Caller {
    #[cfg(feature = "otel")]
    if let Some(trace) = crate::otel::trace_id(&tracing::Span::current()) {
        return caller.trace_id(trace);
    }
    caller
}

/// The MCP description of one tool: the tool lowered for [`Target::Mcp`](crate::llm::Target),
/// where every target's description of a tool is made.
fn describe(tool: &RegisteredTool) -> Tool {
    let (spec, _) = crate::llm::lower(
        tool,
        crate::llm::Target::Mcp,
        &crate::llm::Options::default(),
    );
    serde_json::from_value(spec).expect("a tool description has the shape rmcp's Tool reads")
}

fn success(value: Value, wrapped: bool) -> CallToolResult {
    let structured = if wrapped {
        // Moved in: `json!` would copy the value.
        Value::Object(serde_json::Map::from_iter([("result".to_owned(), value)]))
    } else {
        value
    };
    CallToolResult::structured(structured)
}

/// A result of content blocks ([`Content`](crate::Content)) as they are.
fn content(value: &Value) -> CallToolResult {
    // A list of blocks, or one block.
    let one = std::slice::from_ref(value);
    let blocks = match value {
        Value::Array(items) => items.as_slice(),
        _ => one,
    };
    let blocks = blocks
        .iter()
        .map(|b| serde_json::from_value(b.clone()))
        .collect::<Result<Vec<ContentBlock>, _>>()
        .unwrap_or_else(|e| {
            vec![ContentBlock::text(format!(
                "unreadable content blocks: {e}"
            ))]
        });
    CallToolResult::success(blocks)
}

/// An `isError` result: `<type>: <message>`, then one line per violation the message does not
/// already say. Each thing is said once: a message that opens with its type in words
/// (`invalid arguments: ...`) is given without them after the type, and the one violation a
/// message names is not listed again (the CLI says it once too).
fn failure(e: &ToolError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(failure_text(e))])
}

fn failure_text(e: &ToolError) -> String {
    let kind = e.kind();
    let message = e.message();
    let words = kind.as_str().replace('_', " ");
    let summary = message
        .strip_prefix(words.as_str())
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(message);
    let mut text = format!("{kind}: {summary}");
    let violations = match e.violations() {
        [one] if message.ends_with(&one.message) => &[],
        all => all,
    };
    for v in violations {
        let at = if v.path.is_empty() { "/" } else { &v.path };
        let _ = write!(text, "\n  {at}: {}", v.message);
    }
    if let Some(hint) = e.hint() {
        text.push_str("\n  hint: ");
        text.push_str(hint);
    }
    if e.is_retryable() {
        text.push_str("\n  (retryable)");
    }
    text
}

/// The question of `confirmation` as a 2026-07-28 `InputRequiredResult`; its token is the
/// request state the client sends back with its answer.
fn ask_inline(confirmation: &Confirmation) -> InputRequiredResult {
    let request = json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": confirmation.question,
            "requestedSchema": {"type": "object", "properties": {}},
        }
    });
    let requests = std::collections::BTreeMap::from([(
        CONFIRM_INPUT.to_owned(),
        serde_json::from_value(request).expect("an elicitation request"),
    )]);
    InputRequiredResult::new(Some(requests), Some(confirmation.token.clone()))
}

/// A pipeline error that MCP answers as a JSON-RPC error (an unknown tool), with the
/// pipeline's own message and details.
fn protocol_error(name: &str, e: &ToolError, code: i32) -> ErrorData {
    let mut data = json!({ "type": e.kind(), "tool": name });
    if let Some(Value::Object(details)) = e.details() {
        for (k, v) in details {
            data[k] = v.clone();
        }
    }
    ErrorData::new(
        rmcp::model::ErrorCode(code),
        e.message().to_owned(),
        Some(data),
    )
}
