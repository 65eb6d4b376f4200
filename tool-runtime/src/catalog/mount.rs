//! Mounting a [toolset](crate::toolset::Toolset) into the catalogue: the registry names of
//! its tools, the tools renamed and registered, and the task that follows its changes.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, Weak};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{BuildError, BuildProblem, Catalog, Mounted, is_valid_name};
use crate::tool::context::CallContext;
use crate::tool::definition::{Tool, ToolMeta};
use crate::tool::error::ToolError;
use crate::toolset::{Toolset, ToolsetStatus, ToolsetTool};

/// Why a toolset could not be mounted.
#[derive(Debug)]
#[non_exhaustive]
pub enum MountError {
    /// A toolset of that name is mounted already.
    AlreadyMounted(String),
    /// Listing its tools failed.
    Listing(ToolError),
    /// Its tools could not be added (a name taken or not portable, ...); nothing was added.
    Tools(BuildError),
    /// Its resources or prompts could not be added (a URI another provider serves, ...);
    /// nothing was mounted.
    Items(BuildError),
}

impl fmt::Display for MountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MountError::AlreadyMounted(name) => {
                write!(f, "a toolset named `{name}` is mounted already")
            }
            MountError::Listing(e) => write!(f, "listing the toolset's tools failed: {e}"),
            MountError::Tools(e) | MountError::Items(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for MountError {}
/// `{component}-{tool}`, the registry name of a toolset's tool: shortened to 64 characters
/// with a stable hash of the whole when longer (the same inputs always give the same name),
/// then checked against the portable rule `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
pub(crate) fn toolset_tool_name(component: &str, tool: &str) -> Result<String, String> {
    let full = format!("{component}-{tool}");
    let name = if full.len() <= 64 {
        full.clone()
    } else {
        let hash = format!("{:016x}", crate::catalog::stable_hash(full.as_bytes()));
        let mut cut = 64 - 9;
        while !full.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}-{}", &full[..cut], &hash[..8])
    };
    if is_valid_name(&name) {
        Ok(name)
    } else {
        Err(format!(
            "`{full}` cannot be a tool name: names must match ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$"
        ))
    }
}

/// A toolset's tool as the registry holds it.
struct MountedTool {
    toolset: Arc<dyn Toolset>,
    remote: String,
    tool: ToolsetTool,
}

impl Tool for MountedTool {
    fn meta(&self) -> ToolMeta {
        self.tool.meta.clone()
    }
    fn input_schema(&self) -> Value {
        self.tool.input_schema.clone()
    }
    fn output_schema(&self) -> Value {
        self.tool.output_schema.clone()
    }
    fn call(&self, args: Value, ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        self.toolset.call(&self.remote, args, ctx)
    }
}

