//! What a tool is: metadata, schemas and a call, behind one object-safe trait.
//!
//! `#[tool]` fns become a const [`ToolDescriptor`] submitted to `inventory`; code that discovers
//! tools at run time implements [`Tool`] directly. The registry holds both as `Arc<dyn Tool>`,
//! so no front end can tell them apart.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;

use crate::tool::context::CallContext;
use crate::tool::error::ToolError;
use crate::tool::options::{ItemOptions, OptionsDescriptor};

/// Hints about a tool's behaviour, as MCP's tool annotations define them.
///
/// `None` means "not stated"; front ends then assume the cautious default (not read-only,
/// possibly destructive only when stated).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Annotations {
    /// The tool does not change its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite data; callers must confirm it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// It reaches entities outside the application (the web, other services).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl Annotations {
    /// Whether calls must be confirmed: the tool is annotated `destructive` (and not read-only).
    #[must_use]
    pub fn needs_confirmation(&self) -> bool {
        self.destructive == Some(true) && self.read_only != Some(true)
    }
}

/// What a front end needs about one caller-supplied parameter beyond its schema: its flag
/// letter, whether it is positional on the command line, whether it names a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHint {
    /// The parameter's name, as in the schema.
    pub name: Cow<'static, str>,
    /// `#[arg(short = 'x')]`.
    pub short: Option<char>,
    /// `#[arg(positional)]`.
    pub positional: bool,
    /// The type is a `PathBuf`: the CLI completes file paths.
    pub path: bool,
}

/// A per-tool guard, `#[tool(guard = path)]`: may deny the call (`Err`, typically
/// `forbidden`) or rewrite its arguments with [`PendingCall::set_args`](crate::tool::PendingCall::set_args).
///
/// ```
/// use tool_runtime::tool::PendingCall;
/// use tool_runtime::ToolError;
/// fn business_hours_only(call: &mut PendingCall<'_>) -> Result<(), ToolError> {
///     if call.context().has_role("oncall") { Ok(()) } else { Err(ToolError::new("forbidden", "on-call only")) }
/// }
/// ```
pub type Guard = fn(&mut PendingCall<'_>) -> Result<(), ToolError>;

/// A call that passed validation and waits to run. Hooks read it, and guards may rewrite its
/// arguments.
///
/// The arguments are always there to read ([`args`](Self::args)): a front end that parsed the
/// body without building a `serde_json::Value` (the HTTP front end does) has it built on the
/// first read, so no layer can see anything but the call's own arguments.
pub struct PendingCall<'a> {
    pub(crate) meta: Arc<ToolMeta>,
    pub(crate) args: Arguments<'a>,
    pub(crate) ctx: CallContext,
}

/// A call's arguments: a value, or a parsed tree whose value is built when first asked for.
pub(crate) struct Arguments<'a> {
    value: OnceLock<Value>,
    tree: Option<&'a super::parsed::Node<'a>>,
    rewritten: bool,
}

impl<'a> Arguments<'a> {
    pub(crate) fn value(value: Value) -> Self {
        Self {
            value: OnceLock::from(value),
            tree: None,
            rewritten: false,
        }
    }

    pub(crate) fn tree(tree: &'a super::parsed::Node<'a>) -> Self {
        Self {
            value: OnceLock::new(),
            tree: Some(tree),
            rewritten: false,
        }
    }

    pub(crate) fn get(&self) -> &Value {
        self.value.get_or_init(|| {
            // The tree normalized its numbers as the `Value` path does.
            self.tree.map_or(Value::Null, super::parsed::Node::to_value)
        })
    }

    /// The value, built now if nobody asked for it yet.
    pub(crate) fn take(&mut self) -> Value {
        self.get();
        self.value.take().unwrap_or_default()
    }

    /// Normalizes numbers of rewritten arguments as the `Value` path does (`5.0` → `5`).
    pub(crate) fn normalize(&mut self) {
        if let Some(v) = self.value.get_mut() {
            super::parsed::normalize_numbers(v);
        }
    }

    /// Whether a guard or hook replaced the arguments.
    pub(crate) fn rewritten(&self) -> bool {
        self.rewritten
    }
}

