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
//!     .policy(|call: &tool_runtime::PendingCall| {
//!         if call.context().principal() == Some("mallory") { Err("banned".to_owned()) } else { Ok(()) }
//!     })
//!     .without_inventory()
//!     .build()
//!     .unwrap();
//! # let _ = registry;
//! ```
//!
//! Policies run at [`HookPoint::Policy`], in the order added, before
//! per-tool guards, confirmation and limits.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::context::Source;
use crate::error::{ToolError, kind};
use crate::hooks::{CallHook, HookPoint, PendingCall, Permit};

/// Decides whether a call may go on. `Err(reason)` denies it as `forbidden` with that reason.
pub trait Policy: Send + Sync + 'static {
    /// Decides on one call.
    fn check(&self, call: &PendingCall) -> Result<(), String>;

    /// Whether this reads or rewrites the call's arguments ([`PendingCall::args`]). `true`, the
    /// default, is always correct. A check that looks only at the tool and the caller (roles,
    /// rates, sources) may say `false`: calls then need not build their arguments as a
    /// `serde_json::Value` for it (the HTTP front end's fast path), and it may see `null` as them.
    fn reads_arguments(&self) -> bool {
        true
    }
}

impl<F> Policy for F
where
    F: Fn(&PendingCall) -> Result<(), String> + Send + Sync + 'static,
{
    fn check(&self, call: &PendingCall) -> Result<(), String> {
        self(call)
    }
}

/// Runs a [`Policy`] as a pipeline hook.
pub(crate) struct PolicyHook(pub(crate) Arc<dyn Policy>);

impl CallHook for PolicyHook {
    fn point(&self) -> HookPoint {
        HookPoint::Policy
    }

    fn before<'a>(&'a self, call: &'a mut PendingCall) -> BoxFuture<'a, Result<Permit, ToolError>> {
        let decision = self
            .0
            .check(call)
            .map(|()| Permit::none())
            .map_err(|reason| ToolError::new(kind::FORBIDDEN, reason));
        Box::pin(std::future::ready(decision))
    }

    fn reads_arguments(&self) -> bool {
        self.0.reads_arguments()
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
    fn check(&self, call: &PendingCall) -> Result<(), String> {
        let source = call.context().source();
        match self.allowed.get(&source) {
            Some(tools) if !tools.iter().any(|t| *t == *call.meta().name) => Err(format!(
                "`{}` is not allowed for {source} callers",
                call.meta().name
            )),
            _ => Ok(()),
        }
    }

    fn reads_arguments(&self) -> bool {
        false
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
    fn check(&self, call: &PendingCall) -> Result<(), String> {
        let source = call.context().source();
        if call.meta().annotations.destructive == Some(true) && self.sources.contains(&source) {
            return Err(format!(
                "`{}` is destructive, and {source} callers may not call destructive tools",
                call.meta().name
            ));
        }
        Ok(())
    }

    fn reads_arguments(&self) -> bool {
        false
    }
}

/// Enforces `#[tool(roles(...))]`: a caller needs at least one of the tool's roles.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequireRoles;

impl Policy for RequireRoles {
    fn check(&self, call: &PendingCall) -> Result<(), String> {
        let needed = &call.meta().roles;
        if needed.is_empty() || needed.iter().any(|r| call.context().has_role(r)) {
            return Ok(());
        }
        let list: Vec<&str> = needed.iter().map(|r| &**r).collect();
        Err(format!(
            "`{}` needs the role {}; {} has {}",
            call.meta().name,
            list.join(" or "),
            call.context().principal().unwrap_or("this caller"),
            if call.context().roles().is_empty() {
                "none".to_owned()
            } else {
                call.context().roles().join(", ")
            }
        ))
    }

    fn reads_arguments(&self) -> bool {
        false
    }
}
