//! Why tools could not be registered.

use std::fmt;

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
    /// A resource or prompt cannot be served as declared: a URI template that does not parse,
    /// two resources one URI would match alike, a name used twice.
    Item {
        /// `resource `name`` or `prompt `name``.
        item: String,
        /// Where it is defined.
        defined_at: String,
        /// What is wrong, and what to do.
        problem: String,
    },
    /// A tool's input schema cannot be validated: a keyword outside the set tool-runtime's own
    /// validator knows (without the `jsonschema` feature), or a keyword whose value is malformed.
    InputSchema {
        /// The tool.
        tool: String,
        /// Where the tool is defined.
        defined_at: String,
        /// What is wrong, and what to do.
        problem: String,
    },
    /// Items take `State<T>` and no `T` was registered: one problem per type.
    MissingState {
        /// The state type.
        type_name: &'static str,
        /// The items that take it: `tool `name``, `resource `name``, `prompt `name``.
        items: Vec<String>,
        /// An `Arc<T>` was registered instead (a `State<T>` is shared already).
        arc_registered: bool,
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
            BuildProblem::Item {
                item,
                defined_at,
                problem,
            } => write!(f, "{item} ({defined_at}): {problem}"),
            BuildProblem::InputSchema {
                tool,
                defined_at,
                problem,
            } => write!(
                f,
                "the input schema of tool `{tool}` ({defined_at}): {problem}"
            ),
            BuildProblem::MissingState {
                type_name,
                items,
                arc_registered,
            } => {
                write!(
                    f,
                    "no `{type_name}` was registered, which {} take{} as State<{type_name}>; register one with `.state(value)` on the registry builder (`app!().state(value)`, or in `App::setup`)",
                    items.join(", "),
                    if items.len() == 1 { "s" } else { "" },
                )?;
                if *arc_registered {
                    write!(
                        f,
                        "; an `Arc<{type_name}>` was registered: register the `{type_name}` itself, which State<{type_name}> shares already"
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// `problems` with the missing state of every item said once per type, in the order first
/// found: one line naming the type and every item that takes it.
pub(crate) fn grouped(problems: Vec<BuildProblem>) -> Vec<BuildProblem> {
    let mut out: Vec<BuildProblem> = Vec::with_capacity(problems.len());
    for problem in problems {
        if let BuildProblem::MissingState {
            type_name, items, ..
        } = &problem
            && let Some(BuildProblem::MissingState { items: seen, .. }) = out.iter_mut().find(
                |p| matches!(p, BuildProblem::MissingState { type_name: t, .. } if t == type_name),
            )
        {
            seen.extend(items.iter().cloned());
            continue;
        }
        out.push(problem);
    }
    out
}

/// Every problem found while building a registry, or while adding tools to a running one
/// (then nothing was added).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    /// The problems, in the order found.
    pub problems: Vec<BuildProblem>,
    /// Whether the tools came to a running registry.
    pub(crate) at_run_time: bool,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at_run_time {
            write!(f, "the tools were not added:")?;
        } else {
            write!(f, "the tool registry cannot be built:")?;
        }
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}
