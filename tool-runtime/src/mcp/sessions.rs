//! The sessions of `/mcp`, bounded: the SDK's in-memory session manager, with a cap on the
//! sessions open at once and a short deadline for a new session's client to finish the
//! handshake (`notifications/initialized`). Without them, anyone who can post an `initialize`
//! opens sessions as fast as they can send, each kept for the idle timeout.

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
    ServerSseMessage, SessionId, SessionManager,
};

use crate::layers::server::{ServerOptions, SessionLimits};

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
        inner.session_config.keep_alive = Some(limits.idle_timeout);
        Self(Arc::new(State {
            inner,
            limits,
            open: Mutex::default(),
        }))
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
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Counted before the session is made (no work for a refused one) and again as it is
        // counted in, which decides: concurrent `initialize`s cannot overshoot the cap.
        let max = self.0.limits.max_sessions;
        let full = || {
            let _ = REFUSED_FOR_ROOM.try_with(|refused| refused.set(true));
            Err(SessionsError::Full(max))
        };
        if self.is_full() {
            return full();
        }
        let (id, transport) = self.0.inner.create_session().await?;
        let counted = {
            let mut open = self.open();
            let room = open.len() < max;
            if room {
                open.insert(id.clone(), Arc::default());
            }
            room
        };
        if !counted {
            let _ = self.0.inner.close_session(&id).await;
            return full();
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
        self.open().remove(id);
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

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.0.inner.resume(id, last_event_id).await?)
    }
}
