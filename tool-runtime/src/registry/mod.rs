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

pub mod provider;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use serde_json::Value;

use crate::context::{CallContext, Caller};
use crate::definition::{DEFAULT_TIMEOUT, ParsedCall, Tool, ToolMeta, ToolRegistration};
use crate::error::{ToolError, kind};
use crate::hooks::{CallHook, CallObserver, HookPoint};
use crate::policy::Policy;
use crate::state::StateMap;
use crate::validate::{ArgsValidator, accepts_empty_object, is_empty_object};

/// One registered tool with its lazily computed schemas and validator.
pub struct RegisteredTool {
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) meta: Arc<ToolMeta>,
    /// Where the tool comes from, for messages about it (a duplicate name names both origins).
    origin: Cow<'static, str>,
    input_schema: OnceLock<Value>,
    output_schema: OnceLock<Value>,
    validator: OnceLock<Result<ArgsValidator, String>>,
    /// `#[tool]` tools decode the HTTP front end's parsed tree; see `crate::parsed`.
    pub(crate) parsed_call: Option<ParsedCall>,
    /// The input schema compiled for that tree, on first use; `None` if it does not compile.
    #[cfg(feature = "http")]
    parsed_validator: OnceLock<Option<jsonschema::Validator<crate::parsed::Parsed>>>,
}

impl RegisteredTool {
    /// `fallback` names the origin of a tool whose metadata does not say where it is defined.
    fn new(tool: Arc<dyn Tool>, fallback: Option<Cow<'static, str>>) -> Self {
        let meta = Arc::new(tool.meta());
        let origin = match fallback {
            Some(f) if meta.defined_at == crate::definition::UNSTATED_ORIGIN => f,
            _ => meta.defined_at.clone(),
        };
        Self {
            parsed_call: tool.parsed_call(),
            tool,
            meta,
            origin,
            input_schema: OnceLock::new(),
            output_schema: OnceLock::new(),
            validator: OnceLock::new(),
            #[cfg(feature = "http")]
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

    /// Where the tool comes from: `module at file:line` for a `#[tool]` fn, the type of a
    /// dynamic tool, or the provider that supplies it.
    #[must_use]
    pub fn origin(&self) -> &str {
        &self.origin
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

    #[cfg(feature = "http")]
    pub(crate) fn parsed_validator(&self) -> Option<&jsonschema::Validator<crate::parsed::Parsed>> {
        self.parsed_validator
            .get_or_init(|| {
                crate::validate::compile_for::<crate::parsed::Parsed>(self.input_schema()).ok()
            })
            .as_ref()
    }

    pub(crate) fn validator(&self) -> Result<&ArgsValidator, ToolError> {
        self.compiled().as_ref().map_err(|e| {
            ToolError::internal(format_args!(
                "the input schema of `{}` does not compile: {e}",
                self.meta.name
            ))
        })
    }

    fn compiled(&self) -> &Result<ArgsValidator, String> {
        self.validator
            .get_or_init(|| ArgsValidator::compile(self.input_schema()))
    }

    /// Computes the schemas and compiles the validators now; the compile error, if any.
    fn warm_up(&self) -> Result<(), String> {
        self.output_schema();
        #[cfg(feature = "http")]
        if self.parsed_call.is_some() {
            self.parsed_validator();
        }
        self.compiled().as_ref().map(|_| ()).map_err(Clone::clone)
    }
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.meta.name)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// A tool of a [`Registry`]: borrowed for tools fixed when it was built, shared for tools added
/// at run time (which may be removed while a call still runs). Dereferences to
/// [`RegisteredTool`].
#[derive(Clone)]
pub struct ToolRef<'r>(Held<'r>);

#[derive(Clone)]
enum Held<'r> {
    Fixed(&'r RegisteredTool),
    Added(Arc<RegisteredTool>),
}

impl Deref for ToolRef<'_> {
    type Target = RegisteredTool;
    fn deref(&self) -> &RegisteredTool {
        match &self.0 {
            Held::Fixed(t) => t,
            Held::Added(t) => t,
        }
    }
}

impl fmt::Debug for ToolRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// Options that change how every call is handled.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) ignore_unknown_fields: bool,
    pub(crate) default_timeout: Duration,
    pub(crate) max_output: usize,
}

