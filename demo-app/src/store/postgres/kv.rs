//! The key-value stores of `[[stores]]` with `kind = "postgres"`, in the `kv` table.

use futures_util::future::BoxFuture;
use tool_runtime::ToolError;
use tool_runtime::postgres::Postgres;
use tool_runtime::postgres::tokio_postgres::Row;
use tool_runtime::postgres::tokio_postgres::types::ToSql;

/// A `[[stores]]` entry of kind `postgres`: its keys and values in the demo's PostgreSQL
/// database, shared by every replica on it, each store apart from the others.
#[derive(Debug, Clone)]
pub struct PostgresKv {
    postgres: Postgres,
    name: String,
}

impl PostgresKv {
    /// The store `name` in `postgres` (whose schema `Stores::postgres` migrated).
    #[must_use]
    pub fn new(postgres: Postgres, name: impl Into<String>) -> Self {
        Self {
            postgres,
            name: name.into(),
        }
    }

    /// The rows `sql` answers with this store's name as `$1` and `params` from `$2` on.
    async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, ToolError> {
        let e = |e| self.postgres.error(e);
        let client = self.postgres.client().await?;
        let statement = client.prepare_cached(sql).await.map_err(e)?;
        let mut all: Vec<&(dyn ToSql + Sync)> = vec![&self.name];
        all.extend_from_slice(params);
        client.query(&statement, &all).await.map_err(e)
    }
}

impl tool_runtime::toolset::KeyValue for PostgresKv {
    fn read<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<serde_json::Value>, ToolError>> {
        Box::pin(async move {
            let rows = self
                .query(
                    "SELECT value FROM kv WHERE store = $1 AND key = $2",
                    &[&key],
                )
                .await?;
            let Some(row) = rows.first() else {
                return Ok(None);
            };
            let text: String = row.try_get(0).map_err(|e| self.postgres.error(e))?;
            crate::store::parse_stored(&self.name, key, &text).map(Some)
        })
    }

    fn write<'a>(
        &'a self,
        key: &'a str,
        value: serde_json::Value,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            self.query(
                "INSERT INTO kv (store, key, value) VALUES ($1, $2, $3)
                 ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
                &[&key, &value.to_string()],
            )
            .await
            .map(drop)
        })
    }

    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<String>, ToolError>> {
        Box::pin(async move {
            // Compared as text, not with LIKE, whose `%` and `_` a prefix may contain; ordered
            // by code point, as the SQLite and memory stores order.
            let rows = self
                .query(
                    "SELECT key FROM kv WHERE store = $1 AND starts_with(key, $2)
                     ORDER BY key COLLATE \"C\"",
                    &[&prefix],
                )
                .await?;
            rows.iter()
                .map(|row| row.try_get(0))
                .collect::<Result<_, _>>()
                .map_err(|e| self.postgres.error(e))
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, ToolError>> {
        Box::pin(async move {
            let rows = self
                .query(
                    "DELETE FROM kv WHERE store = $1 AND key = $2 RETURNING key",
                    &[&key],
                )
                .await?;
            Ok(!rows.is_empty())
        })
    }
}
