//! The registry every front end serves: the tools, and the pipeline every call to them takes
//! (policies, hooks, confirmation, limits, time limits, output caps, observers), built once at
//! start-up by a [`RegistryBuilder`]; [`RegisteredTool`] and [`ToolRef`] are the tools it
//! hands out, [`BuildError`] why it would not build.
//!
//! ```standalone_crate
//! use tool_runtime::prelude::*;
//!
//! /// Add two numbers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> Result<i64, ToolError> {
//!     a.checked_add(b).ok_or_else(|| ToolError::new("overflow", "the sum does not fit in 64 bits"))
//! }
//!
//! // Every `#[tool]` linked into the binary is found through `inventory`.
//! let registry = Registry::builder().build().unwrap();
//! assert!(registry.get("add").is_some());
//! ```
#![doc = include_str!("../../docs/scale-out.md")]

mod builder;
mod index;
mod items;
mod mounted;
mod request;
mod tasks;

/// Long calls as tasks: a call that outlives the request that started it, kept in a
/// [`TaskStore`](task::TaskStore) every replica reads, so that any replica answers for it.
///
/// A tool says whether it may run as a task with `#[tool(task = "optional")]` (whenever the
/// caller can follow a task) or `#[tool(task = "required")]` (only so); by default it never
/// does. It is a task from its start, or, with `#[tool(detach = "explicit")]`, from where it
/// calls [`CallContext::detach`](crate::CallContext::detach). It runs on the replica that started it (or, detached, on a server that claimed it),
/// which holds a lease on it; its status, its result or error, the questions it waits on and
/// the answers given are in the store.
///
#[doc = include_str!("../../docs/tasks.md")]
pub mod task {
    pub use super::tasks::Started;
    pub use crate::task::{
        MemoryTaskStore, QueuedCall, Task, TaskChange, TaskDetach, TaskMode, TaskStatus, TaskStore,
        Tasks, rfc3339,
    };
}

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use crate::catalog::Catalog;
use crate::layers::confirm::ConfirmationStore;
use crate::layers::limits::RateLimiter;
use crate::pipeline::Pipeline;
use crate::prompt::Prompt;
use crate::resource::Resource;
use crate::task::TaskStore;
use crate::tool::caller::Caller;
use crate::tool::context::CallContext;
use crate::tool::definition::Tool;
use crate::tool::envelope::Envelope;
use crate::tool::notify::Notifier;
use crate::toolset::Toolset;

pub use crate::catalog::nearest;
pub use crate::catalog::{
    BuildError, BuildProblem, MountError, RegisteredTool, ToolRef, is_valid_name,
    is_valid_param_name,
};
pub use crate::pipeline::Called;
pub use builder::RegistryBuilder;
pub use items::{Caching, ScopedItem};
pub use request::{
    CallTool, Complete, DescribeResources, GetPrompt, ListPosition, ListPrompts, ListResources,
    ListTools, ReadResource, Refuse, Request, ResourceRead, Subscribe,
};
// What the modules above the registry share with the catalogue and the pipeline: they reach
// neither directly.
pub(crate) use crate::catalog::stable_hash;

/// What the registry takes a tool or a mounted source of tools as ([`RegistryBuilder::tool`],
/// [`Registry::add_tool`], [`Registry::mount`]), and the stores of its limits and
/// confirmations ([`RegistryBuilder::rate_limiter`],
/// [`RegistryBuilder::confirmation_store`]): a value, which it puts behind an `Arc`, or one
/// already shared (`Arc<T>`, `Arc<dyn Tool>`, `Arc<dyn Toolset>`, ...), kept as it is.
///
/// ```standalone_crate
/// use std::sync::Arc;
/// use tool_runtime::prelude::*;
///
/// /// Add two numbers.
/// #[tool]
/// async fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// let shared: Arc<dyn Tool> = Arc::new(add::descriptor());
/// let registry = Registry::builder().without_inventory().tool(shared).build().unwrap();
/// assert!(registry.get("add").is_some());
/// ```
pub trait IntoArc<D: ?Sized> {
    /// `self` behind an `Arc`.
    fn into_arc(self) -> Arc<D>;
}

/// A value, an `Arc` of it, or an `Arc` of the trait object, as that trait object.
macro_rules! into_arc {
    ($($object:ident),*) => {$(
        impl<T: $object> IntoArc<dyn $object> for T {
            fn into_arc(self) -> Arc<dyn $object> {
                Arc::new(self)
            }
        }

        impl<T: $object> IntoArc<dyn $object> for Arc<T> {
            fn into_arc(self) -> Arc<dyn $object> {
                self
            }
        }

        impl IntoArc<dyn $object> for Arc<dyn $object> {
            fn into_arc(self) -> Arc<dyn $object> {
                self
            }
        }
    )*};
}

