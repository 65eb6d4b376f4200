//! Who is calling, and the per-call handles a tool can use.
//!
//! A front end describes the caller with a [`Caller`]; the pipeline turns it into a
//! [`CallContext`] (adding the registry's state, a request id if none came, and a cancellation
//! token) that tools receive as an injected `CallContext` or `&CallContext` parameter.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio_util::sync::CancellationToken;

use serde_json::{Map, Value};

use crate::tool::error::ToolError;
use crate::tool::peer::{
    Elicited, LogLevel, Peer, Sample, Sampled, elicitation_schema, unsupported,
};
use crate::tool::state::{State, StateKey, StateMap};

/// Which front end a call came through. Policies use it (e.g. "the agent may not call
/// destructive tools"); audit records and traces carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Source {
    /// The command line.
    Cli,
    /// The HTTP API.
    Http,
    /// The Model Context Protocol server.
    Mcp,
    /// An LLM agent loop.
    Agent,
    /// Rust code calling the registry directly (tests, embedding applications).
    Internal,
}

impl Source {
    /// The lower-case name used in logs, audit records and envelopes.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Cli => "cli",
            Source::Http => "http",
            Source::Mcp => "mcp",
            Source::Agent => "agent",
            Source::Internal => "internal",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One progress report from a tool: `progress` out of `total` (if known), with a message.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// Work done so far, in whatever unit the tool counts.
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// A short human-readable note.
    pub message: Option<String>,
}

/// Where a front end wants progress reports to go (a terminal bar, MCP notifications, ...).
pub trait ProgressSink: Send + Sync + 'static {
    /// Receives one report. Called on the tool's task; keep it quick.
    fn report(&self, update: ProgressUpdate);
}

/// The caller as a front end describes it, before the pipeline takes over.
///
/// ```
/// use tool_runtime::{Caller, Source};
/// let caller = Caller::new(Source::Http)
///     .principal("alice")
///     .roles(["admin"])
///     .request_id("req-1")
///     .confirm(true);
/// assert_eq!(caller.source(), Source::Http);
/// ```
#[derive(Clone)]
pub struct Caller {
    source: Source,
    principal: Option<String>,
    roles: Vec<String>,
    request_id: Option<String>,
    confirm: bool,
    confirmation: Option<String>,
    dry_run: bool,
    strict_nulls: bool,
    progress: Option<Arc<dyn ProgressSink>>,
    peer: Option<Arc<dyn Peer>>,
    cancel: Option<CancellationToken>,
    extensions: Option<Arc<StateMap>>,
}

impl Caller {
    /// An anonymous caller from `source`.
    #[must_use]
    pub fn new(source: Source) -> Self {
        Self {
            source,
            principal: None,
            roles: Vec::new(),
            request_id: None,
            confirm: false,
            confirmation: None,
            dry_run: false,
            strict_nulls: false,
            progress: None,
            peer: None,
            cancel: None,
            extensions: None,
        }
    }

    /// The authenticated principal (a user or service name).
    #[must_use]
    pub fn principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// The principal's roles.
    #[must_use]
    pub fn roles<I, S>(mut self, roles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.roles = roles.into_iter().map(Into::into).collect();
        self
    }

    /// The request id to use instead of a generated one (e.g. from an `x-request-id` header).
    #[must_use]
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// Confirms a destructive call up front (`--yes`, `"confirm": true`).
    #[must_use]
    pub fn confirm(mut self, confirm: bool) -> Self {
        self.confirm = confirm;
        self
    }

    /// Confirms a destructive call with the token of its `confirmation_required` answer
    /// (see [`confirm`](crate::confirm)): the call runs if the token was issued for this tool,
    /// these arguments and this principal, has not expired and was not used.
    #[must_use]
    pub fn confirmation(mut self, token: impl Into<String>) -> Self {
        self.confirmation = Some(token.into());
        self
    }

