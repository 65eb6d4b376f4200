//! Tool specs for language models: every tool's canonical schema lowered for each provider's
//! function-calling API, with a report of everything dropped or rewritten.
//!
//! Providers accept different subsets of JSON Schema. Each [`Target`] gets the most faithful
//! form it accepts; what a model should still know but the target cannot express (a range, a
//! length, a pattern, a default) moves into the field's `description` in plain words. Our own
//! validator stays authoritative: a model that ignores a description gets `invalid_arguments`
//! with the violation, not a wrong call.
//!
//! ```
//! use tool_runtime::llm::{self, Target};
//! # let registry = tool_runtime::Registry::builder().without_inventory().build().unwrap();
//! # let caller = tool_runtime::Caller::new(tool_runtime::Source::Agent);
//! let tools = registry.visible(&caller);
//! let (specs, report) = llm::specs(&tools, Target::OpenAiChat, &llm::Options::default());
//! assert!(specs.is_array() && !report.has_errors());
//! ```
//!
//! | target | shape | what it cannot express (moved to descriptions, or rewritten) |
//! | --- | --- | --- |
//! | [`Target::Canonical`] | `{name, description, input_schema, output_schema}` | nothing: the validator's own schema |
//! | [`Target::Mcp`] | MCP `Tool` (`inputSchema`, `outputSchema`, `annotations`) | outputs that are not objects are wrapped as `{"result": ...}` |
//! | [`Target::OpenAiChat`], [`Target::OpenAiResponses`] | function tools, `strict: true` when possible | optional fields become required and nullable; `default`, unsupported `format`s, `oneOf` (→ `anyOf`), `allOf`, `not`, `if`/`then`/`else`, `dependent*`, `patternProperties`; maps make a tool non-strict |
//! | [`Target::Anthropic`] | `{name, description, input_schema}`; with [`Options::strict`], `strict: true` when possible | strict only: numeric bounds, `multipleOf`, string lengths, `minItems` above 1; recursion and maps make a tool non-strict |
//! | [`Target::Gemini`] | `functionDeclarations` with `parameters` (the OpenAPI 3.0 subset) | `additionalProperties`, `$ref` (inlined; recursion cut), `oneOf`/`allOf`/`not`, `const`, type arrays (→ `nullable`), non-string enums, `default`, most `format`s |
//!
//! The rules follow the providers' published documents:
//!
//! - OpenAI, function calling and strict mode:
//!   <https://platform.openai.com/docs/guides/function-calling> and the supported schema subset
//!   of Structured Outputs:
//!   <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>.
//! - Anthropic, tool use and strict tool use:
//!   <https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use> and
//!   <https://docs.claude.com/en/docs/build-with-claude/structured-outputs>.
//! - Gemini, function calling and the `Schema` object:
//!   <https://ai.google.dev/gemini-api/docs/function-calling> and
//!   <https://ai.google.dev/api/caching#Schema>.
//!
//! Names are portable before any lowering: the registry refuses a tool name outside
//! `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` and a parameter name outside `^[A-Za-z_][A-Za-z0-9_]{0,63}$`
//! (the `#[tool]` macro says so at compile time).
//!
//! A model under OpenAI strict mode sends every optional field, as `null` when it means to
//! leave it out: [`accept`] turns such arguments back into what the canonical schema means
//! (the `null` removed, so the default applies) before they reach the pipeline.
#![doc = include_str!("../../docs/llm.md")]

mod describe;
mod lower;

use std::fmt::{self, Write as _};

use serde_json::{Value, json};

use crate::registry::Registry;
use crate::registry::{RegisteredTool, ToolRef};

/// A provider format tools are lowered to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Target {
    /// The canonical JSON Schema (draft 2020-12) of input and output: what the validator enforces.
    Canonical,
    /// What the MCP server sends in `tools/list`.
    Mcp,
    /// OpenAI Chat Completions `tools`.
    OpenAiChat,
    /// OpenAI Responses API function tools.
    OpenAiResponses,
    /// Anthropic Messages `tools`.
    Anthropic,
    /// Gemini `generateContent` `tools` (`functionDeclarations`).
    Gemini,
}

impl Target {
    /// Every target, in a stable order.
    pub const ALL: [Target; 6] = [
        Target::Canonical,
        Target::Mcp,
        Target::OpenAiChat,
        Target::OpenAiResponses,
        Target::Anthropic,
        Target::Gemini,
    ];

