//! Toolsets: sources of tools that come and go while the registry serves, such as another MCP
//! server or an in-process store, mounted behind the one registry.
//!
//! A toolset has a name, a list of tools, a way to call them, and optionally a stream of
//! change notices. [`Registry::mount`](crate::Registry::mount) adds its tools under the names
//! `{toolset}-{tool}` (shortened to 64 characters with a stable hash when longer); every front end then lists and calls them
//! like any other tool, through the same pipeline (policy, confirmation, limits, audit). When
//! the toolset announces a change, its tools are listed again and replaced in one step.
//!
//! ```
//! use std::sync::Arc;
//! use tool_runtime::toolset::{ToolsetTool, Toolset};
//! use futures_util::future::BoxFuture;
//! use tool_runtime::tool::ToolMeta;
//! use tool_runtime::{CallContext, Registry, ToolError};
//! use serde_json::{json, Value};
//!
//! struct Notes;
//! impl Toolset for Notes {
//!     fn name(&self) -> &str { "notes" }
//!     fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolsetTool>, ToolError>> {
//!         Box::pin(async {
//!             Ok(vec![ToolsetTool::new(
//!                 ToolMeta::new("count", "Count the notes."),
//!                 json!({"type": "object", "additionalProperties": false}),
//!                 json!({"type": "integer"}),
//!             )])
//!         })
//!     }
//!     fn call<'a>(&'a self, _tool: &'a str, _args: Value, _ctx: CallContext)
//!         -> BoxFuture<'a, Result<Value, ToolError>> {
//!         Box::pin(async { Ok(json!(3)) })
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = Arc::new(Registry::builder().without_inventory().build().unwrap());
//! registry.mount(Notes).await.unwrap();
//! assert_eq!(registry.names(), ["notes-count"]);
//! # }
//! ```
#![doc = include_str!("../../docs/toolsets.md")]

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use serde_json::Value;

use crate::tool::context::CallContext;
use crate::tool::definition::ToolMeta;
use crate::tool::error::ToolError;

mod store;
mod tokens;

pub use store::{KeyValue, MAX_KEY, MemoryStore, Store};
#[cfg(all(feature = "mcp-oauth", any(feature = "redis", feature = "postgres")))]
pub(crate) use tokens::not_released;
pub use tokens::{MemoryTokens, TokenLock, TokenStore};

/// One tool as a toolset describes it: its own name in `meta.name` (the registry prefixes
/// it), and its schemas.
#[derive(Debug, Clone)]
pub struct ToolsetTool {
    /// Metadata; `name` is the toolset's own name for the tool.
    pub meta: ToolMeta,
    /// The JSON Schema of its arguments object.
    pub input_schema: Value,
    /// The JSON Schema of its result.
    pub output_schema: Value,
}

impl ToolsetTool {
    /// A tool with these metadata and schemas.
    #[must_use]
    pub fn new(meta: ToolMeta, input_schema: Value, output_schema: Value) -> Self {
        Self {
            meta,
            input_schema,
            output_schema,
        }
    }
}

/// A source of tools mounted into a running [`Registry`](crate::Registry) with
/// [`Registry::mount`](crate::Registry::mount).
pub trait Toolset: Send + Sync + 'static {
    /// The toolset's name, the prefix of its tools' names: `^[A-Za-z_][A-Za-z0-9_-]*$`.
    fn name(&self) -> &str;

    /// Its tools as they are now.
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolsetTool>, ToolError>>;

    /// Calls its tool `tool` (its own name, without the prefix) with validated arguments.
    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: Value,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;

    /// Yields once each time its tools change (the registry then lists them again); ends when
    /// they no longer can. `None` (the default): they never change.
    fn changes(&self) -> Option<BoxStream<'static, ()>> {
        None
    }

    /// How it is doing, for `GET /toolsets` and `toolsets` on the command line. Default:
    /// available, no error.
    fn health(&self) -> BoxFuture<'_, Health> {
        Box::pin(std::future::ready(Health::default()))
    }

    /// Its resources and prompts as they are now (a mounted MCP server serves both), mounted
    /// beside its tools. Their names should start with the toolset's (`{toolset}-{name}`);
    /// resource URIs are kept as they are. Default: none.
    fn items(self: Arc<Self>) -> BoxFuture<'static, Result<ToolsetItems, ToolError>> {
        Box::pin(std::future::ready(Ok(ToolsetItems::default())))
    }

    /// Signs the command line's user in now, for a toolset reached as them (a mounted server
    /// behind OAuth, [`RemoteServer::signed_in`](crate::mcp::RemoteServer::signed_in)): what
    /// to tell them when it is done (where the token is kept). `APP login NAME` calls it.
    /// `None` (the default): it signs no one in.
    fn sign_in(&self) -> Option<BoxFuture<'_, Result<String, ToolError>>> {
        None
    }
}

/// The resources and prompts of a toolset.
#[derive(Default)]
pub struct ToolsetItems {
    /// Its resources and resource templates.
    pub resources: Vec<Arc<dyn crate::resource::Resource>>,
    /// Its prompts.
    pub prompts: Vec<Arc<dyn crate::prompt::Prompt>>,
    /// What it announces while mounted: a resource's update reaches the registry's
    /// subscribers; a change of its resources or prompts has them listed again. `None`: it
    /// announces nothing.
    pub changes: Option<BoxStream<'static, crate::tool::notify::Change>>,
}

impl fmt::Debug for ToolsetItems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolsetItems")
            .field("resources", &self.resources.len())
            .field("prompts", &self.prompts.len())
            .field("changes", &self.changes.is_some())
            .finish()
    }
}

/// What a toolset says of its own state.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Health {
    /// Whether its tools can be called now (a remote server reachable, say).
    pub available: bool,
    /// The last error it met since it last worked, if any.
    pub last_error: Option<String>,
    /// The MCP protocol version agreed with a mounted server's open session, if it has one
    /// (`2025-11-25`, `2026-07-28`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
}

impl Default for Health {
    fn default() -> Self {
        Self {
            available: true,
            last_error: None,
            protocol: None,
        }
    }
}

/// A mounted toolset as [`Registry::toolset_status`](crate::Registry::toolset_status) reports
/// it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ToolsetStatus {
    /// Its name, the prefix of its tools.
    pub name: String,
    /// How many tools it has mounted.
    pub tools: usize,
    /// What it says of itself.
    #[serde(flatten)]
    pub health: Health,
}
