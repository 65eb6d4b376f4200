//! Resources and prompts in the registry: the index a URI or name is found in, and the reads,
//! gets and completions every front end asks for. Each read and get passes the call pipeline
//! as a tool call does, under the name `resource:{name}` or `prompt:{name}`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::Value;

use super::request::{ListPosition, ResourceRead};
use crate::catalog::{BuildError, Catalog};
use crate::prompt::{Prompt, PromptMeta, PromptReply, PromptTool};
use crate::resource::{Listed, Resource, ResourceMeta, ResourceTool, URI_ARG};
use crate::tool::caller::Caller;
use crate::tool::complete::{Completing, Completion, CompletionRef};
use crate::tool::context::CallContext;
use crate::tool::definition::Kind;
use crate::tool::error::{ErrorKind, ToolError, Violation};
use crate::tool::notify::{Change, Notifier};

use super::Registry;
use super::index::Index;

/// The longest URI a resource is looked for at, in bytes: a longer one is refused before any
/// template is tried.
pub(crate) const MAX_URI_LEN: usize = 8 * 1024;

/// The longest a mounted server may take to start sending a resource's updates.
pub(super) const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Who may keep an answer about resources or prompts, and for how long: the one decision
/// HTTP's `Cache-Control` and `Vary` and MCP's `ttlMs` and `cacheScope` render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Caching {
    /// How long it may be kept; `None`: it is to be asked for again before each use.
    pub ttl: Option<Duration>,
    /// Whether shared caches may keep it: only what answers every caller alike.
    pub public: bool,
}

/// Screens what a completer of a template's variables is given as a read's values are: the
/// value typed for a screened variable, and the other screened variables' values.
fn screen_completing(meta: &ResourceMeta, completing: &Completing) -> Result<(), ToolError> {
    let violations: Vec<Violation> = meta
        .variables
        .iter()
        .filter(|v| v.screened)
        .filter_map(|v| {
            let value = if *v.name == *completing.argument {
                Some(completing.value.as_str())
            } else {
                completing.others.get(&*v.name).map(String::as_str)
            };
            crate::resource::screen(&v.name, value?).err()
        })
        .collect();
    if violations.is_empty() {
        Ok(())
    } else {
        Err(ToolError::invalid_arguments(violations))
    }
}

/// The names of the resources and of the prompts a mounted toolset brought.
pub(crate) struct Brought {
    pub(crate) resources: Vec<String>,
    pub(crate) prompts: Vec<String>,
    /// The task that follows what the toolset announces.
    pub(crate) watcher: Option<tokio::task::AbortHandle>,
}

/// The resources and prompts: the index, and the catalogue the pipeline runs them from.
pub(crate) struct Items {
    pub(crate) catalog: Catalog,
    index: RwLock<Arc<Index>>,
    pub(crate) notifier: Arc<dyn Notifier>,
    /// What each mounted toolset brought.
    mounted: Mutex<HashMap<String, Brought>>,
}

impl Items {
    pub(crate) fn new(catalog: Catalog, index: Index, notifier: Arc<dyn Notifier>) -> Self {
        Self {
            catalog,
            index: RwLock::new(Arc::new(index)),
            notifier,
            mounted: Mutex::default(),
        }
    }

