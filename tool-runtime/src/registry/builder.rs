//! Building a [`Registry`]: its tools and state, and the layers of its pipeline.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::catalog::{
    Arrival, BuildError, BuildProblem, Catalog, RegisteredTool, check_entry, dynamic_origin,
};
use crate::layers::confirm::{ConfirmationStore, MemoryConfirmationStore};
use crate::layers::hooks::{CallHook, CallObserver, HookPoint};
use crate::layers::limits::{MemoryRateLimiter, RateLimiter};
use crate::layers::policy::Policy;
use crate::pipeline::{Options, Pipeline};
use crate::prompt::{Prompt, PromptRegistration};
use crate::resource::{Resource, ResourceRegistration};
use crate::tool::definition::{DEFAULT_TIMEOUT, Tool, ToolRegistration};
use crate::tool::notify::{MemoryNotifier, Notifications, Notifier};
use crate::tool::state::StateMap;

use super::{IntoArc, Registry};

/// Collects tools, state and hooks, then checks them all at once in [`build`](Self::build).
#[derive(Clone)]
pub struct RegistryBuilder {
    inventory: bool,
    check_state: bool,
    rates: HashMap<String, Option<crate::tool::Rate>>,
    roles: HashMap<String, Vec<String>>,
    scopes: HashMap<String, Vec<String>>,
    /// Task modes set by configuration, over the tools' own.
    task_modes: HashMap<String, crate::task::TaskMode>,
    tasks: crate::task::TaskSettings,
    scope_rules: crate::layers::scopes::ScopeRules,
    concurrency: HashMap<String, Option<u32>>,
    concurrency_queue: usize,
    confirmation_lifetime: Duration,
    /// The limiter every rate is charged through; one in memory, made at build, if none.
    rate_limiter: Option<Arc<dyn RateLimiter>>,
    /// Where confirmation tokens are kept; one in memory, made at build, if none.
    confirmation_store: Option<Arc<dyn ConfirmationStore>>,
    tools: Vec<Arrival>,
    resources: Vec<Arc<dyn Resource>>,
    prompts: Vec<Arc<dyn Prompt>>,
    notifier: Option<Arc<dyn Notifier>>,
    state: StateMap,
    policies: Vec<Arc<dyn Policy>>,
    hooks: Vec<Arc<dyn CallHook>>,
    observers: Vec<Arc<dyn CallObserver>>,
    /// The last audit sink given, read back by [`Registry::recent_calls`].
    audit_log: Option<Arc<dyn crate::layers::audit::Audit>>,
    options: Options,
}

