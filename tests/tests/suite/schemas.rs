//! Snapshots of the schemas the demo and downstream tools advertise, and the rules every
//! emitted schema follows.

use serde_json::{Value, json};
use tool_runtime::Registry;

fn demo() -> Registry {
    demo_app::registry(demo_app::Store::in_memory().unwrap()).unwrap()
}

fn downstream() -> Registry {
    Registry::builder()
        .without_inventory()
        .tool(downstream::ticket_open::descriptor())
        .tool(downstream::ticket_list::descriptor())
        .state(downstream::Inbox::default())
        .build()
        .unwrap()
}

fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                out.push(r.clone());
            }
            m.values().for_each(|v| refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// The values an enum schema allows: `enum`, or `oneOf` of documented `const` variants.
fn enum_values(schema: &Value) -> Vec<String> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    if let Some(e) = schema.get("enum") {
        return strings(e);
    }
    schema["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|v| match v.get("const") {
            Some(c) => c.as_str().map(str::to_owned).into_iter().collect(),
            None => strings(&v["enum"]),
        })
        .collect()
}

#[test]
fn demo_schemas_match_their_snapshots() {
    let r = demo();
    for t in r.tools() {
        insta::assert_json_snapshot!(format!("{}-input", t.name()), t.input_schema());
        insta::assert_json_snapshot!(format!("{}-output", t.name()), t.output_schema());
    }
}

#[test]
fn downstream_schemas_match_their_snapshots() {
    let r = downstream();
    for t in r.tools() {
        insta::assert_json_snapshot!(format!("{}-input", t.name()), t.input_schema());
        insta::assert_json_snapshot!(format!("{}-output", t.name()), t.output_schema());
    }
}

#[test]
fn input_schemas_are_closed_2020_12_objects_without_refs_to_resolve() {
    for r in [demo(), downstream()] {
        for t in r.tools() {
            let s = t.input_schema();
            assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
            assert_eq!(s["type"], "object", "{}", t.name());
            assert_eq!(s["additionalProperties"], false, "{}", t.name());
            let mut found = Vec::new();
            refs(s, &mut found);
            // Only the recursive `Component` keeps a reference, into its own `$defs`.
            for r in &found {
                assert_eq!(r, "#/$defs/Component", "{}: unexpected $ref", t.name());
                assert!(s["$defs"]["Component"].is_object());
            }
            if found.is_empty() {
                assert!(
                    s.get("$defs").is_none(),
                    "{}: $defs without recursion",
                    t.name()
                );
            }
        }
    }
}

#[test]
fn device_add_schema_carries_docs_defaults_and_constraints() {
    let r = demo();
    let tool_s = r.get("device_add").unwrap();
    let s = tool_s.input_schema();
    let p = &s["properties"];
    assert_eq!(
        p["ttl_seconds"]["description"],
        "Pairing code lifetime in seconds"
    );
    assert_eq!(p["ttl_seconds"]["default"], 300);
    assert_eq!(p["ttl_seconds"]["minimum"], 30);
    assert_eq!(p["ttl_seconds"]["maximum"], 86400);
    assert_eq!(p["code_length"]["default"], 6);
    assert_eq!(p["code_length"]["minimum"], 4);
    assert_eq!(p["code_length"]["maximum"], 10);
    assert_eq!(p["workspace"]["description"], "Workspace name");
    assert_eq!(p["workspace"]["maxLength"], 64);
    // Optional and defaulted parameters are not required; injected `store` is nowhere.
    assert!(s.get("required").is_none_or(|r| r == &json!([])), "{s}");
    assert!(p.get("store").is_none());
    let tool_meta = r.get("device_add").unwrap();
    let meta = tool_meta.meta();
    assert_eq!(
        meta.summary,
        "Generate a short-lived pairing code to onboard a new mobile device."
    );
    assert!(meta.description.contains("until it expires or is redeemed"));
    assert_eq!(meta.title, "Device add");
    assert_eq!(meta.annotations.destructive, Some(false));
    assert_eq!(meta.tags, ["devices"]);
    let tool_pair = r.get("device_pair").unwrap();
    let pair = tool_pair.input_schema();
    assert_eq!(pair["properties"]["code"]["pattern"], "^[0-9]{4,10}$");
    assert_eq!(pair["required"], json!(["code", "device_name"]));
    assert_eq!(
        r.get("device_revoke")
            .unwrap()
            .meta()
            .annotations
            .destructive,
        Some(true)
    );
}

#[test]
fn user_types_are_described_with_serde_renames() {
    let r = downstream();
    let tool_s = r.get("ticket_open").unwrap();
    let s = tool_s.input_schema();
    let p = &s["properties"];
    assert_eq!(enum_values(&p["priority"]), ["low", "high", "very-high"]);
    let address = &p["address"];
    let text = address.to_string();
    assert!(
        text.contains("zip-code") && !text.contains("\"zip\""),
        "{text}"
    );
    assert_eq!(p["labels"]["type"], "array");
    assert_eq!(p["labels"]["maxItems"], 5);
    assert_eq!(p["labels"]["default"], json!([]));
    assert_eq!(p["metadata"]["type"], "object");
    assert_eq!(p["metadata"]["additionalProperties"]["type"], "string");
    assert_eq!(p["title"]["minLength"], 3);
    assert_eq!(p["score"]["maximum"], 1.0);
    assert_eq!(s["required"], json!(["title", "priority"]));
    let tool_meta = r.get("ticket_open").unwrap();
    let meta = tool_meta.meta();
    assert_eq!(meta.timeout, Some(std::time::Duration::from_secs(5)));
}

/// `#[tool]` derives titles and summaries at compile time; they must follow the rules the
/// runtime applies to tools made with `ToolMeta::new`.
#[test]
fn titles_and_summaries_derived_by_the_macro_follow_the_runtime_rules() {
    let (demo, downstream) = (demo(), downstream());
    let mut seen = 0;
    for tool in demo.tools().into_iter().chain(downstream.tools()) {
        let meta = tool.meta();
        let rules = tool_runtime::ToolMeta::new(meta.name.clone(), meta.description.clone());
        assert_eq!(meta.title, rules.title, "title of {}", meta.name);
        assert_eq!(meta.summary, rules.summary, "summary of {}", meta.name);
        assert!(
            meta.defined_at
                .starts_with(&format!("{} at ", tool_module(&meta.name))),
            "{}",
            meta.defined_at
        );
        seen += 1;
    }
    assert!(seen >= 6);
    // A first paragraph of two lines is among them, and docs of several paragraphs.
    let tool_list = downstream.get("ticket_list").unwrap();
    let list = tool_list.meta();
    assert_eq!(list.summary, "List open tickets, oldest first.");
    assert!(
        demo.tools()
            .iter()
            .any(|t| t.meta().description.contains("\n\n"))
    );
}

fn tool_module(name: &str) -> &'static str {
    if name.starts_with("ticket") {
        "downstream"
    } else {
        "demo_app::tools"
    }
}

/// A call without arguments skips the validator where `{}` cannot fail the root: for every demo
/// and downstream tool, the answer is the validator's own.
#[test]
fn calls_without_arguments_are_checked_as_the_validator_would() {
    for registry in [demo(), downstream()] {
        for tool in registry.tools() {
            let validator = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(tool.input_schema())
                .unwrap();
            assert_eq!(
                tool.check_arguments(&json!({})).is_ok(),
                validator.is_valid(&json!({})),
                "{}",
                tool.name()
            );
        }
    }
}