into_arc!(
    Tool,
    Toolset,
    RateLimiter,
    ConfirmationStore,
    Resource,
    Prompt,
    Notifier,
    TaskStore
);

/// The tools and the pipeline that calls them. Build it with [`Registry::builder`], share it
/// (`Arc<Registry>`), and call tools with [`Registry::call`](Registry::call).
///
/// The tools fixed when it was built (every `#[tool]`, and those added to the builder) are
/// looked up without any lock. Tools can be added and removed at run time
/// ([`add_tool`](Self::add_tool), [`remove_tool`](Self::remove_tool), and
/// [toolsets](crate::toolset::Toolset)); every change bumps a version that front ends watch
/// ([`changes`](Self::changes)).
pub struct Registry {
    catalog: Arc<Catalog>,
    pipeline: Pipeline,
    /// The resources and prompts, run through the same pipeline.
    items: Arc<items::Items>,
    /// The calls run as tasks.
    tasks: crate::task::Tasks,
}

impl Registry {
    /// A new confirmation token for the call of `tool` with `args` by `principal`, kept in the
    /// confirmation store for the confirmation lifetime, as the pipeline issues one when it
    /// asks: for a front end that carries a confirmed call over several requests (MCP's
    /// input-required rounds confirm each round by a token of its own). The token confirms
    /// exactly that call, once ([`Caller::confirmation`](crate::Caller::confirmation)).
    ///
    /// # Errors
    ///
    /// The confirmation store's, when it cannot keep the token.
    pub async fn confirmation_token(
        &self,
        tool: &str,
        args: &serde_json::Value,
        principal: Option<&str>,
    ) -> Result<String, crate::ToolError> {
        self.pipeline
            .confirmations
            .issue(tool, args, principal)
            .await
    }

    /// A builder that starts with every `#[tool]` linked into the binary.
    #[must_use]
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The latest `limit` calls in the audit log (of `tool` only, if given), newest first, as
    /// their outcome records; `None` without an audit log (see [`Audit::recent`]).
    ///
    /// [`Audit::recent`]: crate::layers::audit::Audit::recent
    pub async fn recent_calls(
        &self,
        limit: usize,
        tool: Option<&str>,
    ) -> Option<std::io::Result<Vec<serde_json::Value>>> {
        match &self.pipeline.audit_log {
            Some(log) => Some(log.recent(limit, tool).await),
            None => None,
        }
    }

    /// Whether calls are recorded in an audit log that [`recent_calls`](Self::recent_calls)
    /// reads, without reading it (a console offers its audit view only then).
    #[must_use]
    pub fn has_audit_log(&self) -> bool {
        self.pipeline.audit_log.is_some()
    }

