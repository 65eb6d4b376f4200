//! Turn an ordinary `async fn` into a tool: a JSON Schema of its input and output, a validator
//! that enforces exactly that schema, and a registration every front end (CLI, HTTP, MCP, an
//! LLM agent loop) finds without a hand-written list. Every call, whatever its source, passes
//! one pipeline ([`Registry::call`]) where validation, policy, confirmation, limits, time-outs,
//! panic isolation, audit and tracing live once.
//!
//! ```standalone_crate
//! use tool_runtime::prelude::*;
//!
//! /// Add two integers.
//! ///
//! /// Returns their sum.
//! #[tool(annotations(read_only))]
//! async fn add(
//!     /// The first term
//!     a: i64,
//!     /// The second term
//!     #[arg(default = 1, range(min = -100, max = 100))]
//!     b: i64,
//! ) -> i64 {
//!     a + b
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = Registry::builder().build().unwrap();
//! let envelope = registry
//!     .call("add", serde_json::json!({"a": 2}), Caller::new(Source::Internal))
//!     .await;
//! assert_eq!(envelope.result(), Some(&serde_json::json!(3)));
//! # }
//! ```
//!
//! Front ends (cargo features, all on by default): [`cli`] (`App`: a clap subcommand per tool,
//! plus `serve` and `mcp`), [`http`] (an axum router with OpenAPI 3.1), [`mcp`] (the Model
//! Context Protocol over stdio and streamable HTTP, through the official `rmcp` SDK).
//!
//! See the README for the macro's options, the coercion policy and the error types.

// The core, by concern (see ARCHITECTURE.md).
mod layers;
pub mod llm;
mod pipeline;
mod registry;
pub mod schema;
mod tool;

// Front ends: adapters over the core, never over each other.
#[cfg(feature = "agent")]
pub mod agent;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "mcp")]
pub mod mcp;

// The public modules keep their short paths (`tool_runtime::policy`, ...); the private ones are
// named here so the crate reads them as `crate::context`, `crate::hooks`, ...
use layers::hooks;
pub use layers::{audit, confirm, limits, output_cap, policy, safety};
pub use registry::provider;
use schema::{parsed, validate};
pub use tool::secret;
use tool::{blocking, context, definition, envelope, error, state};

pub use blocking::blocking;
#[cfg(feature = "cli")]
pub use cli::App;
pub use context::FromCallContext;
pub use context::{CallContext, Caller, Identity, ProgressSink, ProgressUpdate, Requester, Source};
#[doc(hidden)]
pub use definition::ParsedCall;
pub use definition::PendingCall;
pub use definition::{
    Annotations, DEFAULT_TIMEOUT, Guard, ParamHint, Tool, ToolDescriptor, ToolMeta,
};
pub use envelope::{Envelope, EnvelopeMeta};
pub use error::{MAX_VIOLATIONS, ToolError, Violation, kind};
pub use futures_util::future::BoxFuture;
pub use hooks::{CallHook, CallObserver, CompletedCall, HookPoint, Permit, StartingCall};
pub use registry::{
    BuildError, BuildProblem, RegisteredTool, Registry, RegistryBuilder, RegistryError, ToolRef,
    is_valid_name, is_valid_param_name,
};
pub use secret::Secret;
pub use state::{State, StateKey, StateMap};
pub use tokio_util::sync::CancellationToken;
pub use tool_macros::tool;

/// What a file that defines or serves tools needs: `use tool_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::{
        CallContext, Caller, Envelope, Registry, Source, State, Tool, ToolError, tool,
    };
}

#[doc(hidden)]
pub mod __private;
