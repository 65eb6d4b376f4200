//! Resources and prompts in the registry: the index a URI or name is found in, and the reads,
//! gets and completions every front end asks for. Each read and get passes the call pipeline
//! as a tool call does, under the name `resource:{name}` or `prompt:{name}`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::Value;

use crate::catalog::toolset::{MountError, Toolset};
use crate::catalog::{Arrival, BuildError, BuildProblem, Catalog, RegisteredTool};
use crate::prompt::{Prompt, PromptMeta, PromptReply, PromptTool};
use crate::resource::{Listed, Resource, ResourceContents, ResourceMeta, ResourceTool, URI_ARG};
use crate::resource::{UriTemplate, template::TemplateError};
use crate::tool::caller::Caller;
use crate::tool::complete::{Completing, Completion, CompletionRef};
use crate::tool::definition::Tool;
use crate::tool::error::{ErrorKind, ToolError, Violation};
use crate::tool::notify::{Change, Notifier};

use super::Registry;

/// The longest a template's list or a completion may take.
const AUX_TIMEOUT: Duration = Duration::from_secs(10);

/// A resource as the registry holds it.
#[derive(Clone)]
pub(crate) struct ResourceEntry {
    pub(crate) resource: Arc<dyn Resource>,
    pub(crate) meta: Arc<ResourceMeta>,
    pub(crate) template: UriTemplate,
}

/// A prompt as the registry holds it.
#[derive(Clone)]
pub(crate) struct PromptEntry {
    pub(crate) prompt: Arc<dyn Prompt>,
    pub(crate) meta: Arc<PromptMeta>,
}

/// The resources (static URIs first, then templates from the most literal characters to the
/// fewest) and the prompts by name.
#[derive(Clone, Default)]
pub(crate) struct Index {
    pub(crate) resources: Vec<ResourceEntry>,
    pub(crate) prompts: BTreeMap<String, PromptEntry>,
}

/// The names of the resources and of the prompts a mounted toolset brought.
type Brought = (Vec<String>, Vec<String>);

/// The resources and prompts: the index, and the catalogue the pipeline runs them from.
pub(crate) struct Items {
    pub(crate) catalog: Catalog,
    index: RwLock<Arc<Index>>,
    notifier: Arc<dyn Notifier>,
    /// The names of the resources and prompts each mounted toolset brought.
    mounted: Mutex<HashMap<String, Brought>>,
}

fn item_problem(item: String, defined_at: &str, problem: String) -> BuildProblem {
    BuildProblem::Item {
        item,
        defined_at: defined_at.to_owned(),
        problem,
    }
}

