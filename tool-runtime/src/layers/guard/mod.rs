#![doc = include_str!("../../../docs/guards.md")]

mod address;
mod client;
mod command;
mod path;
mod url;

pub use address::address_rule;
pub use client::{GuardedClient, WebRequest, WebResponse};
pub use command::{CommandOutput, CommandPolicy};
pub use path::PathPolicy;
pub use url::{Resolve, SystemResolver, UrlPolicy};

use crate::tool::error::{ErrorKind, ToolError};

/// A guard's refusal: `forbidden`, with the rule (and the host) in the details.
fn refuse(rule: &str, message: impl Into<String>, host: Option<&str>) -> ToolError {
    let details = match host {
        Some(host) => serde_json::json!({"rule": rule, "host": host}),
        None => serde_json::json!({"rule": rule}),
    };
    ToolError::new(ErrorKind::FORBIDDEN, message).with_details(details)
}
