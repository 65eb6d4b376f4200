//! Where a gateway keeps what it holds for its users' accounts at mounted servers: sealed records
//! by name, some with a lifetime, taken once, and locks ([`TokenStore`]; [`MemoryTokens`] in this
//! process, the Redis and PostgreSQL engines for replicas).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use crate::tool::error::ToolError;

/// A lock a [`TokenStore`] holds until it is dropped.
pub type TokenLock = Box<dyn Send>;

/// The storage under a gateway's users' accounts: sealed records by name, some with a
/// lifetime. Every replica of a gateway shares one, so a sign-in that began on one replica ends
/// on another, and a token got through one serves the user's calls through all.
pub trait TokenStore: Send + Sync + 'static {
    /// The record `name`, unless there is none or it expired.
    fn get<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<String>, ToolError>>;

    /// Sets the record `name`, for `ttl` when given, else until it is deleted.
    fn put<'a>(
        &'a self,
        name: &'a str,
        value: String,
        ttl: Option<Duration>,
    ) -> BoxFuture<'a, Result<(), ToolError>>;

    /// The record `name`, removed in the same step: what only one request may use.
    fn take<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<String>, ToolError>>;

    /// Removes the record `name`.
    fn delete<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<(), ToolError>>;

    /// Holds the lock `name` across every replica until the lock returned is dropped (or, if
    /// its holder died, `ttl` passed): a token is refreshed by one request at a time. Waits at
    /// most `ttl` for another holder to let go, then fails `unavailable`; a request that gave
    /// up waiting leaves nothing behind that could take the lock later.
    fn lock<'a>(
        &'a self,
        name: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<TokenLock, ToolError>>;
}

/// A [`TokenStore`] in this process's memory: for one replica; gone when it ends.
#[derive(Default)]
pub struct MemoryTokens {
    records: Mutex<Records>,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// The records, each with when it expires, and how many were alive at the last sweep.
#[derive(Default)]
struct Records {
    map: HashMap<String, (String, Option<Instant>)>,
    swept: usize,
}

impl std::fmt::Debug for MemoryTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTokens").finish_non_exhaustive()
    }
}

impl MemoryTokens {
    fn records(&self) -> std::sync::MutexGuard<'_, Records> {
        self.records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl TokenStore for MemoryTokens {
    fn get<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        let now = Instant::now();
        let value = self
            .records()
            .map
            .get(name)
            .filter(|(_, until)| until.is_none_or(|until| until > now))
            .map(|(value, _)| value.clone());
        Box::pin(std::future::ready(Ok(value)))
    }

    fn put<'a>(
        &'a self,
        name: &'a str,
        value: String,
        ttl: Option<Duration>,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        let now = Instant::now();
        let mut records = self.records();
        // Expired records are swept once the map has doubled since the last sweep: each write
        // costs O(1) on average, and the map holds at most twice what is alive.
        if records.map.len() >= 2 * records.swept.max(64) {
            records
                .map
                .retain(|_, (_, until)| until.is_none_or(|until| until > now));
            records.swept = records.map.len();
        }
        records
            .map
            .insert(name.to_owned(), (value, ttl.map(|ttl| now + ttl)));
        Box::pin(std::future::ready(Ok(())))
    }

    fn take<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        let now = Instant::now();
        let value = self
            .records()
            .map
            .remove(name)
            .filter(|(_, until)| until.is_none_or(|until| until > now))
            .map(|(value, _)| value);
        Box::pin(std::future::ready(Ok(value)))
    }

    fn delete<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<(), ToolError>> {
        self.records().map.remove(name);
        Box::pin(std::future::ready(Ok(())))
    }

    fn lock<'a>(
        &'a self,
        name: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<TokenLock, ToolError>> {
        let lock = {
            let mut locks = self
                .locks
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // Locks nobody holds or waits on go, so the map stays as large as the refreshes
            // under way.
            locks.retain(|_, lock| Arc::strong_count(lock) > 1);
            Arc::clone(locks.entry(name.to_owned()).or_default())
        };
        Box::pin(async move {
            match tokio::time::timeout(ttl, lock.lock_owned()).await {
                Ok(held) => Ok(Box::new(held) as TokenLock),
                Err(_) => Err(not_released()),
            }
        })
    }
}

/// The error of a lock that its holder did not let go of in time.
pub(crate) fn not_released() -> ToolError {
    ToolError::new(
        crate::ErrorKind::UNAVAILABLE,
        "a token's lock was not released in time",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_records_expire_are_taken_once_and_locks_wait() {
        let store = MemoryTokens::default();
        store
            .put("a", "1".into(), Some(Duration::from_millis(30)))
            .await
            .unwrap();
        store.put("b", "2".into(), None).await.unwrap();
        assert_eq!(store.get("a").await.unwrap().as_deref(), Some("1"));
        assert_eq!(store.take("b").await.unwrap().as_deref(), Some("2"));
        assert_eq!(store.take("b").await.unwrap(), None);
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert_eq!(store.get("a").await.unwrap(), None);
        let held = store.lock("refresh", Duration::from_secs(5)).await.unwrap();
        let second = store.lock("refresh", Duration::from_millis(30)).await;
        assert_eq!(
            second.err().map(|e| e.kind().to_string()).as_deref(),
            Some("unavailable"),
            "a second holder waits, for its time only"
        );
        drop(held);
        let _again = store.lock("refresh", Duration::from_secs(5)).await.unwrap();
    }
}
