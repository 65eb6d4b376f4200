//! `RedisConfirmationStore`: confirmation tokens in Redis, each redeemed once by any replica.

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::Redis;
use crate::layers::confirm::{ConfirmationStore, TokenBinding};
use crate::tool::error::ToolError;

/// A [`ConfirmationStore`] in Redis: a token issued by one replica is redeemed by any other,
/// once. Each token is `{prefix}confirm:{token}` holding its [`TokenBinding`] as JSON, written
/// with `SET NX PX` (expiring with the token) and taken with `GETDEL`, so two replicas racing to
/// redeem one token cannot both get it.
#[derive(Debug, Clone)]
pub struct RedisConfirmationStore {
    redis: Redis,
}

impl RedisConfirmationStore {
    /// The store on `redis`'s connection (also [`Redis::confirmation_store`]).
    #[must_use]
    pub fn new(redis: Redis) -> Self {
        Self { redis }
    }
}

impl ConfirmationStore for RedisConfirmationStore {
    fn put<'a>(
        &'a self,
        token: &'a str,
        binding: &'a TokenBinding,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            let key = self.redis.key(&format!("confirm:{token}"));
            let value = serde_json::to_string(binding).map_err(ToolError::internal)?;
            let millis = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
            if self
                .redis
                .set_new("keeping a confirmation token", key, value, millis)
                .await?
            {
                Ok(())
            } else {
                Err(ToolError::internal(
                    "a confirmation token was issued twice; it is kept once",
                ))
            }
        })
    }

    fn take<'a>(
        &'a self,
        token: &'a str,
    ) -> BoxFuture<'a, Result<Option<TokenBinding>, ToolError>> {
        Box::pin(async move {
            let key = self.redis.key(&format!("confirm:{token}"));
            let value: Option<String> = self
                .redis
                .run("redeeming a confirmation token", |mut c| async move {
                    ::redis::cmd("GETDEL").arg(key).query_async(&mut c).await
                })
                .await?;
            value
                .map(|v| serde_json::from_str(&v).map_err(ToolError::internal))
                .transpose()
        })
    }
}
