//! `RedisSessionStore`: the MCP SDK's session store in Redis, so a session opened on one
//! replica is resumed by any other.

use std::time::Duration;

use futures_util::future::BoxFuture;
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};

use super::Redis;
use crate::tool::error::ToolError;

/// The MCP SDK's [`SessionStore`] in Redis: the `initialize` parameters of each session, as
/// JSON under `{prefix}mcp-session:{id}`, so a replica that gets a request for a session it
/// did not open restores it without a new handshake. `/mcp` keeps in their `_meta` whom the
/// session answers and the key of its event ids' tags, so that a replica restores it for its
/// owner alone, bound as it was. An entry expires `idle` after it was last stored or loaded;
/// `/mcp` loads the entry of a session in use on its replica at most every quarter of `idle`,
/// so it lives as long as the session is used; the SDK deletes it when its client ends the
/// session.
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    redis: Redis,
    idle: Duration,
}

impl RedisSessionStore {
    /// The store on `redis`'s connection (also [`Redis::session_store`]), forgetting sessions
    /// idle for longer than `idle`.
    #[must_use]
    pub fn new(redis: Redis, idle: Duration) -> Self {
        Self { redis, idle }
    }

    fn key(&self, id: &str) -> String {
        self.redis.key(&format!("mcp-session:{id}"))
    }

    fn idle_millis(&self) -> u64 {
        u64::try_from(self.idle.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    /// The session `id`'s state, its expiry renewed; `None` when it is unknown or expired.
    pub async fn load_state(&self, id: &str) -> Result<Option<SessionState>, ToolError> {
        let (key, millis) = (self.key(id), self.idle_millis());
        let value: Option<String> = self
            .redis
            .run("loading an MCP session", |mut c| async move {
                ::redis::cmd("GETEX")
                    .arg(key)
                    .arg("PX")
                    .arg(millis)
                    .query_async(&mut c)
                    .await
            })
            .await?;
        value
            .map(|v| serde_json::from_str(&v).map_err(ToolError::internal))
            .transpose()
    }

    /// Keeps the session `id`'s state for `idle`.
    pub async fn store_state(&self, id: &str, state: &SessionState) -> Result<(), ToolError> {
        let (key, millis) = (self.key(id), self.idle_millis());
        let value = serde_json::to_string(state).map_err(ToolError::internal)?;
        self.redis
            .run("keeping an MCP session", |mut c| async move {
                ::redis::cmd("SET")
                    .arg(key)
                    .arg(value)
                    .arg("PX")
                    .arg(millis)
                    .query_async::<()>(&mut c)
                    .await
            })
            .await
    }

    /// Forgets the session `id`.
    pub async fn delete_state(&self, id: &str) -> Result<(), ToolError> {
        let key = self.key(id);
        self.redis
            .run("ending an MCP session", |mut c| async move {
                ::redis::cmd("DEL").arg(key).query_async::<()>(&mut c).await
            })
            .await
    }
}

// The trait is declared with `async_trait`; these are its methods as that macro writes them.
impl SessionStore for RedisSessionStore {
    fn load<'life0, 'life1, 'async_trait>(
        &'life0 self,
        session_id: &'life1 str,
    ) -> BoxFuture<'async_trait, Result<Option<SessionState>, SessionStoreError>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move { Ok(self.load_state(session_id).await?) })
    }

    fn store<'life0, 'life1, 'life2, 'async_trait>(
        &'life0 self,
        session_id: &'life1 str,
        state: &'life2 SessionState,
    ) -> BoxFuture<'async_trait, Result<(), SessionStoreError>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move { Ok(self.store_state(session_id, state).await?) })
    }

    fn delete<'life0, 'life1, 'async_trait>(
        &'life0 self,
        session_id: &'life1 str,
    ) -> BoxFuture<'async_trait, Result<(), SessionStoreError>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move { Ok(self.delete_state(session_id).await?) })
    }
}
