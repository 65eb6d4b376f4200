//! What a gateway keeps for its users' accounts, in PostgreSQL: one row per record
//! (`tool_tokens`, sealed before it gets here), shared by every replica.

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::Postgres;
use crate::tool::error::ToolError;
use crate::toolset::{TokenLock, TokenStore};

/// The component whose migrations create the tokens' table.
pub const TOKENS_COMPONENT: &str = "tool-runtime/tokens";

const MIGRATIONS: &[&str] = &["
CREATE TABLE tool_tokens (
    name text PRIMARY KEY,
    value text NOT NULL,
    expires_at timestamptz
);
CREATE INDEX tool_tokens_expiry ON tool_tokens (expires_at) WHERE expires_at IS NOT NULL;
"];

/// A [`TokenStore`] in PostgreSQL: a record past its lifetime is not read, and is deleted by a
/// later write; a record is taken with `DELETE ... RETURNING`, so one request gets it; a lock
/// is a session advisory lock on a connection of its own, released when the lock is dropped or
/// when its holder's connection ends.
#[derive(Clone, Debug)]
pub struct PostgresTokenStore {
    postgres: Postgres,
}

impl PostgresTokenStore {
    /// Applies the store's migrations (component `tool-runtime/tokens`, the table
    /// `tool_tokens`). Fails when PostgreSQL cannot be reached (`unavailable`, naming it).
    pub async fn start(postgres: &Postgres) -> Result<Self, ToolError> {
        postgres.migrate(TOKENS_COMPONENT, MIGRATIONS).await?;
        Ok(Self {
            postgres: postgres.clone(),
        })
    }
}

/// A lifetime in seconds, for `now() + interval`.
fn seconds(ttl: Option<Duration>) -> Option<f64> {
    ttl.map(|ttl| ttl.as_secs_f64())
}

impl TokenStore for PostgresTokenStore {
    fn get<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move {
            let client = self.postgres.client().await?;
            let row = client
                .query_opt(
                    "SELECT value FROM tool_tokens WHERE name = $1 \
                     AND (expires_at IS NULL OR expires_at > now())",
                    &[&name],
                )
                .await
                .map_err(|e| self.postgres.error(e))?;
            Ok(row.map(|row| row.get(0)))
        })
    }

    fn put<'a>(
        &'a self,
        name: &'a str,
        value: String,
        ttl: Option<Duration>,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            let client = self.postgres.client().await?;
            client
                .execute("DELETE FROM tool_tokens WHERE expires_at < now()", &[])
                .await
                .map_err(|e| self.postgres.error(e))?;
            client
                .execute(
                    "INSERT INTO tool_tokens (name, value, expires_at) \
                     VALUES ($1, $2, now() + make_interval(secs => $3)) \
                     ON CONFLICT (name) DO UPDATE SET value = $2, expires_at = EXCLUDED.expires_at",
                    &[&name, &value, &seconds(ttl)],
                )
                .await
                .map_err(|e| self.postgres.error(e))?;
            Ok(())
        })
    }

    fn take<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move {
            let client = self.postgres.client().await?;
            let row = client
                .query_opt(
                    "DELETE FROM tool_tokens WHERE name = $1 RETURNING value, \
                     (expires_at IS NULL OR expires_at > now())",
                    &[&name],
                )
                .await
                .map_err(|e| self.postgres.error(e))?;
            Ok(row
                .filter(|row| row.get::<_, bool>(1))
                .map(|row| row.get(0)))
        })
    }

    fn delete<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            let client = self.postgres.client().await?;
            client
                .execute("DELETE FROM tool_tokens WHERE name = $1", &[&name])
                .await
                .map_err(|e| self.postgres.error(e))?;
            Ok(())
        })
    }

    fn lock<'a>(
        &'a self,
        name: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<TokenLock, ToolError>> {
        Box::pin(async move {
            let asking = Asking(Some(self.postgres.client().await?));
            let key = format!("tool_tokens:{name}");
            let waited = {
                let client = asking.0.as_ref().expect("not yet answered");
                let sql = "SELECT pg_advisory_lock(hashtextextended($1, 0))";
                tokio::time::timeout(ttl, client.execute(sql, &[&key])).await
            };
            match waited {
                Ok(Ok(_)) => Ok(Box::new(Held {
                    client: Some(asking.answered()),
                    key,
                }) as TokenLock),
                Ok(Err(e)) => {
                    drop(asking.answered());
                    Err(self.postgres.error(e))
                }
                Err(_) => Err(crate::toolset::not_released()),
            }
        })
    }
}

/// A pooled connection whose lock request may still be queued in PostgreSQL. Dropped before
/// the answer (the wait ran out, or the caller gave up), the connection leaves the pool and
/// closes once the answer comes, letting the lock go; back in the pool, it would take the lock
/// when its holder lets go, keep it for good, and make the next request it serves wait.
struct Asking(Option<deadpool_postgres::Client>);

impl Asking {
    /// The connection, its request answered: safe to hold or to pool again.
    fn answered(mut self) -> deadpool_postgres::Client {
        self.0.take().expect("answered once")
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            drop(deadpool_postgres::Client::take(client));
        }
    }
}

/// An advisory lock held on a pooled connection, released (and the connection returned) when
/// dropped.
struct Held {
    client: Option<deadpool_postgres::Client>,
    key: String,
}

impl Drop for Held {
    fn drop(&mut self) {
        let (Some(client), key) = (self.client.take(), std::mem::take(&mut self.key)) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // Nothing to release it on: the connection closes instead, and the lock goes with it.
            drop(deadpool_postgres::Client::take(client));
            return;
        };
        runtime.spawn(async move {
            let released = client
                .execute(
                    "SELECT pg_advisory_unlock(hashtextextended($1, 0))",
                    &[&key],
                )
                .await;
            if released.is_err() {
                // A connection that could not release its lock must not serve again.
                drop(deadpool_postgres::Client::take(client));
            }
        });
    }
}
