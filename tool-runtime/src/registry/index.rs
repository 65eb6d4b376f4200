//! The index of the resources and prompts: where a URI or a name is found, checked as each
//! arrives (a template that does not parse, a name used twice, two templates one URI would
//! match alike), with the adapters the pipeline runs them as.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::catalog::{Arrival, BuildProblem, RegisteredTool};
use crate::prompt::{Prompt, PromptMeta, PromptTool};
use crate::resource::{Resource, ResourceMeta, ResourceTool, UriTemplate, template::TemplateError};
use crate::tool::definition::Tool;

/// A resource as the registry holds it.
#[derive(Clone)]
pub(crate) struct ResourceEntry {
    pub(crate) resource: Arc<dyn Resource>,
    pub(crate) meta: Arc<ResourceMeta>,
    pub(crate) template: UriTemplate,
    /// Brought by a mounted toolset: tried after every resource of the host's own, so a
    /// mounted server cannot capture the host's URIs with a more specific template.
    pub(crate) mounted: bool,
}

/// A prompt as the registry holds it.
#[derive(Clone)]
pub(crate) struct PromptEntry {
    pub(crate) prompt: Arc<dyn Prompt>,
    pub(crate) meta: Arc<PromptMeta>,
}

/// The resources (the host's own, then those mounted toolsets brought; in each, static URIs
/// first, then templates from the most literal characters to the fewest) and the prompts by
/// name.
#[derive(Clone, Default)]
pub(crate) struct Index {
    pub(crate) resources: Vec<ResourceEntry>,
    pub(crate) prompts: BTreeMap<String, PromptEntry>,
}

fn item_problem(item: String, defined_at: &str, problem: String) -> BuildProblem {
    BuildProblem::Item {
        item,
        defined_at: defined_at.to_owned(),
        problem,
    }
}

impl Index {
    /// Adds the resources and prompts, checking each against the rest; `mounted` when a
    /// mounted toolset brings them.
    pub(crate) fn add(
        &mut self,
        resources: Vec<Arc<dyn Resource>>,
        prompts: Vec<Arc<dyn Prompt>>,
        mounted: bool,
    ) -> Result<Vec<Arrival>, Vec<BuildProblem>> {
        let mut problems = Vec::new();
        let mut tools: Vec<Arrival> = Vec::new();
        let mut arrivals: Vec<_> = resources
            .into_iter()
            .map(|r| self.add_resource(r, mounted))
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
                    r.mounted,
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
        mounted: bool,
    ) -> Result<Option<Arrival>, BuildProblem> {
        let meta = Arc::new(resource.meta());
        let problem = |p: String| {
            item_problem(
                format!("resource `{}`", meta.name),
                &meta.options.defined_at,
                p,
            )
        };
        let template = UriTemplate::parse(&meta.uri).map_err(|TemplateError(e)| problem(e))?;
        if let Some(other) = self.resources.iter().find(|r| r.meta.name == meta.name) {
            // The same `#[resource]` found through inventory and added by hand is one.
            if same_fn(&other.meta.options.defined_at, &meta.options.defined_at)
                && other.meta.uri == meta.uri
            {
                return Ok(None);
            }
            return Err(problem(format!(
                "another resource has this name ({}); rename one (#[resource(name = \"...\")])",
                other.meta.options.defined_at
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
                meta.uri, other.meta.uri, other.meta.name, other.meta.options.defined_at
            )));
        }
        let adapter = ResourceTool {
            resource: Arc::clone(&resource),
            meta: (*meta).clone(),
            template: template.clone(),
        };
        let origin = Some(meta.options.defined_at.clone());
        self.resources.push(ResourceEntry {
            resource,
            meta,
            template,
            mounted,
        });
        Ok(Some((Arc::new(adapter) as Arc<dyn Tool>, origin)))
    }

    /// Adds one prompt and returns its adapter for the pipeline; `None` when it is one
    /// registered already.
    fn add_prompt(&mut self, prompt: Arc<dyn Prompt>) -> Result<Option<Arrival>, BuildProblem> {
        let meta = Arc::new(prompt.meta());
        if let Some(other) = self.prompts.get(&*meta.name) {
            if same_fn(&other.meta.options.defined_at, &meta.options.defined_at) {
                return Ok(None);
            }
            return Err(item_problem(
                format!("prompt `{}`", meta.name),
                &meta.options.defined_at,
                format!(
                    "another prompt has this name ({}); rename one (#[prompt(name = \"...\")])",
                    other.meta.options.defined_at
                ),
            ));
        }
        let adapter = PromptTool {
            prompt: Arc::clone(&prompt),
            meta: (*meta).clone(),
        };
        let origin = Some(meta.options.defined_at.clone());
        self.prompts
            .insert(meta.name.to_string(), PromptEntry { prompt, meta });
        Ok(Some((Arc::new(adapter) as Arc<dyn Tool>, origin)))
    }

    /// The resource a URI reads among those `visible` lets through, and its variables' values:
    /// the host's before a mounted toolset's, a static URI first, then the most specific
    /// template. A resource `visible` refuses is never matched against the URI.
    pub(crate) fn find(
        &self,
        uri: &str,
        visible: impl Fn(&ResourceEntry) -> bool,
    ) -> Option<(&ResourceEntry, BTreeMap<String, String>)> {
        self.resources
            .iter()
            .filter(|r| visible(r))
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
