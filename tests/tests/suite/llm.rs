//! Tool specs for model providers: a corpus of tricky signatures lowered for every target and
//! checked by `tests/python/llm_check.py` (the providers' SDKs and published rules, written
//! apart from the lowering code); arguments a strict model sends come back through the
//! validator; the demo app's specs are snapshots.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_runtime::llm::{self, Options, Severity, Target};
use tool_runtime::prelude::*;
use tool_runtime::registry::{RegistryBuilder, ToolRef};

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Address {
    street: String,
    /// Postal code
    #[schemars(range(min = 1, max = 99999))]
    zip: u32,
    /// Door code, when there is one
    #[allow(clippy::option_option)] // Reason: the corpus has an `Option` at several depths.
    door: Option<Option<String>>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Author {
    /// Display name
    #[serde(rename = "displayName")]
    display_name: String,
    #[serde(default)]
    tags: Vec<String>,
    address: Option<Address>,
}

/// Which notes to show.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Filter {
    /// Pinned notes
    Pinned,
    /// Changed this week
    Recent,
    Mine,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Shape {
    Circle { r: f64 },
    Square(f64),
    Empty,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Tree {
    label: String,
    #[serde(default)]
    children: Vec<Tree>,
}

/// Nested structs, enums with and without data, a renamed field.
#[tool]
async fn corpus_nested(author: Author, filter: Option<Filter>, shape: Shape) -> Value {
    json!({"author": author, "filter": filter, "shape": shape})
}

/// Options at several depths and a default.
#[tool]
async fn corpus_options(
    /// A count
    a: Option<u32>,
    /// Labels, some missing
    b: Option<Vec<Option<String>>>,
    /// How many, 1 to 9
    #[arg(default = 5, range(min = 1, max = 9))]
    c: u8,
) -> Value {
    json!({"a": a, "b": b, "c": c})
}

/// A recursive type, in an optional parameter.
#[tool]
async fn corpus_tree(tree: Option<Tree>) -> Value {
    json!({ "tree": tree })
}

/// A map.
#[tool]
async fn corpus_map(counts: HashMap<String, u32>) -> Value {
    json!({ "counts": counts })
}

/// Integers at their widest.
#[tool]
async fn corpus_bounds(big: u64, huge: i128, small: i8) -> Value {
    json!({"big": big, "huge": huge.to_string(), "small": small})
}

/// Thirty optional parameters.
#[tool]
#[allow(clippy::too_many_arguments)]
async fn corpus_wide(
    p01: Option<u32>,
    p02: Option<u32>,
    p03: Option<u32>,
    p04: Option<u32>,
    p05: Option<u32>,
    p06: Option<u32>,
    p07: Option<u32>,
    p08: Option<u32>,
    p09: Option<u32>,
    p10: Option<u32>,
    p11: Option<u32>,
    p12: Option<u32>,
    p13: Option<u32>,
    p14: Option<u32>,
    p15: Option<u32>,
    p16: Option<u32>,
    p17: Option<u32>,
    p18: Option<u32>,
    p19: Option<u32>,
    p20: Option<u32>,
    p21: Option<u32>,
    p22: Option<u32>,
    p23: Option<u32>,
    p24: Option<u32>,
    p25: Option<u32>,
    p26: Option<u32>,
    p27: Option<u32>,
    p28: Option<u32>,
    p29: Option<u32>,
    p30: Option<u32>,
) -> usize {
    [
        p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15, p16, p17, p18,
        p19, p20, p21, p22, p23, p24, p25, p26, p27, p28, p29, p30,
    ]
    .iter()
    .flatten()
    .count()
}

/// A tuple, which Gemini's `Schema` cannot describe (kept out of the corpus every target takes).
#[tool]
async fn corpus_pair(pair: (u32, String)) -> String {
    format!("{}{}", pair.0, pair.1)
}

/// No parameters at all.
#[tool]
async fn corpus_none() -> bool {
    true
}

fn builder() -> RegistryBuilder {
    Registry::builder()
        .without_inventory()
        .tool(corpus_nested::descriptor())
        .tool(corpus_options::descriptor())
        .tool(corpus_tree::descriptor())
        .tool(corpus_map::descriptor())
        .tool(corpus_bounds::descriptor())
        .tool(corpus_wide::descriptor())
        .tool(corpus_none::descriptor())
}

/// The `tools` value of every target the checker knows, for these tools.
fn lowered(tools: &[ToolRef<'_>]) -> Value {
    let strict_anthropic = Options::default().with_anthropic_strict(true);
    json!({
        "openai": llm::specs(tools, Target::OpenAiChat, &Options::default()).0,
        "openai-responses": llm::specs(tools, Target::OpenAiResponses, &Options::default()).0,
        "anthropic": llm::specs(tools, Target::Anthropic, &Options::default()).0,
        "anthropic-strict": llm::specs(tools, Target::Anthropic, &strict_anthropic).0,
        "gemini": llm::specs(tools, Target::Gemini, &Options::default()).0,
    })
}

/// Runs the independent checker on `specs`: its problems, one per line (empty: none).
fn check(specs: &Value) -> String {
    use std::io::Write;
    let python = std::env::var("TOOL_TESTS_PYTHON").expect(
        "TOOL_TESTS_PYTHON: run `bash tests/run.sh`, which makes the venv with the providers' SDKs",
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/llm_check.py");
    let mut child = std::process::Command::new(python)
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the checker starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(specs.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.code() == Some(u8::from(!text.is_empty()).into()),
        "the checker failed to run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn every_target_accepts_the_corpus_as_lowered() {
    let registry = builder().build().unwrap();
    let tools = registry.tools();
    let problems = check(&lowered(&tools));
    assert!(problems.is_empty(), "{problems}");
}

#[test]
fn the_checker_rejects_what_a_provider_would() {
    // Canonical schemas, sent as if they were lowered: every target must object.
    let registry = builder().build().unwrap();
    let tools = registry.tools();
    let canonical: Vec<Value> = tools.iter().map(|t| t.input_schema().clone()).collect();
    let openai: Vec<Value> = tools
        .iter()
        .zip(&canonical)
        .map(|(t, s)| json!({"type": "function", "function": {"name": t.name(), "parameters": s, "strict": true}}))
        .collect();
    let gemini: Vec<Value> = tools
        .iter()
        .zip(&canonical)
        .map(|(t, s)| json!({"name": t.name(), "parameters": s}))
        .collect();
    let anthropic: Vec<Value> = tools
        .iter()
        .zip(&canonical)
        .map(|(t, s)| json!({"name": t.name(), "input_schema": s, "strict": true}))
        .collect();
    let problems = check(&json!({
        "openai": openai,
        "anthropic-strict": anthropic,
        "gemini": [{"functionDeclarations": gemini}],
    }));
    for needle in [
        "openai: corpus_options: /properties/c: `default` is not supported in strict mode",
        "openai: corpus_options: / : every property must be required",
        "anthropic-strict: corpus_tree: strict tools may not be recursive",
        "gemini: corpus_nested: /: `additionalProperties` is not in Gemini's Schema",
        "gemini: corpus_tree: google-genai rejects it",
    ] {
        let needle = needle.replace("/ :", "/:");
        assert!(problems.contains(&needle), "{needle} not in:\n{problems}");
    }
}

#[test]
fn reports_say_what_each_target_drops() {
    let registry = builder().build().unwrap();
    let tools = registry.tools();
    let report = |target, options: &Options| llm::lint(target, &tools, options);
    let defaults = Options::default();

    let openai = report(Target::OpenAiChat, &defaults);
    assert!(!openai.has_errors(), "{openai}");
    let text = openai.to_string();
    assert!(
        text.contains("warning: corpus_map: sent with `strict: false`: a map (`additionalProperties`) at /properties/counts"),
        "{text}"
    );
    assert!(
        text.contains("warning: corpus_options /properties/c: `default`: not supported in OpenAI strict mode; moved into the description (\"default 5\")"),
        "{text}"
    );
    let (specs, _) = llm::specs(&tools, Target::OpenAiChat, &defaults);
    let options = specs
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["function"]["name"] == "corpus_options")
        .unwrap();
    assert_eq!(options["function"]["strict"], true);
    assert_eq!(
        options["function"]["parameters"]["properties"]["c"]["description"],
        "How many, 1 to 9 (default 5)"
    );

    let gemini = report(Target::Gemini, &defaults);
    assert!(!gemini.has_errors(), "{gemini}");
    let text = gemini.to_string();
    assert!(
        text.contains("corpus_tree /properties/tree/properties/children")
            && text.contains("left out: a recursive type expanded 2 times already"),
        "{text}"
    );
    let (specs, _) = llm::specs(&tools, Target::Gemini, &defaults);
    let declarations = specs[0]["functionDeclarations"].as_array().unwrap();
    let none = declarations
        .iter()
        .find(|d| d["name"] == "corpus_none")
        .unwrap();
    assert!(none.get("parameters").is_none(), "{none}");
    let nested = declarations
        .iter()
        .find(|d| d["name"] == "corpus_nested")
        .unwrap();
    assert_eq!(
        nested["parameters"]["properties"]["filter"],
        json!({"type": "string", "enum": ["mine", "pinned", "recent"], "nullable": true, "description": "Which notes to show."})
    );

    // `parametersJsonSchema`: the canonical schema, as JSON Schema, with nothing to report.
    let json_schema = Options::default().with_gemini_json_schema(true);
    let (specs, report_js) = llm::specs(&tools, Target::Gemini, &json_schema);
    assert!(report_js.findings.is_empty(), "{report_js}");
    let map = specs[0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "corpus_map")
        .unwrap();
    assert!(map.get("parameters").is_none());
    let mut canonical = registry.get("corpus_map").unwrap().input_schema().clone();
    canonical.as_object_mut().unwrap().remove("$schema");
    assert_eq!(map["parametersJsonSchema"], canonical);

    let strict = Options::default().with_anthropic_strict(true);
    let anthropic = report(Target::Anthropic, &strict).to_string();
    assert!(
        anthropic.contains("warning: corpus_wide: sent non-strict: a request takes at most 20 strict tools, 24 optional parameters"),
        "{anthropic}"
    );
    assert!(
        anthropic.contains("warning: corpus_tree: sent non-strict: a recursive type"),
        "{anthropic}"
    );
    assert!(report(Target::Anthropic, &defaults).findings.is_empty());
    assert!(report(Target::Canonical, &defaults).findings.is_empty());
    assert!(
        llm::lint(Target::OpenAiChat, &tools, &defaults)
            .at_least(Severity::Error)
            .next()
            .is_none()
    );
}

/// What a strict OpenAI model sends: every field, `null` for each it leaves out. The
/// validator takes it once [`llm::accept`] has dropped the `null`s that mean "absent", and
/// the tool gets its defaults.
#[tokio::test]
async fn strict_arguments_with_every_optional_null_reach_the_tool() {
    let registry = builder().build().unwrap();
    let tools = registry.tools();
    let (specs, _) = llm::specs(&tools, Target::OpenAiChat, &Options::default());
    let required: HashMap<&str, Value> = HashMap::from([
        (
            "corpus_nested",
            json!({"author": {"displayName": "Ada", "tags": null, "address": null}, "filter": null, "shape": "empty"}),
        ),
        ("corpus_map", json!({"counts": {"a": 1}})),
        (
            "corpus_bounds",
            json!({"big": u64::MAX, "huge": 1, "small": -128}),
        ),
    ]);
    for spec in specs.as_array().unwrap() {
        let function = &spec["function"];
        let name = function["name"].as_str().unwrap();
        let arguments = required.get(name).cloned().unwrap_or_else(|| {
            // Every property is nullable in the strict form: all of them null.
            let props = function["parameters"]["properties"].as_object().unwrap();
            Value::Object(props.keys().map(|k| (k.clone(), Value::Null)).collect())
        });
        let tool = registry.get(name).unwrap();
        let accepted = llm::accept(Target::OpenAiChat, &tool, arguments.clone());
        let envelope = registry
            .call(name, accepted, Caller::new(Source::Agent))
            .await;
        assert!(envelope.is_ok(), "{name} {arguments}: {envelope:?}");
        if name == "corpus_options" {
            assert_eq!(
                envelope.result(),
                Some(&json!({"a": null, "b": null, "c": 5}))
            );
        }
        if name == "corpus_nested" {
            assert_eq!(envelope.result().unwrap()["author"]["tags"], json!([]));
        }
    }
    // A value that breaks a constraint the model only read in a description is still refused.
    let tool = registry.get("corpus_options").unwrap();
    let out_of_range = llm::accept(
        Target::OpenAiChat,
        &tool,
        json!({"a": null, "b": null, "c": 12}),
    );
    let envelope = registry
        .call("corpus_options", out_of_range, Caller::new(Source::Agent))
        .await;
    assert_eq!(envelope.error().unwrap().kind(), "invalid_arguments");
}

#[test]
fn demo_specs_match_their_snapshots() {
    let registry = demo_app::registry(&demo_app::Stores::in_memory().unwrap()).unwrap();
    let tools = registry.tools();
    let specs = lowered(&tools);
    assert_eq!(check(&specs), "");
    for (target, value) in specs.as_object().unwrap() {
        insta::assert_json_snapshot!(format!("llm-demo-{target}"), value);
    }
}

/// A dynamic tool whose parameter is called `ttl-seconds`.
struct Dashed;

impl Tool for Dashed {
    fn meta(&self) -> tool_runtime::tool::ToolMeta {
        tool_runtime::tool::ToolMeta::new("dashed", "Take a dashed parameter.")
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"ttl-seconds": {"type": "integer"}}, "additionalProperties": false})
    }
    fn output_schema(&self) -> Value {
        json!({"type": "null"})
    }
    fn call(
        &self,
        _: Value,
        _: CallContext,
    ) -> futures_util::future::BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async { Ok(Value::Null) })
    }
}

