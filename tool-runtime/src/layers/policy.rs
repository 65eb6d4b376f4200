//! Registry-wide policy: one decision before every call, from every front end alike.
//!
//! A policy sees the tool's metadata, the validated arguments and the caller, and either lets
//! the call go on or denies it with a reason. What `admit` denies is hidden: the caller is
//! answered `unknown_tool`, as for a tool that does not exist, and the reason goes to the log
//! and the observers. What `check` (or a closure) denies is refused as `forbidden`, with the
//! reason:
//!
//! ```
//! use tool_runtime::layers::policy::{AllowTools, DenyDestructive, RequireRoles};
//! use tool_runtime::{Registry, Source};
//! let registry = Registry::builder()
//!     .policy(DenyDestructive::for_sources([Source::Agent]))   // models may not destroy
//!     .policy(AllowTools::new().allow(Source::Mcp, ["device_list"]))
//!     .policy(RequireRoles)                                     // #[tool(roles("admin"))]
//!     .policy(|call: &tool_runtime::tool::PendingCall<'_>| {
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

use crate::tool::caller::Source;
use crate::tool::context::CallContext;
use crate::tool::definition::PendingCall;
use crate::tool::definition::{Kind, ToolMeta};

/// Decides whether a caller may see and call a tool. `Err(reason)` denies the call.
///
/// A policy decides in up to two steps:
///
/// - [`admit`](Self::admit) looks at the tool and the caller only. What it refuses is
///   **hidden**: left out of every listing (`GET /tools`, `/openapi.json`, MCP `tools/list`, the
///   CLI's help, LLM tool specs) by [`Registry::visible`](crate::Registry::visible), and, when
///   called by name anyway, answered `unknown_tool` as a tool that does not exist (HTTP 404,
///   MCP JSON-RPC `-32602`, CLI exit 2), before its arguments are looked at. The reason goes
///   only to the log (`tool.call`'s `hidden` field) and the observers
///   ([`CompletedCall::hidden`](crate::layers::hooks::CompletedCall::hidden), the audit record's
///   `hidden`). Listed means callable, as far as policy goes.
/// - [`check`](Self::check) looks at the validated arguments too, and refuses as `forbidden`
///   with its reason. A tool it may refuse stays listed (nothing about the arguments is known
///   when listing).
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

    /// Whether this policy may answer differently for `tool` depending on who calls: then
    /// what `tool` answers (a resource's read, a list that holds it) is never marked for shared
    /// caches. Default: `true`, which is always safe; a policy that decides the same for every
    /// caller, or never decides on `tool`, says `false`.
    fn varies(&self, tool: &ToolMeta) -> bool {
        let _ = tool;
        true
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

    fn varies(&self, tool: &ToolMeta) -> bool {
        self.allowed
            .values()
            .any(|tools| !tools.iter().any(|t| *t == *tool.name))
    }
}

/// Destructive tools are hidden from the given sources (e.g. an LLM agent), confirmed or not:
/// left out of their listings and answered `unknown_tool` when called by name (it decides in
/// [`admit`](Policy::admit)).
#[derive(Debug, Clone)]
pub struct DenyDestructive {
    sources: Vec<Source>,
}

impl DenyDestructive {
    /// Hides destructive tools from `sources`.
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

    fn varies(&self, tool: &ToolMeta) -> bool {
        tool.annotations.destructive == Some(true) && !self.sources.is_empty()
    }
}

/// Enforces `#[tool(roles(...))]`: a caller needs at least one of the tool's roles.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequireRoles;

impl Policy for RequireRoles {
    fn varies(&self, tool: &ToolMeta) -> bool {
        !tool.options.roles.is_empty()
    }

