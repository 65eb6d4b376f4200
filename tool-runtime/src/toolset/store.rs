//! Key-value stores as toolsets: [`Store`] gives a named store the tools `NAME-write`,
//! `NAME-read`, `NAME-list` and `NAME-delete` over any [`KeyValue`] storage ([`MemoryStore`]
//! in memory; an application puts its own database behind the trait).

use std::collections::BTreeMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Toolset, ToolsetTool};
use crate::tool::context::CallContext;
use crate::tool::definition::{Annotations, ToolMeta};
use crate::tool::error::{ErrorKind, ToolError};

/// The longest key a store takes, in bytes.
pub const MAX_KEY: usize = 256;

/// Storage behind a [`Store`]: JSON values by string key.
pub trait KeyValue: Send + Sync + 'static {
    /// The value of `key`, if there is one.
    fn read<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Value>, ToolError>>;
    /// Sets `key` to `value`, replacing what was there.
    fn write<'a>(&'a self, key: &'a str, value: Value) -> BoxFuture<'a, Result<(), ToolError>>;
    /// The keys that start with `prefix`, sorted.
    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<String>, ToolError>>;
    /// Removes `key`; whether it was there.
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, ToolError>>;
}

/// A [`KeyValue`] storage in memory: gone when the process ends.
#[derive(Debug, Default)]
pub struct MemoryStore(Mutex<BTreeMap<String, Value>>);

impl MemoryStore {
    fn data(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Value>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl KeyValue for MemoryStore {
    fn read<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Value>, ToolError>> {
        let value = self.data().get(key).cloned();
        Box::pin(async move { Ok(value) })
    }

    fn write<'a>(&'a self, key: &'a str, value: Value) -> BoxFuture<'a, Result<(), ToolError>> {
        self.data().insert(key.to_owned(), value);
        Box::pin(async { Ok(()) })
    }

    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<String>, ToolError>> {
        let keys = self
            .data()
            .range(prefix.to_owned()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, _)| k.clone())
            .collect();
        Box::pin(async move { Ok(keys) })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, ToolError>> {
        let removed = self.data().remove(key).is_some();
        Box::pin(async move { Ok(removed) })
    }
}

/// A named key-value store as a toolset of four tools, each bound to this store's data:
/// `write(key, value)` (any JSON value), `read(key)` (`not_found` when there is none),
/// `list(prefix?)`, and `delete(key)`, which is destructive and so confirmed like any
/// destructive tool. Mounted as `NAME`, they are `NAME-write`, `NAME-read`, ...
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use std::sync::Arc;
/// use tool_runtime::toolset::{MemoryStore, Store};
/// use tool_runtime::{Caller, Registry, Source};
/// use serde_json::json;
///
/// let registry = Arc::new(Registry::builder().without_inventory().build().unwrap());
/// registry.mount(Store::new("notes", MemoryStore::default())).await.unwrap();
/// let caller = || Caller::new(Source::Internal);
/// registry.call("notes-write", json!({"key": "a", "value": [1, 2]}), caller()).await;
/// let read = registry.call("notes-read", json!({"key": "a"}), caller()).await;
/// assert_eq!(read.result(), Some(&json!([1, 2])));
/// # }
/// ```
#[derive(Debug)]
pub struct Store<K> {
    name: String,
    data: K,
}

impl<K: KeyValue> Store<K> {
    /// The store `name` over `data`.
    pub fn new(name: impl Into<String>, data: K) -> Self {
        Self {
            name: name.into(),
            data,
        }
    }
}

fn key_schema() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_KEY, "description": "The key"})
}

fn tool(
    name: &'static str,
    description: &str,
    annotations: Annotations,
    input: Value,
    output: Value,
) -> ToolsetTool {
    let mut meta = ToolMeta::new(name, description.to_owned());
    meta.annotations = annotations;
    ToolsetTool::new(meta, input, output)
}

impl<K: KeyValue> Toolset for Store<K> {
    fn name(&self) -> &str {
        &self.name
    }

    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolsetTool>, ToolError>> {
        let store = &self.name;
        let read_only = Annotations {
            read_only: Some(true),
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(false),
        };
        let tools = vec![
            tool(
                "write",
                &format!(
                    "Store a JSON value under a key in the `{store}` store, replacing any value it had."
                ),
                Annotations {
                    read_only: Some(false),
                    destructive: Some(false),
                    idempotent: Some(true),
                    open_world: Some(false),
                },
                json!({"type": "object", "properties": {"key": key_schema(), "value": {"description": "Any JSON value"}},
                       "required": ["key", "value"], "additionalProperties": false}),
                json!({"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}),
            ),
            tool(
                "read",
                &format!("Read the value stored under a key in the `{store}` store."),
                read_only,
                json!({"type": "object", "properties": {"key": key_schema()}, "required": ["key"], "additionalProperties": false}),
                json!({}),
            ),
            tool(
                "list",
                &format!(
                    "List the keys of the `{store}` store, sorted; only those that start with `prefix` when given."
                ),
                read_only,
                json!({"type": "object", "properties": {"prefix": {"type": "string", "maxLength": MAX_KEY, "default": ""}},
                       "additionalProperties": false}),
                json!({"type": "array", "items": {"type": "string"}}),
            ),
            tool(
                "delete",
                &format!("Delete a key and its value from the `{store}` store."),
                Annotations {
                    read_only: Some(false),
                    destructive: Some(true),
                    idempotent: Some(true),
                    open_world: Some(false),
                },
                json!({"type": "object", "properties": {"key": key_schema()}, "required": ["key"], "additionalProperties": false}),
                json!({"type": "object", "properties": {"deleted": {"type": "boolean"}}, "required": ["deleted"]}),
            ),
        ];
        Box::pin(async move { Ok(tools) })
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: Value,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            // Validated against the schemas above.
            let key = args["key"].as_str().unwrap_or_default();
            match tool {
                "write" => {
                    self.data.write(key, args["value"].clone()).await?;
                    Ok(json!({"key": key}))
                }
                "read" => self.data.read(key).await?.ok_or_else(|| {
                    ToolError::new(
                        ErrorKind::NOT_FOUND,
                        format!("no key `{key}` in the `{}` store", self.name),
                    )
                }),
                "list" => {
                    let prefix = args["prefix"].as_str().unwrap_or_default();
                    Ok(json!(self.data.list(prefix).await?))
                }
                "delete" => Ok(json!({"deleted": self.data.delete(key).await?})),
                other => Err(ToolError::internal(format!(
                    "a store has no tool `{other}`"
                ))),
            }
        })
    }
}
