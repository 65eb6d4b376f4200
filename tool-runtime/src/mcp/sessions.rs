//! The sessions of `/mcp`, bounded: the SDK's in-memory session manager, with a cap on the
//! sessions open at once and a short deadline for a new session's client to finish the
//! handshake (`notifications/initialized`). Without them, anyone who can post an `initialize`
//! opens sessions as fast as they can send, each kept for the idle timeout.
//!
//! Behind a load balancer, a replica with a [`replica_id`](ServerOptions::replica_id) makes
//! session ids that start with it (`{id}.{random}`), for the balancer to route on; and with a
//! [session store](ServerOptions::mcp_session_store) the SDK restores here a session another
//! replica made, which is counted like a new one.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager, SessionState, SessionStore,
    SessionStoreError,
};

use crate::layers::server::{EventStoreOption, ServerOptions, SessionLimits};

tokio::task_local! {
    /// Set when [`BoundedSessions`] refuses a session for the cap, for the `/mcp` route whose
    /// request it was (the SDK answers that with a bare 500; the route answers 503).
    static REFUSED_FOR_ROOM: Cell<bool>;
}

/// Runs `call` (a request through the SDK's service) and says whether a session it asked for was
/// refused for the cap.
pub(crate) async fn refused_for_room<F: Future>(call: F) -> (F::Output, bool) {
    REFUSED_FOR_ROOM
        .scope(Cell::new(false), async {
            let output = call.await;
            (output, REFUSED_FOR_ROOM.with(Cell::get))
        })
        .await
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
    /// Every session open, and whether its client has finished the handshake. A session is
    /// counted from the moment its place is taken until it is closed, whoever closes it.
    open: Mutex<HashMap<SessionId, Arc<AtomicBool>>>,
}

/// Why a session could not be opened or used.
#[derive(Debug)]
pub(crate) enum SessionsError {
    /// The cap is reached.
    Full(usize),
    /// The SDK's own session error.
    Local(LocalSessionManagerError),
}

impl std::fmt::Display for SessionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionsError::Full(max) => write!(f, "{max} MCP sessions are open, the most allowed"),
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
            open: Mutex::default(),
        }))
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

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Arc<AtomicBool>>> {
        self.0.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a place for session `id` if the cap allows; `initialized` says whether its
    /// handshake is done (a restored session's is).
    fn count_in(&self, id: &SessionId, initialized: bool) -> bool {
        let mut open = self.open();
        let room = open.len() < self.0.limits.max_sessions;
        if room
            && open
                .insert(id.clone(), Arc::new(AtomicBool::new(initialized)))
                .is_none()
        {
            super::trace::sessions(1);
        }
        room
    }

    /// The cap's refusal, noted for the `/mcp` route.
    fn full(&self) -> SessionsError {
        let _ = REFUSED_FOR_ROOM.try_with(|refused| refused.set(true));
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
        let id: SessionId = format!("{prefix}{}", random_id()).into();
        match self.0.inner.restore_session(id.clone()).await? {
            RestoreOutcome::Restored(transport) => Ok((id, transport)),
            _ => Err(SessionsError::Local(
                LocalSessionManagerError::SessionNotFound(id),
            )),
        }
    }
}

/// 128 random bits as 32 hex digits (a time-and-counter mix where the system has no randomness).
pub(super) fn random_id() -> String {
    use std::fmt::Write;
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes[..8].copy_from_slice(&nanos.to_le_bytes()[..8]);
        bytes[8..].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    }
    bytes.iter().fold(String::with_capacity(32), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
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
        if !self.count_in(&id, false) {
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
                .is_none_or(|done| done.load(Ordering::Relaxed));
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
        Ok(self.0.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        if let JsonRpcMessage::Notification(n) = &message
            && matches!(
                n.notification,
                ClientNotification::InitializedNotification(_)
            )
            && let Some(done) = self.open().get(id)
        {
            done.store(true, Ordering::Relaxed);
        }
        Ok(self.0.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.0.inner.create_standalone_stream(id).await?)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // A session made by another replica, brought here from the store: counted as a new one.
        if self.is_full() {
            return Err(self.full());
        }
        let outcome = self.0.inner.restore_session(id.clone()).await?;
        if matches!(outcome, RestoreOutcome::Restored(_)) && !self.count_in(&id, true) {
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
        Ok(self.0.inner.resume(id, last_event_id).await?)
    }
}

/// A [`SessionStore`] in memory, for MCP servers in one process (tests, a router mounting `/mcp`
/// twice); replicas in several processes need a shared one, such as Redis. Clones share the
/// sessions.
///
/// ```
/// # #[cfg(feature = "http")] {
/// use std::sync::Arc;
/// use tool_runtime::http::ServerOptions;
/// use tool_runtime::mcp::MemorySessionStore;
///
/// let store = Arc::new(MemorySessionStore::default());
/// let a = ServerOptions::default().mcp_session_store(store.clone());
/// let b = ServerOptions::default().mcp_session_store(store);
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemorySessionStore(Arc<Mutex<HashMap<String, SessionState>>>);

impl MemorySessionStore {
    /// The number of sessions kept.
    #[must_use]
    pub fn len(&self) -> usize {
        self.sessions().len()
    }

    /// Whether no session is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionState>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The future the SDK's (`async_trait`) store methods return.
type StoreFuture<'a, T> =
    std::pin::Pin<Box<dyn Future<Output = Result<T, SessionStoreError>> + Send + 'a>>;

impl SessionStore for MemorySessionStore {
    fn load<'a, 'b, 'f>(&'a self, session_id: &'b str) -> StoreFuture<'f, Option<SessionState>>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        let state = self.sessions().get(session_id).cloned();
        Box::pin(std::future::ready(Ok(state)))
    }

    fn store<'a, 'b, 'c, 'f>(
        &'a self,
        session_id: &'b str,
        state: &'c SessionState,
    ) -> StoreFuture<'f, ()>
    where
        'a: 'f,
        'b: 'f,
        'c: 'f,
        Self: 'f,
    {
        self.sessions().insert(session_id.to_owned(), state.clone());
        Box::pin(std::future::ready(Ok(())))
    }

    fn delete<'a, 'b, 'f>(&'a self, session_id: &'b str) -> StoreFuture<'f, ()>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        self.sessions().remove(session_id);
        Box::pin(std::future::ready(Ok(())))
    }
}