    fn admit(&self, tool: &ToolMeta, caller: &CallContext) -> Result<(), String> {
        let needed = &tool.options.roles;
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

/// Which tools each caller sees, by name: allow and deny lists of [patterns](ToolPattern), for
/// everyone or for callers of a source, a role or a principal. What it refuses is hidden from
/// that caller's listings and answered `unknown_tool` when called by name (it decides in
/// [`admit`](Policy::admit)), so an agent given its own principal sees only its share of
/// a registry that mounts many toolsets.
///
/// A caller is bound by every rule that names it. A tool that any of those rules denies is
/// hidden; if any of them allows a list, the tool must match one of those lists.
///
/// ```
/// use tool_runtime::layers::policy::{ToolFilter, ToolPattern};
/// use tool_runtime::Source;
/// let filter = ToolFilter::new()
///     // Models see the device tools and the `docs` server, not its `delete` tool.
///     .for_source(Source::Agent, ["device_*", "toolset:docs"], ["docs-delete"])
///     // Guests see listings only.
///     .for_role("guest", ["*_list"], Vec::<String>::new());
/// assert!(ToolPattern::new("device_*").matches("device_add", None));
/// # let _ = filter;
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    rules: Vec<FilterRule>,
}

#[derive(Debug, Clone)]
struct FilterRule {
    who: Who,
    allow: Vec<ToolPattern>,
    deny: Vec<ToolPattern>,
}

#[derive(Debug, Clone)]
enum Who {
    Everyone,
    Source(Source),
    Role(String),
    Principal(String),
}

impl Who {
    fn names(&self, caller: &CallContext) -> bool {
        match self {
            Who::Everyone => true,
            Who::Source(source) => caller.source() == *source,
            Who::Role(role) => caller.has_role(role),
            Who::Principal(principal) => caller.principal() == Some(principal.as_str()),
        }
    }
}

/// A pattern of item names: an exact name (`device_add`), a glob where `*` stands for any run
/// of characters and `?` for one (`devices-*`), or `toolset:NAME`, every item the toolset
/// `NAME` mounted.
///
/// A pattern names tools, resources and prompts alike, each by its own name: `billing_*`
/// matches a `billing_refund` tool, a `billing_invoices` resource and a `billing_letter`
/// prompt. The selectors `tool:`, `resource:` and `prompt:` narrow a pattern to one kind
/// (`resource:billing_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPattern(String);

impl ToolPattern {
    /// The pattern `text`.
    #[must_use]
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// Whether the tool `name`, mounted by `toolset` if it was, matches.
    #[must_use]
    pub fn matches(&self, name: &str, toolset: Option<&str>) -> bool {
        self.matches_item(Kind::Tool, name, toolset)
    }