    /// The target's name on the command line and in `GET /tools?format=`: `json`, `mcp`,
    /// `openai`, `openai-responses`, `anthropic`, `gemini`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Target::Canonical => "json",
            Target::Mcp => "mcp",
            Target::OpenAiChat => "openai",
            Target::OpenAiResponses => "openai-responses",
            Target::Anthropic => "anthropic",
            Target::Gemini => "gemini",
        }
    }

    /// The target called `name` ([`Target::name`]).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether a model shown this target's specs writes strict mode's `null` for an optional
    /// field it leaves out (OpenAI's two APIs): its arguments go to a call with
    /// [`Caller::strict_nulls`](crate::Caller::strict_nulls).
    #[must_use]
    pub fn writes_strict_nulls(self) -> bool {
        matches!(self, Target::OpenAiChat | Target::OpenAiResponses)
    }

    /// The most tools one request may carry, when the provider states one.
    #[must_use]
    pub fn max_tools(self) -> Option<usize> {
        match self {
            Target::OpenAiChat | Target::OpenAiResponses | Target::Gemini => Some(128),
            Target::Canonical | Target::Mcp | Target::Anthropic => None,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How tools are lowered.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Options {
    /// Ask for strict schemas where the target has them: OpenAI (on by default) and Anthropic
    /// (off by default: see [`Options::anthropic_strict`]). A tool whose schema cannot be made
    /// strict is sent non-strict, with the reason in the report.
    pub strict: bool,
    /// Anthropic strict tool use (off by default; it drops numeric and length bounds into
    /// descriptions).
    pub anthropic_strict: bool,
    /// Gemini: send the JSON Schema as `parametersJsonSchema` instead of the OpenAPI-subset
    /// `parameters`.
    pub gemini_json_schema: bool,
    /// Gemini inlines `$ref`s: how many times one recursive type is expanded inside itself
    /// before an optional property that would recurse further is dropped (default 2).
    pub recursion_depth: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            strict: true,
            anthropic_strict: false,
            gemini_json_schema: false,
            recursion_depth: 2,
        }
    }
}

impl Options {
    /// Sets [`strict`](Self::strict).
    #[must_use]
    pub fn with_strict(mut self, on: bool) -> Self {
        self.strict = on;
        self
    }

    /// Sets [`anthropic_strict`](Self::anthropic_strict).
    #[must_use]
    pub fn with_anthropic_strict(mut self, on: bool) -> Self {
        self.anthropic_strict = on;
        self
    }

    /// Sets [`gemini_json_schema`](Self::gemini_json_schema).
    #[must_use]
    pub fn with_gemini_json_schema(mut self, on: bool) -> Self {
        self.gemini_json_schema = on;
        self
    }

    /// Sets [`recursion_depth`](Self::recursion_depth).
    #[must_use]
    pub fn with_recursion_depth(mut self, depth: usize) -> Self {
        self.recursion_depth = depth;
        self
    }
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Rewritten without loss (a type array to `nullable`, `oneOf` to `anyOf` of constants).
    Note,
    /// Information moved into a description, or strictness given up.
    Warning,
    /// The provider would reject the spec.
    Error,
}

/// One rule a tool's schema broke or was rewritten for, at one place.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// The tool (empty for a rule about the whole request, such as the number of tools).
    pub tool: String,
    /// Where, as a JSON Pointer into the canonical input schema (`""` for the tool itself).
    pub path: String,
    /// How much it matters.
    pub severity: Severity,
    /// What happened, in plain words.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        let tool = if self.tool.is_empty() {
            "(request)"
        } else {
            &self.tool
        };
        if self.path.is_empty() {
            write!(f, "{severity}: {tool}: {}", self.message)
        } else {
            write!(f, "{severity}: {tool} {}: {}", self.path, self.message)
        }
    }
}

/// Every finding of one lowering, for one target.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// The findings, tool by tool in the tools' order.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Whether any finding is an [`Severity::Error`].
    #[must_use]
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }

    /// The findings of at least `severity`.
    pub fn at_least(&self, severity: Severity) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.severity >= severity)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for finding in &self.findings {
            writeln!(f, "{finding}")?;
        }
        Ok(())
    }
}

