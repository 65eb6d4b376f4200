//! The key-value stores of `[[stores]]` with `kind = "sqlite"`, in the `kv` table.

use rusqlite::{Connection, OptionalExtension, params};

use super::Store;

/// A `[[stores]]` entry of kind `sqlite`: its keys and values in the demo's database, kept
/// across restarts, each store apart from the others.
#[derive(Debug, Clone)]
pub struct SqliteKv {
    store: Store,
    name: String,
}

impl SqliteKv {
    /// The store `name` in `store`'s database.
    #[must_use]
    pub fn new(store: Store, name: impl Into<String>) -> Self {
        Self {
            store,
            name: name.into(),
        }
    }

    fn run<T, F>(
        &self,
        f: F,
    ) -> futures_util::future::BoxFuture<'_, Result<T, tool_runtime::ToolError>>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &str) -> rusqlite::Result<T> + Send + 'static,
    {
        let name = self.name.clone();
        Box::pin(async move { Ok(self.store.run(move |c| Ok(f(c, &name)?)).await?) })
    }
}

impl tool_runtime::toolset::KeyValue for SqliteKv {
    fn read<'a>(
        &'a self,
        key: &'a str,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<Option<serde_json::Value>, tool_runtime::ToolError>,
    > {
        let owned = key.to_owned();
        let read = self.run(move |c, store| {
            c.query_row(
                "SELECT value FROM kv WHERE store = ?1 AND key = ?2",
                params![store, owned],
                |r| r.get::<_, String>(0),
            )
            .optional()
        });
        Box::pin(async move {
            read.await?
                .map(|text| crate::store::parse_stored(&self.name, key, &text))
                .transpose()
        })
    }

    fn write<'a>(
        &'a self,
        key: &'a str,
        value: serde_json::Value,
    ) -> futures_util::future::BoxFuture<'a, Result<(), tool_runtime::ToolError>> {
        let (key, value) = (key.to_owned(), value.to_string());
        let written = self.run(move |c, store| {
            c.execute(
                "INSERT INTO kv (store, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
                params![store, key, value],
            )
        });
        Box::pin(async move { written.await.map(|_| ()) })
    }

    fn list<'a>(
        &'a self,
        prefix: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<Vec<String>, tool_runtime::ToolError>> {
        let prefix = prefix.to_owned();
        self.run(move |c, store| {
            // Compared as text, not with LIKE, whose `%` and `_` a prefix may contain.
            let mut statement = c.prepare(
                "SELECT key FROM kv WHERE store = ?1 AND substr(key, 1, length(?2)) = ?2 ORDER BY key",
            )?;
            let keys = statement.query_map(params![store, prefix], |r| r.get(0))?;
            keys.collect()
        })
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<bool, tool_runtime::ToolError>> {
        let key = key.to_owned();
        let deleted = self.run(move |c, store| {
            c.execute(
                "DELETE FROM kv WHERE store = ?1 AND key = ?2",
                params![store, key],
            )
        });
        Box::pin(async move { Ok(deleted.await? > 0) })
    }
}