    /// Adds resources and prompts at run time (a mounted server's, say) and removes those
    /// named, in one change: all or none. Clients following changes are told.
    /// `mounted` when a mounted toolset brings them.
    pub(crate) fn replace(
        &self,
        remove_resources: &[String],
        remove_prompts: &[String],
        resources: Vec<Arc<dyn Resource>>,
        prompts: Vec<Arc<dyn Prompt>>,
        mounted: bool,
    ) -> Result<(), BuildError> {
        let mut guard = self
            .index
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut next = (**guard).clone();
        next.resources
            .retain(|r| !remove_resources.iter().any(|n| *n == r.meta.name));
        for name in remove_prompts {
            next.prompts.remove(name);
        }
        let (resources_changed, prompts_changed) = (
            !remove_resources.is_empty() || !resources.is_empty(),
            !remove_prompts.is_empty() || !prompts.is_empty(),
        );
        let arrivals = next
            .add(resources, prompts, mounted)
            .map_err(|problems| BuildError {
                problems,
                at_run_time: true,
            })?;
        let removed: Vec<String> = remove_resources
            .iter()
            .map(|n| ResourceTool::call_name(n))
            .chain(remove_prompts.iter().map(|n| PromptTool::call_name(n)))
            .collect();
        self.catalog.replace_tools(&removed, arrivals)?;
        *guard = Arc::new(next);
        drop(guard);
        if resources_changed {
            self.notifier.publish(Change::ResourcesChanged);
        }
        if prompts_changed {
            self.notifier.publish(Change::PromptsChanged);
        }
        Ok(())
    }