/// The spec of one tool for `target`, and what lowering it found.
#[must_use]
pub fn lower(tool: &RegisteredTool, target: Target, options: &Options) -> (Value, Vec<Finding>) {
    let meta = tool.meta();
    let name = || ("name", Value::String(meta.name.clone().into_owned()));
    let description = || {
        (
            "description",
            Value::String(meta.description.clone().into_owned()),
        )
    };
    let mut findings = Vec::new();
    let spec = match target {
        Target::Canonical => object([
            name(),
            description(),
            ("input_schema", tool.input_schema().clone()),
            ("output_schema", tool.output_schema().clone()),
        ]),
        Target::Mcp => lower::mcp(tool),
        Target::OpenAiChat | Target::OpenAiResponses => {
            let (schema, strict, found) =
                lower::openai(tool.input_schema(), options.strict).into_parts(&meta.name);
            findings = found;
            let function = [
                name(),
                description(),
                ("parameters", schema),
                ("strict", Value::Bool(strict)),
            ];
            let kind = ("type", Value::String("function".into()));
            if target == Target::OpenAiChat {
                object([kind, ("function", object(function))])
            } else {
                let [n, d, p, s] = function;
                object([kind, n, d, p, s])
            }
        }
        Target::Anthropic => {
            let (schema, strict, found) =
                lower::anthropic(tool.input_schema(), options.anthropic_strict)
                    .into_parts(&meta.name);
            findings = found;
            let mut spec = object([name(), description(), ("input_schema", schema)]);
            if strict {
                spec["strict"] = Value::Bool(true);
            }
            spec
        }
        Target::Gemini => {
            let mut spec = object([name(), description()]);
            if options.gemini_json_schema {
                spec["parametersJsonSchema"] = lower::without_dialect(tool.input_schema());
            } else {
                let (schema, _, found) =
                    lower::gemini(tool.input_schema(), options.recursion_depth)
                        .into_parts(&meta.name);
                findings = found;
                // An `OBJECT` without properties is rejected: a tool without parameters
                // declares none.
                if schema["properties"]
                    .as_object()
                    .is_some_and(|p| !p.is_empty())
                {
                    spec["parameters"] = schema;
                }
            }
            spec
        }
    };
    (spec, findings)
}

/// A JSON object of these members, in this order (the values moved in, not copied as `json!`
/// would).
fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

