//! The sessions of `/mcp`, bounded: the SDK's in-memory session manager, with a cap on the
//! sessions open at once and a short deadline for a new session's client to finish the
//! handshake (`notifications/initialized`). Without them, anyone who can post an `initialize`
//! opens sessions as fast as they can send, each kept for the idle timeout.
//!
//! A session answers only the caller that opened it: the principal the HTTP front layer
//! authenticated (whichever of its tokens it sends), or, where no caller is authenticated,
//! every anonymous caller. The `/mcp` route asks [`BoundedSessions::presented`] whose session a
//! request names before the SDK serves it; another's is served as a session that does not
//! exist. The event ids of a session's streams carry a tag keyed by the session, so that
//! `Last-Event-ID` resumes only within the session whose stream sent it.
//!
//! Behind a load balancer, a replica with a [`replica_id`](ServerOptions::replica_id) makes
//! session ids that start with it (`{id}.{random}`), for the balancer to route on; and with a
//! [session store](ServerOptions::mcp_session_store) the SDK restores here a session another
//! replica made, which is counted like a new one. Its owner and the key of its tags are kept in
//! the store with it (`BoundStore` (`session_stores`)), so a restored session is bound as it was. A client's
//! answer to a request another replica sent is offered to the replicas through the
//! [answer relay](ServerOptions::mcp_answer_relay), if there is one.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt as _};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager, SessionStore,
};

use super::binding::{Binding, Owner};
use crate::answers::{AnswerRelay, AnswerTaker};
use crate::front::server::{EventStoreOption, ServerOptions, SessionLimits};

tokio::task_local! {
    /// The request of the `/mcp` route that the SDK is serving.
    static REQUEST: Scope;
}

/// What [`BoundedSessions`] and `BoundStore` (`session_stores`) know of the request the SDK is serving.
struct Scope {
    /// Who sent it.
    owner: Owner,
    /// Its caller, as the pipeline sees it.
    caller: crate::Caller,
    /// The binding of a session read from the store for this request, for the session's
    /// restoration that follows.
    restored: RefCell<Option<(SessionId, Binding)>>,
    /// Set when a session it asked for is refused for the cap (the SDK answers that with a
    /// bare 500; the route answers 503).
    refused: Cell<bool>,
    /// Set to the id of an answer it carried to a request the session never sent here (the SDK
    /// answers that with a bare 500; the route answers 400).
    unasked: RefCell<Option<RequestId>>,
}

/// What the SDK's answer to a request leaves out, for the route to answer instead.
#[derive(Debug, Default)]
pub(crate) struct Refusal {
    /// A session it asked for was refused for the cap.
    pub(crate) full: bool,
    /// It answered, with this id, a request the session never sent from here.
    pub(crate) unasked: Option<RequestId>,
}

/// Runs `call` (a request from `owner`, as `caller`, through the SDK's service) and says what of
/// it was refused beneath the SDK.
pub(crate) async fn serve<F: Future>(
    owner: Owner,
    caller: crate::Caller,
    call: F,
) -> (F::Output, Refusal) {
    let scope = Scope {
        owner,
        caller,
        restored: RefCell::new(None),
        refused: Cell::new(false),
        unasked: RefCell::new(None),
    };
    REQUEST
        .scope(scope, async {
            let output = call.await;
            let refusal = REQUEST.with(|r| Refusal {
                full: r.refused.get(),
                unasked: r.unasked.borrow_mut().take(),
            });
            (output, refusal)
        })
        .await
}

/// Who sent the request being served; anonymous outside the `/mcp` route.
pub(super) fn requester() -> Owner {
    REQUEST
        .try_with(|r| r.owner.clone())
        .unwrap_or(Owner::Anonymous)
}

/// Notes that session `id` was read from the store for the request being served, bound by
/// `binding`, for the session's restoration that follows.
pub(super) fn restoring(id: &str, binding: Binding) {
    let _ = REQUEST.try_with(|r| *r.restored.borrow_mut() = Some((id.into(), binding)));
}

/// The caller of the request being served; none outside the `/mcp` route.
pub(crate) fn caller() -> Option<crate::Caller> {
    REQUEST.try_with(|r| r.caller.clone()).ok()
}

