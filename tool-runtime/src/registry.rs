//! The set of tools every front end serves, built once at start-up.
//!
//! ```standalone_crate
//! use tool_runtime::prelude::*;
//!
//! /// Add two numbers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! // Every `#[tool]` linked into the binary is found through `inventory`.
//! let registry = Registry::builder().build().unwrap();
//! assert!(registry.get("add").is_some());
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;

use crate::definition::{DEFAULT_TIMEOUT, ParsedCall, Tool, ToolMeta, ToolRegistration};
use crate::error::ToolError;
use crate::hooks::{CallHook, CallObserver, HookPoint};
use crate::state::StateMap;
use crate::validate::{ArgsValidator, accepts_empty_object, is_empty_object};

/// One registered tool with its lazily computed schemas and validator.
pub struct RegisteredTool {
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) meta: Arc<ToolMeta>,
    input_schema: OnceLock<Value>,
    output_schema: OnceLock<Value>,
    validator: OnceLock<Result<ArgsValidator, String>>,
    /// `#[tool]` tools decode the HTTP front end's parsed tree; see `crate::parsed`.
    pub(crate) parsed_call: Option<ParsedCall>,
    /// The input schema compiled for that tree, on first use; `None` if it does not compile.
    parsed_validator: OnceLock<Option<jsonschema::Validator<crate::parsed::Parsed>>>,
}

impl RegisteredTool {
    fn new(tool: Arc<dyn Tool>) -> Self {
        let meta = Arc::new(tool.meta());
        Self {
            parsed_call: tool.parsed_call(),
            tool,
            meta,
            input_schema: OnceLock::new(),
            output_schema: OnceLock::new(),
            validator: OnceLock::new(),
            parsed_validator: OnceLock::new(),
        }
    }

    /// The tool's metadata.
    #[must_use]
    pub fn meta(&self) -> &ToolMeta {
        &self.meta
    }

    /// The tool's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.meta.name
    }

    /// The input schema, computed on first use.
    pub fn input_schema(&self) -> &Value {
        self.input_schema.get_or_init(|| self.tool.input_schema())
    }

    /// The output schema, computed on first use.
    pub fn output_schema(&self) -> &Value {
        self.output_schema.get_or_init(|| self.tool.output_schema())
    }

    /// Checks `args` against the input schema exactly as a call would, without running the tool.
    pub fn check_arguments(&self, args: &Value) -> Result<(), ToolError> {
        if is_empty_object(args) && accepts_empty_object(self.input_schema()) {
            // What the validator would answer, without compiling it; see `accepts_empty_object`.
            return Ok(());
        }
        self.validator()?.check(args)
    }

    /// A copy of `args` with every secret (`writeOnly`) value replaced by `"[redacted]"`, for
    /// anything that shows or stores arguments.
    #[must_use]
    pub fn redact(&self, args: &Value) -> Value {
        self.redacted(args).unwrap_or_else(|| args.clone())
    }

    /// The redacted copy of `args`, or `None` when the schema has no secrets (no copy needed).
    pub(crate) fn redacted(&self, args: &Value) -> Option<Value> {
        if is_empty_object(args) {
            return None;
        }
        let v = self.validator().ok()?;
        (!v.secrets.is_empty()).then(|| crate::secret::redact(args, &v.secrets))
    }

    pub(crate) fn parsed_validator(&self) -> Option<&jsonschema::Validator<crate::parsed::Parsed>> {
        self.parsed_validator
            .get_or_init(|| {
                crate::validate::compile_for::<crate::parsed::Parsed>(self.input_schema()).ok()
            })
            .as_ref()
    }

    pub(crate) fn validator(&self) -> Result<&ArgsValidator, ToolError> {
        self.validator
            .get_or_init(|| ArgsValidator::compile(self.input_schema()))
            .as_ref()
            .map_err(|e| {
                ToolError::internal(format_args!(
                    "the input schema of `{}` does not compile: {e}",
                    self.meta.name
                ))
            })
    }
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.meta.name)
            .finish_non_exhaustive()
    }
}

/// Options that change how every call is handled.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) ignore_unknown_fields: bool,
    /// A `RequireRoles` policy is in place: listings leave out what a caller cannot call.
    pub(crate) enforce_roles: bool,
    pub(crate) default_timeout: Duration,
    pub(crate) max_output: usize,
}

