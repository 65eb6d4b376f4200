#![doc = include_str!("../README.md")]

// The core, by concern (see ARCHITECTURE.md).
mod catalog;
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
pub use catalog::provider;
use layers::hooks;
pub use layers::{audit, confirm, limits, output_cap, policy, safety};
use schema::{parsed, validate};
pub use tool::secret;
use tool::{blocking, context, definition, envelope, error, state};

pub use blocking::blocking;
pub use catalog::{
    BuildError, BuildProblem, RegisteredTool, ToolRef, is_valid_name, is_valid_param_name,
};
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
pub use registry::{Registry, RegistryBuilder};
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