/// The request a client's message answers, if it is an answer (a result or an error).
fn answered_request(message: &ClientJsonRpcMessage) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Response(response) => Some(&response.id),
        JsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    }
}

/// Where a client's answer was taken.
#[derive(Debug, PartialEq, Eq)]
enum Taken {
    /// Here: the request it answers was sent from here.
    Here,
    /// By another replica, through the relay.
    Elsewhere,
}

/// Whose session a request names, as [`BoundedSessions::presented`] finds it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Presented {
    /// No session has the id, here or in the store.
    Unknown,
    /// The sender's own session.
    Theirs,
    /// Another's session, or one whose owner could not be read.
    NotTheirs,
}

/// The session manager `/mcp` runs on: [`LocalSessionManager`] within the MCP session limits of
/// a [`ServerOptions`].
#[derive(Clone)]
pub(crate) struct BoundedSessions(Arc<State>);

struct State {
    inner: LocalSessionManager,
    limits: SessionLimits,
    /// The prefix of the ids of the sessions made here, `{replica_id}.`.
    prefix: Option<String>,
    /// The store of sessions made elsewhere (without the `BoundStore` (`session_stores`) around it).
    store: Option<Arc<dyn SessionStore>>,
    /// Every session open. A session is counted from the moment its place is taken until it
    /// is closed, whoever closes it.
    open: Mutex<HashMap<SessionId, Arc<Open>>>,
    /// What carries an answer to a request another replica sent to that replica.
    relay: Option<Arc<dyn AnswerRelay>>,
    /// How the sessions here take an answer the relay offers; given to the relay once, when
    /// one is opened or restored.
    taker: OnceLock<Arc<AnswerTaker>>,
}

/// A session open here.
struct Open {
    /// Whether its client has finished the handshake.
    initialized: AtomicBool,
    binding: Binding,
    /// When its entry in the store last had its expiry renewed (or was written).
    renewed: Mutex<Instant>,
    /// The ids of the requests sent to its client from here and not yet answered, the oldest
    /// first (at most [`MAX_ASKED`]).
    asked: Mutex<VecDeque<RequestId>>,
}

/// The most requests to its client a session remembers as unanswered; past it the oldest is
/// forgotten, and an answer to it refused.
const MAX_ASKED: usize = 256;

impl Open {
    /// Whether the store's entry is due a renewal, and if so marks it renewed now: at most
    /// once a quarter of the idle time, so an active session never expires there and a busy
    /// one costs the store a write a few times per idle period, not one per message.
    fn renewal_due(&self, idle: Duration) -> bool {
        let mut renewed = self.renewed.lock().unwrap_or_else(PoisonError::into_inner);
        let due = renewed.elapsed() >= idle / 4;
        if due {
            *renewed = Instant::now();
        }
        due
    }
}

/// Why a session could not be opened or used.
#[derive(Debug)]
pub(crate) enum SessionsError {
    /// The cap is reached.
    Full(usize),
    /// The session is another's.
    NotTheirs,
    /// A `Last-Event-ID` not sent in the session.
    OtherEvent,
    /// An answer to a request the session never sent from here.
    Unasked,
    /// The SDK's own session error.
    Local(LocalSessionManagerError),
}

impl std::fmt::Display for SessionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionsError::Full(max) => write!(f, "{max} MCP sessions are open, the most allowed"),
            SessionsError::NotTheirs => f.write_str("no such MCP session"),
            SessionsError::OtherEvent => f.write_str("no event of this MCP session has that id"),
            SessionsError::Unasked => {
                f.write_str("no request this server sent in this MCP session has that id")
            }
            SessionsError::Local(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(e: LocalSessionManagerError) -> Self {
        SessionsError::Local(e)
    }
}

impl std::fmt::Debug for BoundedSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundedSessions")
            .field("open", &self.len())
            .field("limits", &self.0.limits)
            .finish_non_exhaustive()
    }
}