impl PendingCall<'_> {
    /// The tool's metadata.
    #[must_use]
    pub fn meta(&self) -> &ToolMeta {
        &self.meta
    }

    /// The validated arguments.
    #[must_use]
    pub fn args(&self) -> &Value {
        self.args.get()
    }

    /// Replaces the arguments; the pipeline validates them again before the tool runs.
    pub fn set_args(&mut self, args: Value) {
        self.args.value = OnceLock::from(args);
        self.args.rewritten = true;
    }

    /// The caller and per-call handles.
    #[must_use]
    pub fn context(&self) -> &CallContext {
        &self.ctx
    }
}

impl fmt::Debug for PendingCall<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingCall")
            .field("tool", &self.meta.name)
            .field("ctx", &self.ctx)
            .finish_non_exhaustive()
    }
}

/// What the pipeline is asked to run: a tool's call, a resource's read or a prompt's get. All
/// three pass the same layers; a policy that should treat them apart reads
/// [`ToolMeta::kind`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A tool (`#[tool]`).
    #[default]
    Tool,
    /// A resource read (`#[resource]`), named `resource:{name}`.
    Resource,
    /// A prompt get (`#[prompt]`), named `prompt:{name}`.
    Prompt,
}

/// The default time limit of a call when the tool does not set `#[tool(timeout = "...")]`.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Everything about a tool except its schemas and its code.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolMeta {
    /// Who may call it, its limits, the state it needs, where it is defined: what a resource
    /// and a prompt have too.
    pub options: ItemOptions,
    /// What it is: a tool, or a resource or prompt the pipeline runs as one.
    pub kind: Kind,
    /// Unique name, `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
    pub name: Cow<'static, str>,
    /// A human-readable title.
    pub title: Cow<'static, str>,
    /// One paragraph: the first of the doc comment.
    pub summary: Cow<'static, str>,
    /// The whole description.
    pub description: Cow<'static, str>,
    /// Behaviour hints.
    pub annotations: Annotations,
    /// Free-form tags for filtering.
    pub tags: Vec<Cow<'static, str>>,
    /// `#[tool(guard = ...)]`: per-tool checks run in order after the policy; each may deny the
    /// call or rewrite its arguments (which are then validated again).
    pub guards: Vec<Guard>,
    /// `#[tool(max_output = "64KiB")]`: the largest result sent whole; `None` uses the
    /// registry's default (1 MiB).
    pub max_output: Option<usize>,
    /// `#[tool(truncate_output)]`: a list over the cap is cut to the items that fit instead of
    /// failing with `output_too_large`.
    pub truncate_output: bool,
    /// The result is content blocks ([`Content`](crate::Content) or `Vec<Content>`), sent over
    /// MCP as the result's `content`, without `outputSchema` or `structuredContent`.
    pub content: bool,
    /// The tool honours dry runs (`#[tool(dry_run)]`): with `ctx.dry_run()` it previews
    /// without side effects. Dry runs of other tools are refused.
    pub dry_run: bool,
    /// The question a caller is asked before a destructive call (`#[tool(confirm = "...")]`),
    /// each `{param}` filled with that argument's value; `None`: one made from the name
    /// (`delete_note` → "Delete note 1?", see `docs/confirm.md`).
    pub confirm: Option<Cow<'static, str>>,
    /// `#[tool(task = "optional" | "required")]`: whether its calls may run as tasks
    /// ([`task`](crate::registry::task)); never, by default.
    pub task: TaskMode,
    /// `#[tool(detach = "explicit")]`: where a call that runs as a task becomes one: at its
    /// start, or where the tool calls [`CallContext::detach`](crate::CallContext::detach).
    pub detach: TaskDetach,
    /// Front-end hints per parameter, in declaration order (the schema's own order is
    /// alphabetical). Empty for dynamic tools unless they set it.
    pub params: Vec<ParamHint>,
}