type ToolMap = BTreeMap<Arc<str>, Arc<RegisteredTool>>;

/// What the registry keeps of a mounted [provider](crate::provider::Provider): the names of its
/// tools, and the task that follows its changes.
pub(crate) struct Mounted {
    pub(crate) names: Vec<String>,
    pub(crate) watcher: Option<tokio::task::AbortHandle>,
}

/// A tool to register and where it comes from (`None`: where its metadata says).
pub(crate) type Arrival = (Arc<dyn Tool>, Option<Cow<'static, str>>);

/// The tools, their state, and the layers of the call pipeline. Build it with
/// [`Registry::builder`], share it (`Arc<Registry>`), and call tools with
/// [`Registry::call`](Registry::call).
///
/// The tools fixed when it was built (every `#[tool]`, and those added to the builder) are
/// looked up without any lock. Tools can be added and removed at run time
/// ([`add_tool`](Self::add_tool), [`remove_tool`](Self::remove_tool), and
/// [providers](crate::provider::Provider)): they live in a snapshot that writers replace
/// whole, so a reader holds a lock only long enough to clone one `Arc`. Every change bumps a
/// version that front ends watch ([`changes`](Self::changes)).
pub struct Registry {
    fixed: BTreeMap<Arc<str>, RegisteredTool>,
    added: RwLock<Arc<ToolMap>>,
    /// Whether `added` may hold anything, so lookups of fixed tools skip its lock.
    any_added: AtomicBool,
    /// Serializes writers; readers never take it.
    writing: Mutex<()>,
    /// Counts dynamic tools in their order of arrival, for their origins.
    arrivals: AtomicU64,
    version: tokio::sync::watch::Sender<u64>,
    pub(crate) state: Arc<StateMap>,
    pub(crate) policies: Vec<Arc<dyn Policy>>,
    pub(crate) hooks_before_confirmation: Vec<Arc<dyn CallHook>>,
    pub(crate) hooks_after_confirmation: Vec<Arc<dyn CallHook>>,
    /// The rate-limit hook again, to charge calls refused for their arguments.
    pub(crate) rate_limits: Option<Arc<crate::limits::RateLimits>>,
    pub(crate) observers: Vec<Arc<dyn CallObserver>>,
    pub(crate) options: Options,
    pub(crate) confirmations: crate::confirm::Confirmations,
    mounted: Mutex<HashMap<String, Mounted>>,
    check_state: bool,
    /// The names the builder set a rate or concurrency limit for.
    limited: BTreeSet<String>,
}

impl Registry {
    /// A builder that starts with every `#[tool]` linked into the binary.
    #[must_use]
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The tool named `name`, whoever asks. Front ends that answer a caller use
    /// [`visible_tool`](Self::visible_tool).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<ToolRef<'_>> {
        if let Some(t) = self.fixed.get(name) {
            return Some(ToolRef(Held::Fixed(t)));
        }
        if !self.any_added.load(Ordering::Acquire) {
            return None;
        }
        self.snapshot()
            .get(name)
            .map(|t| ToolRef(Held::Added(t.clone())))
    }

    pub(crate) fn mounted_lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Mounted>> {
        self.mounted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn snapshot(&self) -> Arc<ToolMap> {
        self.added
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Every tool, sorted by name, whoever asks. Listings for a caller use
    /// [`visible`](Self::visible).
    #[must_use]
    pub fn tools(&self) -> Vec<ToolRef<'_>> {
        let fixed = self.fixed.values().map(|t| ToolRef(Held::Fixed(t)));
        if !self.any_added.load(Ordering::Acquire) {
            return fixed.collect();
        }
        let added = self.snapshot();
        let mut all: Vec<ToolRef<'_>> = fixed
            .chain(added.values().map(|t| ToolRef(Held::Added(t.clone()))))
            .collect();
        all.sort_by(|a, b| a.name().cmp(b.name()));
        all
    }

    /// Every tool name, sorted.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.tools().iter().map(|t| t.name().to_owned()).collect()
    }

    /// The tools `caller` may see, sorted by name: those every policy
    /// [admits](crate::policy::Policy::admit) for it. Every listing (`GET /tools`,
    /// `/openapi.json`, MCP `tools/list`, the CLI's help) is this list, so a tool is listed
    /// exactly when a call to it gets past policy; a hidden tool called by name is refused as
    /// `forbidden`, with the policy's reason.
    #[must_use]
    pub fn visible(&self, caller: &Caller) -> Vec<ToolRef<'_>> {
        self.visible_in(&self.context(caller.clone()))
    }

    pub(crate) fn visible_in(&self, ctx: &CallContext) -> Vec<ToolRef<'_>> {
        let mut tools = self.tools();
        if !self.policies.is_empty() {
            tools.retain(|t| self.admit(t.meta(), ctx).is_ok());
        }
        tools
    }

    /// The tool `name` if `caller` may see it.
    #[must_use]
    pub fn visible_tool(&self, name: &str, caller: &Caller) -> Option<ToolRef<'_>> {
        let ctx = self.context(caller.clone());
        self.get(name)
            .filter(|t| self.admit(t.meta(), &ctx).is_ok())
    }

    /// A number that changes whenever a tool is added or removed.
    #[must_use]
    pub fn version(&self) -> u64 {
        *self.version.borrow()
    }

    /// Watches the registry's [`version`](Self::version): `changed().await` completes after
    /// every change (MCP servers send `notifications/tools/list_changed` on it).
    #[must_use]
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// The policies' decision on `tool` for the caller of `ctx`: the first refusal, as
    /// `forbidden`.
    pub(crate) fn admit(&self, tool: &ToolMeta, ctx: &CallContext) -> Result<(), ToolError> {
        for policy in &self.policies {
            policy
                .admit(tool, ctx)
                .map_err(|reason| ToolError::new(kind::FORBIDDEN, reason))?;
        }
        Ok(())
    }

    /// Up to three names among `names` close to `name`, best first.
    pub(crate) fn nearest<'n>(name: &str, names: impl Iterator<Item = &'n str>) -> Vec<String> {
        let wanted = name.to_ascii_lowercase().replace('-', "_");
        // Close in spelling (a typo or two), or containing what was typed.
        let budget = (wanted.chars().count() / 4).max(2);
        let mut scored: Vec<(f64, &str)> = names
            .filter_map(|candidate| {
                let c = candidate.to_ascii_lowercase().replace('-', "_");
                let close = strsim::levenshtein(&wanted, &c) <= budget
                    || (wanted.len() >= 3 && c.contains(&wanted));
                close.then(|| (strsim::jaro_winkler(&wanted, &c), candidate))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored
            .into_iter()
            .take(3)
            .map(|(_, n)| n.to_owned())
            .collect()
    }

    /// Up to three names close to `name` among the tools `caller` may see, best first, for
    /// "did you mean" messages.
    #[must_use]
    pub fn suggest(&self, name: &str, caller: &Caller) -> Vec<String> {
        let visible = self.visible(caller);
        Self::nearest(name, visible.iter().map(|t| t.name()))
    }

    /// Computes every tool's schemas and compiles every validator now rather than on first
    /// use, and reports the tools whose input schema does not compile. Servers call it at
    /// start-up so the first calls pay nothing extra and a bad schema fails loudly.
    pub fn warm_up(&self) -> Result<(), Vec<(String, String)>> {
        let broken: Vec<(String, String)> = self
            .tools()
            .iter()
            .filter_map(|t| t.warm_up().err().map(|e| (t.name().to_owned(), e)))
            .collect();
        if broken.is_empty() {
            Ok(())
        } else {
            Err(broken)
        }
    }

    /// `unknown_tool`, suggesting only names the caller may see.
    pub(crate) fn unknown_tool(&self, name: &str, ctx: &CallContext) -> ToolError {
        let visible = self.visible_in(ctx);
        let near = Self::nearest(name, visible.iter().map(|t| t.name()));
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
        ToolError::new(kind::UNKNOWN_TOOL, message)
            .with_details(serde_json::json!({ "suggestions": near }))
    }

    /// Adds a tool at run time. Refused, with both origins named, when a tool of that name
    /// exists; refused when its name breaks the portable rule, it needs state that was never
    /// registered, or it has a rate or concurrency limit (its own, or one the builder set for
    /// its name): limits are set up for the tools present when the registry is built, and a
    /// limit that would not hold is refused rather than ignored. Front ends see it at once and
    /// are told of the change.
    pub fn add_tool<T: Tool>(&self, tool: T) -> Result<(), RegistryError> {
        let origin = self.dynamic_origin(std::any::type_name::<T>());
        self.add_tools(vec![(Arc::new(tool) as Arc<dyn Tool>, Some(origin))])
    }

    /// [`add_tool`](Self::add_tool) for a shared tool.
    pub fn add_tool_arc(&self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let origin = self.dynamic_origin("Arc<dyn Tool>");
        self.add_tools(vec![(tool, Some(origin))])
    }

    fn dynamic_origin(&self, type_name: &str) -> Cow<'static, str> {
        let n = self.arrivals.fetch_add(1, Ordering::Relaxed) + 1;
        Cow::Owned(format!("dynamic tool #{n} (`{type_name}`)"))
    }

    /// Adds every tool or none; see [`add_tool`](Self::add_tool).
    pub(crate) fn add_tools(&self, tools: Vec<Arrival>) -> Result<(), RegistryError> {
        self.replace_tools(&[], tools)
    }

    /// Removes the tools named `remove` (those added at run time; the others stay) and adds
    /// `add`, in one change: every tool of `add` or none.
    pub(crate) fn replace_tools(
        &self,
        remove: &[String],
        add: Vec<Arrival>,
    ) -> Result<(), RegistryError> {
        let _writer = self
            .writing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut next: ToolMap = (*self.snapshot()).clone();
        for name in remove {
            next.remove(name.as_str());
        }
        let mut problems = Vec::new();
        for (tool, origin) in add {
            let entry = RegisteredTool::new(tool, origin);
            let name: Arc<str> = Arc::from(entry.name());
            let existing = self
                .fixed
                .get(&name)
                .map(|t| t.origin.to_string())
                .or_else(|| next.get(&name).map(|t| t.origin.to_string()));
            if let Some(first) = existing {
                problems.push(BuildProblem::DuplicateName {
                    name: name.to_string(),
                    first,
                    second: entry.origin.to_string(),
                });
                continue;
            }
            problems.extend(check_entry(
                &entry,
                self.check_state.then_some(&*self.state),
            ));
            if entry.meta.rate.is_some()
                || entry.meta.concurrency.is_some()
                || self.limited.contains(&*name)
            {
                problems.push(BuildProblem::LimitAtRunTime {
                    tool: name.to_string(),
                    defined_at: entry.origin.to_string(),
                });
            }
            next.insert(name, Arc::new(entry));
        }
        if !problems.is_empty() {
            return Err(RegistryError { problems });
        }
        let changed = !remove.is_empty() || next.len() != self.snapshot().len();
        self.any_added.store(!next.is_empty(), Ordering::Release);
        *self
            .added
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(next);
        if changed {
            self.version.send_modify(|v| *v += 1);
        }
        Ok(())
    }

    /// Removes a tool added at run time; `false` if there was none of that name (tools fixed
    /// when the registry was built cannot be removed). Calls already running finish.
    pub fn remove_tool(&self, name: &str) -> bool {
        if self.get(name).is_none() || self.fixed.contains_key(name) {
            return false;
        }
        self.replace_tools(&[name.to_owned()], Vec::new()).is_ok()
    }
}