impl BoundedSessions {
    /// Sessions within the limits of `options` ([`ServerOptions::max_sessions`],
    /// [`session_handshake_timeout`](ServerOptions::session_handshake_timeout),
    /// [`session_idle_timeout`](ServerOptions::session_idle_timeout)).
    #[must_use]
    pub(crate) fn new(options: &ServerOptions) -> Self {
        let limits = options.sessions.clone();
        let mut inner = LocalSessionManager::default();
        inner = match &options.event_store {
            EventStoreOption::Memory => {
                inner.with_event_store(Arc::new(super::MemoryEventStore::default()))
            }
            EventStoreOption::Given(store) => inner.with_event_store(store.clone()),
            EventStoreOption::Off => inner,
        };
        inner.session_config.keep_alive = Some(limits.idle_timeout);
        Self(Arc::new(State {
            inner,
            limits,
            prefix: options.replica_id.as_deref().map(|id| format!("{id}.")),
            store: options.session_store.as_ref().map(|s| s.0.clone()),
            open: Mutex::default(),
            relay: options.answer_relay.as_ref().map(|r| r.0.clone()),
            taker: OnceLock::new(),
        }))
    }

    /// The store of sessions made elsewhere, if any (without the bindings kept with them).
    pub(super) fn inner_store(&self) -> Option<Arc<dyn SessionStore>> {
        self.0.store.clone()
    }

    /// Whose session `id` is, for a request from `owner`: as this replica has it open, or else
    /// as the store keeps it. A store that fails to answer makes it no one's. A request in a
    /// session open here renews its entry in the store when due ([`Open::renewal_due`]), in
    /// the background, so that the entry lives as long as the session is used and another
    /// replica can take it over after this one has gone.
    pub(crate) async fn presented(&self, id: &str, owner: &Owner) -> Presented {
        let open = self.open().get(id).cloned();
        match open {
            Some(open) if open.binding.owner == *owner => {
                if let Some(store) = &self.0.store
                    && open.renewal_due(self.0.limits.idle_timeout)
                {
                    // The store's `load` renews an entry's expiry as it reads it.
                    let (store, id) = (store.clone(), id.to_owned());
                    tokio::spawn(async move {
                        if let Err(error) = store.load(&id).await {
                            tracing::warn!(
                                target: "tool_runtime::mcp",
                                %error,
                                "the MCP session store did not renew a session's entry"
                            );
                        }
                    });
                }
                return Presented::Theirs;
            }
            Some(_) => return Presented::NotTheirs,
            None => {}
        }
        let Some(store) = &self.0.store else {
            return Presented::Unknown;
        };
        match store.load(id).await {
            Ok(None) => Presented::Unknown,
            Ok(Some(mut state)) => match Binding::take(&mut state) {
                Some(binding) if binding.owner == *owner => Presented::Theirs,
                _ => Presented::NotTheirs,
            },
            Err(error) => {
                tracing::warn!(
                    target: "tool_runtime::mcp",
                    %error,
                    "the MCP session store did not answer; the session is not served"
                );
                Presented::NotTheirs
            }
        }
    }

    /// Notes a request sent to session `id`'s client, so that its answer is taken.
    fn asking(&self, id: &SessionId, request: RequestId) {
        if let Some(open) = self.open().get(id) {
            let mut asked = open.asked.lock().unwrap_or_else(PoisonError::into_inner);
            if asked.len() == MAX_ASKED {
                asked.pop_front();
            }
            asked.push_back(request);
        }
    }

    /// Whether `answer` answers a request sent to session `id`'s client from here and not yet
    /// answered; if so, the request is answered now.
    fn asked(&self, id: &str, answer: &RequestId) -> bool {
        self.open().get(id).is_some_and(|open| {
            let mut asked = open.asked.lock().unwrap_or_else(PoisonError::into_inner);
            let at = asked.iter().position(|r| r == answer);
            at.and_then(|at| asked.remove(at)).is_some()
        })
    }

    /// Takes `message`, session `id`'s client's answer to the request `answer`, if that request
    /// was sent from here, or else if the relay has another replica take it; else notes the
    /// refusal for the route and says so.
    async fn answered(
        &self,
        id: &SessionId,
        answer: &RequestId,
        message: &ClientJsonRpcMessage,
    ) -> Result<Taken, SessionsError> {
        if self.asked(id, answer) {
            return Ok(Taken::Here);
        }
        if let Some(relay) = &self.0.relay
            && relay.offer(id, message).await
        {
            return Ok(Taken::Elsewhere);
        }
        let _ = REQUEST.try_with(|r| *r.unasked.borrow_mut() = Some(answer.clone()));
        Err(SessionsError::Unasked)
    }