    /// Calls tool `name` with `args` on behalf of `caller`, and returns the envelope: the
    /// envelope of [`handle`](Self::handle)`(`[`CallTool`]`)`. A caller that carries an
    /// [`Ask`](crate::tool::Ask) ([`Caller::asking`]) is asked when the call needs
    /// confirmation.
    ///
    /// Never panics and never returns early: every outcome, including an unknown tool, invalid
    /// arguments, a refusal, a call that needs confirmation, a panicking tool and a time-out, is
    /// an envelope.
    pub fn call<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        caller: Caller,
    ) -> impl Future<Output = Envelope> + Send + 'a {
        futures_util::FutureExt::map(self.handle(CallTool::new(name, args), caller), |c| {
            c.envelope
        })
    }

    /// The tool named `name`, whoever asks. Front ends that answer a caller use
    /// [`visible_tool`](Self::visible_tool).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<ToolRef<'_>> {
        self.catalog.get(name)
    }

    /// Every tool, sorted by name, whoever asks. Listings for a caller use
    /// [`visible`](Self::visible).
    #[must_use]
    pub fn tools(&self) -> Vec<ToolRef<'_>> {
        self.catalog.tools()
    }

    /// Every tool name, sorted.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.catalog.names()
    }

    /// The tools `caller` may see, sorted by name: those every policy
    /// [admits](crate::layers::policy::Policy::admit) for it. Every listing (`GET /tools`,
    /// `/openapi.json`, MCP `tools/list`, the CLI's help, the tools an agent offers its model)
    /// is this list, so a tool is listed exactly when a call to it gets past policy's `admit`; a
    /// hidden tool called by name is answered `unknown_tool`, as a tool that does not exist, and
    /// the policy's reason goes only to the log and the observers.
    #[must_use]
    pub fn visible(&self, caller: &Caller) -> Vec<ToolRef<'_>> {
        self.listed(ListTools, caller.clone())
    }

    pub(crate) fn visible_in(&self, ctx: &CallContext) -> Vec<ToolRef<'_>> {
        self.pipeline.visible(&self.catalog, ctx)
    }

    /// The tool `name` if `caller` may see it.
    #[must_use]
    pub fn visible_tool(&self, name: &str, caller: &Caller) -> Option<ToolRef<'_>> {
        let ctx = self.context(caller.clone());
        self.get(name)
            .filter(|t| self.pipeline.admit(t.meta(), &ctx).is_ok())
    }

    /// The error a call of `name` gets when `caller` may not see a tool of that name:
    /// `unknown_tool`, its "did you mean" among the names `caller` may see. For a front end
    /// that answers a lookup itself (`GET /tools/{name}`, the CLI's `schema NAME`) as a call
    /// would be answered.
    #[must_use]
    pub fn unknown_tool(&self, name: &str, caller: &Caller) -> crate::ToolError {
        self.pipeline
            .unknown_tool(&self.catalog, name, &self.context(caller.clone()))
    }

    /// A number that changes whenever a tool is added or removed.
    #[must_use]
    pub fn version(&self) -> u64 {
        self.catalog.version()
    }

    /// Watches the registry's [`version`](Self::version): `changed().await` completes after
    /// every change (MCP servers send `notifications/tools/list_changed` on it).
    #[must_use]
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.catalog.changes()
    }

    /// Computes every tool's schemas and compiles every validator now rather than on first
    /// use, and reports the tools whose input schema does not compile. Servers call it at
    /// start-up so the first calls pay nothing extra and a bad schema fails loudly.
    pub fn warm_up(&self) -> Result<(), Vec<(String, String)>> {
        self.catalog.warm_up()
    }

    /// Adds a tool at run time. Refused, with both origins named, when a tool of that name
    /// exists; refused when its name breaks the portable rule, it needs state that was never
    /// registered, or it has a rate or concurrency limit (its own, or one the builder set for
    /// its name): limits are set up for the tools present when the registry is built, and a
    /// limit that would not hold is refused rather than ignored. Front ends see it at once and
    /// are told of the change. `tool` is a [`Tool`] or one already shared (`Arc<T>`,
    /// `Arc<dyn Tool>`).
    pub fn add_tool<T: IntoArc<dyn Tool>>(&self, tool: T) -> Result<(), BuildError> {
        self.catalog
            .add_tool(tool.into_arc(), std::any::type_name::<T>())
    }

    /// Removes a tool added at run time; `false` if there was none of that name (tools fixed
    /// when the registry was built cannot be removed). Calls already running finish.
    #[allow(clippy::must_use_candidate)] // Reason: the removal is the point; its answer may go unread.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.catalog.remove_tool(name)
    }

    /// Mounts `toolset`: lists its tools and adds them, all or none, as `{toolset}-{tool}`;
    /// returns their names. If it announces changes, they are followed (listed again and
    /// replaced in one step) until it is [unmounted](Self::unmount). Front ends are told of
    /// every change. `toolset` is a [`Toolset`] or one already shared (`Arc<T>`,
    /// `Arc<dyn Toolset>`).
    ///
    /// Its resources and prompts ([`Toolset::items`]) are mounted with its tools: a resource
    /// URI another provider serves already fails the mount, naming both.
    pub async fn mount(
        &self,
        toolset: impl IntoArc<dyn Toolset>,
    ) -> Result<Vec<String>, MountError> {
        let toolset = toolset.into_arc();
        let name = toolset.name().to_owned();
        let names = self.catalog.mount(Arc::clone(&toolset)).await?;
        if let Err(e) = self.mount_items(&name, toolset).await {
            self.catalog.unmount(&name);
            return Err(e);
        }
        Ok(names)
    }

    /// Removes a mounted toolset and its tools; `false` if none of that name is mounted.
    /// Calls already running finish.
    #[allow(clippy::must_use_candidate)] // Reason: the removal is the point; its answer may go unread.
    pub fn unmount(&self, name: &str) -> bool {
        self.unmount_items(name);
        self.catalog.unmount(name)
    }

    /// The names of the mounted toolsets, sorted.
    #[must_use]
    pub fn toolsets(&self) -> Vec<String> {
        self.catalog.toolsets()
    }

    /// Each mounted toolset, sorted by name: its tool count and what it says of its health
    /// (`GET /toolsets`).
    pub async fn toolset_status(&self) -> Vec<crate::toolset::ToolsetStatus> {
        self.catalog.toolset_status().await
    }

    /// The context of a call by `caller` (made before the call, by a front end that keeps only
    /// this while it reads the arguments).
    pub(crate) fn context(&self, caller: Caller) -> CallContext {
        self.catalog.context(caller)
    }

    /// Whether any policy decides what a caller sees: without one, every caller sees every
    /// tool, and a listing made for one caller may be kept for all (`/openapi.json` is).
    #[must_use]
    pub fn has_policies(&self) -> bool {
        !self.pipeline.policies.is_empty()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.names())
            .field("options", &self.pipeline.options)
            .finish_non_exhaustive()
    }
}