/// FNV-1a, 64 bits: a hash stable across runs and platforms, unlike std's (shortened provider
/// tool names, `ETag`s of listings).
pub(crate) fn stable_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Names, and state a tool needs: the problems of one tool to be registered.
fn check_entry(entry: &RegisteredTool, state: Option<&StateMap>) -> Vec<BuildProblem> {
    let mut problems = Vec::new();
    if !is_valid_name(entry.name()) {
        problems.push(BuildProblem::InvalidName {
            name: entry.name().to_owned(),
            defined_at: entry.origin.to_string(),
        });
    }
    // A `#[tool]`'s parameter names were checked when it compiled; the schema of any other
    // tool is made here to check its own.
    let hand_made = entry.parsed_call.is_none();
    if let Some(props) = hand_made
        .then(|| entry.input_schema()["properties"].as_object())
        .flatten()
    {
        for param in props.keys().filter(|p| !is_valid_param_name(p)) {
            problems.push(BuildProblem::InvalidParamName {
                tool: entry.name().to_owned(),
                param: param.clone(),
                defined_at: entry.origin.to_string(),
            });
        }
    }
    if let Some(state) = state {
        for key in &entry.meta.requires {
            if !state.contains(key) {
                problems.push(BuildProblem::MissingState {
                    tool: entry.name().to_owned(),
                    type_name: key.type_name(),
                });
            }
        }
    }
    problems
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.names())
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
    tools: Vec<Arrival>,
    state: StateMap,
    policies: Vec<Arc<dyn Policy>>,
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
            policies: Vec::new(),
            hooks: Vec::new(),
            observers: Vec::new(),
            options: Options {
                ignore_unknown_fields: false,
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
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        // A `#[tool]` descriptor names where it is defined; a dynamic tool, its type.
        let origin = (tool.parsed_call().is_none()).then(|| {
            Cow::Owned(format!(
                "dynamic tool #{} (`{}`)",
                self.tools.len() + 1,
                std::any::type_name::<T>()
            ))
        });
        self.tools.push((Arc::new(tool), origin));
        self
    }

    /// Adds a shared dynamic tool.
    #[must_use]
    pub fn tool_arc(mut self, tool: Arc<dyn Tool>) -> Self {
        let origin = (tool.parsed_call().is_none()).then(|| {
            Cow::Owned(format!(
                "dynamic tool #{} (`Arc<dyn Tool>`)",
                self.tools.len() + 1
            ))
        });
        self.tools.push((tool, origin));
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

    /// Adds a registry-wide [`Policy`], run on every call; a denial is `forbidden` with the
    /// policy's reason, and what it refuses from the caller alone is hidden from that caller's
    /// listings. Policies run in the order added.
    #[must_use]
    pub fn policy(mut self, policy: impl Policy) -> Self {
        self.policies.push(Arc::new(policy));
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
            .push(Arc::new(crate::audit::AuditObserver::new(sink)));
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
            .map(|r| (Arc::new(r.0) as Arc<dyn Tool>, None));
        for (tool, origin) in from_inventory.chain(self.tools) {
            let mut entry = RegisteredTool::new(tool, origin);
            if let Some(roles) = self.roles.get(&*entry.meta.name) {
                Arc::make_mut(&mut entry.meta).roles =
                    roles.iter().cloned().map(Cow::Owned).collect();
            }
            let name: Arc<str> = Arc::from(&*entry.meta.name);
            if let Some(existing) = tools.get(&name) {
                // The same `#[tool]` registered through inventory and explicitly is one tool.
                let same_fn = existing.parsed_call.is_some()
                    && entry.parsed_call.is_some()
                    && existing.origin == entry.origin;
                if !same_fn {
                    problems.push(BuildProblem::DuplicateName {
                        name: name.to_string(),
                        first: existing.origin.to_string(),
                        second: entry.origin.to_string(),
                    });
                }
                continue;
            }
            problems.extend(check_entry(&entry, self.check_state.then_some(&self.state)));
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
        let rate_limits = crate::limits::RateLimits::new(rates).map(Arc::new);
        if let Some(limits) = &rate_limits {
            hooks.push(Arc::clone(limits) as Arc<dyn CallHook>);
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
            fixed: tools,
            added: RwLock::default(),
            any_added: AtomicBool::new(false),
            writing: Mutex::new(()),
            arrivals: AtomicU64::new(0),
            version: tokio::sync::watch::Sender::new(0),
            state: Arc::new(self.state),
            policies: self.policies,
            hooks_before_confirmation: hooks,
            hooks_after_confirmation: after,
            rate_limits,
            observers: self.observers,
            options: self.options,
            confirmations: crate::confirm::Confirmations::default(),
            mounted: Mutex::default(),
            check_state: self.check_state,
            limited: self
                .rates
                .iter()
                .filter_map(|(name, rate)| rate.map(|_| name.clone()))
                .chain(
                    self.concurrency
                        .iter()
                        .filter_map(|(name, n)| n.map(|_| name.clone())),
                )
                .collect(),
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

/// `^[A-Za-z_][A-Za-z0-9_]{0,63}$`: a parameter name every LLM provider accepts.
#[must_use]
pub fn is_valid_param_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    matches!(bytes.first(), Some(b) if b.is_ascii_alphabetic() || *b == b'_')
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
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
    /// A tool's name breaks the portable naming rule.
    InvalidName {
        /// The name.
        name: String,
        /// Where the tool is defined.
        defined_at: String,
    },
    /// A tool's parameter name breaks the portable rule for parameters.
    InvalidParamName {
        /// The tool.
        tool: String,
        /// The parameter.
        param: String,
        /// Where the tool is defined.
        defined_at: String,
    },
    /// A tool added at run time has a rate or concurrency limit, which only tools present when
    /// the registry is built can have.
    LimitAtRunTime {
        /// The tool.
        tool: String,
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
                "two tools are named `{name}`: {first}, and {second}; rename one (#[tool(name = \"...\")] for a #[tool] fn)"
            ),
            BuildProblem::InvalidName { name, defined_at } => write!(
                f,
                "tool name `{name}` ({defined_at}) must match ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$"
            ),
            BuildProblem::InvalidParamName {
                tool,
                param,
                defined_at,
            } => write!(
                f,
                "parameter `{param}` of tool `{tool}` ({defined_at}) must match ^[A-Za-z_][A-Za-z0-9_]{{0,63}}$, the names every model provider accepts; rename it (`ttl_seconds`, not `ttl-seconds`)"
            ),
            BuildProblem::LimitAtRunTime { tool, defined_at } => write!(
                f,
                "tool `{tool}` ({defined_at}) has a rate or concurrency limit, but limits are set up only for tools present when the registry is built; register it with the builder (`Registry::builder().tool(...)`), or limit it in a `CallHook`"
            ),
            BuildProblem::MissingState { tool, type_name } => write!(
                f,
                "tool `{tool}` takes State<{type_name}>, but no `{type_name}` was registered; add `.state(value)` to the registry builder"
            ),
        }
    }
}

/// Every problem found while adding tools to a running registry; nothing was added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryError {
    /// The problems, in the order found.
    pub problems: Vec<BuildProblem>,
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the tools were not added:")?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RegistryError {}

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
