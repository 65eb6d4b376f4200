//! Registry-wide policy: one decision before every call, from every front end alike.
//!
//! A policy sees the tool's metadata, the validated arguments and the caller, and either lets
//! the call go on or denies it with a reason, which the caller receives as `forbidden`:
//!
//! ```
//! use tool_runtime::{Registry, Source, policy::{AllowTools, DenyDestructive, RequireRoles}};
//! let registry = Registry::builder()
//!     .policy(DenyDestructive::for_sources([Source::Agent]))   // models may not destroy
//!     .policy(AllowTools::new().allow(Source::Mcp, ["device_list"]))
//!     .policy(RequireRoles)                                     // #[tool(roles("admin"))]
//!     .policy(|call: &tool_runtime::PendingCall<'_>| {
//!         if call.context().principal() == Some("mallory") { Err("banned".to_owned()) } else { Ok(()) }
//!     })
//!     .without_inventory()
//!     .build()
//!     .unwrap();
//! # let _ = registry;
//! ```
//!
//! Policies run in the order added: every `admit` right after the tool is looked up (a refusal
//! there also hides the tool from the caller's listings), every `check` after the arguments
//! are validated, before per-tool guards, confirmation and limits.
#![doc = include_str!("../../docs/policy.md")]

use std::collections::HashMap;

use crate::tool::context::{CallContext, Source};
use crate::tool::definition::PendingCall;
use crate::tool::definition::ToolMeta;

/// Decides whether a caller may see and call a tool. `Err(reason)` denies the call as
/// `forbidden` with that reason.
///
/// A policy decides in up to two steps:
///
/// - [`admit`](Self::admit) looks at the tool and the caller only. What it refuses is
///   **hidden**: left out of every listing (`GET /tools`, `/openapi.json`, MCP `tools/list`, the
///   CLI's help, LLM tool specs) by [`Registry::visible`](crate::Registry::visible), and refused
///   as `forbidden` when called by name anyway, before its arguments are looked at. Listed
///   means callable, as far as policy goes.
/// - [`check`](Self::check) looks at the validated arguments too. A tool it may refuse stays
///   listed (nothing about the arguments is known when listing).
///
/// A closure `Fn(&PendingCall) -> Result<(), String>` is a policy whose `check` it is.
pub trait Policy: Send + Sync + 'static {
    /// Decides from the tool and the caller alone, for listings and calls alike. Default: admit.
    fn admit(&self, tool: &ToolMeta, caller: &CallContext) -> Result<(), String> {
        let _ = (tool, caller);
        Ok(())
    }

    /// Decides on one call with its validated arguments, after `admit`. Default: allow.
    fn check(&self, call: &PendingCall<'_>) -> Result<(), String> {
        let _ = call;
        Ok(())
    }
}

impl<F> Policy for F
where
    F: Fn(&PendingCall<'_>) -> Result<(), String> + Send + Sync + 'static,
{
    fn check(&self, call: &PendingCall<'_>) -> Result<(), String> {
        self(call)
    }
}

/// Per source, the only tools it may call. Sources not named may call every tool.
#[derive(Debug, Clone, Default)]
pub struct AllowTools {
    allowed: HashMap<Source, Vec<String>>,
}

impl AllowTools {
    /// No restrictions yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// `source` may call only `tools` (cumulative over calls).
    #[must_use]
    pub fn allow<I, S>(mut self, source: Source, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed
            .entry(source)
            .or_default()
            .extend(tools.into_iter().map(Into::into));
        self
    }
}

impl Policy for AllowTools {
    fn admit(&self, tool: &ToolMeta, caller: &CallContext) -> Result<(), String> {
        let source = caller.source();
        match self.allowed.get(&source) {
            Some(tools) if !tools.iter().any(|t| *t == *tool.name) => Err(format!(
                "`{}` is not allowed for {source} callers",
                tool.name
            )),
            _ => Ok(()),
        }
    }
}

/// Destructive tools are refused to the given sources (e.g. an LLM agent), confirmed or not.
#[derive(Debug, Clone)]
pub struct DenyDestructive {
    sources: Vec<Source>,
}

impl DenyDestructive {
    /// Refuses destructive tools to `sources`.
    pub fn for_sources(sources: impl IntoIterator<Item = Source>) -> Self {
        Self {
            sources: sources.into_iter().collect(),
        }
    }
}

impl Policy for DenyDestructive {
    fn admit(&self, tool: &ToolMeta, caller: &CallContext) -> Result<(), String> {
        let source = caller.source();
        if tool.annotations.destructive == Some(true) && self.sources.contains(&source) {
            return Err(format!(
                "`{}` is destructive, and {source} callers may not call destructive tools",
                tool.name
            ));
        }
        Ok(())
    }
}

/// Enforces `#[tool(roles(...))]`: a caller needs at least one of the tool's roles.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequireRoles;

impl Policy for RequireRoles {
    fn admit(&self, tool: &ToolMeta, caller: &CallContext) -> Result<(), String> {
        let needed = &tool.roles;
        if needed.is_empty() || needed.iter().any(|r| caller.has_role(r)) {
            return Ok(());
        }
        let list: Vec<&str> = needed.iter().map(|r| &**r).collect();
        Err(format!(
            "`{}` needs the role {}; {} has {}",
            tool.name,
            list.join(" or "),
            caller.principal().unwrap_or("this caller"),
            if caller.roles().is_empty() {
                "none".to_owned()
            } else {
                caller.roles().join(", ")
            }
        ))
    }
}
