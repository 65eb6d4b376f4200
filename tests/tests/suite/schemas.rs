//! Snapshots of the schemas the demo and downstream tools advertise, and the rules every
//! emitted schema follows.

use serde_json::{Value, json};
use tool_runtime::Registry;

fn demo() -> Registry {
    demo_app::registry(&demo_app::Stores::in_memory().unwrap()).unwrap()
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
    assert_eq!(
        meta.options.timeout,
        Some(std::time::Duration::from_secs(5))
    );
}

/// `#[tool]` derives titles and summaries at compile time; they must follow the rules the
/// runtime applies to tools made with `ToolMeta::new`.
#[test]
fn titles_and_summaries_derived_by_the_macro_follow_the_runtime_rules() {
    let (demo, downstream) = (demo(), downstream());
    let mut seen = 0;
    for tool in demo.tools().into_iter().chain(downstream.tools()) {
        let meta = tool.meta();
        let rules = tool_runtime::tool::ToolMeta::new(meta.name.clone(), meta.description.clone());
        assert_eq!(meta.title, rules.title, "title of {}", meta.name);
        assert_eq!(meta.summary, rules.summary, "summary of {}", meta.name);
        assert!(
            meta.options
                .defined_at
                .starts_with(&format!("{} at ", tool_module(&meta.name))),
            "{}",
            meta.options.defined_at
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

mod nested {
    use std::collections::BTreeMap;

    use tool_runtime::prelude::*;

    /// Who wrote it.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct Author {
        /// Full name.
        pub name: String,
    }

    /// Notes that take any field besides their own.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[schemars(extend("additionalProperties" = true))]
    pub struct Notes {
        /// The note.
        pub text: String,
    }

    /// A book.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct Book {
        /// Its author.
        pub author: Author,
        /// Its co-authors.
        #[serde(default)]
        pub others: Vec<Author>,
        /// Free notes.
        pub notes: Option<Notes>,
        /// Labels by key.
        #[serde(default)]
        pub labels: BTreeMap<String, String>,
    }

    /// Shelve a book.
    #[tool]
    pub async fn shelve(
        /// The book
        book: Book,
    ) -> String {
        let notes = book.notes.map_or(0, |n| n.text.len());
        format!(
            "{} and {} others, {notes} bytes of notes, {} labels",
            book.author.name,
            book.others.len(),
            book.labels.len()
        )
    }
}

/// Unknown fields are refused at every depth of a parameter's type, as at the top: the schema
/// closes every struct's object and the validator enforces it. Maps and types that opt out keep
/// taking any field.
#[tokio::test]
async fn unknown_fields_are_refused_in_nested_structs_unless_the_type_opts_out() {
    use tool_runtime::{Caller, Source};
    let registry = Registry::builder()
        .without_inventory()
        .tool(nested::shelve::descriptor())
        .build()
        .unwrap();
    let tool = registry.get("shelve").unwrap();
    let book = &tool.input_schema()["properties"]["book"];
    assert_eq!(book["additionalProperties"], false, "{book}");
    assert_eq!(book["properties"]["author"]["additionalProperties"], false);
    assert_eq!(
        book["properties"]["others"]["items"]["additionalProperties"],
        false
    );
    assert_eq!(
        book["properties"]["labels"]["additionalProperties"]["type"],
        "string"
    );
    let call = |args: Value| registry.call("shelve", args, Caller::new(Source::Internal));

    let refused = call(json!({"book": {"author": {"name": "a", "age": 3}}})).await;
    let error = refused.error().expect("refused");
    assert_eq!(error.kind(), "invalid_arguments");
    let violations = error.violations();
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].path, "/book/author/age");
    assert!(violations[0].message.contains("age"), "{violations:?}");

    let deep =
        call(json!({"book": {"author": {"name": "a"}, "others": [{"name": "b", "x": 1}]}})).await;
    assert_eq!(
        deep.error().expect("refused").violations()[0].path,
        "/book/others/0/x"
    );
    let misspelt = call(json!({"book": {"author": {"name": "a"}, "lables": {}}})).await;
    assert_eq!(
        misspelt.error().expect("refused").kind(),
        "invalid_arguments"
    );

    let open = call(json!({"book": {
        "author": {"name": "a"},
        "notes": {"text": "t", "anything": [1, 2]},
        "labels": {"any": "key"}
    }}))
    .await;
    assert!(open.error().is_none(), "{open:?}");

    // Where the registry drops unknown fields instead, it drops them at every depth too.
    let lenient = Registry::builder()
        .without_inventory()
        .tool(nested::shelve::descriptor())
        .ignore_unknown_fields(true)
        .build()
        .unwrap();
    let dropped = lenient
        .call(
            "shelve",
            json!({"book": {"author": {"name": "a", "age": 3}, "others": [{"name": "b", "x": 1}]}, "y": 0}),
            Caller::new(Source::Internal),
        )
        .await;
    assert!(dropped.error().is_none(), "{dropped:?}");
}

mod flags {
    use tool_runtime::prelude::*;

    /// Archive notes.
    #[tool]
    pub async fn archive(
        /// Also the pinned ones
        pinned: bool,
        /// Only these labels
        labels: Vec<String>,
        /// Say it out loud (must be given)
        #[arg(required)]
        loud: bool,
    ) -> String {
        format!("{pinned} {labels:?} {loud}")
    }
}

/// A plain `bool` defaults to `false` and a plain `Vec<T>` to empty, in the schema and in a
/// call, unless the parameter says `#[arg(required)]`.
#[tokio::test]
async fn bools_and_vecs_default_to_false_and_empty_unless_required() {
    use tool_runtime::{Caller, Source};
    let registry = Registry::builder()
        .without_inventory()
        .tool(flags::archive::descriptor())
        .build()
        .unwrap();
    let schema = registry.get("archive").unwrap().input_schema().clone();
    assert_eq!(schema["required"], json!(["loud"]), "{schema}");
    assert_eq!(schema["properties"]["pinned"]["default"], false);
    assert_eq!(schema["properties"]["labels"]["default"], json!([]));
    assert!(schema["properties"]["loud"].get("default").is_none());
    let call = |args: Value| registry.call("archive", args, Caller::new(Source::Internal));
    let ok = call(json!({"loud": true})).await;
    assert_eq!(ok.result(), Some(&json!("false [] true")), "{ok:?}");
    let refused = call(json!({})).await;
    let violations = refused.error().expect("loud is required").violations();
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(violations[0].message.contains("loud"), "{violations:?}");
}
