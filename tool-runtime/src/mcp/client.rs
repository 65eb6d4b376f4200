//! Other MCP servers mounted as toolsets: [`RemoteServer`].

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ClientServiceExt as _;
use rmcp::model::{CallToolResult, ContentBlock, PaginatedRequestParams};
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;
use tracing::Instrument as _;

use super::relay::{Handler, InFlight};
use super::trace::Sent;

use crate::tool::definition::{Annotations, ToolMeta};
use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::secret::Secret;
use crate::toolset::{Health, ToolsetTool};

/// The wait after a failed attempt to connect, doubled after each further failure...
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// ...up to this.
const MAX_RECONNECT_AFTER: Duration = Duration::from_secs(30);

/// Calls in flight at once on one HTTP session.
const MAX_IN_FLIGHT: usize = 256;

/// Another MCP server as a [toolset](crate::toolset): connects to a server
/// started as a child process (stdio) or reached over streamable HTTP, through the official
/// SDK's client, and mounts its tools into a registry as `{name}-{tool}`. Every call passes our
/// pipeline first (policy, confirmation, limits, time limit, output cap, audit), then goes to
/// the server.
///
/// ```no_run
/// # async fn f(registry: tool_runtime::Registry) -> Result<(), Box<dyn std::error::Error>> {
/// use tool_runtime::mcp::RemoteServer;
/// let everything = RemoteServer::stdio("everything", "npx")
///     .args(["-y", "@modelcontextprotocol/server-everything", "stdio"]);
/// let names = registry.mount(everything).await?; // ["everything-echo", "everything-get-sum", ...]
/// let docs = RemoteServer::http("docs", "http://127.0.0.1:3001/mcp").bearer_env("DOCS_TOKEN")?;
/// registry.mount(docs).await?;
/// # Ok(()) }
/// ```
///
/// - **Handshake**: `initialize`, offering protocol 2025-11-25 (the newest that handshake
///   carries; 2026-07-28 is agreed through `server/discover`, which
///   [`discover_first`](Self::discover_first) tries first), with the capabilities form
///   elicitation and sampling, which it passes on (below).
/// - **Tools**: listed with pagination followed; each remote input schema is compiled by our
///   validator first, and a tool whose schema does not compile, or whose `x-mcp-header` marks
///   break SEP-2243's rules (an HTTP header name, unique case aside, on a string, integer or
///   boolean parameter), is left out with a warning naming the server and the tool; the
///   schema kept is the server's, as it sent it. Remote annotations become ours, with the specification's
///   defaults: a tool not marked read-only is destructive unless `destructiveHint` is `false`,
///   so it needs confirmation like a local one.
/// - **Calls**: a result with `isError` is a `tool_failed` error with the server's text;
///   structured content is the result when the tool has an output schema; a tool without one
///   is a [`Content`](crate::Content) tool whose result is the server's content blocks, passed
///   on as they are (the gateway re-serves them unchanged). A call the pipeline drops (a
///   time-out, a caller that went away) sends the server `notifications/cancelled`.
/// - **While a tool runs**: its progress and log messages reach our caller as the tool's own,
///   and its elicitation, sampling and roots requests are asked of our caller's
///   [`Peer`](crate::tool::peer::Peer) (over our MCP server, its client), never answered by us
///   (on 2026-07-28 they come in input-required results, retried with the answers). An
///   accepted form gets the defaults of the fields the answer leaves out. A request made while
///   several calls are in flight on the session cannot be told apart (MCP names no call in it):
///   it is cancelled rather than shown to the wrong caller, and progress and log messages are
///   then not passed on.
/// - **Subscriptions**: a subscription to one of its resources
///   ([`Registry::subscribe_resource`](crate::Registry::subscribe_resource)) is sent to the
///   server once for a URI, however many hold one here (after a reconnection, again for the
///   next one made), and `resources/unsubscribe` when the last is dropped, if the connection
///   it was sent on is still open. The server sees one client: its own cap on a session's
///   subscriptions counts every URI subscribed to through this one.
/// - **Life cycle**: `notifications/tools/list_changed` makes the registry list the server's
///   tools again (front ends announce the change). A server that went away fails calls as
///   `unavailable`, naming it; the next call connects again (after a failed attempt, a second
///   later, doubling up to 30 s), and its tools are listed again. Dropping the toolset
///   (unmounting it) stops a child and its process group.
pub struct RemoteServer {
    pub(super) name: String,
    transport: Transport,
    connect_timeout: Duration,
    pub(super) tools_only: bool,
    /// Agree the protocol through `server/discover` first (2026-07-28).
    discover_first: bool,
    /// Whether its tools may run as tasks here.
    pub(super) task_mode: crate::tool::TaskMode,
    /// Who it is to an authorization server: the application, or a signed-in user.
    #[cfg(feature = "mcp-oauth")]
    pub(super) identity: Option<super::oauth::Identity>,
    /// A connection per caller, for a mount that acts as each.
    #[cfg(feature = "mcp-oauth")]
    pub(super) users: super::oauth::Users,
    connection: tokio::sync::Mutex<Connection>,
    pub(super) changed: tokio::sync::broadcast::Sender<()>,
    /// The server's resource updates and resource and prompt list changes.
    pub(super) item_changes: tokio::sync::broadcast::Sender<crate::tool::notify::Change>,
    /// The server's resource URIs subscribed to here, each with how many hold it.
    pub(super) subscribed: super::upstream::Subscribed,
    pub(super) calls: Arc<InFlight>,
}

enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, Secret<String>)>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: Vec<(String, Secret<String>)>,
        bearer: Option<Secret<String>>,
    },
}

/// How many times one request to a mount behind authorization signs in again when the server
/// refuses its token.
pub(super) const SIGN_INS: usize = 3;

/// The session with the server, if one is open, and when the last attempt to open one was.
#[derive(Default)]
struct Connection {
    service: Option<Arc<RunningService<RoleClient, Handler>>>,
    last_attempt: Option<Instant>,
    /// Attempts that failed in a row.
    failures: u32,
    /// Whether a session was ever open (a new one after it is a reconnection).
    was_open: bool,
    last_error: Option<String>,
    /// The server's challenge to the token of the connection it refused: the next connection
    /// signs in with it.
    challenge: Option<String>,
}

impl RemoteServer {
    /// Whether the server is connected now, and its last error.
    pub(super) fn health_now(&self) -> Health {
        // Not waiting for a connection under way: it is not available yet.
        match self.connection.try_lock() {
            Ok(c) => Health {
                available: c.service.as_ref().is_some_and(|s| !s.is_transport_closed()),
                last_error: c.last_error.clone(),
                protocol: c.service.as_deref().and_then(protocol_of),
            },
            Err(_) => Health {
                available: false,
                last_error: Some("connecting".to_owned()),
                protocol: None,
            },
        }
    }

    /// The server started as `command` (found on `PATH`), spoken to over its standard input
    /// and output. It is started when the toolset is mounted.
    #[must_use]
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> Self {
        Self::new(
            name.into(),
            Transport::Stdio {
                command: command.into(),
                args: Vec::new(),
                env: Vec::new(),
                cwd: None,
            },
        )
    }