    /// Asks for a preview without side effects, for tools that support dry runs.
    #[must_use]
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// Takes arguments as OpenAI's strict mode makes a model write them: a caller shown the
    /// tools lowered for OpenAI (`GET /tools?format=openai`, `llm::specs`) sends `null` for an
    /// optional field it leaves out, which the canonical schema refuses. With this, the pipeline
    /// drops those `null`s before validating (as [`llm::accept`](crate::llm::accept) does);
    /// without it, validation is exactly the advertised schema.
    #[must_use]
    pub fn strict_nulls(mut self, strict_nulls: bool) -> Self {
        self.strict_nulls = strict_nulls;
        self
    }

    /// Where the tool's progress reports go.
    #[must_use]
    pub fn progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        self.progress = Some(sink);
        self
    }

    /// The caller's side of the call: where the tool's log messages go, who answers its
    /// sampling and elicitation requests. See [`peer`](crate::peer).
    #[must_use]
    pub fn peer(mut self, peer: Arc<dyn Peer>) -> Self {
        self.peer = Some(peer);
        self
    }

    /// A token the front end cancels when the caller goes away (a closed connection, an MCP
    /// `notifications/cancelled`). The tool's future is then dropped.
    #[must_use]
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Attaches a value of type `T` to every call made with this caller, for tools to read
    /// with [`CallContext::extension`]: per-request facts a front end knows and a tool may
    /// need (the chat an agent run serves, the user it speaks for). A second value of the same
    /// type replaces the first. Unlike registry [`State`], it belongs to this caller only, so
    /// concurrent callers never see each other's.
    #[must_use]
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        let map = self.extensions.get_or_insert_with(Default::default);
        Arc::make_mut(map).insert(Arc::new(value));
        self
    }

    /// The front end this caller came through.
    #[must_use]
    pub fn source(&self) -> Source {
        self.source
    }

    /// The token set with [`cancellation`](Self::cancellation), if any.
    pub(crate) fn cancellation_token(&self) -> Option<&CancellationToken> {
        self.cancel.as_ref()
    }

    pub(crate) fn into_context(self, state: Arc<StateMap>) -> CallContext {
        CallContext {
            inner: Arc::new(ContextInner {
                request_id: self.request_id.unwrap_or_else(next_request_id),
                source: self.source,
                principal: self.principal,
                roles: self.roles,
                confirm: self.confirm,
                confirmation: self.confirmation,
                dry_run: self.dry_run,
                strict_nulls: self.strict_nulls,
                progress: self.progress,
                peer: self.peer,
                // A child: the pipeline cancels it on time-out without touching the caller's.
                // Without one from the caller, the token is made only if the tool asks for it.
                caller_cancels: self.cancel.is_some(),
                cancel: self
                    .cancel
                    .map(|t| std::sync::OnceLock::from(t.child_token()))
                    .unwrap_or_default(),
                state,
                extensions: self.extensions,
            }),
        }
    }
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caller")
            .field("source", &self.source)
            .field("principal", &self.principal)
            .field("roles", &self.roles)
            .field("request_id", &self.request_id)
            .field("confirm", &self.confirm)
            .field("dry_run", &self.dry_run)
            .finish_non_exhaustive()
    }
}

/// Who an authenticated caller is: a principal and its roles.
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The principal's name.
    pub principal: String,
    /// Its roles.
    pub roles: Vec<String>,
}

/// What a network front end learned about a request before any handler ran: its request id
/// and, behind authentication, who sent it. The HTTP front layer leaves it in the request's
/// extensions; handlers behind it (the HTTP routes, MCP over HTTP) read it there.
#[cfg(feature = "http")]
#[derive(Debug, Clone)]
pub struct Requester {
    /// The request id: the request's own `x-request-id`, or a new one.
    pub id: String,
    /// The authenticated caller; `None` without authentication.
    pub identity: Option<Identity>,
}

#[cfg(feature = "http")]
impl Requester {
    /// The caller this request speaks for, from `source`.
    #[must_use]
    pub fn caller(&self, source: Source) -> Caller {
        let mut caller = Caller::new(source).request_id(self.id.clone());
        if let Some(who) = &self.identity {
            caller = caller
                .principal(who.principal.clone())
                .roles(who.roles.clone());
        }
        caller
    }
}