    /// Whether the item of `kind` named `name` (its own name, without the `resource:` or
    /// `prompt:` the pipeline runs it under), mounted by `toolset` if it was, matches.
    #[must_use]
    pub fn matches_item(&self, kind: Kind, name: &str, toolset: Option<&str>) -> bool {
        if let Some(wanted) = self.0.strip_prefix("toolset:") {
            return toolset == Some(wanted);
        }
        let (selected, pattern) = match self.0.split_once(':') {
            Some(("tool", rest)) => (Some(Kind::Tool), rest),
            Some(("resource", rest)) => (Some(Kind::Resource), rest),
            Some(("prompt", rest)) => (Some(Kind::Prompt), rest),
            _ => (None, self.0.as_str()),
        };
        selected.is_none_or(|k| k == kind) && glob(pattern.as_bytes(), name.as_bytes())
    }
}

impl<S: Into<String>> From<S> for ToolPattern {
    fn from(text: S) -> Self {
        Self::new(text)
    }
}

/// `*` any run of bytes, `?` one byte, anything else itself.
fn glob(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    // The last `*` seen and where in `name` its run ended so far.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// The toolset that mounted a tool, from the origin the registry gives it.
fn toolset_of(tool: &ToolMeta) -> Option<&str> {
    // A mounted tool's origin names its toolset; a mounted MCP server's resources and prompts
    // name the server, which is mounted under that name.
    tool.options
        .defined_at
        .strip_prefix("toolset `")
        .or_else(|| tool.options.defined_at.strip_prefix("MCP server `"))
        .and_then(|rest| rest.split('`').next())
}

impl ToolFilter {
    /// No rules yet: every tool visible.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn rule<A, D>(mut self, who: Who, allow: A, deny: D) -> Self
    where
        A: IntoIterator,
        A::Item: Into<ToolPattern>,
        D: IntoIterator,
        D::Item: Into<ToolPattern>,
    {
        self.rules.push(FilterRule {
            who,
            allow: allow.into_iter().map(Into::into).collect(),
            deny: deny.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// A rule for every caller: `allow` (empty: no restriction) and `deny`.
    #[must_use]
    pub fn for_everyone<A, D>(self, allow: A, deny: D) -> Self
    where
        A: IntoIterator,
        A::Item: Into<ToolPattern>,
        D: IntoIterator,
        D::Item: Into<ToolPattern>,
    {
        self.rule(Who::Everyone, allow, deny)
    }

    /// A rule for callers from `source` (an agent's calls come from [`Source::Agent`]).
    #[must_use]
    pub fn for_source<A, D>(self, source: Source, allow: A, deny: D) -> Self
    where
        A: IntoIterator,
        A::Item: Into<ToolPattern>,
        D: IntoIterator,
        D::Item: Into<ToolPattern>,
    {
        self.rule(Who::Source(source), allow, deny)
    }

    /// A rule for callers with the role `role`.
    #[must_use]
    pub fn for_role<A, D>(self, role: impl Into<String>, allow: A, deny: D) -> Self
    where
        A: IntoIterator,
        A::Item: Into<ToolPattern>,
        D: IntoIterator,
        D::Item: Into<ToolPattern>,
    {
        self.rule(Who::Role(role.into()), allow, deny)
    }

    /// A rule for the principal `principal` (an agent run as its own principal, a token's
    /// holder).
    #[must_use]
    pub fn for_principal<A, D>(self, principal: impl Into<String>, allow: A, deny: D) -> Self
    where
        A: IntoIterator,
        A::Item: Into<ToolPattern>,
        D: IntoIterator,
        D::Item: Into<ToolPattern>,
    {
        self.rule(Who::Principal(principal.into()), allow, deny)
    }
}

/// An item's own name: a resource's or prompt's, without the prefix the pipeline runs it under.
fn own_name(tool: &ToolMeta) -> &str {
    let prefix = match tool.kind {
        Kind::Tool => return &tool.name,
        Kind::Resource => "resource:",
        Kind::Prompt => "prompt:",
    };
    tool.name.strip_prefix(prefix).unwrap_or(&tool.name)
}

impl Policy for ToolFilter {
    fn admit(&self, tool: &ToolMeta, caller: &CallContext) -> Result<(), String> {
        let toolset = toolset_of(tool);
        let name = own_name(tool);
        let matches = |p: &ToolPattern| p.matches_item(tool.kind, name, toolset);
        let mut allow_lists = false;
        let mut allowed = false;
        for rule in self.rules.iter().filter(|r| r.who.names(caller)) {
            if rule.deny.iter().any(matches) {
                return Err(format!("`{}` is filtered out for this caller", tool.name));
            }
            if !rule.allow.is_empty() {
                allow_lists = true;
                allowed |= rule.allow.iter().any(matches);
            }
        }
        if allow_lists && !allowed {
            return Err(format!(
                "`{}` is not among the tools this caller may use",
                tool.name
            ));
        }
        Ok(())
    }

    fn varies(&self, tool: &ToolMeta) -> bool {
        // A rule for everyone decides alike for every caller; one for some callers differs
        // from the rest where it denies the item or allows a list the item is not on.
        let toolset = toolset_of(tool);
        let name = own_name(tool);
        let matches = |p: &ToolPattern| p.matches_item(tool.kind, name, toolset);
        self.rules.iter().any(|rule| {
            !matches!(rule.who, Who::Everyone)
                && (rule.deny.iter().any(matches)
                    || !rule.allow.is_empty() && !rule.allow.iter().any(matches))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs_match_runs_and_single_characters() {
        for (pattern, name, expected) in [
            ("device_add", "device_add", true),
            ("device_add", "device_added", false),
            ("device_*", "device_add", true),
            ("device_*", "device_", true),
            ("device_*", "devices", false),
            ("*_list", "device_list", true),
            ("*-*", "docs-read", true),
            ("*-*", "docs", false),
            ("d?cs-*", "docs-read", true),
            ("*a*b*c", "xxaxxbxxc", true),
            ("*a*b*c", "xxaxxcxxb", false),
            ("*", "", true),
            ("?", "", false),
        ] {
            assert_eq!(
                glob(pattern.as_bytes(), name.as_bytes()),
                expected,
                "{pattern} {name}"
            );
        }
    }
}