    /// The server at `url`, over streamable HTTP.
    #[must_use]
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(
            name.into(),
            Transport::Http {
                url: url.into(),
                headers: Vec::new(),
                bearer: None,
            },
        )
    }

    fn new(name: String, transport: Transport) -> Self {
        Self {
            name,
            transport,
            connect_timeout: Duration::from_secs(30),
            tools_only: false,
            discover_first: false,
            task_mode: crate::tool::TaskMode::Forbidden,
            #[cfg(feature = "mcp-oauth")]
            identity: None,
            #[cfg(feature = "mcp-oauth")]
            users: super::oauth::Users::default(),
            connection: tokio::sync::Mutex::new(Connection::default()),
            changed: tokio::sync::broadcast::channel(4).0,
            item_changes: tokio::sync::broadcast::channel(256).0,
            subscribed: super::upstream::Subscribed::default(),
            calls: Arc::default(),
        }
    }

    /// Arguments of a stdio server's command.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let Transport::Stdio { args: a, .. } = &mut self.transport {
            a.extend(args.into_iter().map(Into::into));
        }
        self
    }

    /// An environment variable of a stdio server (its value kept out of logs).
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Stdio { env, .. } = &mut self.transport {
            env.push((key.into(), Secret::new(value.into())));
        }
        self
    }

    /// The working directory of a stdio server.
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Transport::Stdio { cwd, .. } = &mut self.transport {
            *cwd = Some(dir.into());
        }
        self
    }

    /// A header sent with every request to an HTTP server (its value kept out of logs).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Http { headers, .. } = &mut self.transport {
            headers.push((name.into(), Secret::new(value.into())));
        }
        self
    }

    /// A bearer token for an HTTP server, sent as `Authorization: Bearer`.
    #[must_use]
    pub fn bearer(mut self, token: Secret<String>) -> Self {
        if let Transport::Http { bearer, .. } = &mut self.transport {
            *bearer = Some(token);
        }
        self
    }

    /// [`bearer`](Self::bearer), read from the environment variable `var`; an error naming it
    /// when it is unset or empty.
    pub fn bearer_env(self, var: &str) -> Result<Self, ToolError> {
        match std::env::var(var) {
            Ok(token) if !token.is_empty() => Ok(self.bearer(Secret::new(token))),
            _ => Err(ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!(
                    "MCP server `{}`: the token variable {var} is not set",
                    self.name
                ),
            )),
        }
    }

    /// Reaches an HTTP server behind MCP authorization as the application itself, with a token
    /// the server's authorization server gives `credentials` (the client credentials grant):
    /// one token for every caller of this mount, none of their own tokens passed on. The token
    /// is got when the connection opens, and again when it is opened anew after a refusal.
    #[cfg(feature = "mcp-oauth")]
    #[must_use]
    pub fn as_application(mut self, credentials: super::ClientCredentials) -> Self {
        self.identity = Some(super::oauth::Identity::Application(credentials));
        self
    }

    /// Reaches an HTTP server behind MCP authorization as a user `browser` signs in, as
    /// `sign_in` says (the authorization code grant with PKCE), when the server asks for a
    /// token: one user for every caller of this mount, as a command line's own user is. The
    /// user signs in when the connection opens, and again when it is opened anew after its
    /// token was refused.
    #[cfg(feature = "mcp-oauth")]
    #[must_use]
    pub fn signed_in(mut self, sign_in: super::SignIn, browser: Arc<dyn super::Browser>) -> Self {
        self.identity = Some(super::oauth::Identity::User {
            sign_in,
            browser,
            tokens: None,
        });
        self
    }

    /// Reaches an HTTP server behind MCP authorization as an enterprise's user without a
    /// browser (enterprise-managed authorization): the user's ID token from the enterprise's
    /// identity provider is exchanged there for an identity assertion grant, which the server's
    /// authorization server redeems for an access token ([`EnterpriseGrant`](super::EnterpriseGrant)).
    /// One user for every caller of this mount; a refused token is exchanged again.
    #[cfg(feature = "mcp-oauth")]
    #[must_use]
    pub fn as_enterprise_user(mut self, grant: super::EnterpriseGrant) -> Self {
        self.identity = Some(super::oauth::Identity::Enterprise(grant));
        self
    }

    /// Reaches an HTTP server behind MCP authorization as a workload (workload identity
    /// federation): the JWT its platform issued it is presented to the server's authorization
    /// server as a JWT bearer grant ([`WorkloadIdentity`](super::WorkloadIdentity)); a refusal
    /// is reported as the authorization server said it, never retried nor traded for another
    /// grant. A token the server refuses later is asked for again.
    #[cfg(feature = "mcp-oauth")]
    #[must_use]
    pub fn as_workload(mut self, workload: super::WorkloadIdentity) -> Self {
        self.identity = Some(super::oauth::Identity::Workload(workload));
        self
    }

    /// Keeps the token of a [`signed_in`](Self::signed_in) user in `dir`, a file per
    /// authorization server readable by the user only (mode `0600`): the next process uses it
    /// (refreshed when it expires) instead of signing in again, until the server refuses it.
    /// `APP login NAME` signs the user in and keeps it there ahead of time.
    #[cfg(feature = "mcp-oauth")]
    #[must_use]
    pub fn keep_tokens_in(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Some(super::oauth::Identity::User { tokens, .. }) = &mut self.identity {
            *tokens = Some(dir.into());
        }
        self
    }

    /// Mounts the server's tools only, not its resources and prompts (mounted by default,
    /// beside ours: a URI another provider serves fails the mount).
    #[must_use]
    pub fn tools_only(mut self) -> Self {
        self.tools_only = true;
        self
    }

    /// Agrees the protocol through `server/discover` first, speaking 2026-07-28 to a server that
    /// offers it, and `initialize` (2025-11-25) with one that does not. On 2026-07-28 every
    /// request stands alone: it carries the protocol version, the client's capabilities and
    /// its name in `_meta` and in the standard headers (`Mcp-Method`, `Mcp-Name`), a tool
    /// parameter marked `x-mcp-header` is mirrored in its `Mcp-Param-*` header, and the
    /// server's input-required results are answered through our caller's
    /// [`Peer`](crate::tool::peer::Peer) and retried with their request state as it came. The
    /// server's list changes and resource updates are not followed on 2026-07-28 (they come
    /// on `subscriptions/listen` streams, which this client does not open yet): leave it off
    /// for a server whose tools change while it is mounted.
    #[must_use]
    pub fn discover_first(mut self) -> Self {
        self.discover_first = true;
        self
    }

    /// Lets its tools run as tasks here too (`optional`: a task whenever our caller can follow
    /// one), as a tool of ours with `#[tool(task = ...)]`. Whatever this says, a tool the
    /// server itself runs as a task (the tasks extension of 2026-07-28, which this client
    /// declares) is followed to its end within the call: its questions put to our caller, the
    /// server's task cancelled when our call is.
    #[must_use]
    pub fn tasks(mut self, mode: crate::tool::TaskMode) -> Self {
        self.task_mode = mode;
        self
    }

    /// The lifecycle the SDK's client follows with this server.
    pub(super) fn lifecycle(&self) -> rmcp::ClientLifecycleMode {
        use rmcp::model::ProtocolVersion;
        if self.discover_first {
            rmcp::ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            }
        } else {
            rmcp::ClientLifecycleMode::Initialize
        }
    }

    /// How long starting or reaching the server and the MCP handshake may take (default 30 s).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The open session, or a new one; `unavailable` naming the server when it cannot be
    /// reached, or when the last attempt failed too recently: after a failure the next attempt
    /// waits a second, doubling with each further failure up to 30 s.
    pub(super) async fn session(
        &self,
    ) -> Result<Arc<RunningService<RoleClient, Handler>>, ToolError> {
        let mut connection = self.connection.lock().await;
        if let Some(service) = &connection.service {
            if !service.is_transport_closed() {
                return Ok(service.clone());
            }
            connection.service = None;
        }
        if let Some(last) = connection.last_attempt
            && connection.failures > 0
            && last.elapsed() < backoff(connection.failures)
        {
            let why = connection.last_error.clone().unwrap_or_default();
            return Err(self.unavailable(&why));
        }
        connection.last_attempt = Some(Instant::now());
        let challenge = connection.challenge.take();
        let opened = tokio::time::timeout(self.connect_timeout, self.connect(challenge)).await;
        let opened = opened.unwrap_or_else(|_| {
            Err(format!(
                "no answer within {} s",
                self.connect_timeout.as_secs_f64()
            ))
        });
        match opened {
            Ok(service) => {
                let service = Arc::new(service);
                connection.service = Some(service.clone());
                connection.last_error = None;
                connection.failures = 0;
                // Its tools may have changed while it was gone: the registry lists them again.
                if std::mem::replace(&mut connection.was_open, true) {
                    let _ = self.changed.send(());
                }
                Ok(service)
            }
            Err(e) => {
                tracing::warn!(target: "tool_runtime::mcp", server = %self.name, error = %e, "cannot connect to the MCP server");
                connection.last_error = Some(e.clone());
                connection.failures += 1;
                Err(self.unavailable(&e))
            }
        }
    }

    /// What the client answers the server with.
    pub(super) fn handler(&self) -> Handler {
        self.handler_with(Arc::clone(&self.calls))
    }

    /// What the client answers the server with on a connection whose calls in flight are
    /// `calls`.
    pub(super) fn handler_with(&self, calls: Arc<InFlight>) -> Handler {
        Handler {
            server: self.name.clone(),
            changed: self.changed.clone(),
            items: self.item_changes.clone(),
            calls,
        }
    }

    /// A new connection; `challenge`, the server's refusal of the last connection's token.
    async fn connect(
        &self,
        challenge: Option<String>,
    ) -> Result<RunningService<RoleClient, Handler>, String> {
        #[cfg(not(feature = "mcp-oauth"))]
        let _ = challenge;
        let handler = self.handler();
        match &self.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args)
                    .envs(env.iter().map(|(k, v)| (k, v.expose())));
                if let Some(dir) = cwd {
                    cmd.current_dir(dir);
                }
                let (child, _) = rmcp::transport::TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .map_err(|e| format!("cannot start `{command}`: {e}"))?;
                handler
                    .serve_with_lifecycle(child, self.lifecycle())
                    .await
                    .map_err(|e| format!("the MCP handshake failed: {e}"))
            }
            Transport::Http { url, .. } => {
                let config = self.http_config()?;
                #[cfg(feature = "mcp-oauth")]
                if let Some(identity) = &self.identity {
                    let opening = super::oauth::Opening {
                        handler: &|| self.handler(),
                        lifecycle: &|| self.lifecycle(),
                    };
                    return super::oauth::connect(opening, identity, url, config, challenge).await;
                }
                #[cfg(feature = "otel")]
                let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                    super::traced_http::TracedClient::default(),
                    config,
                );
                #[cfg(not(feature = "otel"))]
                let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
                handler
                    .serve_with_lifecycle(transport, self.lifecycle())
                    .await
                    .map_err(|e| format!("the MCP handshake with {url} failed: {e}"))
            }
        }
    }

    /// How the SDK's client reaches an HTTP server: its URL and headers, its bearer token if
    /// one is given.
    pub(super) fn http_config(
        &self,
    ) -> Result<rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig, String>
    {
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let Transport::Http {
            url,
            headers,
            bearer,
        } = &self.transport
        else {
            return Err("not an HTTP server".to_owned());
        };
        let mut custom = std::collections::HashMap::new();
        for (name, value) in headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| format!("header `{name}`: {e}"))?;
            let mut value = reqwest::header::HeaderValue::from_str(value.expose())
                .map_err(|_| format!("header `{name}` has a value HTTP does not allow"))?;
            value.set_sensitive(true);
            custom.insert(name, value);
        }
        let mut config =
            StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
        // Every caller of a gateway shares this one session: as many calls in flight as the
        // server takes, not the SDK's default of 16.
        config.max_concurrent_requests = MAX_IN_FLIGHT;
        if let Some(token) = bearer {
            config = config.auth_header(token.expose().clone());
        }
        Ok(config)
    }

    /// Whether a refused token can be replaced: a mount behind authorization.
    #[cfg_attr(
        not(feature = "mcp-oauth"),
        allow(clippy::unused_self, reason = "a mount signs in only with `mcp-oauth`")
    )]
    pub(super) fn can_sign_in(&self) -> bool {
        #[cfg(feature = "mcp-oauth")]
        return self.identity.is_some();
        #[cfg(not(feature = "mcp-oauth"))]
        false
    }

    /// Whether `e` is the server refusing the session's token (`401`), or the scope of a
    /// signed-in user's (`403` `insufficient_scope`), for a mount that can get another: the
    /// connection is then dropped, and the next one signs in again, answering the server's
    /// challenge. A request tries so at most [`SIGN_INS`] times.
    #[cfg_attr(
        not(feature = "mcp-oauth"),
        allow(
            clippy::unused_async,
            reason = "a mount signs in only with `mcp-oauth`"
        )
    )]
    pub(super) async fn signs_in_again(&self, e: &rmcp::ServiceError) -> bool {
        #[cfg(feature = "mcp-oauth")]
        if let Some(identity) = &self.identity
            && let Some(challenge) = super::oauth::challenge_of(identity, e)
        {
            let mut connection = self.connection.lock().await;
            connection.service = None;
            connection.challenge = Some(challenge);
            return true;
        }
        let _ = e;
        false
    }

    /// Closes the open session, so the next call opens a new one.
    #[cfg(feature = "mcp-oauth")]
    pub(super) async fn reconnect(&self) {
        self.connection.lock().await.service = None;
    }

    /// Forgets a session that failed, so the next call opens a new one.
    pub(super) async fn lost(&self, why: &str) {
        let mut connection = self.connection.lock().await;
        connection.service = None;
        connection.last_error = Some(why.to_owned());
    }

    /// The server's URL, over HTTP.
    pub(super) fn url(&self) -> Option<&str> {
        match &self.transport {
            Transport::Http { url, .. } => Some(url),
            Transport::Stdio { .. } => None,
        }
    }

    /// Every tool the server lists, page after page, each request under a client span.
    pub(super) async fn list(
        &self,
        service: &RunningService<RoleClient, Handler>,
    ) -> Result<Vec<rmcp::model::Tool>, rmcp::ServiceError> {
        let mut tools = Vec::new();
        let mut cursor = None;
        loop {
            let sent = Sent::new("tools/list", None, self.url());
            let mut params = PaginatedRequestParams::default().with_cursor(cursor);
            params.meta = sent.meta(None);
            let page = service
                .list_tools(Some(params))
                .instrument(sent.span.clone())
                .await;
            let protocol = protocol_of(service);
            let page = match page {
                Ok(page) => {
                    sent.ended(None, None, protocol.as_deref());
                    page
                }
                Err(e) => {
                    let (error, code) = failure_of(&e);
                    sent.ended(Some(&error), code, protocol.as_deref());
                    return Err(e);
                }
            };
            tools.extend(page.tools);
            cursor = page.next_cursor;
            if cursor.is_none() {
                return Ok(tools);
            }
        }
    }

    pub(super) fn unavailable(&self, why: &str) -> ToolError {
        ToolError::new(
            ErrorKind::UNAVAILABLE,
            format!("MCP server `{}` is not available: {why}", self.name),
        )
    }

    /// A remote tool as ours, or why it is left out.
    pub(super) fn provided(tool: rmcp::model::Tool) -> Result<ToolsetTool, String> {
        let input = Value::Object((*tool.input_schema).clone());
        crate::schema::validate::ArgsValidator::compile(&input)
            .map_err(|e| format!("its input schema does not compile: {e}"))?;
        if let Some(problem) = input["properties"]
            .as_object()
            .and_then(crate::tool::bounds::header_problem)
        {
            return Err(format!(
                "its `x-mcp-header` marks break SEP-2243: {problem}"
            ));
        }
        let description = tool.description.as_deref().unwrap_or_default().to_owned();
        let mut meta = ToolMeta::new(Cow::Owned(tool.name.to_string()), description);
        if let Some(title) = tool
            .title
            .clone()
            .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()))
        {
            meta.title = Cow::Owned(title);
        }
        let hints = tool.annotations.clone().unwrap_or_default();
        let read_only = hints.read_only_hint.unwrap_or(false);
        meta.annotations = Annotations {
            read_only: Some(read_only),
            destructive: Some(!read_only && hints.destructive_hint.unwrap_or(true)),
            idempotent: Some(hints.idempotent_hint.unwrap_or(false)),
            open_world: Some(hints.open_world_hint.unwrap_or(true)),
        };
        // Without an output schema the result is its content blocks, passed on as they are.
        let output = if let Some(s) = tool.output_schema {
            Value::Object((*s).clone())
        } else {
            meta.content = true;
            crate::schema::output_schema_for::<Vec<crate::Content>>()
        };
        Ok(ToolsetTool::new(meta, input, output))
    }
}