impl ToolMeta {
    /// A resource read or a prompt get as the pipeline runs it: named `{call_name}`
    /// (`resource:{name}`, `prompt:{name}`), read-only, with the item's title, description and
    /// options, so it passes the same layers as a tool under the same limits.
    pub(crate) fn of_item(
        kind: Kind,
        call_name: String,
        title: Cow<'static, str>,
        description: Cow<'static, str>,
        options: &ItemOptions,
    ) -> ToolMeta {
        let mut meta = ToolMeta::new(call_name, description);
        meta.kind = kind;
        meta.title = title;
        meta.annotations.read_only = Some(true);
        meta.options.clone_from(options);
        meta
    }

    /// Metadata with the given name and description; the rest empty.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> Self {
        let name = name.into();
        let description = description.into();
        Self {
            kind: Kind::Tool,
            title: Cow::Owned(tool_grammar::title_from_name(&name)),
            summary: Cow::Owned(tool_grammar::first_paragraph(&description)),
            name,
            description,
            annotations: Annotations::default(),
            tags: Vec::new(),
            guards: Vec::new(),
            max_output: None,
            truncate_output: false,
            content: false,
            dry_run: false,
            confirm: None,
            task: TaskMode::Forbidden,
            detach: TaskDetach::Start,
            params: Vec::new(),
            options: ItemOptions {
                defined_at: Cow::Borrowed(UNSTATED_ORIGIN),
                ..ItemOptions::default()
            },
        }
    }
}

/// The `defined_at` of a dynamic tool that does not set it; the registry then names the tool's
/// type and order of arrival instead.
pub(crate) const UNSTATED_ORIGIN: &str = "(dynamic tool)";

/// A tool: metadata, input and output schemas, and a call. Object-safe.
///
/// Implement it for tools discovered at run time; `#[tool]` implements it for you.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use tool_runtime::tool::ToolMeta;
/// use tool_runtime::{CallContext, Registry, Tool, ToolError};
/// use serde_json::{json, Value};
///
/// struct Echo;
/// impl Tool for Echo {
///     fn meta(&self) -> ToolMeta { ToolMeta::new("echo", "Return the text.") }
///     fn input_schema(&self) -> Value {
///         json!({"type": "object", "properties": {"text": {"type": "string"}},
///                "required": ["text"], "additionalProperties": false})
///     }
///     fn output_schema(&self) -> Value { json!({"type": "string"}) }
///     fn call(&self, args: Value, _ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
///         Box::pin(async move { Ok(args["text"].clone()) })
///     }
/// }
///
/// let registry = Registry::builder().without_inventory().tool(Echo).build().unwrap();
/// assert_eq!(registry.names(), ["echo"]);
/// ```
pub trait Tool: Send + Sync + 'static {
    /// Metadata; read once, when the tool is registered.
    fn meta(&self) -> ToolMeta;
    /// The JSON Schema (2020-12) of the arguments object; read once, on first use.
    fn input_schema(&self) -> Value;
    /// The JSON Schema of the result; read once, on first use.
    fn output_schema(&self) -> Value;
    /// Runs the tool on arguments already validated against `input_schema`.
    fn call(&self, args: Value, ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>>;

    /// Not public API: how `#[tool]` code decodes arguments the HTTP front end parsed without
    /// building a `Value`. `None` (the default): the pipeline always uses [`Tool::call`].
    #[doc(hidden)]
    fn parsed_call(&self) -> Option<ParsedCall> {
        None
    }
}

/// Not public API: decodes parsed, validated arguments and starts the call, or returns `None`
/// when they do not decode (the pipeline then takes the `Value` path, which says why).
#[doc(hidden)]
pub type ParsedCall = for<'a> fn(
    super::parsed::ParsedArgs<'a>,
    &CallContext,
) -> Option<BoxFuture<'static, Result<Value, ToolError>>>;

