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

// The layers users configure keep short public paths (`tool_runtime::policy`, ...); inside the
// crate every module is named by its full path.
pub use catalog::provider;
pub use layers::{audit, confirm, limits, output_cap, policy, safety};
pub use tool::secret;

pub use catalog::{
    BuildError, BuildProblem, RegisteredTool, ToolRef, is_valid_name, is_valid_param_name,
};
#[cfg(feature = "cli")]
pub use cli::App;
pub use futures_util::future::BoxFuture;
pub use layers::hooks::{CallHook, CallObserver, CompletedCall, HookPoint, Permit, StartingCall};
pub use registry::{Registry, RegistryBuilder};
pub use tokio_util::sync::CancellationToken;
pub use tool::blocking::blocking;
pub use tool::context::FromCallContext;
pub use tool::context::{
    CallContext, Caller, Identity, ProgressSink, ProgressUpdate, Requester, Source,
};
#[doc(hidden)]
pub use tool::definition::ParsedCall;
pub use tool::definition::PendingCall;
pub use tool::definition::{
    Annotations, DEFAULT_TIMEOUT, Guard, ParamHint, Tool, ToolDescriptor, ToolMeta,
};
pub use tool::envelope::{Envelope, EnvelopeMeta};
pub use tool::error::{MAX_VIOLATIONS, ToolError, Violation, kind};
pub use tool::secret::Secret;
pub use tool::state::{State, StateKey, StateMap};
pub use tool_macros::tool;

/// What a file that defines or serves tools needs: `use tool_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::{
        CallContext, Caller, Envelope, Registry, Source, State, Tool, ToolError, tool,
    };
}

#[doc(hidden)]
pub mod __private;