/// A request id unique within this process and unlikely to collide across processes:
/// a random per-process prefix and a counter. Cheaper than a UUID per call.
pub(crate) fn next_request_id() -> String {
    use std::fmt::Write as _;
    static PREFIX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let prefix = PREFIX.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        // std seeds `RandomState` from the OS per process: a random prefix without a new dependency.
        #[allow(clippy::cast_possible_truncation)] // Reason: 32 random bits are enough here.
        let bits = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish() as u32;
        format!("req-{bits:08x}-")
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // On every HTTP request's path: the digits by hand, `format!` costs several times more.
    let mut id = String::with_capacity(prefix.len() + 20);
    id.push_str(prefix);
    if n < 1_000_000 {
        let mut digits = [b'0'; 6];
        let mut rest = n;
        for d in digits.iter_mut().rev() {
            *d = b'0' + u8::try_from(rest % 10).unwrap_or(0);
            rest /= 10;
        }
        id.push_str(std::str::from_utf8(&digits).unwrap_or("000000"));
    } else {
        let _ = write!(id, "{n}");
    }
    id
}

#[allow(
    clippy::struct_excessive_bools,
    reason = "independent facts of one call, each read by name"
)]
struct ContextInner {
    request_id: String,
    source: Source,
    principal: Option<String>,
    roles: Vec<String>,
    confirm: bool,
    confirmation: Option<String>,
    dry_run: bool,
    strict_nulls: bool,
    progress: Option<Arc<dyn ProgressSink>>,
    peer: Option<Arc<dyn Peer>>,
    cancel: std::sync::OnceLock<CancellationToken>,
    caller_cancels: bool,
    state: Arc<StateMap>,
    extensions: Option<Arc<StateMap>>,
}

/// Everything a tool may know about the call it serves: the caller, the request id, a
/// cancellation token, a progress reporter, and the registry's state. Cheap to clone.
///
/// Declare a `ctx: &CallContext` (or `CallContext`) parameter to receive it.
#[derive(Clone)]
pub struct CallContext {
    inner: Arc<ContextInner>,
}

impl CallContext {
    /// The request id: the caller's if it sent one, else generated.
    #[must_use]
    pub fn request_id(&self) -> &str {
        &self.inner.request_id
    }

    /// The front end the call came through.
    #[must_use]
    pub fn source(&self) -> Source {
        self.inner.source
    }

    /// The authenticated principal, if any.
    #[must_use]
    pub fn principal(&self) -> Option<&str> {
        self.inner.principal.as_deref()
    }

    /// The principal's roles.
    #[must_use]
    pub fn roles(&self) -> &[String] {
        &self.inner.roles
    }

    /// Whether the principal has `role`.
    #[must_use]
    pub fn has_role(&self, role: &str) -> bool {
        self.inner.roles.iter().any(|r| r == role)
    }

    /// Whether the caller confirmed a destructive call.
    #[must_use]
    pub fn confirmed(&self) -> bool {
        self.inner.confirm
    }

    /// Whether the caller asked for a preview without side effects.
    #[must_use]
    pub fn dry_run(&self) -> bool {
        self.inner.dry_run
    }

    /// Whether the arguments may carry strict mode's `null`s ([`Caller::strict_nulls`]).
    pub(crate) fn strict_nulls(&self) -> bool {
        self.inner.strict_nulls
    }

    /// The confirmation token the caller sent, if any.
    pub(crate) fn confirmation_token(&self) -> Option<&str> {
        self.inner.confirmation.as_deref()
    }

    /// The same caller asking for a dry run: the preview of a call that needs confirmation.
    pub(crate) fn for_preview(&self) -> CallContext {
        let i = &self.inner;
        CallContext {
            inner: Arc::new(ContextInner {
                request_id: i.request_id.clone(),
                source: i.source,
                principal: i.principal.clone(),
                roles: i.roles.clone(),
                confirm: false,
                confirmation: None,
                dry_run: true,
                strict_nulls: i.strict_nulls,
                progress: None,
                peer: None,
                cancel: std::sync::OnceLock::new(),
                caller_cancels: false,
                state: i.state.clone(),
                extensions: i.extensions.clone(),
            }),
        }
    }

