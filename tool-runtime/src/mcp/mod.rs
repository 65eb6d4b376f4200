//! The MCP front end: every registered tool served over the Model Context Protocol, through the
//! same call pipeline as every other caller (source `mcp`). The protocol itself (JSON-RPC,
//! version negotiation including `server/discover`, sessions, both transports) is the official
//! Rust SDK, [`rmcp`]; this module only maps tools, resources, prompts and results.
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
//! `notifications/initialized`, an idle timeout, and the resource URIs one session follows
//! ([`McpServer::max_subscriptions`] on every transport).
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
//!   `confirmation_declined`); on protocol `2026-07-28` the same question is an input-required
//!   result whose sealed `requestState` carries the call's single-use confirmation token, and
//!   an accept runs the tool only when the retried call brings that state back for the same
//!   arguments and caller. Otherwise the call is refused with `confirmation_required`.
//! - A request's progress token turns the tool's progress reports into
//!   `notifications/progress`; `notifications/cancelled` cancels the running tool.
//! - A tool's [`CallContext::log`](crate::CallContext::log) messages are
//!   `notifications/message` at the level the client set with `logging/setLevel` (`info` until
//!   it does); [`sample`](crate::CallContext::sample),
//!   [`elicit`](crate::CallContext::elicit) and [`roots`](crate::CallContext::roots) are
//!   `sampling/createMessage`, `elicitation/create` and `roots/list` requests to the client
//!   before 2026-07-28, and input-required results from it on (see below), refused as
//!   `unsupported` when it did not declare the capability.

// Other servers mounted as toolsets: with the `mcp-client` feature.
#[cfg(feature = "mcp-client")]
mod client;
#[cfg(feature = "mcp-client")]
mod client_items;
#[cfg(feature = "mcp-client")]
mod mount;
#[cfg(feature = "mcp-oauth")]
mod oauth;
#[cfg(feature = "mcp-oauth")]
mod per_user;
#[cfg(feature = "mcp-client")]
mod relay;
#[cfg(feature = "mcp-client")]
mod remote_call;
#[cfg(all(feature = "mcp-client", feature = "otel"))]
mod traced_http;
#[cfg(feature = "mcp-client")]
mod upstream;
// The streamable-HTTP endpoint is an axum route: with the `http` feature.
#[cfg(feature = "http")]
mod binding;
mod confirm;
#[cfg(feature = "http")]
mod drain;
#[cfg(feature = "http")]
mod events;
mod input;
mod lines;
mod pages;
mod peer;
mod prompts;
mod resources;
mod results;
mod rounds;
#[cfg(feature = "http")]
mod session_stores;
#[cfg(feature = "http")]
mod sessions;
#[cfg(feature = "http")]
mod streamable;
mod subscriptions;
mod tasks;
mod tools;
mod trace;

pub use crate::answers::{AnswerRelay, AnswerTaker, MemoryAnswerRelay};
pub use crate::front::state_key::{RequestStateKey, RequestStateKeyError};
#[cfg(feature = "mcp-client")]
pub use client::RemoteServer;
#[cfg(feature = "http")]
pub use events::MemoryEventStore;
#[cfg(feature = "mcp-oauth")]
pub use oauth::LoopbackBrowser;
#[cfg(feature = "mcp-oauth")]
pub use oauth::{
    Browser, ClientCredentials, ConnectedAccounts, EnterpriseGrant, SignIn, TokenKeys,
    WorkloadIdentity,
};
pub use pages::PAGE_SIZE;
/// The official MCP SDK this front end is built on, whole: its types appear in this module's
/// API (the session and event stores of streamable HTTP, under
/// `rmcp::transport::streamable_http_server::session`), so an application names them through
/// the same version.
pub use rmcp;
#[cfg(feature = "http")]
pub use session_stores::MemorySessionStore;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};

