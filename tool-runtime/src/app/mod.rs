//! The application: what composes the front ends, above them all.
//!
//! Each front end serves the registry alone and knows no other: the CLI turns tools into
//! subcommands, [`http`](crate::http) serves the tool routes, [`mcp`](crate::mcp) the MCP
//! server, [`agent`](crate::agent) runs a model over the tools. This module puts them
//! together:
//!
//! - [`App`] (feature `cli`): the command line with a subcommand per tool and the built-ins
//!   that reach the other front ends: `serve` (HTTP, with MCP at `/mcp` and the agent at
//!   `POST /agent`), `mcp` (stdio), `agent` and `chat`.
//! - [`router`] (feature `http`): the tool routes with `/mcp` and `POST /agent` beside them,
//!   behind the same request id, authentication and peer rule: what `serve` serves.
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     tool_runtime::app!()        // name, version and about from your Cargo.toml
//!         .state(42_u64)          // application state for State<T> parameters
//!         .main()                 // parses std::env::args, runs, renders, returns the exit code
//! }
//! ```
//!
//! [`App::main`] starts a tokio runtime fitting the command; in a runtime of your own, use
//! [`App::run`] (`.run().await`).

#[cfg(all(feature = "cli", feature = "agent"))]
mod agent;
#[cfg(all(feature = "http", feature = "agent"))]
mod agent_route;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
mod command_line;
#[cfg(feature = "http")]
mod console;
#[cfg(feature = "cli")]
mod context;
#[cfg(feature = "cli")]
mod dispatch;
#[cfg(feature = "http")]
mod router;
#[cfg(feature = "cli")]
mod scan;
#[cfg(all(feature = "cli", any(feature = "http", feature = "mcp")))]
mod serve;
#[cfg(feature = "cli")]
mod toolsets;

#[cfg(feature = "cli")]
pub use command_line::App;
#[cfg(all(feature = "cli", feature = "agent"))]
pub use context::AgentFlags;
#[cfg(all(feature = "cli", feature = "http"))]
pub use context::Background;
#[cfg(feature = "cli")]
pub use context::{AppContext, SetupError};
#[cfg(feature = "http")]
pub use router::router;
#[cfg(all(feature = "http", feature = "agent"))]
pub use router::router_with_agent;