/// The const descriptor `#[tool]` generates and submits to `inventory`. Not built by hand:
/// implement [`Tool`] instead.
pub struct ToolDescriptor {
    #[doc(hidden)]
    pub options: OptionsDescriptor,
    #[doc(hidden)]
    pub name: &'static str,
    #[doc(hidden)]
    pub title: &'static str,
    #[doc(hidden)]
    pub description: &'static str,
    #[doc(hidden)]
    pub summary: &'static str,
    #[doc(hidden)]
    pub annotations: Annotations,
    #[doc(hidden)]
    pub tags: &'static [&'static str],
    #[doc(hidden)]
    pub guards: &'static [Guard],
    #[doc(hidden)]
    pub max_output: Option<usize>,
    #[doc(hidden)]
    pub truncate_output: bool,
    #[doc(hidden)]
    pub dry_run: bool,
    #[doc(hidden)]
    pub confirm: Option<&'static str>,
    #[doc(hidden)]
    pub task: TaskMode,
    #[doc(hidden)]
    pub detach: TaskDetach,
    #[doc(hidden)]
    pub params: &'static [ParamHint],
    #[doc(hidden)]
    pub input_schema: fn() -> Value,
    #[doc(hidden)]
    pub output_schema: fn() -> Value,
    #[doc(hidden)]
    pub content: fn() -> bool,
    #[doc(hidden)]
    pub call: fn(Value, CallContext) -> BoxFuture<'static, Result<Value, ToolError>>,
    #[doc(hidden)]
    pub call_parsed: ParsedCall,
}

impl ToolDescriptor {
    /// The tool's name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl fmt::Debug for ToolDescriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDescriptor")
            .field("name", &self.name)
            .field("defined_at", &self.options.defined_at)
            .finish_non_exhaustive()
    }
}

impl Tool for &'static ToolDescriptor {
    fn meta(&self) -> ToolMeta {
        ToolMeta {
            kind: Kind::Tool,
            name: Cow::Borrowed(self.name),
            title: Cow::Borrowed(self.title),
            summary: Cow::Borrowed(self.summary),
            description: Cow::Borrowed(self.description),
            annotations: self.annotations,
            tags: self.tags.iter().map(|t| Cow::Borrowed(*t)).collect(),
            guards: self.guards.to_vec(),
            max_output: self.max_output,
            truncate_output: self.truncate_output,
            content: (self.content)(),
            dry_run: self.dry_run,
            confirm: self.confirm.map(Cow::Borrowed),
            task: self.task,
            detach: self.detach,
            params: self.params.to_vec(),
            options: self.options.to_options(),
        }
    }

    fn input_schema(&self) -> Value {
        (self.input_schema)()
    }

    fn output_schema(&self) -> Value {
        (self.output_schema)()
    }

    fn call(&self, args: Value, ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        (self.call)(args, ctx)
    }

    fn parsed_call(&self) -> Option<ParsedCall> {
        Some(self.call_parsed)
    }
}

/// The `inventory` item `#[tool]` submits.
#[doc(hidden)]
#[derive(Debug)]
pub struct ToolRegistration(pub &'static ToolDescriptor);

inventory::collect!(ToolRegistration);

/// Whether a tool's calls may run as tasks: `#[tool(task = "optional" | "required")]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskMode {
    /// Never: every call answers in its request (the default).
    #[default]
    Forbidden,
    /// As a task whenever the caller can follow one, else as a call.
    Optional,
    /// Only as a task: a caller that cannot follow one is refused.
    Required,
}

impl TaskMode {
    /// The mode named `name` (`forbidden`, `optional`, `required`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "forbidden" => Some(Self::Forbidden),
            "optional" => Some(Self::Optional),
            "required" => Some(Self::Required),
            _ => None,
        }
    }
}

/// Where a call that runs as a task becomes one: `#[tool(detach = "explicit")]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskDetach {
    /// Before the tool starts: the caller has the task at once (the default).
    #[default]
    Start,
    /// Where the tool calls [`CallContext::detach`](crate::CallContext::detach). Until then
    /// the call answers in its request, its questions as any call's (over MCP, input-required
    /// rounds that run it again from the top): the place to gather what the long part needs.
    /// A call that ends without detaching answers as a call.
    Explicit,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_and_summaries_come_from_names_and_docs() {
        let meta = ToolMeta::new("device_add", "Generate a code\nfor a device.\n\nMore text.");
        assert_eq!(meta.title, "Device add");
        assert_eq!(meta.summary, "Generate a code for a device.");
    }

    #[test]
    fn only_destructive_tools_need_confirmation() {
        let mut a = Annotations::default();
        assert!(!a.needs_confirmation());
        a.destructive = Some(true);
        assert!(a.needs_confirmation());
        a.read_only = Some(true);
        assert!(!a.needs_confirmation());
    }
}
