//! The catalogue: the set of tools every front end serves, fixed when it is built or added
//! and removed while it serves (by hand or by mounted [toolsets](crate::toolset)), with the
//! state their `State<T>` parameters read and a version front ends watch for changes.
//!
//! It decides nothing about calls: what a caller may see and call is the pipeline's
//! ([`crate::pipeline`]).

mod error;
mod mount;
mod rules;
mod tool;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::tool::caller::Caller;
use crate::tool::context::CallContext;
use crate::tool::definition::Tool;
use crate::tool::state::StateMap;

pub(crate) use error::grouped;
pub use error::{BuildError, BuildProblem};
pub use mount::MountError;
pub(crate) use rules::{check_entry, stable_hash};
pub use rules::{is_valid_name, is_valid_param_name, nearest};
use tool::Held;
pub(crate) use tool::dynamic_origin;
pub use tool::{RegisteredTool, ToolRef};

type ToolMap = BTreeMap<Arc<str>, Arc<RegisteredTool>>;

/// What the catalogue keeps of a mounted [toolset](crate::toolset::Toolset): the toolset,
/// the names of its tools, and the task that follows its changes.
pub(crate) struct Mounted {
    pub(crate) toolset: Arc<dyn crate::toolset::Toolset>,
    pub(crate) names: Vec<String>,
    pub(crate) watcher: Option<tokio::task::AbortHandle>,
}

/// A tool to register and where it comes from (`None`: where its metadata says).
pub(crate) type Arrival = (Arc<dyn Tool>, Option<Cow<'static, str>>);

/// The tools, and the state they read.
///
/// The tools fixed when it was built (every `#[tool]`, and those added to the builder) are
/// looked up without any lock. Tools added and removed at run time live in a snapshot that
/// writers replace whole, so a reader holds a lock only long enough to clone one `Arc`. Every
/// change bumps a version that front ends watch.
pub(crate) struct Catalog {
    fixed: ToolMap,
    added: RwLock<Arc<ToolMap>>,
    /// Whether `added` may hold anything, so lookups of fixed tools skip its lock.
    any_added: AtomicBool,
    /// Serializes writers; readers never take it.
    writing: Mutex<()>,
    /// Counts dynamic tools in their order of arrival, for their origins.
    arrivals: AtomicU64,
    version: tokio::sync::watch::Sender<u64>,
    pub(crate) state: Arc<StateMap>,
    mounted: Mutex<HashMap<String, Mounted>>,
    check_state: bool,
    /// The names the builder set a rate or concurrency limit for: tools of these names cannot
    /// be added at run time, where no limit would hold.
    limited: BTreeSet<String>,
    /// Whether it holds resources and prompts, whose names (`resource:{name}`) are no tool's.
    items: bool,
}

impl Catalog {
    pub(crate) fn new(
        fixed: BTreeMap<Arc<str>, RegisteredTool>,
        state: Arc<StateMap>,
        check_state: bool,
        limited: BTreeSet<String>,
    ) -> Self {
        Self {
            fixed: fixed.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
            added: RwLock::default(),
            any_added: AtomicBool::new(false),
            writing: Mutex::new(()),
            arrivals: AtomicU64::new(0),
            version: tokio::sync::watch::Sender::new(0),
            state,
            mounted: Mutex::default(),
            check_state,
            limited,
            items: false,
        }
    }

    /// A catalogue of resources and prompts, adapted as tools: their names are not checked
    /// against the tools' rule.
    pub(crate) fn of_items(
        fixed: BTreeMap<Arc<str>, RegisteredTool>,
        state: Arc<StateMap>,
        check_state: bool,
    ) -> Self {
        Self {
            items: true,
            ..Self::new(fixed, state, check_state, BTreeSet::new())
        }
    }

    /// The tool named `name`, whoever asks (what a caller may see is the pipeline's to say).
    pub(crate) fn get(&self, name: &str) -> Option<ToolRef<'_>> {
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

    /// Every tool, sorted by name, whoever asks.
    pub(crate) fn tools(&self) -> Vec<ToolRef<'_>> {
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

    /// The context of a call by `caller`, with the state the tools read.
    pub(crate) fn context(&self, caller: Caller) -> CallContext {
        caller.into_context(self.state.clone())
    }

    /// Every tool name, sorted.
    pub(crate) fn names(&self) -> Vec<String> {
        self.tools().iter().map(|t| t.name().to_owned()).collect()
    }

    /// A number that changes whenever a tool is added or removed.
    pub(crate) fn version(&self) -> u64 {
        *self.version.borrow()
    }

    /// Watches the registry's [`version`](Self::version): `changed().await` completes after
    /// every change (MCP servers send `notifications/tools/list_changed` on it).
    pub(crate) fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// Computes every tool's schemas and compiles every validator now rather than on first
    /// use, and reports the tools whose input schema does not compile. Servers call it at
    /// start-up so the first calls pay nothing extra and a bad schema fails loudly.
    pub(crate) fn warm_up(&self) -> Result<(), Vec<(String, String)>> {
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

    /// Adds a tool at run time. Refused, with both origins named, when a tool of that name
    /// exists; refused when its name breaks the portable rule, it needs state that was never
    /// registered, or it has a rate or concurrency limit (its own, or one the builder set for
    /// its name): limits are set up for the tools present when the registry is built, and a
    /// limit that would not hold is refused rather than ignored. Front ends see it at once and
    /// are told of the change.
    /// `type_name` names the tool's type in errors.
    pub(crate) fn add_tool(&self, tool: Arc<dyn Tool>, type_name: &str) -> Result<(), BuildError> {
        let origin = self.dynamic_origin(type_name);
        self.add_tools(vec![(tool, Some(origin))])
    }

    fn dynamic_origin(&self, type_name: &str) -> Cow<'static, str> {
        dynamic_origin(self.arrivals.fetch_add(1, Ordering::Relaxed) + 1, type_name)
    }

    /// Adds every tool or none; see [`add_tool`](Self::add_tool).
    pub(crate) fn add_tools(&self, tools: Vec<Arrival>) -> Result<(), BuildError> {
        self.replace_tools(&[], tools)
    }

    /// Removes the tools named `remove` (those added at run time; the others stay) and adds
    /// `add`, in one change: every tool of `add` or none.
    pub(crate) fn replace_tools(
        &self,
        remove: &[String],
        add: Vec<Arrival>,
    ) -> Result<(), BuildError> {
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
            problems.extend(
                check_entry(&entry, self.check_state.then_some(&*self.state))
                    .into_iter()
                    .filter(|p| !self.items || matches!(p, BuildProblem::MissingState { .. })),
            );
            if entry.meta.options.rate.is_some()
                || entry.meta.options.concurrency.is_some()
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
            return Err(BuildError {
                problems: grouped(problems),
                at_run_time: true,
            });
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
    pub(crate) fn remove_tool(&self, name: &str) -> bool {
        if self.get(name).is_none() || self.fixed.contains_key(name) {
            return false;
        }
        self.replace_tools(&[name.to_owned()], Vec::new()).is_ok()
    }
}
