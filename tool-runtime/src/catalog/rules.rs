//! What a tool must be to be registered: a portable name, portable parameter names, the
//! state it takes; and how near names are found for "did you mean".

use crate::tool::definition::Kind;
use crate::tool::state::StateMap;

use super::error::BuildProblem;
use super::tool::RegisteredTool;

/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`: portable across MCP clients and LLM providers.
#[must_use]
pub fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    matches!(bytes.first(), Some(b) if b.is_ascii_alphabetic() || *b == b'_')
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

/// `^[A-Za-z_][A-Za-z0-9_]{0,63}$`: a parameter name every LLM provider accepts.
#[must_use]
pub fn is_valid_param_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    matches!(bytes.first(), Some(b) if b.is_ascii_alphabetic() || *b == b'_')
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// Up to three names among `names` close to `name` in spelling (a typo or two, `-` for `_`), or
/// containing it, best first: the registry's "did you mean", for a front end that suggests
/// names of its own (subcommands) as calls are answered.
#[must_use]
pub fn nearest<'n>(name: &str, names: impl Iterator<Item = &'n str>) -> Vec<String> {
    let wanted = name.to_ascii_lowercase().replace('-', "_");
    // Close in spelling (a typo or two), or containing what was typed.
    let budget = (wanted.chars().count() / 4).max(2);
    let mut scored: Vec<(f64, &str)> = names
        .filter_map(|candidate| {
            let c = candidate.to_ascii_lowercase().replace('-', "_");
            let close = strsim::levenshtein(&wanted, &c) <= budget
                || (wanted.len() >= 3 && c.contains(&wanted));
            close.then(|| (strsim::jaro_winkler(&wanted, &c), candidate))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, n)| n.to_owned())
        .collect()
}

/// FNV-1a, 64 bits: a hash stable across runs and platforms, unlike std's (shortened toolset
/// tool names, `ETag`s of listings).
pub(crate) fn stable_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Names, schemas, and state a tool needs: the problems of one tool to be registered.
pub(crate) fn check_entry(entry: &RegisteredTool, state: Option<&StateMap>) -> Vec<BuildProblem> {
    let mut problems = Vec::new();
    if !is_valid_name(entry.name()) {
        problems.push(BuildProblem::InvalidName {
            name: entry.name().to_owned(),
            defined_at: entry.origin.to_string(),
        });
    }
    // A `#[tool]`'s parameter names were checked when it compiled; the schema of any other
    // tool is made here to check its own. A resource's or prompt's arguments (a URI's
    // variables and the URI itself, a prompt's strings) never reach a model as a tool's do.
    let hand_made =
        entry.parsed_call.is_none() && entry.meta.kind == crate::tool::definition::Kind::Tool;
    if let Some(props) = hand_made
        .then(|| entry.input_schema()["properties"].as_object())
        .flatten()
    {
        for param in props.keys().filter(|p| !is_valid_param_name(p)) {
            problems.push(BuildProblem::InvalidParamName {
                tool: entry.name().to_owned(),
                param: param.clone(),
                defined_at: entry.origin.to_string(),
            });
        }
        if let Some(problem) = crate::tool::bounds::header_problem(props) {
            problems.push(BuildProblem::InputSchema {
                tool: entry.name().to_owned(),
                defined_at: entry.origin.to_string(),
                problem,
            });
        }
    }
    // A hand-made tool's input schema is compiled now, so that one the validator cannot read
    // (a keyword outside its set without the `jsonschema` feature, a malformed keyword) is
    // refused rather than failing every call. A `#[tool]`'s schema comes from the generator; it
    // is compiled on first use, and at start by `Registry::warm_up`, which servers run.
    if hand_made && let Err(problem) = entry.compiled() {
        problems.push(BuildProblem::InputSchema {
            tool: entry.name().to_owned(),
            defined_at: entry.origin.to_string(),
            problem: problem.clone(),
        });
    }
    if let Some(state) = state {
        for key in &entry.meta.options.requires {
            if !state.contains(key) {
                let name = entry.name();
                let item = match entry.meta.kind {
                    Kind::Tool => format!("tool `{name}`"),
                    Kind::Resource => {
                        format!("resource `{}`", name.trim_start_matches("resource:"))
                    }
                    Kind::Prompt => format!("prompt `{}`", name.trim_start_matches("prompt:")),
                };
                problems.push(BuildProblem::MissingState {
                    type_name: key.type_name(),
                    items: vec![item],
                    arc_registered: state.holds_arc_of(key.type_name()),
                });
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-made tool's `x-mcp-header` marks follow the rules `#[arg(header)]` checks when it
    /// compiles.
    #[test]
    fn header_marks_are_checked() {
        use serde_json::json;
        let problem = |props: serde_json::Value| {
            crate::tool::bounds::header_problem(props.as_object().unwrap())
        };
        assert_eq!(
            problem(json!({
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer", "x-mcp-header": "Count"},
                "plain": {"type": "array"},
            })),
            None
        );
        for (props, said) in [
            (
                json!({"a": {"type": "string", "x-mcp-header": "A B"}}),
                "HTTP header name",
            ),
            (
                json!({"a": {"type": "string", "x-mcp-header": 7}}),
                "HTTP header name",
            ),
            (
                json!({"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}),
                "already",
            ),
            (
                json!({"a": {"type": "array", "x-mcp-header": "A"}}),
                "string, integer or boolean",
            ),
            (
                json!({"a": {"type": ["string", "null"], "x-mcp-header": "A"}}),
                "string, integer or boolean",
            ),
        ] {
            let found = problem(props.clone()).unwrap_or_default();
            assert!(found.contains(said), "{props}: {found}");
        }
    }

    #[test]
    fn names_follow_the_portable_rule() {
        for ok in ["a", "_x", "device_add", "device-add", &"a".repeat(64)] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in ["", "1a", "-a", "a b", "a.b", "é", &"a".repeat(65)] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    /// A hand-made tool with a schema the validator cannot read is refused when it is
    /// registered, added or mounted, the keyword and the feature named; with the `jsonschema`
    /// feature, a keyword outside the set is validated by it instead.
    #[test]
    fn schemas_the_validator_cannot_read_are_refused_when_registered() {
        use serde_json::{Value, json};
        struct Tagged(Value);
        impl crate::Tool for Tagged {
            fn meta(&self) -> crate::tool::ToolMeta {
                crate::tool::ToolMeta::new("tagged", "Takes tags.")
            }
            fn input_schema(&self) -> Value {
                self.0.clone()
            }
            fn output_schema(&self) -> Value {
                json!({})
            }
            fn call(
                &self,
                _: Value,
                _: crate::CallContext,
            ) -> futures_util::future::BoxFuture<'_, Result<Value, crate::ToolError>> {
                Box::pin(async { Ok(Value::Null) })
            }
        }
        let build = |schema: Value| {
            crate::Registry::builder()
                .without_inventory()
                .tool(Tagged(schema))
                .build()
        };
        let refused = |schema: Value| match build(schema) {
            Ok(_) => panic!("built"),
            Err(e) => e,
        };
        let contains = json!({"type": "object", "properties": {"tags": {"type": "array",
            "contains": {"const": "x"}}}});
        #[cfg(not(feature = "jsonschema"))]
        {
            let e = refused(contains).to_string();
            assert!(e.contains("tool `tagged`"), "{e}");
            assert!(e.contains("`contains` at `/properties/tags`"), "{e}");
            assert!(e.contains("`jsonschema` feature"), "{e}");
        }
        #[cfg(feature = "jsonschema")]
        {
            let registry = build(contains).expect("built");
            let tool = registry.get("tagged").expect("registered");
            assert!(tool.check_arguments(&json!({"tags": ["y", "x"]})).is_ok());
            let e = tool.check_arguments(&json!({"tags": ["y"]})).unwrap_err();
            assert_eq!(e.violations()[0].keyword, "contains");
            assert_eq!(e.violations()[0].path, "/tags");
        }
        // Malformed, whatever the features.
        let e =
            refused(json!({"type": "object", "properties": {"n": {"minimum": "1"}}})).to_string();
        assert!(e.contains("`/properties/n/minimum`"), "{e}");
    }
}