/// The `tools` value of one request to `target`, for these tools (normally
/// [`Registry::visible`]), and the report: an array of tool specs, or for Gemini one
/// `{"functionDeclarations": [...]}` entry.
#[must_use]
pub fn specs(tools: &[ToolRef<'_>], target: Target, options: &Options) -> (Value, Report) {
    let mut report = Report::default();
    let mut out = Vec::with_capacity(tools.len());
    for tool in tools {
        let (spec, findings) = lower(tool, target, options);
        report.findings.extend(findings);
        out.push(spec);
    }
    request_limits(target, &mut out, &mut report);
    let value = if target == Target::Gemini {
        json!([{ "functionDeclarations": out }])
    } else {
        Value::Array(out)
    };
    (value, report)
}

/// Lowered specs kept for reuse: what a server or an agent loop asks for again and again (on
/// every listing, every model turn). An entry holds for one registry version, one set of
/// visible tools, one target and one set of options; a change to any makes a new one. The
/// few most recent entries are kept.
#[derive(Debug, Default)]
pub struct SpecCache {
    entries: std::sync::Mutex<Vec<CacheEntry>>,
}

#[derive(Debug)]
struct CacheEntry {
    key: (u64, u64, Target, Options),
    specs: std::sync::Arc<(Value, Report)>,
}

/// How many lowerings a [`SpecCache`] keeps.
const CACHED: usize = 16;

impl SpecCache {
    /// An empty cache.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// [`specs`] of the tools `caller` may see in `registry`, from the cache when the registry
    /// has not changed since the same request was made.
    pub fn specs(
        &self,
        registry: &Registry,
        caller: &crate::Caller,
        target: Target,
        options: &Options,
    ) -> std::sync::Arc<(Value, Report)> {
        let version = registry.version();
        let tools = registry.visible(caller);
        let mut names = Vec::with_capacity(tools.len() * 16);
        for t in &tools {
            names.extend_from_slice(t.name().as_bytes());
            names.push(0);
        }
        let key = (
            version,
            crate::registry::stable_hash(&names),
            target,
            options.clone(),
        );
        let lock = || {
            self.entries
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(entry) = lock().iter().find(|e| e.key == key) {
            return entry.specs.clone();
        }
        // Lowered without the lock: other requests are not held up meanwhile.
        let lowered = std::sync::Arc::new(specs(&tools, target, options));
        let mut entries = lock();
        if entries.len() >= CACHED {
            entries.remove(0);
        }
        entries.push(CacheEntry {
            key,
            specs: lowered.clone(),
        });
        lowered
    }
}

/// The report alone: every rule the tools break or are rewritten for, for `target`.
#[must_use]
pub fn lint(target: Target, tools: &[ToolRef<'_>], options: &Options) -> Report {
    specs(tools, target, options).1
}

/// Panics, listing every error, when a tool linked into this binary (every `#[tool]` found
/// through `inventory`) would be rejected by one of `targets` with default options. One line
/// in a test keeps a crate's tools portable:
///
/// ```no_run
/// # fn tools_stay_portable() {
/// use tool_runtime::llm::{Target, assert_portable};
/// assert_portable(&[Target::OpenAiChat, Target::Anthropic, Target::Gemini]);
/// # }
/// ```
pub fn assert_portable(targets: &[Target]) {
    let registry = match Registry::builder().skip_state_check().build() {
        Ok(r) => r,
        Err(e) => panic!("the tools do not build into a registry: {e}"),
    };
    assert_portable_in(&registry, targets);
}

/// [`assert_portable`] for the tools of one registry.
pub fn assert_portable_in(registry: &Registry, targets: &[Target]) {
    let tools = registry.tools();
    assert!(
        !tools.is_empty(),
        "no tools to check: none was linked into this binary (reference the crate that defines them)"
    );
    let mut errors = String::new();
    for &target in targets {
        for finding in lint(target, &tools, &Options::default()).at_least(Severity::Error) {
            let _ = writeln!(errors, "{target}: {finding}");
        }
    }
    assert!(
        errors.is_empty(),
        "tools a model provider would reject:\n{errors}"
    );
}

/// Arguments a model sent under `target`'s lowered spec, as the canonical schema means them:
/// under OpenAI strict mode every optional field is sent, `null` when the model leaves it out;
/// a `null` the canonical schema does not allow is removed, so the field's default applies.
/// Other values are left for the validator to judge. (A call made with
/// [`Caller::strict_nulls`](crate::Caller::strict_nulls) has the pipeline do this.)
#[must_use]
pub fn accept(target: Target, tool: &RegisteredTool, mut arguments: Value) -> Value {
    if target.writes_strict_nulls() {
        crate::schema::strict::drop_added_nulls(tool.input_schema(), &mut arguments);
    }
    arguments
}

/// Over-the-limit requests: more tools than the provider takes is an error; Anthropic strict
/// tool use takes at most 20 strict tools, 24 optional parameters and 16 parameters with
/// unions across them: tools past those are sent non-strict, with a warning.
fn request_limits(target: Target, specs: &mut [Value], report: &mut Report) {
    if let Some(max) = target.max_tools()
        && specs.len() > max
    {
        report.findings.push(Finding {
            tool: String::new(),
            path: String::new(),
            severity: Severity::Error,
            message: format!(
                "{} tools in one request; {target} takes at most {max}: offer fewer (a policy's `admit`, or a narrower caller)",
                specs.len()
            ),
        });
    }
    if target == Target::Anthropic {
        let (mut strict_tools, mut optional, mut unions) = (0, 0, 0);
        for spec in specs.iter_mut() {
            if spec.get("strict") != Some(&Value::Bool(true)) {
                continue;
            }
            let (o, u) = lower::optional_and_union_params(&spec["input_schema"]);
            if strict_tools < 20 && optional + o <= 24 && unions + u <= 16 {
                strict_tools += 1;
                optional += o;
                unions += u;
                continue;
            }
            if let Some(obj) = spec.as_object_mut() {
                obj.shift_remove("strict");
            }
            report.findings.push(Finding {
                tool: spec["name"].as_str().unwrap_or_default().to_owned(),
                path: String::new(),
                severity: Severity::Warning,
                message: "sent non-strict: a request takes at most 20 strict tools, 24 optional parameters and 16 parameters with unions across them".into(),
            });
        }
    }
}
