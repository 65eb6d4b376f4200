//! `[limits]`, `[roles]` and `[policy]`: what the registry enforces.

use std::collections::BTreeMap;

use serde::Deserialize;
use tool_runtime::Source;
use tool_runtime::layers::policy::{AllowTools, DenyDestructive, RequireRoles, ToolFilter};
use tool_runtime::registry::RegistryBuilder;
use tool_runtime::tool::Rate;

/// One tool's limits.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Calls per principal per period: `"30/min"`.
    #[serde(default, deserialize_with = "super::de::rate")]
    pub rate: Option<Rate>,
    /// Calls at once.
    pub concurrency: Option<u32>,
}

/// `[policy]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyRules {
    /// Sources refused every destructive tool.
    pub deny_destructive_for: Vec<SourceName>,
    /// Per source, the only tools it may call.
    pub allow: BTreeMap<SourceName, Vec<String>>,
    /// `[[policy.filter]]`: which tools a caller sees, by name, glob or toolset.
    pub filter: Vec<FilterConfig>,
}

/// A `[[policy.filter]]` rule: for callers of the one `source`, `role` or `principal` it names
/// (checked when the file is read), else for everyone; `allow` and `deny` are tool names, globs
/// (`docs-*`) or `toolset:NAME`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FilterConfig {
    /// Calls through this front end.
    pub source: Option<SourceName>,
    /// Callers with this role.
    pub role: Option<String>,
    /// This principal (a token's holder, an agent run as its own principal).
    pub principal: Option<String>,
    /// The only tools these callers may see and call (none: no restriction).
    pub allow: Vec<String>,
    /// Tools these callers may not see or call.
    pub deny: Vec<String>,
}

/// A front end calls come through, as the rules name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceName {
    /// The command line.
    Cli,
    /// HTTP.
    Http,
    /// MCP.
    Mcp,
    /// The agent's tool calls.
    Agent,
}

impl From<SourceName> for Source {
    fn from(name: SourceName) -> Self {
        match name {
            SourceName::Cli => Source::Cli,
            SourceName::Http => Source::Http,
            SourceName::Mcp => Source::Mcp,
            SourceName::Agent => Source::Agent,
        }
    }
}

/// Adds the limits and the policy rules.
pub(super) fn apply(
    mut builder: RegistryBuilder,
    limits: &BTreeMap<String, Limits>,
    policy: &PolicyRules,
) -> RegistryBuilder {
    for (tool, limits) in limits {
        if let Some(rate) = limits.rate {
            builder = builder.rate_limit(tool.clone(), Some(rate));
        }
        if let Some(n) = limits.concurrency {
            builder = builder.concurrency_limit(tool.clone(), Some(n));
        }
    }
    if !policy.deny_destructive_for.is_empty() {
        let sources = policy.deny_destructive_for.iter().map(|s| (*s).into());
        builder = builder.policy(DenyDestructive::for_sources(sources));
    }
    if !policy.allow.is_empty() {
        let allow = (policy.allow.iter()).fold(AllowTools::new(), |allow, (source, tools)| {
            allow.allow((*source).into(), tools.iter().cloned())
        });
        builder = builder.policy(allow);
    }
    if !policy.filter.is_empty() {
        let filter = policy
            .filter
            .iter()
            .fold(ToolFilter::new(), |filter, rule| {
                let (allow, deny) = (rule.allow.clone(), rule.deny.clone());
                match (rule.source, &rule.role, &rule.principal) {
                    (Some(s), _, _) => filter.for_source(s.into(), allow, deny),
                    (_, Some(role), _) => filter.for_role(role.clone(), allow, deny),
                    (_, _, Some(p)) => filter.for_principal(p.clone(), allow, deny),
                    (None, None, None) => filter.for_everyone(allow, deny),
                }
            });
        builder = builder.policy(filter);
    }
    builder
}

/// Adds the roles each tool requires, and the policy that requires them.
pub(super) fn require_roles(
    mut builder: RegistryBuilder,
    roles: &BTreeMap<String, Vec<String>>,
) -> RegistryBuilder {
    for (tool, roles) in roles {
        builder = builder.tool_roles(tool.clone(), roles.iter().cloned());
    }
    builder.policy(RequireRoles)
}