    /// Cancelled when the caller goes away or the call times out. Long-running tools can
    /// `select!` on `ctx.cancellation().cancelled()` to stop early and clean up.
    #[must_use]
    pub fn cancellation(&self) -> &CancellationToken {
        self.inner.cancel.get_or_init(CancellationToken::new)
    }

    /// Cancels the token, if anyone made it (a time-out).
    pub(crate) fn cancel(&self) {
        if let Some(token) = self.inner.cancel.get() {
            token.cancel();
        }
    }

    /// Whether the caller brought a cancellation token of its own (the pipeline then watches it).
    pub(crate) fn caller_cancels(&self) -> bool {
        self.inner.caller_cancels
    }

    /// Reports progress to the caller, if its front end shows progress; otherwise does nothing.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(sink) = &self.inner.progress {
            sink.report(ProgressUpdate {
                progress,
                total,
                message: message.map(str::to_owned),
            });
        }
    }

    /// Sends a log message to the caller (over MCP, a `notifications/message` when the
    /// client's level lets it through) and to `tracing`, with the request id.
    pub fn log(&self, level: LogLevel, message: impl Into<Value>) {
        let data = message.into();
        let id = self.request_id();
        match level {
            LogLevel::Debug => tracing::debug!(request_id = id, %data, "tool log"),
            LogLevel::Info | LogLevel::Notice => tracing::info!(request_id = id, %data, "tool log"),
            LogLevel::Warning => tracing::warn!(request_id = id, %data, "tool log"),
            _ => tracing::error!(request_id = id, level = level.as_str(), %data, "tool log"),
        }
        if let Some(peer) = &self.inner.peer {
            peer.log(level, data);
        }
    }

    /// Asks the caller's model for a completion (MCP sampling). Fails with
    /// [`ErrorKind::UNSUPPORTED`](crate::ErrorKind::UNSUPPORTED) when the caller offers none.
    pub async fn sample(&self, request: Sample) -> Result<Sampled, ToolError> {
        match &self.inner.peer {
            Some(peer) => peer.sample(request).await,
            None => Err(unsupported("sampling")),
        }
    }

    /// Asks the caller's user for a `T` (MCP elicitation), showing `message`. The form is
    /// `T`'s schema: a struct of flat fields (strings, numbers, booleans, enums), each with its
    /// doc comment as the description. Fails with
    /// [`ErrorKind::UNSUPPORTED`](crate::ErrorKind::UNSUPPORTED) when the caller cannot ask, and with
    /// [`ErrorKind::INVALID_REQUEST`](crate::ErrorKind::INVALID_REQUEST) when the answer is not a `T`.
    pub async fn elicit<T>(&self, message: impl Into<String>) -> Result<Elicited<T>, ToolError>
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema,
    {
        let schema = elicitation_schema::<T>();
        Ok(match self.elicit_with(message, schema).await? {
            Elicited::Accepted(content) => {
                Elicited::Accepted(serde_json::from_value(Value::Object(content)).map_err(|e| {
                    ToolError::new(
                        crate::ErrorKind::INVALID_REQUEST,
                        format!("the answer to the elicitation does not fit its form: {e}"),
                    )
                })?)
            }
            Elicited::Declined => Elicited::Declined,
            Elicited::Cancelled => Elicited::Cancelled,
        })
    }

    /// [`elicit`](Self::elicit) with the form's JSON Schema written out: for forms no Rust
    /// type describes (titled enums, multi-selects, defaults).
    pub async fn elicit_with(
        &self,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<Elicited<Map<String, Value>>, ToolError> {
        match &self.inner.peer {
            Some(peer) => peer.elicit(message.into(), schema).await,
            None => Err(unsupported("elicitation")),
        }
    }

    /// Registered state of type `T`.
    #[must_use]
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.inner.state.get::<T>()
    }

    /// The value of type `T` the caller attached with [`Caller::extension`], if any.
    ///
    /// ```
    /// use tool_runtime::{CallContext, Caller, Registry, Source};
    ///
    /// #[derive(Debug, PartialEq)]
    /// struct Chat(&'static str);
    ///
    /// /// Which chat is this?
    /// #[tool_runtime::tool]
    /// async fn which_chat(ctx: &CallContext) -> String {
    ///     ctx.extension::<Chat>().map_or("none", |c| c.0).to_owned()
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let registry = Registry::builder()
    ///     .without_inventory()
    ///     .tool(which_chat::descriptor())
    ///     .build()
    ///     .unwrap();
    /// let caller = Caller::new(Source::Agent).extension(Chat("family"));
    /// let envelope = registry.call("which_chat", serde_json::json!({}), caller).await;
    /// assert_eq!(envelope.result(), Some(&serde_json::json!("family")));
    /// # }
    /// ```
    #[must_use]
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.inner.extensions.as_ref()?.get::<T>()
    }
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("request_id", &self.inner.request_id)
            .field("source", &self.inner.source)
            .field("principal", &self.inner.principal)
            .field("roles", &self.inner.roles)
            .field("confirm", &self.inner.confirm)
            .field("dry_run", &self.inner.dry_run)
            .finish_non_exhaustive()
    }
}