use crate::registry::RegisteredTool;
use crate::registry::Registry;
use crate::tool::caller::{Caller, Source};

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
    /// How many items one page of a list holds.
    page_size: AtomicUsize,
    /// How many URIs one session follows at most.
    max_subscriptions: AtomicUsize,
    /// Cancelled when the HTTP server stops accepting connections: a question asked of a client
    /// from then on could not get its answer, which comes in a request of its own.
    stopping: std::sync::OnceLock<tokio_util::sync::CancellationToken>,
    /// Seals the request state of input-required results (2026-07-28).
    request_states: Mutex<Arc<input::RequestStates>>,
}

/// One session's own part of a server: whether it has been initialized, and the task that
/// tells its client when the tools change, stopped when the session ends (the transport drops
/// the session's server).
#[derive(Default)]
struct Session {
    initialized: AtomicBool,
    /// The lowest level of tool log messages the client hears (`logging/setLevel`).
    log_level: Arc<peer::SessionLevel>,
    /// The URIs whose updates the client subscribed to (`resources/subscribe`).
    subscribed: Arc<subscriptions::Subscribed>,
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
        self.subscribed.release_all();
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
                page_size: AtomicUsize::new(PAGE_SIZE),
                max_subscriptions: AtomicUsize::new(subscriptions::MAX_SUBSCRIPTIONS),
                stopping: std::sync::OnceLock::new(),
                request_states: Mutex::new(Arc::new(input::RequestStates::random())),
            }),
            session: Arc::default(),
        }
    }

    /// Seals the request state of input-required results (protocol 2026-07-28) with `key`:
    /// give every replica behind a load balancer the same key, so that whichever receives the
    /// next round opens the state the last one sealed. Unset, each process seals with a random
    /// key of its own, and a round that reaches another replica is refused (the client then
    /// makes the request over). Every clone of this server shares the setting;
    /// [`http_route`](Self::http_route) sets the one of its options when they set one
    /// ([`ServerOptions::mcp_request_state_key`](crate::http::ServerOptions::mcp_request_state_key)).
    #[must_use]
    pub fn request_state_key(self, key: &RequestStateKey) -> Self {
        let states = input::RequestStates::new(key.bytes().to_vec())
            .expect("a request-state key is at least as long as the codec needs");
        *self
            .inner
            .request_states
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(states);
        self
    }

    /// Lists (`tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`)
    /// answer at most `size` items a page ([`PAGE_SIZE`] unless set; at least 1), with a
    /// `nextCursor` for the rest. Every clone of this server shares the setting.
    #[must_use]
    pub fn page_size(self, size: usize) -> Self {
        self.inner.page_size.store(size.max(1), Ordering::Relaxed);
        self
    }

    /// How many items one page of a list holds.
    fn page_len(&self) -> usize {
        self.inner.page_size.load(Ordering::Relaxed)
    }

    /// One session follows at most `max` resource URIs at once (1,000 unless set): those of
    /// `resources/subscribe` and of its open `subscriptions/listen` streams. Past it, a
    /// subscribe or a listen is refused with a JSON-RPC error naming the cap. Every clone of
    /// this server shares the setting; [`http_route`](Self::http_route) sets the one of its
    /// options when they set one
    /// ([`ServerOptions::max_subscriptions`](crate::http::ServerOptions::max_subscriptions)).
    #[must_use]
    pub fn max_subscriptions(self, max: usize) -> Self {
        self.inner.max_subscriptions.store(max, Ordering::Relaxed);
        self
    }

    /// How many URIs one session follows at most.
    fn subscription_cap(&self) -> usize {
        self.inner.max_subscriptions.load(Ordering::Relaxed)
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
}