#[test]
fn parameter_names_no_provider_accepts_are_refused_at_registration() {
    let err = Registry::builder()
        .without_inventory()
        .tool(Dashed)
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("parameter `ttl-seconds` of tool `dashed`")
            && err.contains("^[A-Za-z_][A-Za-z0-9_]{0,63}$")
            && err.contains("`ttl_seconds`, not `ttl-seconds`"),
        "{err}"
    );
    let registry = builder().build().unwrap();
    let err = registry.add_tool(Dashed).unwrap_err().to_string();
    assert!(err.contains("parameter `ttl-seconds`"), "{err}");
}

#[test]
fn assert_portable_names_what_a_provider_would_reject() {
    let panic_text = |f: &dyn Fn()| -> String {
        let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_err();
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap()
    };
    let registry = builder().build().unwrap();
    llm::assert_portable_in(
        &registry,
        &[Target::OpenAiChat, Target::Anthropic, Target::Gemini],
    );

    let with_pair = builder().tool(corpus_pair::descriptor()).build().unwrap();
    llm::assert_portable_in(&with_pair, &[Target::OpenAiChat, Target::Anthropic]);
    let message = panic_text(&|| llm::assert_portable_in(&with_pair, &[Target::Gemini]));
    assert!(
        message.contains("gemini: error: corpus_pair /properties/pair: a tuple (`prefixItems`): Gemini cannot describe it"),
        "{message}"
    );
    let empty = Registry::builder().without_inventory().build().unwrap();
    let message = panic_text(&|| llm::assert_portable_in(&empty, &[Target::Gemini]));
    assert!(message.contains("no tools to check"), "{message}");
}

