#![doc = include_str!("../README.md")]
// Every public item is documented, and `pub` means reachable by users.
#![warn(missing_docs, unreachable_pub)]
// On docs.rs, every item a feature gates is marked with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The core, by concern (see ARCHITECTURE.md).
mod catalog;
mod front;
pub mod layers;
pub mod llm;
mod pipeline;
pub mod prompt;
pub mod registry;
pub mod resource;
pub mod schema;
mod task;
pub mod tool;
pub mod toolset;

// Redis as the state several replicas share: rate limits, confirmation tokens, MCP sessions.
#[cfg(feature = "redis")]
pub mod redis;

// A client's answer carried between the replicas serving its MCP session: public in `mcp`.
#[cfg(feature = "mcp")]
mod answers;

// PostgreSQL as the database several replicas share: a pool, migrations, the audit.
#[cfg(feature = "postgres")]
pub mod postgres;

// The roots TLS to Redis and PostgreSQL trusts: the system's, or a CA file of the application's.
#[cfg(any(feature = "redis", feature = "postgres"))]
mod tls;

// Traces and metrics through OpenTelemetry.
#[cfg(feature = "otel")]
pub mod otel;

// What a tool asks before it reaches the outside world.
// Front ends: adapters over the core, never over each other.
#[cfg(feature = "agent")]
pub mod agent;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "mcp")]
pub mod mcp;

// What composes the front ends: the command line with `serve`, `mcp` and `agent`, and the router
// that mounts `/mcp` and `/agent` beside the tool routes.
#[cfg(any(feature = "cli", feature = "http"))]
pub mod app;

// The layers users configure keep short public paths (`tool_runtime::layers::policy`, ...).

#[cfg(feature = "cli")]
pub use app::App;
pub use registry::Registry;
pub use tool::blocking::blocking;
pub use tool::caller::{Caller, Source};
pub use tool::content::Content;
pub use tool::context::CallContext;
pub use tool::definition::Tool;
pub use tool::envelope::Envelope;
pub use tool::error::{ErrorKind, ToolError};
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