/// The tools, their state, and the hooks of the call pipeline. Build it with
/// [`Registry::builder`], share it (`Arc<Registry>`), and call tools with
/// [`Registry::call`](Registry::call).
pub struct Registry {
    pub(crate) tools: BTreeMap<Arc<str>, RegisteredTool>,
    pub(crate) state: Arc<StateMap>,
    pub(crate) hooks_before_confirmation: Vec<Arc<dyn CallHook>>,
    pub(crate) hooks_after_confirmation: Vec<Arc<dyn CallHook>>,
    /// Some hook reads or rewrites arguments ([`CallHook::reads_arguments`]).
    pub(crate) hooks_read_arguments: bool,
    pub(crate) observers: Vec<Arc<dyn CallObserver>>,
    pub(crate) options: Options,
}

impl Registry {
    /// A builder that starts with every `#[tool]` linked into the binary.
    #[must_use]
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The tool named `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    /// Every tool, sorted by name.
    #[must_use]
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &RegisteredTool> {
        self.tools.values()
    }

    /// Every tool name, sorted.
    #[must_use]
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.tools.keys().map(|k| &**k)
    }

    /// Whether a caller with `roles` may call `tool` as far as roles go: always, unless a
    /// [`RequireRoles`](crate::policy::RequireRoles) policy is in place and the tool needs a
    /// role the caller lacks. Listings (`tools`, `GET /tools`, `/openapi.json`) leave out the
    /// tools this says no to.
    #[must_use]
    pub fn roles_allow(&self, tool: &RegisteredTool, roles: &[String]) -> bool {
        !self.options.enforce_roles
            || tool.meta.roles.is_empty()
            || tool.meta.roles.iter().any(|r| roles.iter().any(|h| h == r))
    }

    /// Up to three registered names close to `name`, best first, for "did you mean" messages.
    #[must_use]
    pub fn suggest(&self, name: &str) -> Vec<&str> {
        let wanted = name.to_ascii_lowercase().replace('-', "_");
        // Close in spelling (a typo or two), or containing what was typed.
        let budget = (wanted.chars().count() / 4).max(2);
        let mut scored: Vec<(f64, &str)> = self
            .names()
            .filter_map(|candidate| {
                let c = candidate.to_ascii_lowercase().replace('-', "_");
                let close = strsim::levenshtein(&wanted, &c) <= budget
                    || (wanted.len() >= 3 && c.contains(&wanted));
                close.then(|| (strsim::jaro_winkler(&wanted, &c), candidate))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored.into_iter().take(3).map(|(_, n)| n).collect()
    }

    /// Computes every tool's schemas and compiles every validator now rather than on first
    /// use, and reports the tools whose input schema does not compile. Servers call it at
    /// start-up so the first calls pay nothing extra and a bad schema fails loudly.
    pub fn warm_up(&self) -> Result<(), Vec<(String, String)>> {
        let broken: Vec<(String, String)> = self
            .tools()
            .filter_map(|t| {
                t.output_schema();
                if t.parsed_call.is_some() {
                    t.parsed_validator();
                }
                match t
                    .validator
                    .get_or_init(|| ArgsValidator::compile(t.input_schema()))
                {
                    Ok(_) => None,
                    Err(e) => Some((t.name().to_owned(), e.clone())),
                }
            })
            .collect();
        if broken.is_empty() {
            Ok(())
        } else {
            Err(broken)
        }
    }

    pub(crate) fn unknown_tool(&self, name: &str) -> ToolError {
        let near = self.suggest(name);
        let message = if near.is_empty() {
            format!("no tool named `{name}`")
        } else {
            format!(
                "no tool named `{name}`; did you mean {}?",
                near.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        ToolError::new(crate::error::kind::UNKNOWN_TOOL, message)
            .with_details(serde_json::json!({ "suggestions": near }))
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Collects tools, state and hooks, then checks them all at once in [`build`](Self::build).
#[derive(Clone)]
pub struct RegistryBuilder {
    inventory: bool,
    check_state: bool,
    rates: HashMap<String, Option<crate::limits::Rate>>,
    roles: HashMap<String, Vec<String>>,
    concurrency: HashMap<String, Option<u32>>,
    concurrency_queue: usize,
    tools: Vec<Arc<dyn Tool>>,
    state: StateMap,
    hooks: Vec<Arc<dyn CallHook>>,
    observers: Vec<Arc<dyn CallObserver>>,
    options: Options,
}

impl Default for RegistryBuilder {
    fn default() -> Self {
        Self {
            inventory: true,
            check_state: true,
            rates: HashMap::new(),
            roles: HashMap::new(),
            concurrency: HashMap::new(),
            concurrency_queue: 64,
            tools: Vec::new(),
            state: StateMap::default(),
            hooks: Vec::new(),
            observers: Vec::new(),
            options: Options {
                ignore_unknown_fields: false,
                enforce_roles: false,
                default_timeout: DEFAULT_TIMEOUT,
                max_output: crate::output_cap::DEFAULT_MAX_OUTPUT,
            },
        }
    }
}

impl RegistryBuilder {
    /// Leaves out the tools found through `inventory`; only explicitly added tools are served.
    #[must_use]
    pub fn without_inventory(mut self) -> Self {
        self.inventory = false;
        self
    }

    /// Builds without checking that every `State<T>` is registered: for listings (`--help`,
    /// schemas) that never call a tool.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn skip_state_check(mut self) -> Self {
        self.check_state = false;
        self
    }

    /// Adds a tool: a dynamic [`Tool`], or a `#[tool]` fn's descriptor
    /// (`my_tool::descriptor()`), which is how a library whose `inventory` registrations the
    /// linker dropped can still be served.
    #[must_use]
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Adds a shared dynamic tool.
    #[must_use]
    pub fn tool_arc(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Registers application state for `State<T>` parameters.
    #[must_use]
    pub fn state<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.state_arc(Arc::new(value))
    }

