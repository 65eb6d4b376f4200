//! The per-call handles a tool can use.
//!
//! A front end describes the caller with a [`Caller`]; the pipeline turns it into a
//! [`CallContext`] (adding the registry's state, a request id if none came, and a cancellation
//! token) that tools receive as an injected `CallContext` or `&CallContext` parameter.

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use serde_json::{Map, Value};

use crate::tool::caller::{Caller, ProgressSink, ProgressUpdate, Source, next_request_id};
use crate::tool::error::ToolError;
use crate::tool::peer::{
    Elicited, InputRequest, InputResponse, LogLevel, Peer, Root, Sample, Sampled,
    elicitation_schema, unsupported,
};
use crate::tool::state::{State, StateKey, StateMap};

impl Caller {
    /// The context of a call by this caller, over the registry's `state`.
    pub(crate) fn into_context(self, state: Arc<StateMap>) -> CallContext {
        CallContext {
            inner: Arc::new(ContextInner {
                request_id: self.request_id.unwrap_or_else(next_request_id),
                trace_id: self.trace_id,
                source: self.source,
                principal: self.principal,
                roles: self.roles,
                scopes: self.scopes,
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
                asked: std::sync::atomic::AtomicU32::new(0),
            }),
        }
    }
}

#[allow(
    clippy::struct_excessive_bools,
    reason = "independent facts of one call, each read by name"
)]
struct ContextInner {
    request_id: String,
    trace_id: Option<String>,
    source: Source,
    principal: Option<String>,
    roles: Vec<String>,
    scopes: Option<Vec<String>>,
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
    /// How many requests the call put to its caller without naming them: their keys.
    asked: std::sync::atomic::AtomicU32,
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