/// `GET /tools?format=` serves the caller's visible tools as each provider takes them.
#[tokio::test]
async fn the_http_listing_lowers_for_each_provider() {
    use tower::ServiceExt;
    let registry = std::sync::Arc::new(builder().build().unwrap());
    let app = tool_runtime::http::router(registry, tool_runtime::http::ServerOptions::default());
    let get = |uri: &str| {
        let app = app.clone();
        let request = axum::http::Request::get(uri)
            .body(axum::body::Body::empty())
            .unwrap();
        async move {
            let response = app.oneshot(request).await.unwrap();
            let status = response.status().as_u16();
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            (status, serde_json::from_slice::<Value>(&body).unwrap())
        }
    };
    let (status, body) = get("/tools?format=gemini").await;
    assert_eq!(status, 200);
    let registry = builder().build().unwrap();
    let (expected, report) = llm::specs(&registry.tools(), Target::Gemini, &Options::default());
    assert_eq!(body, json!({"format": "gemini", "tools": expected}));
    let (_, lint) = get("/tools?format=gemini&lint=true").await;
    assert_eq!(
        lint["findings"],
        serde_json::to_value(&report.findings).unwrap()
    );
    let (status, error) = get("/tools?format=cohere").await;
    assert_eq!(status, 400);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown format `cohere`; one of json, mcp, openai"),
        "{error}"
    );
    let (status, _) = get("/tools?fromat=openai").await;
    assert_eq!(status, 400);
}

