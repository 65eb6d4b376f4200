#![doc = include_str!("../README.md")]
// Every public item is documented, and `pub` means reachable by users.
#![warn(missing_docs, unreachable_pub)]

// The core, by concern (see ARCHITECTURE.md).
mod catalog;
mod front;
mod layers;
pub mod llm;
mod pipeline;
pub mod prompt;
pub mod registry;
pub mod resource;
pub mod schema;
mod tool;

// Redis as the state several replicas share: rate limits, confirmation tokens, MCP sessions.
#[cfg(feature = "redis")]
pub mod redis;

// PostgreSQL as the database several replicas share: a pool, migrations, the audit.
#[cfg(feature = "postgres")]
pub mod postgres;

// Traces and metrics through OpenTelemetry.
#[cfg(feature = "otel")]
pub mod otel;

// What a tool asks before it reaches the outside world.
#[cfg(feature = "guards")]
pub mod guard;

// Front ends: adapters over the core, never over each other.
#[cfg(feature = "agent")]
pub mod agent;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "mcp")]
pub mod mcp;

// What composes the front ends: the command line with `serve`, `mcp` and `agent`, and the router
// that mounts `/mcp` and `/agent` beside the tool routes.
#[cfg(any(feature = "cli", feature = "http"))]
pub mod app;

// The layers users configure keep short public paths (`tool_runtime::policy`, ...).
pub use catalog::toolset;
pub use layers::{audit, confirm, hooks, limits, policy};

#[cfg(feature = "cli")]
pub use app::App;
pub use futures_util::future::BoxFuture;
pub use registry::Registry;
pub use tokio_util::sync::CancellationToken;
pub use tool::blocking::blocking;
pub use tool::caller::{Caller, ProgressSink, ProgressUpdate, Source};
pub use tool::complete::{Completing, Completion, CompletionRef};
pub use tool::content::{Content, EmbeddedResource};
pub use tool::context::{CallContext, FromCallContext};
pub use tool::definition::{Annotations, Guard, Kind, PendingCall, Tool, ToolMeta};
pub use tool::envelope::{Envelope, EnvelopeMeta};
pub use tool::error::{ErrorKind, ToolError, Violation};
pub use tool::notify;
pub use tool::peer;
pub use tool::secret::Secret;
pub use tool::state::State;
#[doc = include_str!("../docs/prompt-macro.md")]
pub use tool_macros::prompt;
#[doc = include_str!("../docs/resource-macro.md")]
pub use tool_macros::resource;
#[doc = include_str!("../docs/tool-macro.md")]
pub use tool_macros::tool;

/// What a file that defines or serves tools needs: `use tool_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::{
        CallContext, Caller, Envelope, ErrorKind, Registry, Source, State, Tool, ToolError, prompt,
        resource, tool,
    };
}

#[doc(hidden)]
pub mod __private;