    /// The W3C trace id of the trace the call belongs to, if its caller sent one
    /// ([`Caller::trace_id`]).
    #[must_use]
    pub fn trace_id(&self) -> Option<&str> {
        self.inner.trace_id.as_deref()
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

    /// The OAuth scopes the caller's token grants; `None` for a caller not limited by scopes
    /// ([`Caller::scopes`]).
    #[must_use]
    pub fn scopes(&self) -> Option<&[String]> {
        self.inner.scopes.as_deref()
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
                trace_id: i.trace_id.clone(),
                source: i.source,
                principal: i.principal.clone(),
                roles: i.roles.clone(),
                scopes: i.scopes.clone(),
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
                asked: std::sync::atomic::AtomicU32::new(0),
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

    /// Ends the stream that carries this call's messages to its caller, while the call goes
    /// on: over MCP's streamable HTTP, the event stream of the `tools/call` request, which the
    /// client resumes with `Last-Event-ID` to receive the rest and the answer from the server's
    /// event store ([`ServerOptions::mcp_event_store`](crate::http::ServerOptions::mcp_event_store)). A
    /// long call can end its stream so that no connection stays open for it (SSE polling).
    /// Returns whether there was such a stream to end: not on stdio, nor over HTTP without an
    /// event store, nor for other callers.
    #[allow(clippy::must_use_candidate)] // Reason: it acts; whether it could is for those who ask.
    pub fn close_stream(&self) -> bool {
        self.inner
            .peer
            .as_ref()
            .is_some_and(|peer| peer.close_stream())
    }

    /// Asks the caller's model for a completion (MCP sampling). Fails with
    /// [`ErrorKind::UNSUPPORTED`](crate::ErrorKind::UNSUPPORTED) when the caller offers none.
    ///
    /// Over MCP 2026-07-28 the request goes back to the client with the call's answer (an
    /// input-required result) and the call runs again from the top when the answer comes;
    /// see [`question`](Self::question).
    pub async fn sample(&self, request: Sample) -> Result<Sampled, ToolError> {
        self.question(&self.numbered("sampling"))
            .sample(request)
            .await
    }

    /// Asks the caller's user for a `T` (MCP elicitation), showing `message`. The form is
    /// `T`'s schema: a struct of flat fields (strings, numbers, booleans, enums), each with its
    /// doc comment as the description. Fails with
    /// [`ErrorKind::UNSUPPORTED`](crate::ErrorKind::UNSUPPORTED) when the caller cannot ask, and with
    /// [`ErrorKind::INVALID_REQUEST`](crate::ErrorKind::INVALID_REQUEST) when the answer is not a `T`.
    /// Over MCP 2026-07-28, see [`question`](Self::question).
    pub async fn elicit<T>(&self, message: impl Into<String>) -> Result<Elicited<T>, ToolError>
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema,
    {
        self.question(&self.numbered("elicitation"))
            .elicit(message)
            .await
    }

    /// [`elicit`](Self::elicit) with the form's JSON Schema written out: for forms no Rust
    /// type describes (titled enums, multi-selects, defaults).
    pub async fn elicit_with(
        &self,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<Elicited<Map<String, Value>>, ToolError> {
        self.question(&self.numbered("elicitation"))
            .elicit_with(message, schema)
            .await
    }

    /// The caller's roots (MCP `roots/list`): the directories or other locations its side
    /// works in. Fails with [`ErrorKind::UNSUPPORTED`](crate::ErrorKind::UNSUPPORTED) when the
    /// caller offers none.
    pub async fn roots(&self) -> Result<Vec<Root>, ToolError> {
        self.question(&self.numbered("roots")).roots().await
    }

    /// A request to the caller named `key`.
    ///
    /// The name matters where the caller answers with the call made again: an MCP client of
    /// protocol 2026-07-28 receives the call's unanswered requests in an input-required
    /// result, keyed by name, and calls again with the answers under the same names. The tool
    /// then runs again **from the top** with the answers given back, so whatever it did before
    /// its question happens again: ask before acting. Requests made without a name
    /// ([`elicit`](Self::elicit), [`sample`](Self::sample), [`roots`](Self::roots)) are numbered
    /// in the order the call makes them, which is the same on every run of a tool that asks
    /// the same way each time.
    ///
    /// ```
    /// use tool_runtime::tool::peer::Elicited;
    /// use tool_runtime::{CallContext, ToolError, tool};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Name {
    ///     name: String,
    /// }
    ///
    /// /// Greets the user by the name they give.
    /// #[tool]
    /// async fn greet(ctx: &CallContext) -> Result<String, ToolError> {
    ///     // Asked first: on 2026-07-28 the call ends here until the answer comes.
    ///     let name = ctx.question("user_name").elicit::<Name>("What is your name?").await?;
    ///     Ok(match name {
    ///         Elicited::Accepted(n) => format!("Hello, {}!", n.name),
    ///         Elicited::Declined | Elicited::Cancelled => "Hello!".to_owned(),
    ///     })
    /// }
    /// ```
    ///
    /// Several requests awaited together (`tokio::join!`) go out together, in one result.
    #[must_use]
    pub fn question<'a>(&'a self, key: &'a str) -> Question<'a> {
        Question { ctx: self, key }
    }

    /// The key of the call's next unnamed request of `kind`.
    fn numbered(&self, kind: &str) -> String {
        let n = self
            .inner
            .asked
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("{kind}-{}", n + 1)
    }

    async fn ask(&self, key: &str, request: InputRequest) -> Result<InputResponse, ToolError> {
        let what = match &request {
            InputRequest::Sample(_) => "sampling",
            InputRequest::Elicit { .. } => "elicitation",
            InputRequest::ListRoots => "roots",
        };
        match &self.inner.peer {
            Some(peer) => peer.ask(key, request).await,
            None => Err(unsupported(what)),
        }
    }

    /// Registered state of type `T`.
    #[must_use]
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.inner.state.get::<T>()
    }

    /// Where this call publishes changes clients follow: a resource's contents, the set of
    /// resources or prompts ([`Notifier`](crate::tool::notify::Notifier)). A context made outside a registry
    /// has a notifier nobody hears.
    #[must_use]
    pub fn notifier(&self) -> Arc<dyn crate::tool::notify::Notifier> {
        self.inner
            .state
            .get::<crate::tool::notify::Notifications>()
            .map_or_else(
                || Arc::new(crate::tool::notify::MemoryNotifier::new()) as _,
                |n| Arc::clone(&n.0),
            )
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

    /// Makes this call a task here, if it runs as one and its tool waits for this point
    /// (`#[tool(task = "...", detach = "explicit")]`): the caller is answered with the task,
    /// and the call goes on as it, its questions from here on the task's. Before this point the
    /// call answers in its request, and a question is asked as any call asks (over MCP, by an
    /// input-required round that runs the tool again from the top): gather input, then detach,
    /// then do the long work. Anywhere else (a call that is no task, one that is a task from its
    /// start, a dry run, a second `detach`) it does nothing.
    ///
    /// # Errors
    ///
    /// The task store's, when it cannot keep the task: the call is still in its request.
    pub async fn detach(&self) -> Result<(), ToolError> {
        if self.dry_run() {
            return Ok(());
        }
        match self.extension::<DetachHook>() {
            Some(hook) => hook.0.detach().await,
            None => Ok(()),
        }
    }
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("request_id", &self.inner.request_id)
            .field("source", &self.inner.source)
            .field("principal", &self.inner.principal)
            .field("roles", &self.inner.roles)
            .field("scopes", &self.inner.scopes)
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

/// A named request to the caller: see [`CallContext::question`].
#[derive(Clone, Copy)]
pub struct Question<'a> {
    ctx: &'a CallContext,
    key: &'a str,
}

impl fmt::Debug for Question<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Question").field("key", &self.key).finish()
    }
}

impl Question<'_> {
    /// [`CallContext::sample`], under this name.
    pub async fn sample(self, request: Sample) -> Result<Sampled, ToolError> {
        match self
            .ctx
            .ask(self.key, InputRequest::Sample(request))
            .await?
        {
            InputResponse::Sampled(sampled) => Ok(sampled),
            _ => Err(mismatched("sampling")),
        }
    }

    /// [`CallContext::elicit`], under this name.
    pub async fn elicit<T>(self, message: impl Into<String>) -> Result<Elicited<T>, ToolError>
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

    /// [`CallContext::elicit_with`], under this name.
    pub async fn elicit_with(
        self,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<Elicited<Map<String, Value>>, ToolError> {
        let request = InputRequest::Elicit {
            message: message.into(),
            schema,
        };
        match self.ctx.ask(self.key, request).await? {
            InputResponse::Elicited(answer) => Ok(answer),
            _ => Err(mismatched("elicitation")),
        }
    }

    /// [`CallContext::roots`], under this name.
    pub async fn roots(self) -> Result<Vec<Root>, ToolError> {
        match self.ctx.ask(self.key, InputRequest::ListRoots).await? {
            InputResponse::Roots(roots) => Ok(roots),
            _ => Err(mismatched("roots")),
        }
    }
}

/// Where a call may become a task ([`CallContext::detach`]): what the runner of a tool of
/// `#[tool(detach = "explicit")]` gives its call.
pub(crate) trait Detach: Send + Sync + 'static {
    /// Makes the call a task, once.
    fn detach(&self) -> BoxFuture<'_, Result<(), ToolError>>;
}

/// A call's [`Detach`], as its extension.
pub(crate) struct DetachHook(pub(crate) Arc<dyn Detach>);

/// A peer that answered a request with another kind of answer.
fn mismatched(what: &str) -> ToolError {
    ToolError::internal(format_args!(
        "the caller answered the {what} request with an answer of another kind"
    ))
}
