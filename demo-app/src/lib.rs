//! A device-pairing application built only on `tool-runtime`: its tools, and the stores they
//! share, on an embedded SQLite database or on PostgreSQL.
//!
//! The tools are registered through `inventory`; [`registry`] builds the registry with the
//! devices of a [`Stores`] as state.

pub mod assistant;
pub mod config;
pub mod prompts;
pub mod resources;
pub mod store;
pub mod tools;

use tool_runtime::Registry;
use tool_runtime::registry::{BuildError, RegistryBuilder};

pub use store::{Store, Stores};

/// The database path when neither `--db` nor `DEMO_APP_DB` is given.
pub const DEFAULT_DB: &str = "./demo-app.db";

/// The device-pairing tools, resources and prompt, listed explicitly (not through `inventory`), so a binary that links
/// other tool crates still serves only these. Their state, [`store::Devices`], is added by the
/// caller.
#[must_use]
pub fn registry_builder() -> RegistryBuilder {
    Registry::builder()
        .without_inventory()
        .tool(tools::device_add::descriptor())
        .tool(tools::device_pair::descriptor())
        .tool(tools::device_export::descriptor())
        .tool(tools::device_list::descriptor())
        .tool(tools::device_revoke::descriptor())
        .resource(resources::paired_devices::descriptor())
        .resource(resources::device::descriptor())
        .prompt(prompts::pairing_message::descriptor())
}

/// Every tool the `demo-app` binary serves: the device-pairing tools and the assistant's. Their
/// state comes from [`assistant::install`] and the stores' devices.
#[must_use]
pub fn app_registry_builder() -> RegistryBuilder {
    assistant::tools(registry_builder())
}

/// The registry of the device-pairing tools over the devices of `stores`.
pub fn registry(stores: &Stores) -> Result<Registry, BuildError> {
    registry_builder().state(stores.devices.clone()).build()
}

#[cfg(test)]
mod tests {
    /// The demo's tools stay acceptable to every model provider: the one line a crate adds to
    /// keep its tools portable (its own unit tests link its `#[tool]`s).
    #[test]
    fn tools_stay_portable() {
        use tool_runtime::llm::{Target, assert_portable};
        assert_portable(&[
            Target::OpenAiChat,
            Target::OpenAiResponses,
            Target::Anthropic,
            Target::Gemini,
        ]);
    }
}
