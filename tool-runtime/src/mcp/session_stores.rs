//! The stores of `/mcp`'s sessions: [`bound`], the store of the options as the SDK uses it,
//! keeping each session's binding with it, and [`MemorySessionStore`] for servers in one
//! process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};

use super::binding::Binding;
use super::sessions::{BoundedSessions, requester, restoring};
#[cfg(doc)]
use crate::front::server::ServerOptions;

/// The SDK's session store for `sessions`: the store of their options, if any, keeping each
/// session's binding with it.
pub(super) fn bound(sessions: &BoundedSessions) -> Option<Arc<dyn SessionStore>> {
    let inner = sessions.inner_store()?;
    Some(Arc::new(BoundStore {
        inner,
        sessions: sessions.clone(),
    }))
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

/// The [session store](ServerOptions::mcp_session_store) of `/mcp`, as the SDK uses it: each
/// session kept with its [`Binding`] (in its `initialize` parameters' `_meta`, taken out again
/// when it is read), and read only for its owner, so that a replica restores a session only for
/// the caller it answers, bound as it was.
struct BoundStore {
    inner: Arc<dyn SessionStore>,
    sessions: BoundedSessions,
}

impl SessionStore for BoundStore {
    fn load<'a, 'b, 'f>(&'a self, session_id: &'b str) -> StoreFuture<'f, Option<SessionState>>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        Box::pin(async move {
            let Some(mut state) = self.inner.load(session_id).await? else {
                return Ok(None);
            };
            let binding = Binding::take(&mut state).filter(|b| b.owner == requester());
            let Some(binding) = binding else {
                return Ok(None);
            };
            restoring(session_id, binding);
            Ok(Some(state))
        })
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
        Box::pin(async move {
            let mut state = state.clone();
            // A session closed meanwhile is kept unbound: no one's, never restored.
            if let Some(binding) = self.sessions.binding(session_id) {
                binding.put(&mut state);
            }
            self.inner.store(session_id, &state).await
        })
    }

    fn delete<'a, 'b, 'f>(&'a self, session_id: &'b str) -> StoreFuture<'f, ()>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        self.inner.delete(session_id)
    }
}