/// The SDK answers each request with one future, as large as its largest method's, and moves
/// it into a task of its own: a method whose work is more than a few hundred bytes of state
/// boxes it, so that every request, a `tools/call` included, moves only a pointer for it.
impl ServerHandler for McpServer {
    #[allow(
        deprecated,
        reason = "MCP logging is deprecated from 2026-07-28 on; older clients use it"
    )]
    fn get_info(&self) -> InitializeResult {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_tasks()
            .build();
        if self.inner.registry.has_completions() {
            capabilities.completions = Some(rmcp::model::JsonObject::new());
        }
        InitializeResult::new(capabilities).with_server_info(Implementation::new(
            self.inner.name.clone(),
            self.inner.version.clone(),
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        Box::pin(trace::Served::new("initialize", None, &context).run(async {
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
            // Tasks are an extension of 2026-07-28, which has no `initialize`.
            let mut result = self.negotiate_initialize(&request)?;
            if let Some(extensions) = &mut result.capabilities.extensions {
                extensions.remove(rmcp::model::TASKS_EXTENSION_ID);
            }
            Ok(result)
        }))
        .await
    }

    /// The SDK checks a `tools/call`'s `Mcp-Param-*` headers (SEP-2243) against the tool's
    /// parameters marked `x-mcp-header` (`#[arg(header = "...")]`), reading the tool here, in the
    /// request's scope: a tool hidden from its caller is not found, and its call is answered as
    /// any unknown tool's.
    #[cfg(feature = "http")]
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.visible_described(name)
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
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Box::pin(trace::Served::new("tools/list", None, &context).run(async {
            let tools = self.list(&caller_of(&context));
            let (tools, next) = pages::page(tools, request.as_ref(), self.page_len())?;
            let mut result = ListToolsResult::with_all_items(tools);
            result.next_cursor = next;
            Ok(result)
        }))
        .await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        Box::pin(self.resources_page(request, context)).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        Box::pin(self.templates_page(request, context)).await
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        Box::pin(self.read(request, context)).await
    }

    #[allow(
        deprecated,
        reason = "resources/subscribe is how clients before 2026-07-28 subscribe"
    )]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Box::pin(self.subscribe_to(request.uri, context)).await
    }

    #[allow(
        deprecated,
        reason = "resources/unsubscribe is how clients before 2026-07-28 unsubscribe"
    )]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Box::pin(self.unsubscribe_from(request.uri, context)).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        Some(subscriptions::accepted(requested, self.subscription_cap()))
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        Box::pin(self.listen_to(context)).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        Box::pin(self.prompts_page(request, context)).await
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        Box::pin(self.get(request, context)).await
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, ErrorData> {
        Box::pin(self.completion(request, context)).await
    }

    /// Once the client is ready, it hears of every change to the tools, resources and prompts
    /// (`notifications/*/list_changed`), and of updates to the resources it subscribed to,
    /// until its session ends.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let watcher = subscriptions::watch(
            &self.inner.registry,
            context.peer,
            Arc::clone(&self.session.subscribed),
        );
        let old = self
            .session
            .watcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .replace(watcher);
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
        Box::pin(
            trace::Served::new("logging/setLevel", None, &context).run(async {
                self.session.log_level.set(request.level);
                Ok(())
            }),
        )
        .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let served = trace::Served::new("tools/call", Some(request.name.as_ref()), &context);
        // The pipeline's future is the large one: boxed where it is made, it is copied once.
        served.run(Box::pin(self.call(request, context))).await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        Box::pin(
            trace::Served::new("tasks/get", None, &context).run(self.task_get(request, context)),
        )
        .await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Box::pin(
            trace::Served::new("tasks/update", None, &context)
                .run(self.task_update(request, context)),
        )
        .await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Box::pin(
            trace::Served::new("tasks/cancel", None, &context)
                .run(self.task_cancel(request, context)),
        )
        .await
    }
}

/// The caller of an MCP request: over HTTP, who the front layer authenticated and the request's
/// id; on stdio, an anonymous caller.
fn caller_of(context: &RequestContext<RoleServer>) -> Caller {
    #[cfg(feature = "http")]
    if let Some(requester) = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<crate::front::requester::Requester>())
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

/// 128 random bits as 32 hex digits (a time-and-counter mix where the system has no randomness).
#[cfg(feature = "http")]
fn random_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes[..8].copy_from_slice(&nanos.to_le_bytes()[..8]);
        bytes[8..].copy_from_slice(
            &COUNTER
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                .to_le_bytes(),
        );
    }
    crate::tool::hex(&bytes)
}
