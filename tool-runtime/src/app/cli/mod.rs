//! The command-line front end: every registered tool becomes a clap subcommand, parsed into
//! JSON arguments, called through the pipeline with caller source `cli`, and its envelope
//! rendered for people (or printed as JSON with `--json`).
//!
//! [`App`](crate::App) is the application around it, with the built-ins that reach the
//! other front ends (`serve`, `mcp`, `agent`); [`command`] is the tools' clap command alone,
//! to embed in a clap application of your own.
//!
//! Exit codes ([`ErrorKind::exit_code`](crate::ErrorKind::exit_code)): 0 success; 1 the tool failed (its own error, `internal`,
//! `timeout`); 2 usage error or invalid arguments; 3 forbidden or confirmation required.

mod args;
mod builtins;
pub(crate) mod call;
pub(crate) mod command;
pub(crate) mod flags;
pub(crate) mod form;
pub(crate) mod items;
pub mod logging;
mod render;
pub(crate) mod tasks;

use std::ffi::OsString;

pub use clap;
pub use command::command;

use crate::registry::Registry;
use crate::tool::caller::{Caller, Source};

pub(crate) use args::params_json;
pub(crate) use builtins::{list_tools, print_schema};
pub(crate) use render::fail;

/// The command line as a caller: source `cli`, no principal, no roles. Every listing the CLI
/// shows and every call it makes starts from it; a call adds `--yes`, `--dry-run`, the terminal
/// as its peer and the progress bar ([`call::call`]).
pub(crate) fn caller() -> Caller {
    Caller::new(Source::Cli)
}

/// While alive, [`blocking`](crate::blocking) runs its work inline on this thread: the
/// current-thread runtime of a one-shot command, where no other call waits and a pool thread
/// would cost more than most queries do.
pub(crate) struct InlineGuard(bool);

impl InlineGuard {
    pub(crate) fn enter() -> Self {
        Self(crate::tool::blocking::INLINE.with(|inline| inline.replace(true)))
    }
}

impl Drop for InlineGuard {
    fn drop(&mut self) {
        crate::tool::blocking::INLINE.with(|inline| inline.set(self.0));
    }
}

/// The JSON arguments the command line makes of a tool's words, for the fuzz targets in
/// `tests/fuzz`. Not public API.
#[doc(hidden)]
pub fn arguments_of<I, T>(
    registry: &Registry,
    tool: &str,
    argv: I,
) -> Result<serde_json::Value, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let tool = registry.get(tool).ok_or("no such tool")?;
    let cmd = command::for_call("app", &tool, false);
    let matches = cmd.try_get_matches_from(argv).map_err(|e| e.to_string())?;
    let (_, sub) = matches.subcommand().ok_or("no subcommand")?;
    args::collect(&tool, sub, &mut std::io::empty()).map_err(|e| e.0)
}