/// A cached lowering is shared until the registry changes; then the new tool is in it.
#[test]
fn cached_specs_follow_the_registry() {
    let registry = builder().build().unwrap();
    let cache = llm::SpecCache::new();
    let caller = Caller::new(Source::Agent);
    let options = Options::default();
    let first = cache.specs(&registry, &caller, Target::OpenAiChat, &options);
    let again = cache.specs(&registry, &caller, Target::OpenAiChat, &options);
    assert!(std::sync::Arc::ptr_eq(&first, &again));
    let gemini = cache.specs(&registry, &caller, Target::Gemini, &options);
    assert!(!std::sync::Arc::ptr_eq(&first, &gemini));
    assert_eq!(
        first.0,
        llm::specs(&registry.tools(), Target::OpenAiChat, &options).0
    );

    registry.add_tool(Dashless).unwrap();
    let after = cache.specs(&registry, &caller, Target::OpenAiChat, &options);
    let names: Vec<&str> = after
        .0
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["function"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"dashless"), "{names:?}");
}

/// A dynamic tool added at run time.
struct Dashless;

impl Tool for Dashless {
    fn meta(&self) -> tool_runtime::tool::ToolMeta {
        tool_runtime::tool::ToolMeta::new("dashless", "Take a plain parameter.")
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"ttl_seconds": {"type": "integer"}}, "additionalProperties": false})
    }
    fn output_schema(&self) -> Value {
        json!({"type": "null"})
    }
    fn call(
        &self,
        _: Value,
        _: CallContext,
    ) -> futures_util::future::BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async { Ok(Value::Null) })
    }
}