impl Index {
    /// Adds the resources and prompts, checking each against the rest.
    pub(crate) fn add(
        &mut self,
        resources: Vec<Arc<dyn Resource>>,
        prompts: Vec<Arc<dyn Prompt>>,
    ) -> Result<Vec<Arrival>, Vec<BuildProblem>> {
        let mut problems = Vec::new();
        let mut tools: Vec<Arrival> = Vec::new();
        let mut arrivals: Vec<_> = resources
            .into_iter()
            .map(|r| self.add_resource(r))
            .collect();
        arrivals.extend(prompts.into_iter().map(|p| self.add_prompt(p)));
        for arrival in arrivals {
            match arrival {
                Ok(Some(tool)) => tools.push(tool),
                Ok(None) => {}
                Err(problem) => problems.push(problem),
            }
        }
        self.resources.sort_by(|a, b| {
            let key = |r: &ResourceEntry| {
                (
                    !r.template.is_static(),
                    std::cmp::Reverse(r.template.literal_len()),
                    r.meta.uri.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
        if problems.is_empty() {
            Ok(tools)
        } else {
            Err(problems)
        }
    }

    /// Adds one resource and returns its adapter for the pipeline; `None` when it is one
    /// registered already.
    fn add_resource(
        &mut self,
        resource: Arc<dyn Resource>,
    ) -> Result<Option<Arrival>, BuildProblem> {
        let meta = Arc::new(resource.meta());
        let problem =
            |p: String| item_problem(format!("resource `{}`", meta.name), &meta.defined_at, p);
        let template = UriTemplate::parse(&meta.uri).map_err(|TemplateError(e)| problem(e))?;
        if let Some(other) = self.resources.iter().find(|r| r.meta.name == meta.name) {
            // The same `#[resource]` found through inventory and added by hand is one.
            if same_fn(&other.meta.defined_at, &meta.defined_at) && other.meta.uri == meta.uri {
                return Ok(None);
            }
            return Err(problem(format!(
                "another resource has this name ({}); rename one (#[resource(name = \"...\")])",
                other.meta.defined_at
            )));
        }
        let clash = self.resources.iter().find(|r| {
            if template.is_static() || r.template.is_static() {
                r.meta.uri == meta.uri
            } else {
                r.template.literal_len() == template.literal_len() && r.template.overlaps(&template)
            }
        });
        if let Some(other) = clash {
            return Err(problem(format!(
                "`{}` and `{}` of resource `{}` ({}) can match the same URI and neither is more specific; make one's literal part longer or tell them apart by a literal",
                meta.uri, other.meta.uri, other.meta.name, other.meta.defined_at
            )));
        }
        let adapter = ResourceTool {
            resource: Arc::clone(&resource),
            meta: (*meta).clone(),
            template: template.clone(),
        };
        let origin = Some(meta.defined_at.clone());
        self.resources.push(ResourceEntry {
            resource,
            meta,
            template,
        });
        Ok(Some((Arc::new(adapter) as Arc<dyn Tool>, origin)))
    }

    /// Adds one prompt and returns its adapter for the pipeline; `None` when it is one
    /// registered already.
    fn add_prompt(&mut self, prompt: Arc<dyn Prompt>) -> Result<Option<Arrival>, BuildProblem> {
        let meta = Arc::new(prompt.meta());
        if let Some(other) = self.prompts.get(&*meta.name) {
            if same_fn(&other.meta.defined_at, &meta.defined_at) {
                return Ok(None);
            }
            return Err(item_problem(
                format!("prompt `{}`", meta.name),
                &meta.defined_at,
                format!(
                    "another prompt has this name ({}); rename one (#[prompt(name = \"...\")])",
                    other.meta.defined_at
                ),
            ));
        }
        let adapter = PromptTool {
            prompt: Arc::clone(&prompt),
            meta: (*meta).clone(),
        };
        let origin = Some(meta.defined_at.clone());
        self.prompts
            .insert(meta.name.to_string(), PromptEntry { prompt, meta });
        Ok(Some((Arc::new(adapter) as Arc<dyn Tool>, origin)))
    }

    /// The resource a URI reads, and its variables' values: a static URI first, then the most
    /// specific template.
    fn find(&self, uri: &str) -> Option<(&ResourceEntry, BTreeMap<String, String>)> {
        self.resources
            .iter()
            .find_map(|r| r.template.matches(uri).map(|values| (r, values)))
    }
}

/// Whether two items defined at these places are one fn registered twice (through inventory
/// and by hand): a macro's origin names its file and line.
fn same_fn(a: &str, b: &str) -> bool {
    a == b && a != crate::tool::definition::UNSTATED_ORIGIN
}

/// The adapters of an index, keyed by their pipeline names.
pub(crate) fn fixed_tools(arrivals: Vec<Arrival>) -> BTreeMap<Arc<str>, RegisteredTool> {
    arrivals
        .into_iter()
        .map(|(tool, origin)| {
            let entry = RegisteredTool::new(tool, origin);
            (Arc::from(entry.name()), entry)
        })
        .collect()
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

    fn index(&self) -> Arc<Index> {
        self.index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

fn not_found(what: &str, uri_or_name: &str, key: &str) -> ToolError {
    ToolError::new(ErrorKind::NOT_FOUND, format!("no {what} `{uri_or_name}`"))
        .with_details(serde_json::json!({ key: uri_or_name }))
}

/// What a resource read answers: the contents, and the resource that answered.
#[derive(Debug, Clone)]
pub struct ResourceRead {
    /// The contents: one or more.
    pub contents: Vec<ResourceContents>,
    /// The resource (or template) that was read.
    pub resource: Arc<ResourceMeta>,
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
        let ctx = self.context(caller.clone());
        self.items
            .index()
            .resources
            .iter()
            .filter(|r| self.admits(&ResourceTool::call_name(&r.meta.name), &ctx))
            .map(|r| Arc::clone(&r.meta))
            .collect()
    }

    /// Whether the policies admit the item `name` of the items' catalogue for `ctx`.
    fn admits(&self, name: &str, ctx: &crate::tool::context::CallContext) -> bool {
        self.items
            .catalog
            .get(name)
            .is_some_and(|t| self.pipeline.admit(t.meta(), ctx).is_ok())
    }

    /// Every concrete resource `caller` may see, as `resources/list` gives them: the static
    /// ones, then those each visible template lists (a template whose list fails is logged
    /// and left out), each with the resource or template it belongs to.
    pub async fn list_resources(&self, caller: &Caller) -> Vec<(Listed, Arc<ResourceMeta>)> {
        let ctx = self.context(caller.clone());
        let index = self.items.index();
        let mut out = Vec::new();
        for entry in &index.resources {
            if !self.admits(&ResourceTool::call_name(&entry.meta.name), &ctx) {
                continue;
            }
            let meta = &entry.meta;
            if entry.template.is_static() {
                let mut listed = Listed::new(meta.uri.to_string(), meta.name.to_string());
                listed.title = Some(meta.title.to_string());
                listed.description =
                    (!meta.description.is_empty()).then(|| meta.description.to_string());
                listed.mime_type = meta.mime_type.as_ref().map(ToString::to_string);
                out.push((listed, Arc::clone(meta)));
                continue;
            }
            let Some(listing) = entry.resource.list(ctx.clone()) else {
                continue;
            };
            match tokio::time::timeout(AUX_TIMEOUT, listing).await {
                Ok(Ok(items)) => out.extend(items.into_iter().map(|mut l| {
                    if l.mime_type.is_none() {
                        l.mime_type = meta.mime_type.as_ref().map(ToString::to_string);
                    }
                    (l, Arc::clone(meta))
                })),
                Ok(Err(e)) => {
                    tracing::warn!(resource = %meta.name, error = %e, "a resource template's list failed");
                }
                Err(_) => {
                    tracing::warn!(resource = %meta.name, "a resource template's list timed out");
                }
            }
        }
        out
    }

    /// Reads the resource at `uri` for `caller`, through the call pipeline. A URI no visible
    /// resource matches is `not_found`, with `uri` in its details.
    pub async fn read_resource(
        &self,
        uri: &str,
        caller: Caller,
    ) -> Result<ResourceRead, ToolError> {
        let index = self.items.index();
        let Some((entry, values)) = index.find(uri) else {
            return Err(not_found("resource at", uri, "uri"));
        };
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
                self.context(caller),
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
        let ctx = self.context(caller.clone());
        self.items
            .index()
            .prompts
            .values()
            .filter(|p| self.admits(&PromptTool::call_name(&p.meta.name), &ctx))
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
        let ctx = self.context(caller);
        let index = self.items.index();
        let completing = Completing {
            argument: Arc::from(argument),
            value: value.to_owned(),
            others,
            ctx: ctx.clone(),
        };
        let unknown_argument = || {
            ToolError::invalid_arguments(vec![Violation::new(
                "/argument/name",
                "unknown",
                format!("no argument `{argument}` to complete"),
            )])
        };
        let run = match reference {
            CompletionRef::Prompt(name) => {
                let Some(p) = index
                    .prompts
                    .get(name)
                    .filter(|p| self.admits(&PromptTool::call_name(&p.meta.name), &ctx))
                else {
                    return Err(not_found("prompt named", name, "name"));
                };
                if !p.meta.arguments.iter().any(|a| a.name == argument) {
                    return Err(unknown_argument());
                }
                p.prompt.complete(completing)
            }
            CompletionRef::Resource(uri) => {
                let Some(r) = index.resources.iter().find(|r| {
                    r.meta.uri == *uri && self.admits(&ResourceTool::call_name(&r.meta.name), &ctx)
                }) else {
                    return Err(not_found("resource template", uri, "uri"));
                };
                if !r.template.variables().any(|v| v == argument) {
                    return Err(unknown_argument());
                }
                r.resource.complete(completing)
            }
        };
        let Some(run) = run else {
            return Ok(Completion::default());
        };
        match tokio::time::timeout(AUX_TIMEOUT, run).await {
            Ok(values) => Ok(Completion::of(values?)),
            Err(_) => Err(ToolError::new(
                ErrorKind::TIMEOUT,
                format!("completing `{argument}` took longer than {AUX_TIMEOUT:?}"),
            )),
        }
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
        let mut guard = self
            .items
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
            .add(resources, prompts)
            .map_err(|problems| BuildError {
                problems,
                at_run_time: true,
            })?;
        let removed: Vec<String> = remove_resources
            .iter()
            .map(|n| ResourceTool::call_name(n))
            .chain(remove_prompts.iter().map(|n| PromptTool::call_name(n)))
            .collect();
        self.items.catalog.replace_tools(&removed, arrivals)?;
        *guard = Arc::new(next);
        drop(guard);
        if resources_changed {
            self.items.notifier.publish(Change::ResourcesChanged);
        }
        if prompts_changed {
            self.items.notifier.publish(Change::PromptsChanged);
        }
        Ok(())
    }

    /// Mounts the resources and prompts of the toolset `name`.
    pub(super) async fn mount_items(
        &self,
        name: &str,
        toolset: Arc<dyn Toolset>,
    ) -> Result<(), MountError> {
        let items = match toolset.items().await {
            Ok(items) => items,
            Err(e) => {
                tracing::warn!(toolset = %name, error = %e, "listing the toolset's resources and prompts failed; its tools are mounted without them");
                return Ok(());
            }
        };
        if items.resources.is_empty() && items.prompts.is_empty() {
            return Ok(());
        }
        let resources: Vec<String> = items
            .resources
            .iter()
            .map(|r| r.meta().name.to_string())
            .collect();
        let prompts: Vec<String> = items
            .prompts
            .iter()
            .map(|p| p.meta().name.to_string())
            .collect();
        self.replace_items(&[], &[], items.resources, items.prompts)
            .map_err(MountError::Items)?;
        self.items
            .mounted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(name.to_owned(), (resources, prompts));
        Ok(())
    }

    /// Removes the resources and prompts the toolset `name` brought.
    pub(super) fn unmount_items(&self, name: &str) {
        let brought = self
            .items
            .mounted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(name);
        if let Some((resources, prompts)) = brought {
            // Removing only cannot fail.
            let _ = self.replace_items(&resources, &prompts, Vec::new(), Vec::new());
        }
    }

    /// Adds a resource at run time; see [`RegistryBuilder::resource`](super::RegistryBuilder::resource).
    pub fn add_resource<R: super::IntoArc<dyn Resource>>(
        &self,
        resource: R,
    ) -> Result<(), BuildError> {
        self.replace_items(&[], &[], vec![resource.into_arc()], Vec::new())
    }

    /// Removes the resource `name` added at run time; `false` if there was none.
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
    pub fn remove_prompt(&self, name: &str) -> bool {
        let known = self.items.index().prompts.contains_key(name)
            && self.items.catalog.remove_tool(&PromptTool::call_name(name));
        known
            && self
                .replace_items(&[], &[name.to_owned()], Vec::new(), Vec::new())
                .is_ok()
    }
}
