//! `RedisTokenStore`: what a gateway keeps for its users' accounts, in Redis, shared by every
//! replica.

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::Redis;
use crate::tool::error::ToolError;
use crate::toolset::{TokenLock, TokenStore};

/// How often a lock held elsewhere is tried again.
const LOCK_POLL: Duration = Duration::from_millis(25);

/// A [`TokenStore`] in Redis: each record is `{prefix}tokens:{name}` (sealed before it gets
/// here), written with `SET` (`PX` for a lifetime), taken with `GETDEL`. A lock is a key set
/// with `SET NX PX` to a value of its holder's own and released only by that holder (a script
/// compares it), so a lock whose time ran out and was taken by another is never released by
/// the first.
#[derive(Debug, Clone)]
pub struct RedisTokenStore {
    redis: Redis,
}

impl RedisTokenStore {
    /// The store on `redis`'s connection (also [`Redis::token_store`]).
    #[must_use]
    pub fn new(redis: Redis) -> Self {
        Self { redis }
    }
}

impl TokenStore for RedisTokenStore {
    fn get<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move {
            let key = self.redis.key(&format!("tokens:{name}"));
            self.redis
                .run("reading a kept token", |mut c| async move {
                    ::redis::cmd("GET").arg(key).query_async(&mut c).await
                })
                .await
        })
    }

    fn put<'a>(
        &'a self,
        name: &'a str,
        value: String,
        ttl: Option<Duration>,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            let key = self.redis.key(&format!("tokens:{name}"));
            self.redis
                .run("keeping a token", |mut c| async move {
                    let mut set = ::redis::cmd("SET");
                    set.arg(key).arg(value);
                    if let Some(ttl) = ttl {
                        set.arg("PX")
                            .arg(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1));
                    }
                    set.query_async::<()>(&mut c).await
                })
                .await
        })
    }

    fn take<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move {
            let key = self.redis.key(&format!("tokens:{name}"));
            self.redis
                .run("taking a kept record", |mut c| async move {
                    ::redis::cmd("GETDEL").arg(key).query_async(&mut c).await
                })
                .await
        })
    }

    fn delete<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            let key = self.redis.key(&format!("tokens:{name}"));
            self.redis
                .run("deleting a kept token", |mut c| async move {
                    ::redis::cmd("DEL").arg(key).query_async::<()>(&mut c).await
                })
                .await
        })
    }

    fn lock<'a>(
        &'a self,
        name: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<TokenLock, ToolError>> {
        Box::pin(async move {
            let key = self.redis.key(&format!("tokens-lock:{name}"));
            let holder = holder_id()?;
            let millis = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
            let deadline = tokio::time::Instant::now().checked_add(ttl);
            loop {
                if self
                    .redis
                    .set_new("locking a token", key.clone(), holder.clone(), millis)
                    .await?
                {
                    return Ok(Box::new(Held {
                        redis: self.redis.clone(),
                        key,
                        holder,
                    }) as TokenLock);
                }
                if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                    return Err(crate::toolset::not_released());
                }
                tokio::time::sleep(LOCK_POLL).await;
            }
        })
    }
}

/// A value no other holder of a lock has: 128 random bits.
fn holder_id() -> Result<String, ToolError> {
    let mut bytes = [0_u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| ToolError::internal(format!("no randomness: {e}")))?;
    Ok(base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        bytes,
    ))
}

/// A lock held in Redis, released when dropped.
struct Held {
    redis: Redis,
    key: String,
    holder: String,
}

impl Drop for Held {
    fn drop(&mut self) {
        let (redis, key, holder) = (
            self.redis.clone(),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.holder),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = redis
                    .run("releasing a token's lock", |mut c| async move {
                        ::redis::Script::new(
                            "if redis.call('GET', KEYS[1]) == ARGV[1] then \
                             return redis.call('DEL', KEYS[1]) else return 0 end",
                        )
                        .key(key)
                        .arg(holder)
                        .invoke_async::<i64>(&mut c)
                        .await
                    })
                    .await;
            });
        }
    }
}