impl std::fmt::Debug for RemoteServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, target) = match &self.transport {
            Transport::Stdio { command, .. } => ("stdio", command),
            Transport::Http { url, .. } => ("http", url),
        };
        f.debug_struct("RemoteServer")
            .field("name", &self.name)
            .field(kind, target)
            .finish_non_exhaustive()
    }
}

/// How long to wait before connecting again after `failures` failed attempts in a row.
fn backoff(failures: u32) -> Duration {
    RECONNECT_AFTER
        .saturating_mul(1 << failures.saturating_sub(1).min(8))
        .min(MAX_RECONNECT_AFTER)
}

/// The protocol version agreed with the server.
pub(super) fn protocol_of(service: &RunningService<RoleClient, Handler>) -> Option<String> {
    service
        .peer_info()
        .map(|info| info.protocol_version.as_str().to_owned())
}

/// A failed request's `error.type`: the JSON-RPC code of an error answer (with the code), or
/// `unavailable` when no answer came.
pub(super) fn failure_of(e: &rmcp::ServiceError) -> (String, Option<i32>) {
    match e {
        rmcp::ServiceError::McpError(e) => (e.code.0.to_string(), Some(e.code.0)),
        _ => (ErrorKind::UNAVAILABLE.as_str().to_owned(), None),
    }
}