    /// What each mounted toolset brought.
    pub(crate) fn mounted(&self) -> std::sync::MutexGuard<'_, HashMap<String, Brought>> {
        self.mounted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn index(&self) -> Arc<Index> {
        self.index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

pub(super) fn not_found(what: &str, uri_or_name: &str, key: &str) -> ToolError {
    ToolError::new(ErrorKind::NOT_FOUND, format!("no {what} `{uri_or_name}`"))
        .with_details(serde_json::json!({ key: uri_or_name }))
}

impl Registry {
    /// Where changes clients follow are published ([`Notifier`]).
    #[must_use]
    pub fn notifier(&self) -> Arc<dyn Notifier> {
        Arc::clone(&self.items.notifier)
    }

    /// The resources and templates `caller` may see: static URIs first (by URI), then templates
    /// from the most specific.
    #[must_use]
    pub fn resources(&self, caller: &Caller) -> Vec<Arc<ResourceMeta>> {
        self.listed(super::DescribeResources, caller.clone())
    }

    /// Serves [`DescribeResources`](super::DescribeResources).
    pub(super) fn resources_for(&self, ctx: &CallContext) -> Vec<Arc<ResourceMeta>> {
        self.items
            .index()
            .resources
            .iter()
            .filter(|r| self.admits(&ResourceTool::call_name(&r.meta.name), ctx))
            .map(|r| Arc::clone(&r.meta))
            .collect()
    }

    /// Whether what the item `name` answers may differ between callers: it needs roles or scopes, or a
    /// policy may decide on it by caller (see [`Policy::varies`](crate::layers::policy::Policy::varies)).
    fn guarded(&self, name: &str) -> bool {
        self.items.catalog.get(name).is_none_or(|item| {
            let meta = item.meta();
            !meta.options.roles.is_empty()
                || !meta.options.scopes.is_empty()
                || self.pipeline.policies.iter().any(|p| p.varies(meta))
        })
    }

    /// How a read of `meta` may be cached: for its time to live, by shared caches only when
    /// its scope says `public` and no role, OAuth scope or policy guards it.
    #[must_use]
    pub fn read_caching(&self, meta: &ResourceMeta) -> Caching {
        Caching {
            ttl: meta.ttl,
            public: meta.scope == Some(crate::resource::CacheScope::Public)
                && !self.guarded(&ResourceTool::call_name(&meta.name)),
        }
    }

    /// How a list of items of `kind` may be cached: for the shortest time to live of the
    /// resources it holds (none stated, or a list of tools or prompts: not kept), by shared
    /// caches only when it is kept and every caller would be given the same list of public
    /// items: no item of its kind is guarded, hidden from some callers.
    #[must_use]
    pub fn list_caching(&self, kind: Kind) -> Caching {
        let index = self.items.index();
        let (guarded, ttl, public_scopes) = match kind {
            Kind::Tool => {
                return Caching {
                    ttl: None,
                    public: false,
                };
            }
            Kind::Prompt => (
                index
                    .prompts
                    .keys()
                    .any(|n| self.guarded(&PromptTool::call_name(n))),
                None,
                true,
            ),
            Kind::Resource => (
                index
                    .resources
                    .iter()
                    .any(|r| self.guarded(&ResourceTool::call_name(&r.meta.name))),
                index.resources.iter().map(|r| r.meta.ttl).min().flatten(),
                index
                    .resources
                    .iter()
                    .all(|r| r.meta.scope == Some(crate::resource::CacheScope::Public)),
            ),
        };
        Caching {
            ttl,
            // A list kept by no one (no time to live) has no one to share it with.
            public: ttl.is_some() && !guarded && public_scopes,
        }
    }

    /// Whether the policies admit the item `name` of the items' catalogue for `ctx`.
    pub(super) fn admits(&self, name: &str, ctx: &CallContext) -> bool {
        self.admitted(name, ctx).is_some()
    }

    /// The item `name` of the items' catalogue, if the policies admit it for `ctx`.
    fn admitted(&self, name: &str, ctx: &CallContext) -> Option<crate::catalog::ToolRef<'_>> {
        self.items
            .catalog
            .get(name)
            .filter(|t| self.pipeline.admit(t.meta(), ctx).is_ok())
    }

    /// Every concrete resource `caller` may see, as `resources/list` gives them: the static
    /// ones, then those each visible template lists (a template whose list fails is logged
    /// and left out), each with the resource or template it belongs to.
    pub async fn list_resources(&self, caller: &Caller) -> Vec<(Listed, Arc<ResourceMeta>)> {
        self.handle(super::ListResources::all(), caller.clone())
            .await
            .0
    }

    /// At most `len` of the resources [`list_resources`](Self::list_resources) gives, from
    /// `from` on, and where the next page starts when there is more. A page runs the list fns
    /// of the templates it reaches only, each through the pipeline as its template (its rate,
    /// concurrency and time limit): a whole listing runs each once, plus once more for a
    /// template a page boundary cuts.
    pub(super) async fn resources_page(
        &self,
        caller: Caller,
        from: ListPosition,
        len: usize,
    ) -> (Vec<(Listed, Arc<ResourceMeta>)>, Option<ListPosition>) {
        let ctx = self.context(caller);
        let index = self.items.index();
        let mut out = Vec::new();
        for (at, entry) in index.resources.iter().enumerate().skip(from.entry) {
            let Some(item) = self.admitted(&ResourceTool::call_name(&entry.meta.name), &ctx) else {
                continue;
            };
            let meta = &entry.meta;
            let listed = if entry.template.is_static() {
                let mut listed = Listed::new(meta.uri.to_string(), meta.name.to_string());
                listed.title = Some(meta.title.to_string());
                listed.description =
                    (!meta.description.is_empty()).then(|| meta.description.to_string());
                listed.mime_type = meta.mime_type.as_ref().map(ToString::to_string);
                vec![listed]
            } else {
                let Some(listing) = entry.resource.list(ctx.clone()) else {
                    continue;
                };
                let request = serde_json::json!({ "list": meta.uri });
                match self.pipeline.serve(&item, &ctx, request, listing).await {
                    Ok(items) => items,
                    Err(e) => {
                        tracing::warn!(resource = %meta.name, error = %e, "a resource template's list failed");
                        continue;
                    }
                }
            };
            let skip = if at == from.entry { from.offset } else { 0 };
            for (offset, mut l) in listed.into_iter().enumerate().skip(skip) {
                if out.len() == len {
                    return (out, Some(ListPosition { entry: at, offset }));
                }
                if l.mime_type.is_none() {
                    l.mime_type = meta.mime_type.as_ref().map(ToString::to_string);
                }
                out.push((l, Arc::clone(meta)));
            }
        }
        (out, None)
    }

    /// The resource `uri` reads for the caller of `ctx`, found among the resources it may see
    /// (one rule for reads, subscriptions and completions), with its variables' values. A URI
    /// longer than 8 KiB is `invalid_arguments`; one no visible resource matches,
    /// `not_found` with `uri` in its details.
    pub(super) fn resource_at(
        &self,
        index: &super::index::Index,
        uri: &str,
        ctx: &CallContext,
    ) -> Result<(super::index::ResourceEntry, BTreeMap<String, String>), ToolError> {
        if uri.len() > MAX_URI_LEN {
            return Err(ToolError::invalid_arguments(vec![Violation::new(
                "/uri",
                "maxLength",
                format!(
                    "the URI is {} bytes long; the longest a resource is read at is {MAX_URI_LEN}",
                    uri.len()
                ),
            )]));
        }
        index
            .find(uri, |r| {
                self.admits(&ResourceTool::call_name(&r.meta.name), ctx)
            })
            .map(|(entry, values)| (entry.clone(), values))
            .ok_or_else(|| not_found("resource at", uri, "uri"))
    }

    /// The refusal a request of `caller` would meet for the OAuth scopes of the item it names,
    /// decided by the pipeline's rule before the request is served: a front end that must answer
    /// before it serves (`/mcp` answers 403 before its response stream opens, as OAuth clients
    /// expect) asks here. `None` when the caller is not limited by scopes, has them, or may not
    /// see the item (then serving the request answers as for one that does not exist).
    #[must_use]
    pub fn scope_refusal(&self, item: ScopedItem<'_>, caller: &Caller) -> Option<ToolError> {
        caller.granted_scopes()?;
        let ctx = self.context(caller.clone());
        let refusal =
            |item: crate::catalog::ToolRef<'_>| self.pipeline.scopes.refusal(item.meta(), &ctx);
        match item {
            ScopedItem::Tool(name) => self
                .catalog
                .get(name)
                .filter(|t| self.pipeline.admit(t.meta(), &ctx).is_ok())
                .and_then(refusal),
            ScopedItem::Prompt(name) => self
                .admitted(&PromptTool::call_name(name), &ctx)
                .and_then(refusal),
            ScopedItem::Resource(uri) => {
                let (entry, _) = self.resource_at(&self.items.index(), uri, &ctx).ok()?;
                self.admitted(&ResourceTool::call_name(&entry.meta.name), &ctx)
                    .and_then(refusal)
            }
        }
    }

    /// Whether `caller` may read the resource at `uri`: whether a resource it may see matches
    /// it, by the rule reads follow.
    #[must_use]
    pub fn can_read(&self, uri: &str, caller: &Caller) -> bool {
        let ctx = self.context(caller.clone());
        self.resource_at(&self.items.index(), uri, &ctx).is_ok()
    }

    /// Reads the resource at `uri` for `caller`, through the call pipeline. A URI no visible
    /// resource matches is `not_found`, with `uri` in its details; one longer than 8 KiB
    /// is `invalid_arguments`.
    pub async fn read_resource(
        &self,
        uri: &str,
        caller: Caller,
    ) -> Result<ResourceRead, ToolError> {
        self.handle(super::ReadResource::new(uri), caller).await
    }

    /// Serves [`ReadResource`](super::ReadResource).
    pub(super) async fn read(&self, uri: &str, caller: Caller) -> Result<ResourceRead, ToolError> {
        let ctx = self.context(caller);
        let (entry, values) = self.resource_at(&self.items.index(), uri, &ctx)?;
        let mut args = serde_json::Map::new();
        args.insert(URI_ARG.to_owned(), Value::String(uri.to_owned()));
        args.extend(values.into_iter().map(|(k, v)| (k, Value::String(v))));
        let name = ResourceTool::call_name(&entry.meta.name);
        let ran = self
            .pipeline
            .call(
                &self.items.catalog,
                &name,
                crate::pipeline::Input::Value(Value::Object(args)),
                ctx,
            )
            .await;
        match ran.envelope.outcome {
            Ok(value) => {
                let contents = serde_json::from_value(value)
                    .map_err(|e| ToolError::internal(format_args!("unreadable contents: {e}")))?;
                Ok(ResourceRead {
                    contents,
                    resource: Arc::clone(&entry.meta),
                })
            }
            Err(e) if ran.tool.is_none() && e.kind() == ErrorKind::UNKNOWN_TOOL => {
                Err(not_found("resource at", uri, "uri"))
            }
            Err(e) => Err(e),
        }
    }

    /// The prompts `caller` may see, by name.
    #[must_use]
    pub fn prompts(&self, caller: &Caller) -> Vec<Arc<PromptMeta>> {
        self.listed(super::ListPrompts, caller.clone())
    }

    /// Serves [`ListPrompts`](super::ListPrompts).
    pub(super) fn prompts_for(&self, ctx: &CallContext) -> Vec<Arc<PromptMeta>> {
        self.items
            .index()
            .prompts
            .values()
            .filter(|p| self.admits(&PromptTool::call_name(&p.meta.name), ctx))
            .map(|p| Arc::clone(&p.meta))
            .collect()
    }

    /// Gets the prompt `name` with `args` (an object of strings) for `caller`, through the
    /// call pipeline. An unknown or hidden prompt is `not_found`, with `name` in its details;
    /// a missing, unknown or unparsable argument is `invalid_arguments`.
    pub async fn get_prompt(
        &self,
        name: &str,
        args: Value,
        caller: Caller,
    ) -> Result<PromptReply, ToolError> {
        self.handle(super::GetPrompt::new(name, args), caller).await
    }

    /// Serves [`GetPrompt`](super::GetPrompt).
    pub(super) async fn prompt_get(
        &self,
        name: &str,
        args: Value,
        caller: Caller,
    ) -> Result<PromptReply, ToolError> {
        let call_name = PromptTool::call_name(name);
        let ran = self
            .pipeline
            .call(
                &self.items.catalog,
                &call_name,
                crate::pipeline::Input::Value(args),
                self.context(caller),
            )
            .await;
        match ran.envelope.outcome {
            Ok(value) => serde_json::from_value(value)
                .map_err(|e| ToolError::internal(format_args!("unreadable messages: {e}"))),
            Err(e) if ran.tool.is_none() && e.kind() == ErrorKind::UNKNOWN_TOOL => {
                Err(not_found("prompt named", name, "name"))
            }
            Err(e) => Err(e),
        }
    }

    /// Whether any prompt argument or template variable offers completions.
    #[must_use]
    pub fn has_completions(&self) -> bool {
        let index = self.items.index();
        index
            .resources
            .iter()
            .any(|r| r.meta.variables.iter().any(|v| v.completes))
            || index
                .prompts
                .values()
                .any(|p| p.meta.arguments.iter().any(|a| a.completes))
    }

    /// The values offered for `argument` of the prompt or template `reference`, given what
    /// the user typed (`value`) and the other arguments (`others`): at most 100, with the
    /// total when there were more. An argument without completions offers none.
    pub async fn complete(
        &self,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        others: BTreeMap<String, String>,
        caller: Caller,
    ) -> Result<Completion, ToolError> {
        let request = super::Complete::new(reference, argument, value).others(others);
        self.handle(request, caller).await
    }

    /// Serves [`Complete`](super::Complete).
    pub(super) async fn completion(
        &self,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        others: BTreeMap<String, String>,
        caller: Caller,
    ) -> Result<Completion, ToolError> {
        let ctx = self.context(caller);
        let index = self.items.index();
        let unknown_argument = || {
            ToolError::invalid_arguments(vec![Violation::new(
                "/argument/name",
                "unknown",
                format!("no argument `{argument}` to complete"),
            )])
        };
        let request = serde_json::json!({
            "complete": { "argument": argument, "value": value, "others": others },
        });
        let completing = Completing {
            argument: Arc::from(argument),
            value: value.to_owned(),
            others,
            ctx: ctx.clone(),
        };
        let (item, run) = match reference {
            CompletionRef::Prompt(name) => {
                let found = index.prompts.get(name).and_then(|p| {
                    let item = self.admitted(&PromptTool::call_name(&p.meta.name), &ctx)?;
                    Some((p, item))
                });
                let Some((p, item)) = found else {
                    return Err(not_found("prompt named", name, "name"));
                };
                if !p.meta.arguments.iter().any(|a| a.name == argument) {
                    return Err(unknown_argument());
                }
                (item, p.prompt.complete(completing))
            }
            CompletionRef::Resource(uri) => {
                let found = index.resources.iter().find_map(|r| {
                    if r.meta.uri != *uri {
                        return None;
                    }
                    let item = self.admitted(&ResourceTool::call_name(&r.meta.name), &ctx)?;
                    Some((r, item))
                });
                let Some((r, item)) = found else {
                    return Err(not_found("resource template", uri, "uri"));
                };
                if !r.template.variables().any(|v| v == argument) {
                    return Err(unknown_argument());
                }
                screen_completing(&r.meta, &completing)?;
                (item, r.resource.complete(completing))
            }
        };
        let Some(run) = run else {
            return Ok(Completion::default());
        };
        let values = self.pipeline.serve(&item, &ctx, request, run).await?;
        Ok(Completion::of(values))
    }

    /// Adds resources and prompts at run time (a mounted server's, say) and removes those
    /// named, in one change: all or none. Clients following changes are told.
    pub(crate) fn replace_items(
        &self,
        remove_resources: &[String],
        remove_prompts: &[String],
        resources: Vec<Arc<dyn Resource>>,
        prompts: Vec<Arc<dyn Prompt>>,
    ) -> Result<(), BuildError> {
        self.items
            .replace(remove_resources, remove_prompts, resources, prompts, false)
    }

    /// Adds a resource at run time; see [`RegistryBuilder::resource`](super::RegistryBuilder::resource).
    pub fn add_resource<R: super::IntoArc<dyn Resource>>(
        &self,
        resource: R,
    ) -> Result<(), BuildError> {
        self.replace_items(&[], &[], vec![resource.into_arc()], Vec::new())
    }

    /// Removes the resource `name` added at run time; `false` if there was none.
    #[allow(clippy::must_use_candidate)] // Reason: the removal is the point; its answer may go unread.
    pub fn remove_resource(&self, name: &str) -> bool {
        let known = self
            .items
            .index()
            .resources
            .iter()
            .any(|r| r.meta.name == name)
            && self
                .items
                .catalog
                .remove_tool(&ResourceTool::call_name(name));
        known
            && self
                .replace_items(&[name.to_owned()], &[], Vec::new(), Vec::new())
                .is_ok()
    }

    /// Adds a prompt at run time; see [`RegistryBuilder::prompt`](super::RegistryBuilder::prompt).
    pub fn add_prompt<P: super::IntoArc<dyn Prompt>>(&self, prompt: P) -> Result<(), BuildError> {
        self.replace_items(&[], &[], Vec::new(), vec![prompt.into_arc()])
    }

    /// Removes the prompt `name` added at run time; `false` if there was none.
    #[allow(clippy::must_use_candidate)] // Reason: the removal is the point; its answer may go unread.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let known = self.items.index().prompts.contains_key(name)
            && self.items.catalog.remove_tool(&PromptTool::call_name(name));
        known
            && self
                .replace_items(&[], &[name.to_owned()], Vec::new(), Vec::new())
                .is_ok()
    }
}

/// The item a request names, for [`Registry::scope_refusal`].
#[derive(Debug, Clone, Copy)]
pub enum ScopedItem<'a> {
    /// A call of the tool of this name.
    Tool(&'a str),
    /// A get of the prompt of this name.
    Prompt(&'a str),
    /// A read of the resource at this URI.
    Resource(&'a str),
}