    /// Registers shared application state for `State<T>` parameters.
    #[must_use]
    pub fn state_arc<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.state.insert(value);
        self
    }

    /// Adds a pipeline hook (policy, guard, limit).
    #[must_use]
    pub fn hook(mut self, hook: impl CallHook) -> Self {
        self.hooks.push(Arc::new(hook));
        self
    }

    /// Adds a registry-wide [`Policy`](crate::policy::Policy), run before every call; a denial
    /// is `forbidden` with the policy's reason. Policies run in the order added.
    #[must_use]
    pub fn policy(mut self, policy: impl crate::policy::Policy) -> Self {
        if (&policy as &dyn std::any::Any).is::<crate::policy::RequireRoles>() {
            self.options.enforce_roles = true;
        }
        self.hooks
            .push(Arc::new(crate::policy::PolicyHook(Arc::new(policy))));
        self
    }

    /// Sets or overrides (`None`: removes) a tool's rate limit, whatever `#[tool(rate)]` says.
    #[must_use]
    pub fn rate_limit(
        mut self,
        tool: impl Into<String>,
        rate: Option<crate::limits::Rate>,
    ) -> Self {
        self.rates.insert(tool.into(), rate);
        self
    }

    /// Sets the roles a tool needs (replacing `#[tool(roles(...))]`), enforced and used for
    /// listings by the [`RequireRoles`](crate::policy::RequireRoles) policy.
    #[must_use]
    pub fn tool_roles<I, S>(mut self, tool: impl Into<String>, roles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.roles
            .insert(tool.into(), roles.into_iter().map(Into::into).collect());
        self
    }

    /// Sets or overrides (`None`: removes) a tool's concurrency limit.
    #[must_use]
    pub fn concurrency_limit(mut self, tool: impl Into<String>, limit: Option<u32>) -> Self {
        self.concurrency.insert(tool.into(), limit);
        self
    }

    /// How many calls may wait for a concurrency-limited tool before more are refused with
    /// `unavailable` (default 64).
    #[must_use]
    pub fn concurrency_queue(mut self, waiting: usize) -> Self {
        self.concurrency_queue = waiting;
        self
    }

    /// Records every call in an audit sink, such as
    /// [`JsonLinesAudit`](crate::audit::JsonLinesAudit).
    #[must_use]
    pub fn audit(mut self, sink: impl crate::audit::Audit) -> Self {
        self.observers
            .push(Arc::new(crate::audit::AuditObserver(sink)));
        self
    }

    /// Adds an observer of finished calls (audit, metrics).
    #[must_use]
    pub fn observer(mut self, observer: impl CallObserver) -> Self {
        self.observers.push(Arc::new(observer));
        self
    }

    /// Drops argument fields the schema does not declare instead of rejecting the call.
    /// Off by default: an unknown field is usually a typo the caller wants to hear about.
    #[must_use]
    pub fn ignore_unknown_fields(mut self, ignore: bool) -> Self {
        self.options.ignore_unknown_fields = ignore;
        self
    }

    /// The output cap of tools that set none, in bytes of JSON (default 1 MiB).
    #[must_use]
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.options.max_output = bytes;
        self
    }

    /// The time limit of tools that set none (default 30 s).
    #[must_use]
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.options.default_timeout = timeout;
        self
    }

    /// Checks everything and builds the registry: duplicate names (both definitions named),
    /// invalid names, and state a tool needs that was never registered (tool and type named).
    pub fn build(self) -> Result<Registry, BuildError> {
        let mut problems = Vec::new();
        let mut tools: BTreeMap<Arc<str>, RegisteredTool> = BTreeMap::new();
        let from_inventory = self
            .inventory
            .then(|| inventory::iter::<ToolRegistration>.into_iter())
            .into_iter()
            .flatten()
            .map(|r| Arc::new(r.0) as Arc<dyn Tool>);
        for tool in from_inventory.chain(self.tools) {
            let mut entry = RegisteredTool::new(tool);
            if let Some(roles) = self.roles.get(&*entry.meta.name) {
                Arc::make_mut(&mut entry.meta).roles =
                    roles.iter().cloned().map(std::borrow::Cow::Owned).collect();
            }
            let name: Arc<str> = Arc::from(&*entry.meta.name);
            if let Some(existing) = tools.get(&name) {
                // The same `#[tool]` registered through inventory and explicitly is one tool.
                if existing.meta.defined_at == entry.meta.defined_at {
                    continue;
                }
                problems.push(BuildProblem::DuplicateName {
                    name: name.to_string(),
                    first: existing.meta.defined_at.to_string(),
                    second: entry.meta.defined_at.to_string(),
                });
                continue;
            }
            if !is_valid_name(&name) {
                problems.push(BuildProblem::InvalidName {
                    name: name.to_string(),
                    defined_at: entry.meta.defined_at.to_string(),
                });
            }
            for key in &entry.meta.requires {
                if self.check_state && !self.state.contains(key) {
                    problems.push(BuildProblem::MissingState {
                        tool: name.to_string(),
                        type_name: key.type_name(),
                    });
                }
            }
            tools.insert(name, entry);
        }
        if !problems.is_empty() {
            return Err(BuildError { problems });
        }
        let mut hooks = self.hooks;
        let setting = |tool: &RegisteredTool| {
            let name = &*tool.meta.name;
            (
                self.rates.get(name).copied().unwrap_or(tool.meta.rate),
                self.concurrency
                    .get(name)
                    .copied()
                    .unwrap_or(tool.meta.concurrency),
            )
        };
        let rates = tools
            .values()
            .filter_map(|t| setting(t).0.map(|r| (t.meta.name.to_string(), r)));
        if let Some(limits) = crate::limits::RateLimits::new(rates) {
            hooks.push(Arc::new(limits));
        }
        let slots = tools
            .values()
            .filter_map(|t| setting(t).1.map(|n| (t.meta.name.to_string(), n)));
        if let Some(limits) = crate::limits::ConcurrencyLimits::new(slots, self.concurrency_queue) {
            hooks.push(Arc::new(limits));
        }
        hooks.sort_by_key(|h| h.point());
        let split = hooks.partition_point(|h| h.point() <= HookPoint::Guard);
        let after = hooks.split_off(split);
        Ok(Registry {
            tools,
            state: Arc::new(self.state),
            hooks_read_arguments: hooks.iter().chain(&after).any(|h| h.reads_arguments()),
            hooks_before_confirmation: hooks,
            hooks_after_confirmation: after,
            observers: self.observers,
            options: self.options,
        })
    }
}