/// A remote result as ours: `isError` a `tool_failed` error with the server's text; else the
/// structured content, the text, or the content blocks.
pub(super) fn result_of(
    server: &str,
    tool: &str,
    result: CallToolResult,
) -> Result<Value, ToolError> {
    let texts: Option<Vec<&str>> = result
        .content
        .iter()
        .map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    if result.is_error == Some(true) {
        let text = texts.map_or_else(
            || serde_json::to_string(&result.content).unwrap_or_default(),
            |t| t.join("\n"),
        );
        return Err(ToolError::new(
            ErrorKind::TOOL_FAILED,
            format!("`{tool}` of MCP server `{server}` failed: {text}"),
        ));
    }
    match result.structured_content {
        Some(structured) => Ok(structured),
        None => serde_json::to_value(&result.content).map_err(ToolError::internal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconnecting_backs_off_from_a_second_to_thirty() {
        let waits: Vec<u64> = (1..=8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
        assert_eq!(backoff(u32::MAX), MAX_RECONNECT_AFTER);
    }

    #[test]
    fn an_error_result_carries_the_servers_text() {
        let result = CallToolResult::error(vec![ContentBlock::text("disk full")]);
        let e = result_of("files", "write", result).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TOOL_FAILED);
        assert_eq!(
            e.message(),
            "`write` of MCP server `files` failed: disk full"
        );
    }

    #[test]
    fn content_blocks_are_the_result_and_structured_content_wins() {
        let text = CallToolResult::success(vec![ContentBlock::text("hi")]);
        assert_eq!(
            result_of("s", "t", text).unwrap(),
            serde_json::json!([{"type": "text", "text": "hi"}])
        );
        let mut structured = CallToolResult::success(vec![ContentBlock::text("{}")]);
        structured.structured_content = Some(serde_json::json!({"n": 1}));
        assert_eq!(
            result_of("s", "t", structured).unwrap(),
            serde_json::json!({"n": 1})
        );
    }
}