    /// Gives the relay, if any, the way these sessions take the answers it offers, once.
    fn take_relayed(&self) {
        let Some(relay) = &self.0.relay else {
            return;
        };
        let mut given = false;
        let taker = self.0.taker.get_or_init(|| {
            given = true;
            let sessions = Arc::downgrade(&self.0);
            Arc::new(move |id: &str, message: &ClientJsonRpcMessage| {
                Self::take_offered(&sessions, id, message)
            })
        });
        if given {
            relay.take_with(Arc::downgrade(taker));
        }
    }

    /// Takes `message`, an answer of session `id`'s client that reached another replica, if
    /// it answers a request sent from here: the SDK gets it as if it had come here.
    fn take_offered(sessions: &Weak<State>, id: &str, message: &ClientJsonRpcMessage) -> bool {
        let Some(state) = sessions.upgrade() else {
            return false;
        };
        let this = Self(state);
        if !answered_request(message).is_some_and(|answer| this.asked(id, answer)) {
            return false;
        }
        tracing::debug!(
            target: "tool_runtime::mcp",
            "an answer that reached another replica was relayed here, where its request was sent"
        );
        let (id, message): (SessionId, _) = (id.into(), message.clone());
        tokio::spawn(async move {
            if let Err(error) = this.0.inner.accept_message(&id, message).await {
                tracing::warn!(
                    target: "tool_runtime::mcp",
                    %error,
                    "an answer relayed from another replica was not taken"
                );
            }
        });
        true
    }

    /// Session `id`'s binding, while it is open here.
    pub(super) fn binding(&self, id: &str) -> Option<Binding> {
        self.open().get(id).map(|open| open.binding.clone())
    }

    /// Refuses a request about session `id` from anyone but its owner. The `/mcp` route hands
    /// the SDK no such request; this holds should one get through (a session restored by its
    /// owner while another's request for it waited on that).
    fn admit(&self, id: &SessionId) -> Result<(), SessionsError> {
        match self.open().get(id) {
            Some(open) if open.binding.owner != requester() => Err(SessionsError::NotTheirs),
            _ => Ok(()),
        }
    }

    /// `stream` of session `id`, its event ids tagged for the session when an event store
    /// keeps them (without one, an id is the session's own stream's and resumes nothing else).
    fn tagging(
        &self,
        id: &SessionId,
        stream: impl Stream<Item = ServerSseMessage> + Send + Sync + 'static,
    ) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static {
        let binding = self.resumable().then(|| self.binding(id)).flatten();
        let (sessions, id) = (self.clone(), id.clone());
        stream.map(move |event| {
            if let Some(message) = &event.message
                && let JsonRpcMessage::Request(request) = &**message
            {
                sessions.asking(&id, request.id.clone());
            }
            match &binding {
                Some(binding) => binding.tagged(event),
                None => event,
            }
        })
    }

    /// Whether the events of the sessions' streams are kept for clients that resume them.
    #[must_use]
    pub(crate) fn resumable(&self) -> bool {
        self.0.inner.event_store().is_some()
    }

    /// The number of sessions open now.
    #[must_use]
    pub(crate) fn len(&self) -> usize {
        self.open().len()
    }

    /// Whether a new session would be refused now.
    #[must_use]
    pub(crate) fn is_full(&self) -> bool {
        self.len() >= self.0.limits.max_sessions
    }