/// The toolset's tools renamed for the registry, or the problems with their names.
fn renamed(
    toolset: &Arc<dyn Toolset>,
    tools: Vec<ToolsetTool>,
) -> Result<Vec<crate::catalog::Arrival>, BuildError> {
    let component = toolset.name().to_owned();
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for mut tool in tools {
        let remote = tool.meta.name.to_string();
        let origin = format!("toolset `{component}` (its tool `{remote}`)");
        match toolset_tool_name(&component, &remote) {
            Ok(name) => {
                tool.meta.name = Cow::Owned(name);
                tool.meta.options.defined_at = Cow::Owned(origin.clone());
                out.push((
                    Arc::new(MountedTool {
                        toolset: toolset.clone(),
                        remote,
                        tool,
                    }) as Arc<dyn Tool>,
                    Some(Cow::Owned(origin)),
                ));
            }
            Err(_) => problems.push(BuildProblem::InvalidName {
                name: format!("{component}-{remote}"),
                defined_at: origin,
            }),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(BuildError {
            problems,
            at_run_time: true,
        })
    }
}

impl Catalog {
    /// See [`Registry::mount`](crate::Registry::mount).
    pub(crate) async fn mount(
        self: &Arc<Self>,
        toolset: Arc<dyn Toolset>,
    ) -> Result<Vec<String>, MountError> {
        let name = toolset.name().to_owned();
        if self.mounted_lock().contains_key(&name) {
            return Err(MountError::AlreadyMounted(name));
        }
        let tools = toolset.tools().await.map_err(MountError::Listing)?;
        let tools = renamed(&toolset, tools).map_err(MountError::Tools)?;
        let names: Vec<String> = tools
            .iter()
            .map(|(t, _)| t.meta().name.to_string())
            .collect();
        {
            let mut mounted = self.mounted_lock();
            if mounted.contains_key(&name) {
                return Err(MountError::AlreadyMounted(name));
            }
            self.add_tools(tools).map_err(MountError::Tools)?;
            mounted.insert(
                name.clone(),
                Mounted {
                    toolset: toolset.clone(),
                    names: names.clone(),
                    watcher: None,
                },
            );
        }
        if let Some(mut changes) = toolset.changes() {
            let catalog: Weak<Catalog> = Arc::downgrade(self);
            let component = name.clone();
            let task = tokio::spawn(async move {
                while changes.next().await.is_some() {
                    let Some(catalog) = catalog.upgrade() else {
                        return;
                    };
                    catalog.refresh(&component, &toolset).await;
                }
            });
            if let Some(m) = self.mounted_lock().get_mut(&name) {
                m.watcher = Some(task.abort_handle());
            } else {
                task.abort();
            }
        }
        Ok(names)
    }

    /// Lists a mounted toolset's tools again and replaces the old ones with them.
    async fn refresh(&self, component: &str, toolset: &Arc<dyn Toolset>) {
        let listed = toolset.tools().await.map_err(|e| e.to_string());
        let tools = listed.and_then(|t| renamed(toolset, t).map_err(|e| e.to_string()));
        let mut mounted = self.mounted_lock();
        let Some(m) = mounted.get_mut(component) else {
            return;
        };
        let outcome = tools.and_then(|tools| {
            let names: Vec<String> = tools
                .iter()
                .map(|(t, _)| t.meta().name.to_string())
                .collect();
            self.replace_tools(&m.names, tools)
                .map(|()| names)
                .map_err(|e| e.to_string())
        });
        match outcome {
            Ok(names) => m.names = names,
            Err(e) => tracing::warn!(
                target: "tool_runtime::toolset",
                toolset = component,
                error = %e,
                "the toolset's tools changed, but the new list was not taken; the old one stays"
            ),
        }
    }

    /// Removes a mounted toolset and its tools; `false` if none of that name is mounted.
    /// Calls already running finish.
    pub(crate) fn unmount(&self, name: &str) -> bool {
        let Some(m) = self.mounted_lock().remove(name) else {
            return false;
        };
        if let Some(watcher) = m.watcher {
            watcher.abort();
        }
        // Removing only cannot fail.
        let _ = self.replace_tools(&m.names, Vec::new());
        true
    }

    /// The names of the mounted toolsets, sorted.
    pub(crate) fn toolsets(&self) -> Vec<String> {
        let mut names: Vec<String> = self.mounted_lock().keys().cloned().collect();
        names.sort();
        names
    }

    /// See [`Registry::toolset_status`](crate::Registry::toolset_status).
    pub(crate) async fn toolset_status(&self) -> Vec<ToolsetStatus> {
        let mut mounted: Vec<(String, usize, Arc<dyn Toolset>)> = self
            .mounted_lock()
            .iter()
            .map(|(name, m)| (name.clone(), m.names.len(), m.toolset.clone()))
            .collect();
        mounted.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = Vec::with_capacity(mounted.len());
        for (name, tools, toolset) in mounted {
            out.push(ToolsetStatus {
                name,
                tools,
                health: toolset.health().await,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_component_dash_tool_within_64_characters() {
        assert_eq!(
            toolset_tool_name("github", "create_issue").unwrap(),
            "github-create_issue"
        );
        let long = toolset_tool_name("a_component", &"t".repeat(80)).unwrap();
        assert_eq!(long.len(), 64);
        assert!(toolset_tool_name("github", "create issue").is_err());
    }

    #[test]
    fn long_names_are_shortened_stably() {
        let a = toolset_tool_name("component", &"x".repeat(100)).unwrap();
        let b = toolset_tool_name("component", &"x".repeat(100)).unwrap();
        let c = toolset_tool_name("component", &"x".repeat(101)).unwrap();
        assert_eq!(a, b);
        assert_ne!(
            a, c,
            "the hash tells apart names that share their first 55 characters"
        );
        assert_eq!(a.len(), 64);
        assert!(a.starts_with("component-xxx"));
        assert!(toolset_tool_name("9lives", "x").is_err());
        assert!(toolset_tool_name("a.b", "x").is_err());
    }
}
