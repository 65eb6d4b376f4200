//! One tool of the catalogue, with its schemas and validators made on first use.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::schema::validate::{ArgsValidator, accepts_empty_object, is_empty_object};
use crate::tool::definition::{ParsedCall, Tool, ToolMeta};
use crate::tool::error::ToolError;

/// One registered tool with its lazily computed schemas and validator.
pub struct RegisteredTool {
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) meta: Arc<ToolMeta>,
    /// Where the tool comes from, for messages about it (a duplicate name names both origins).
    pub(crate) origin: Cow<'static, str>,
    input_schema: OnceLock<Value>,
    output_schema: OnceLock<Value>,
    validator: OnceLock<Result<ArgsValidator, String>>,
    /// `#[tool]` tools decode the HTTP front end's parsed tree; see `crate::parsed`.
    pub(crate) parsed_call: Option<ParsedCall>,
}

impl RegisteredTool {
    /// `fallback` names the origin of a tool whose metadata does not say where it is defined.
    pub(crate) fn new(tool: Arc<dyn Tool>, fallback: Option<Cow<'static, str>>) -> Self {
        let meta = Arc::new(tool.meta());
        let origin = match fallback {
            Some(f) if meta.options.defined_at == crate::tool::definition::UNSTATED_ORIGIN => f,
            _ => meta.options.defined_at.clone(),
        };
        Self {
            parsed_call: tool.parsed_call(),
            tool,
            meta,
            origin,
            input_schema: OnceLock::new(),
            output_schema: OnceLock::new(),
            validator: OnceLock::new(),
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
    /// dynamic tool, or the toolset that supplies it.
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
        (!v.secrets.is_empty()).then(|| crate::tool::secret::redact(args, &v.secrets))
    }

    pub(crate) fn validator(&self) -> Result<&ArgsValidator, ToolError> {
        self.compiled().as_ref().map_err(|e| {
            ToolError::internal(format_args!(
                "the input schema of `{}` does not compile: {e}",
                self.meta.name
            ))
        })
    }

    pub(crate) fn compiled(&self) -> &Result<ArgsValidator, String> {
        self.validator
            .get_or_init(|| ArgsValidator::compile(self.input_schema()))
    }

    /// Computes the schemas and compiles the validators now; the compile error, if any.
    pub(super) fn warm_up(&self) -> Result<(), String> {
        self.output_schema();
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

/// A tool of a [`Registry`](crate::Registry): borrowed for tools fixed when it was built, shared for tools added
/// at run time (which may be removed while a call still runs). Dereferences to
/// [`RegisteredTool`].
#[derive(Clone)]
pub struct ToolRef<'r>(pub(super) Held<'r>);

#[derive(Clone)]
pub(super) enum Held<'r> {
    Fixed(&'r Arc<RegisteredTool>),
    Added(Arc<RegisteredTool>),
}

impl ToolRef<'_> {
    /// The tool, held for as long as its holder needs it (a call's record outlives the lookup).
    pub(crate) fn shared(&self) -> Arc<RegisteredTool> {
        match &self.0 {
            Held::Fixed(t) => Arc::clone(t),
            Held::Added(t) => Arc::clone(t),
        }
    }
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

/// The origin of the `n`th dynamic tool (counted from 1) added to a builder or a catalog, a
/// value of `type_name`: a dynamic tool names no place in the source, so its arrival and type
/// tell it apart.
pub(crate) fn dynamic_origin(n: impl std::fmt::Display, type_name: &str) -> Cow<'static, str> {
    Cow::Owned(format!("dynamic tool #{n} (`{type_name}`)"))
}