    /// The most sessions open at once.
    #[must_use]
    pub(crate) fn max_sessions(&self) -> usize {
        self.0.limits.max_sessions
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Arc<Open>>> {
        self.0.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a place for session `id`, bound by `binding`, if the cap allows; `initialized`
    /// says whether its handshake is done (a restored session's is).
    fn count_in(&self, id: &SessionId, initialized: bool, binding: Binding) -> bool {
        self.take_relayed();
        let mut open = self.open();
        let room = open.len() < self.0.limits.max_sessions;
        if room {
            let session = Arc::new(Open {
                initialized: AtomicBool::new(initialized),
                binding,
                renewed: Mutex::new(Instant::now()),
                asked: Mutex::default(),
            });
            if open.insert(id.clone(), session).is_none() {
                super::trace::sessions(1);
            }
        }
        room
    }

    /// The cap's refusal, noted for the `/mcp` route.
    fn full(&self) -> SessionsError {
        let _ = REQUEST.try_with(|r| r.refused.set(true));
        SessionsError::Full(self.0.limits.max_sessions)
    }

    /// A new session: the SDK's, or with a replica id, one under an id that starts with it.
    async fn make_session(
        &self,
    ) -> Result<(SessionId, <Self as SessionManager>::Transport), SessionsError> {
        let Some(prefix) = &self.0.prefix else {
            return Ok(self.0.inner.create_session().await?);
        };
        // The SDK makes no session under an id of ours but one it restores: a fresh id cannot
        // be present already.
        let id: SessionId = format!("{prefix}{}", super::random_id()).into();
        match self.0.inner.restore_session(id.clone()).await? {
            RestoreOutcome::Restored(transport) => Ok((id, transport)),
            _ => Err(SessionsError::Local(
                LocalSessionManagerError::SessionNotFound(id),
            )),
        }
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Counted before the session is made (no work for a refused one) and again as it is
        // counted in, which decides: concurrent `initialize`s cannot overshoot the cap.
        if self.is_full() {
            return Err(self.full());
        }
        let (id, transport) = self.make_session().await?;
        if !self.count_in(&id, false, Binding::new(requester())) {
            let _ = self.0.inner.close_session(&id).await;
            return Err(self.full());
        }
        let this = self.clone();
        let session = id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(this.0.limits.handshake_timeout).await;
            let initialized = this
                .open()
                .get(&session)
                .is_none_or(|open| open.initialized.load(Ordering::Relaxed));
            if !initialized {
                tracing::debug!(
                    target: "tool_runtime::mcp",
                    "closing an MCP session whose client did not finish the handshake"
                );
                let _ = this.close_session(&session).await;
            }
        });
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.0.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.0.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.0.inner.close_session(id).await;
        if self.open().remove(id).is_some() {
            super::trace::sessions(-1);
        }
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.admit(id)?;
        let stream = self.0.inner.create_stream(id, message).await?;
        Ok(self.tagging(id, stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.admit(id)?;
        if let JsonRpcMessage::Notification(n) = &message
            && matches!(
                n.notification,
                ClientNotification::InitializedNotification(_)
            )
            && let Some(open) = self.open().get(id)
        {
            open.initialized.store(true, Ordering::Relaxed);
        }
        if let Some(answer) = answered_request(&message)
            && self.answered(id, answer, &message).await? == Taken::Elsewhere
        {
            return Ok(());
        }
        Ok(self.0.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.admit(id)?;
        let stream = self.0.inner.create_standalone_stream(id).await?;
        Ok(self.tagging(id, stream))
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // A session made by another replica, brought here from the store: counted as a new one,
        // bound as the store keeps it. `BoundStore` (`session_stores`) has just read it for this request, and
        // found it the sender's; without that, it is not restored (the request gets 404).
        let binding = REQUEST
            .try_with(|r| r.restored.borrow_mut().take())
            .ok()
            .flatten()
            .filter(|(restored, _)| *restored == id)
            .map(|(_, binding)| binding);
        let Some(binding) = binding else {
            return Ok(RestoreOutcome::NotSupported);
        };
        if self.is_full() {
            return Err(self.full());
        }
        let outcome = self.0.inner.restore_session(id.clone()).await?;
        if matches!(outcome, RestoreOutcome::Restored(_)) && !self.count_in(&id, true, binding) {
            let _ = self.0.inner.close_session(&id).await;
            return Err(self.full());
        }
        Ok(outcome)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.admit(id)?;
        // The event store finds an event by its id alone: an id resumes here only if its tag is
        // this MCP session's. The SDK answers a failed resumption with an empty stream.
        let last_event_id = if self.resumable() {
            let binding = self.binding(id).ok_or(SessionsError::OtherEvent)?;
            binding
                .untagged(&last_event_id)
                .ok_or(SessionsError::OtherEvent)?
                .to_owned()
        } else {
            last_event_id
        };
        let stream = self.0.inner.resume(id, last_event_id).await?;
        Ok(self.tagging(id, stream))
    }
}
