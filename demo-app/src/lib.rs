//! A device-pairing application built only on `tool-runtime`: its tools, and the SQLite store
//! they share.
//!
//! The tools are registered through `inventory`; [`registry`] builds the registry with the
//! store as state.

pub mod store;
pub mod tools;

use std::path::Path;

use tool_runtime::{BuildError, Registry};

pub use store::Store;

/// The database path when neither `--db` nor `DEMO_APP_DB` is given.
pub const DEFAULT_DB: &str = "./demo-app.db";

/// The registry of exactly the demo app's tools over `store`, listed explicitly (not through
/// `inventory`), so a binary that links other tool crates still serves only these.
pub fn registry(store: Store) -> Result<Registry, BuildError> {
    Registry::builder()
        .without_inventory()
        .tool(tools::device_add::descriptor())
        .tool(tools::device_pair::descriptor())
        .tool(tools::device_list::descriptor())
        .tool(tools::device_revoke::descriptor())
        .state(store)
        .build()
}

/// The database path: `--db PATH` if given, else `DEMO_APP_DB`, else [`DEFAULT_DB`].
#[must_use]
pub fn db_path(flag: Option<&Path>) -> std::path::PathBuf {
    flag.map(Path::to_path_buf)
        .or_else(|| std::env::var_os("DEMO_APP_DB").map(Into::into))
        .unwrap_or_else(|| DEFAULT_DB.into())
}