impl fmt::Debug for RegistryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryBuilder")
            .field("inventory", &self.inventory)
            .field("tools", &self.tools.len())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`: portable across MCP clients and LLM providers.
#[must_use]
pub fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    matches!(bytes.first(), Some(b) if b.is_ascii_alphabetic() || *b == b'_')
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

/// One reason a registry could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildProblem {
    /// Two tools share a name.
    DuplicateName {
        /// The shared name.
        name: String,
        /// Where the first is defined.
        first: String,
        /// Where the second is defined.
        second: String,
    },
    /// A dynamic tool's name breaks the naming rule.
    InvalidName {
        /// The name.
        name: String,
        /// Where the tool is defined.
        defined_at: String,
    },
    /// A tool needs `State<T>` that was never registered.
    MissingState {
        /// The tool.
        tool: String,
        /// The state type.
        type_name: &'static str,
    },
}

impl fmt::Display for BuildProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildProblem::DuplicateName {
                name,
                first,
                second,
            } => write!(
                f,
                "two tools are named `{name}`: one in {first}, one in {second}; rename one with #[tool(name = \"...\")]"
            ),
            BuildProblem::InvalidName { name, defined_at } => write!(
                f,
                "tool name `{name}` ({defined_at}) must match ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$"
            ),
            BuildProblem::MissingState { tool, type_name } => write!(
                f,
                "tool `{tool}` takes State<{type_name}>, but no `{type_name}` was registered; add `.state(value)` to the registry builder"
            ),
        }
    }
}

/// Every problem found while building a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    /// The problems, in the order found.
    pub problems: Vec<BuildProblem>,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the tool registry cannot be built:")?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_portable_rule() {
        for ok in ["a", "_x", "device_add", "device-add", &"a".repeat(64)] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in ["", "1a", "-a", "a b", "a.b", "é", &"a".repeat(65)] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }
}