/// A parameter the pipeline supplies instead of the caller: `State<T>`, `CallContext` and
/// `&CallContext`. Such parameters never appear in a schema, a flag or a request body.
///
/// Mark a parameter of your own type `#[arg(inject)]` and implement this trait to inject it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be injected into a tool",
    label = "this parameter is marked to be injected",
    note = "injected parameters are `State<T>`, `CallContext`, or a type that implements `FromCallContext`"
)]
pub trait FromCallContext: Sized {
    /// The state type this parameter needs registered, if any; checked when the registry is built.
    const REQUIRES: Option<StateKey> = None;

    /// Produces the value for one call.
    fn from_context(ctx: &CallContext) -> Result<Self, ToolError>;
}

impl<T: Send + Sync + 'static> FromCallContext for State<T> {
    const REQUIRES: Option<StateKey> = Some(StateKey::of::<T>());

    fn from_context(ctx: &CallContext) -> Result<Self, ToolError> {
        ctx.state::<T>().ok_or_else(|| {
            ToolError::internal(format_args!(
                "state `{}` is not registered with the registry",
                std::any::type_name::<T>()
            ))
        })
    }
}

impl FromCallContext for CallContext {
    fn from_context(ctx: &CallContext) -> Result<Self, ToolError> {
        Ok(ctx.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_request_ids_are_distinct() {
        let a = next_request_id();
        let b = next_request_id();
        assert_ne!(a, b);
        // `req-<8 hex digits>-<counter, at least 6 digits>`, the counter increasing.
        let parts = |id: &str| {
            let fields: Vec<&str> = id.split('-').collect();
            assert_eq!(fields.len(), 3, "{id}");
            assert_eq!(fields[0], "req");
            assert!(fields[1].len() == 8 && fields[1].bytes().all(|c| c.is_ascii_hexdigit()));
            assert!(fields[2].len() >= 6 && fields[2].bytes().all(|c| c.is_ascii_digit()));
            (fields[1].to_owned(), fields[2].parse::<u64>().unwrap())
        };
        let ((pa, na), (pb, nb)) = (parts(&a), parts(&b));
        assert_eq!(pa, pb, "one prefix per process");
        assert!(nb > na);
    }

    #[test]
    fn caller_fields_reach_the_context() {
        let ctx = Caller::new(Source::Cli)
            .principal("alice")
            .roles(["admin"])
            .request_id("r1")
            .confirm(true)
            .into_context(Arc::default());
        assert_eq!(ctx.request_id(), "r1");
        assert_eq!(ctx.principal(), Some("alice"));
        assert!(ctx.has_role("admin"));
        assert!(!ctx.has_role("viewer"));
        assert!(ctx.confirmed());
        assert!(!ctx.dry_run());
        assert_eq!(ctx.source().as_str(), "cli");
    }
}