impl Default for RegistryBuilder {
    fn default() -> Self {
        Self {
            inventory: true,
            check_state: true,
            rates: HashMap::new(),
            roles: HashMap::new(),
            scopes: HashMap::new(),
            task_modes: HashMap::new(),
            tasks: crate::task::TaskSettings::default(),
            scope_rules: crate::layers::scopes::ScopeRules::default(),
            concurrency: HashMap::new(),
            concurrency_queue: 64,
            confirmation_lifetime: crate::layers::confirm::TOKEN_LIFETIME,
            rate_limiter: None,
            confirmation_store: None,
            tools: Vec::new(),
            resources: Vec::new(),
            prompts: Vec::new(),
            notifier: None,
            state: StateMap::default(),
            policies: Vec::new(),
            hooks: Vec::new(),
            observers: Vec::new(),
            audit_log: None,
            options: Options {
                ignore_unknown_fields: false,
                default_timeout: DEFAULT_TIMEOUT,
                max_output: crate::layers::output_cap::DEFAULT_MAX_OUTPUT,
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

    /// Builds without checking that every `State<T>` is registered: for a registry that lists
    /// and never calls (help, schemas, tool specs), before the state is at hand. A call of a
    /// tool whose state is missing then fails `internal`.
    #[must_use]
    pub fn skip_state_check(mut self) -> Self {
        self.check_state = false;
        self
    }

    /// Adds a tool: a dynamic [`Tool`], or a `#[tool]` fn's descriptor
    /// (`my_tool::descriptor()`), which is how a library whose `inventory` registrations the
    /// linker dropped can still be served; by value or already shared (`Arc<T>`,
    /// `Arc<dyn Tool>`).
    #[must_use]
    pub fn tool<T: IntoArc<dyn Tool>>(mut self, tool: T) -> Self {
        let tool = tool.into_arc();
        // A `#[tool]` descriptor names where it is defined; a dynamic tool, its type.
        let origin = (tool.parsed_call().is_none())
            .then(|| dynamic_origin(self.tools.len() + 1, std::any::type_name::<T>()));
        self.tools.push((tool, origin));
        self
    }

    /// Registers application state for `State<T>` parameters: a value, or an `Arc` the
    /// application keeps a clone of. An `Arc` could be state of its own type too, so name the
    /// state type for it: `.state::<Jobs>(jobs.clone())`.
    #[must_use]
    pub fn state<T: Send + Sync + 'static>(mut self, value: impl Into<Arc<T>>) -> Self {
        self.state.insert(value.into());
        self
    }

    /// Adds a resource (every `#[resource]` linked in is added already): a [`Resource`] or
    /// one already shared. A URI that does not parse, a name used twice, or two templates that
    /// match the same URI alike fail [`build`](Self::build).
    #[must_use]
    pub fn resource<R: IntoArc<dyn Resource>>(mut self, resource: R) -> Self {
        self.resources.push(resource.into_arc());
        self
    }

    /// Adds a prompt (every `#[prompt]` linked in is added already).
    #[must_use]
    pub fn prompt<P: IntoArc<dyn Prompt>>(mut self, prompt: P) -> Self {
        self.prompts.push(prompt.into_arc());
        self
    }

    /// Where changes clients follow are published: [`MemoryNotifier`] (this process) unless
    /// given one that several replicas share.
    #[must_use]
    pub fn notifier<N: IntoArc<dyn Notifier>>(mut self, notifier: N) -> Self {
        self.notifier = Some(notifier.into_arc());
        self
    }

    /// Adds a pipeline hook (policy, guard, limit).
    #[must_use]
    pub fn hook(mut self, hook: impl CallHook) -> Self {
        self.hooks.push(Arc::new(hook));
        self
    }

    /// Adds a registry-wide [`Policy`], run on every call. What its `check` denies is refused
    /// as `forbidden` with the policy's reason; what its `admit` denies (from the tool and the
    /// caller alone) is hidden: left out of that caller's listings and answered `unknown_tool`
    /// when called by name. Policies run in the order added.
    #[must_use]
    pub fn policy(mut self, policy: impl Policy) -> Self {
        self.policies.push(Arc::new(policy));
        self
    }

    /// Sets or overrides (`None`: removes) a tool's rate limit, whatever `#[tool(rate)]` says.
    #[must_use]
    pub fn rate_limit(mut self, tool: impl Into<String>, rate: Option<crate::tool::Rate>) -> Self {
        self.rates.insert(tool.into(), rate);
        self
    }

    /// Sets the roles a tool needs (replacing `#[tool(roles(...))]`), enforced and used for
    /// listings by the [`RequireRoles`](crate::layers::policy::RequireRoles) policy.
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

    /// Sets the OAuth scopes a tool needs (replacing `#[tool(scopes(...))]`): a caller
    /// authenticated by a token needs every one of them ([`layers::scopes`](crate::layers::scopes)).
    #[must_use]
    pub fn tool_scopes<I, S>(mut self, tool: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes
            .insert(tool.into(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// A token granted `scope` holds `implied` too (and what those imply in turn), as the
    /// authorization server's scope hierarchy has it: `scope_implies("devices:admin",
    /// ["devices:write"])`.
    #[must_use]
    pub fn scope_implies<I, S>(mut self, scope: impl Into<String>, implied: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scope_rules
            .imply(scope.into(), implied.into_iter().map(Into::into));
        self
    }

    /// Sets or overrides (`None`: removes) a tool's concurrency limit. The limit holds in this
    /// process: behind a load balancer, each replica lets this many calls run at once.
    #[must_use]
    pub fn concurrency_limit(mut self, tool: impl Into<String>, limit: Option<u32>) -> Self {
        self.concurrency.insert(tool.into(), limit);
        self
    }

    /// Whether the calls of `tool` may run as tasks, over its own `#[tool(task = ...)]`.
    #[must_use]
    pub fn tool_task(mut self, tool: impl Into<String>, mode: crate::task::TaskMode) -> Self {
        self.task_modes.insert(tool.into(), mode);
        self
    }

    /// Keeps tasks in `store` instead of in this process
    /// ([`MemoryTaskStore`](crate::registry::task::MemoryTaskStore), the default): a store every replica
    /// shares lets any replica answer for any task.
    #[must_use]
    pub fn task_store(mut self, store: impl IntoArc<dyn crate::task::TaskStore>) -> Self {
        self.tasks.store = store.into_arc();
        self
    }

    /// How long a task is kept after its creation (default one hour), and how often its caller
    /// is told to ask for it (default every 500 ms).
    #[must_use]
    pub fn task_lifetime(mut self, ttl: Duration, poll: Duration) -> Self {
        self.tasks.ttl = ttl;
        self.tasks.poll = poll;
        self
    }

    /// How long a replica answers for a running task without renewing its lease (default 15
    /// seconds; it renews every second): a task whose replica died is `failed`, its outcome
    /// unknown, once its lease has expired.
    #[must_use]
    pub fn task_lease(mut self, lease: Duration) -> Self {
        self.tasks.lease = lease;
        self
    }

    /// How many calls may wait for a concurrency-limited tool before more are refused with
    /// `unavailable` (default 64).
    #[must_use]
    pub fn concurrency_queue(mut self, waiting: usize) -> Self {
        self.concurrency_queue = waiting;
        self
    }

    /// How long the token of a `confirmation_required` answer stays valid (default five
    /// minutes): a yes that comes later asks again.
    #[must_use]
    pub fn confirmation_lifetime(mut self, lifetime: Duration) -> Self {
        self.confirmation_lifetime = lifetime;
        self
    }

    /// Counts the rate limits through `limiter` instead of in this process
    /// ([`MemoryRateLimiter`](crate::layers::limits::MemoryRateLimiter), the default): a limiter every
    /// replica of a deployment shares makes a tool's rate hold for the whole deployment. The
    /// rates themselves still come from `#[tool(rate)]` and [`rate_limit`](Self::rate_limit);
    /// the limiter is given each one with every charge. A value, or one already shared
    /// (`Arc<T>`, `Arc<dyn RateLimiter>`).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tool_runtime::layers::limits::{Charge, RateLimiter};
    /// use tool_runtime::tool::Rate;
    /// use futures_util::future::BoxFuture;
    /// use tool_runtime::{Registry, ToolError};
    ///
    /// /// Lets every call through.
    /// struct Unlimited;
    ///
    /// impl RateLimiter for Unlimited {
    ///     fn charge<'a>(
    ///         &'a self,
    ///         tool: &'a str,
    ///         principal: Option<&'a str>,
    ///         rate: Rate,
    ///     ) -> BoxFuture<'a, Result<Charge, ToolError>> {
    ///         // A shared limiter counts under (tool, principal) against `rate` here.
    ///         let _ = (tool, principal, rate);
    ///         Box::pin(async { Ok(Charge::Allowed) })
    ///     }
    /// }
    ///
    /// // One limiter for two registries: their calls share one count.
    /// let shared = Arc::new(Unlimited);
    /// let replica = |limiter: Arc<Unlimited>| {
    ///     Registry::builder().without_inventory().rate_limiter(limiter).build().unwrap()
    /// };
    /// let (a, b) = (replica(shared.clone()), replica(shared));
    /// ```
    #[must_use]
    pub fn rate_limiter(mut self, limiter: impl IntoArc<dyn RateLimiter>) -> Self {
        self.rate_limiter = Some(limiter.into_arc());
        self
    }

    /// Keeps the confirmation tokens in `store` instead of in this process
    /// ([`MemoryConfirmationStore`](crate::layers::confirm::MemoryConfirmationStore), the default): with
    /// one store shared by every replica of a deployment, a token issued by one replica is
    /// redeemed by any other, once. A value, or one already shared (`Arc<T>`,
    /// `Arc<dyn ConfirmationStore>`).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tool_runtime::Registry;
    /// use tool_runtime::layers::confirm::MemoryConfirmationStore;
    ///
    /// // Two registries in one process, as replicas share a store across processes: a token
    /// // one of them issues, the other redeems.
    /// let tokens = Arc::new(MemoryConfirmationStore::new());
    /// let replica = |tokens: Arc<MemoryConfirmationStore>| {
    ///     Registry::builder().without_inventory().confirmation_store(tokens).build().unwrap()
    /// };
    /// let (a, b) = (replica(tokens.clone()), replica(tokens));
    /// ```
    #[must_use]
    pub fn confirmation_store(mut self, store: impl IntoArc<dyn ConfirmationStore>) -> Self {
        self.confirmation_store = Some(store.into_arc());
        self
    }

    /// Keeps the rate limits' counts, the confirmation tokens and the tasks in `redis`, and
    /// publishes change notifications through it, shared by every replica on it:
    /// [`rate_limiter`](Self::rate_limiter) with [`Redis::rate_limiter`],
    /// [`confirmation_store`](Self::confirmation_store) with [`Redis::confirmation_store`],
    /// [`task_store`](Self::task_store) with [`Redis::task_store`] and
    /// [`notifier`](Self::notifier) with [`Redis::notifier`].
    /// A server's MCP sessions and readiness check go on its options
    /// ([`ServerOptions::redis`](crate::http::ServerOptions::redis)).
    ///
    /// ```no_run
    /// # async fn start() -> Result<(), tool_runtime::ToolError> {
    /// use tool_runtime::Registry;
    /// use tool_runtime::redis::{Redis, RedisOptions};
    ///
    /// let redis = Redis::connect(RedisOptions::from_env("REDIS_URL")?).await?;
    /// let registry = Registry::builder().redis(&redis).build().unwrap();
    /// # let _ = registry;
    /// # Ok(()) }
    /// ```
    ///
    /// [`Redis::rate_limiter`]: crate::redis::Redis::rate_limiter
    /// [`Redis::confirmation_store`]: crate::redis::Redis::confirmation_store
    /// [`Redis::notifier`]: crate::redis::Redis::notifier
    /// [`Redis::task_store`]: crate::redis::Redis::task_store
    #[cfg(feature = "redis")]
    #[must_use]
    pub fn redis(self, redis: &crate::redis::Redis) -> Self {
        self.rate_limiter(redis.rate_limiter())
            .confirmation_store(redis.confirmation_store())
            .task_store(redis.task_store())
            .notifier(redis.notifier())
    }

    /// Records every call in an audit sink, such as
    /// [`JsonLinesAudit`](crate::layers::audit::JsonLinesAudit).
    #[must_use]
    pub fn audit(mut self, sink: impl crate::layers::audit::Audit) -> Self {
        let sink = Arc::new(sink);
        self.audit_log = Some(sink.clone());
        self.observers
            .push(Arc::new(crate::layers::audit::AuditObserver::new(sink)));
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
    #[allow(clippy::too_many_lines)] // Reason: the checks and the wiring read best in order, in one place.
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
                Arc::make_mut(&mut entry.meta).options.roles =
                    roles.iter().cloned().map(Cow::Owned).collect();
            }
            if let Some(mode) = self.task_modes.get(&*entry.meta.name) {
                Arc::make_mut(&mut entry.meta).task = *mode;
            }
            if let Some(scopes) = self.scopes.get(&*entry.meta.name) {
                Arc::make_mut(&mut entry.meta).options.scopes =
                    scopes.iter().cloned().map(Cow::Owned).collect();
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
        let mut index = super::index::Index::default();
        let (found_resources, found_prompts) = if self.inventory {
            (
                inventory::iter::<ResourceRegistration>
                    .into_iter()
                    .map(|r| Arc::new(r.0) as Arc<dyn Resource>)
                    .collect(),
                inventory::iter::<PromptRegistration>
                    .into_iter()
                    .map(|r| Arc::new(r.0) as Arc<dyn Prompt>)
                    .collect(),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let items = match index.add(
            found_resources.into_iter().chain(self.resources).collect(),
            found_prompts.into_iter().chain(self.prompts).collect(),
            false,
        ) {
            Ok(arrivals) => super::index::fixed_tools(arrivals),
            Err(more) => {
                problems.extend(more);
                BTreeMap::new()
            }
        };
        for entry in items.values() {
            problems.extend(
                check_entry(entry, self.check_state.then_some(&self.state))
                    .into_iter()
                    .filter(|p| matches!(p, BuildProblem::MissingState { .. })),
            );
        }
        if !problems.is_empty() {
            return Err(BuildError {
                problems: crate::catalog::grouped(problems),
                at_run_time: false,
            });
        }
        let notifier = self
            .notifier
            .unwrap_or_else(|| Arc::new(MemoryNotifier::new()));
        let mut state = self.state;
        state.insert(Arc::new(Notifications(Arc::clone(&notifier))));
        let state = Arc::new(state);
        let mut hooks = self.hooks;
        let setting = |tool: &RegisteredTool| {
            let name = &*tool.meta.name;
            (
                self.rates
                    .get(name)
                    .copied()
                    .unwrap_or(tool.meta.options.rate),
                self.concurrency
                    .get(name)
                    .copied()
                    .unwrap_or(tool.meta.options.concurrency),
            )
        };
        let rates = tools
            .values()
            .chain(items.values())
            .filter_map(|t| setting(t).0.map(|r| (t.meta.name.to_string(), r)));
        let counter = self
            .rate_limiter
            .unwrap_or_else(|| Arc::new(MemoryRateLimiter::new()));
        let rate_limits = crate::layers::limits::RateLimits::new(counter, rates).map(Arc::new);
        if let Some(limits) = &rate_limits {
            hooks.push(Arc::clone(limits) as Arc<dyn CallHook>);
        }
        let slots = tools
            .values()
            .chain(items.values())
            .filter_map(|t| setting(t).1.map(|n| (t.meta.name.to_string(), n)));
        if let Some(limits) =
            crate::layers::limits::ConcurrencyLimits::new(slots, self.concurrency_queue)
        {
            hooks.push(Arc::new(limits));
        }
        hooks.sort_by_key(|h| h.point());
        let split = hooks.partition_point(|h| h.point() <= HookPoint::Guard);
        let after = hooks.split_off(split);
        let limited = self
            .rates
            .iter()
            .filter_map(|(name, rate)| rate.map(|_| name.clone()))
            .chain(
                self.concurrency
                    .iter()
                    .filter_map(|(name, n)| n.map(|_| name.clone())),
            )
            .collect();
        Ok(Registry {
            catalog: Arc::new(Catalog::new(
                tools,
                Arc::clone(&state),
                self.check_state,
                limited,
            )),
            tasks: crate::task::Tasks::new(self.tasks),
            items: Arc::new(super::items::Items::new(
                Catalog::of_items(items, state, self.check_state),
                index,
                notifier,
            )),
            pipeline: Pipeline {
                policies: self.policies,
                scopes: self.scope_rules,
                hooks_before_confirmation: hooks,
                hooks_after_confirmation: after,
                rate_limits,
                observers: self.observers,
                audit_log: self.audit_log,
                options: self.options,
                confirmations: crate::layers::confirm::Confirmations::new(
                    self.confirmation_store
                        .unwrap_or_else(|| Arc::new(MemoryConfirmationStore::new())),
                    self.confirmation_lifetime,
                ),
            },
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
