//! Who is calling: the [`Caller`] a front end describes, the front end it came through
//! ([`Source`]), where it wants progress reports ([`ProgressSink`]), what a network front end
//! learned of a request (`Requester`, `Identity`), and the request ids made when none came.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio_util::sync::CancellationToken;

use crate::tool::ask::Ask;
use crate::tool::peer::Peer;
use crate::tool::state::StateMap;

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

impl Source {
    /// The source named `name` ([`as_str`](Self::as_str)'s names).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        [
            Source::Cli,
            Source::Http,
            Source::Mcp,
            Source::Agent,
            Source::Internal,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
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
    pub(super) source: Source,
    pub(super) principal: Option<String>,
    pub(super) roles: Vec<String>,
    pub(super) scopes: Option<Vec<String>>,
    pub(super) request_id: Option<String>,
    pub(super) trace_id: Option<String>,
    pub(super) confirm: bool,
    pub(super) confirmation: Option<String>,
    pub(super) dry_run: bool,
    pub(super) strict_nulls: bool,
    pub(super) progress: Option<Arc<dyn ProgressSink>>,
    pub(super) peer: Option<Arc<dyn Peer>>,
    pub(super) ask: Option<Arc<dyn Ask>>,
    pub(super) cancel: Option<CancellationToken>,
    pub(super) extensions: Option<Arc<StateMap>>,
}

impl Caller {
    /// An anonymous caller from `source`.
    #[must_use]
    pub fn new(source: Source) -> Self {
        Self {
            source,
            principal: None,
            roles: Vec::new(),
            scopes: None,
            request_id: None,
            trace_id: None,
            confirm: false,
            confirmation: None,
            dry_run: false,
            strict_nulls: false,
            progress: None,
            peer: None,
            ask: None,
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

    /// The OAuth scopes the caller's token grants. A caller given scopes may call only the
    /// items whose [`scopes`](crate::tool::ItemOptions::scopes) they cover; one never given
    /// (the command line, a server without authentication, Rust code) is not limited by
    /// scopes.
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The OAuth scopes given with [`scopes`](Self::scopes); `None` for a caller not limited
    /// by scopes.
    #[must_use]
    pub fn granted_scopes(&self) -> Option<&[String]> {
        self.scopes.as_deref()
    }

    /// The request id to use instead of a generated one (e.g. from an `x-request-id` header).
    #[must_use]
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// The W3C trace id (32 hex digits) of the trace this call belongs to, such as the one in
    /// an HTTP request's `traceparent` header: audit records carry it.
    #[must_use]
    pub fn trace_id(mut self, trace_id: impl Into<String>) -> Self {
        self.trace_id = Some(trace_id.into());
        self
    }

    /// Confirms a destructive call up front (`--yes`, `"confirm": true`).
    #[must_use]
    pub fn confirm(mut self, confirm: bool) -> Self {
        self.confirm = confirm;
        self
    }

    /// Confirms a destructive call with the token of its `confirmation_required` answer
    /// (see [`confirm`](crate::layers::confirm)): the call runs if the token was issued for this tool,
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
    /// sampling and elicitation requests. See [`peer`](crate::tool::peer).
    #[must_use]
    pub fn peer(mut self, peer: Arc<dyn Peer>) -> Self {
        self.peer = Some(peer);
        self
    }

    /// Who puts a question to the person behind this caller when a call needs confirmation
    /// (see [`confirm`](crate::layers::confirm)): asked, the call runs on a yes, ends as
    /// `confirmation_declined` on a no, and as `confirmation_required` when no one can be
    /// asked. A caller without one is answered `confirmation_required`, as HTTP's callers are.
    #[must_use]
    pub fn asking(mut self, ask: Arc<dyn Ask>) -> Self {
        self.ask = Some(ask);
        self
    }

    /// The caller's side of the call, if set.
    pub(crate) fn given_peer(&self) -> Option<&Arc<dyn Peer>> {
        self.peer.as_ref()
    }

    /// Who asks the person behind this caller, if anyone.
    pub(crate) fn ask(&self) -> Option<&Arc<dyn Ask>> {
        self.ask.as_ref()
    }

    /// Whether this caller confirms its call (`confirm`, or a confirmation token).
    #[must_use]
    pub fn confirms(&self) -> bool {
        self.confirm || self.confirmation.is_some()
    }

    /// Whether this caller asks for a dry run.
    #[must_use]
    pub fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    /// The roles given.
    pub(crate) fn given_roles(&self) -> &[String] {
        &self.roles
    }

    /// This caller as the one of the task `id`: the task's id as its request id, its
    /// cancellation and its peer, and no progress sink or `Ask` of the request that started it,
    /// which ends before the task does.
    pub(crate) fn for_task(
        mut self,
        id: &str,
        cancel: CancellationToken,
        peer: Arc<dyn Peer>,
    ) -> Self {
        self.request_id = Some(id.to_owned());
        self.cancel = Some(cancel);
        self.peer = Some(peer);
        self.progress = None;
        self.ask = None;
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
    /// with [`CallContext::extension`](crate::CallContext::extension): per-request facts a
    /// front end knows and a tool may need (the chat an agent run serves, the user it speaks
    /// for). A second value of the same type replaces the first. Unlike registry
    /// [`State`](crate::State), it belongs to this caller only, so concurrent callers never see
    /// each other's.
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

    /// The principal set with [`principal`](Self::principal), if any.
    #[must_use]
    pub fn given_principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    /// The token set with [`cancellation`](Self::cancellation), if any.
    pub(crate) fn cancellation_token(&self) -> Option<&CancellationToken> {
        self.cancel.as_ref()
    }

    /// The request id set with [`request_id`](Self::request_id), if any.
    #[must_use]
    pub fn given_request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caller")
            .field("source", &self.source)
            .field("principal", &self.principal)
            .field("roles", &self.roles)
            .field("scopes", &self.scopes)
            .field("request_id", &self.request_id)
            .field("confirm", &self.confirm)
            .field("dry_run", &self.dry_run)
            .finish_non_exhaustive()
    }
}

/// A request id unique within this process and unlikely to collide across processes:
/// a random per-process prefix and a counter, cheaper to make than a UUID.
pub(crate) fn next_request_id() -> String {
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
    // On every HTTP request's path: `itoa`, not `format!`. At least six digits, so ids sort
    // by number for the first million.
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n);
    let mut id = String::with_capacity(prefix.len() + 20);
    id.push_str(prefix);
    for _ in digits.len()..6 {
        id.push('0');
    }
    id.push_str(digits);
    id
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
}
