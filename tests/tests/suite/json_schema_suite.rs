//! The official JSON Schema Test Suite (draft 2020-12, vendored in
//! `tests/fixtures/json-schema-test-suite`) against tool-runtime's own validator: every case
//! whose schema uses only the keywords it knows passes; every other case is refused when the
//! schema compiles, and counted under the keyword that excludes it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use tool_runtime::__private::validator::{CompileError, Validator};

/// The cases skipped, by the keyword that excludes them. A change here is a change of what the
/// validator knows: made on purpose, with this table.
const SKIPPED: &[(&str, usize)] = &[
    ("$dynamicAnchor", 3),
    ("$dynamicRef", 3),
    ("$id", 1),     // below the root
    ("$ref", 50),   // to another document, or to an anchor
    ("$schema", 2), // a meta-schema of its own
    ("contains", 20),
    ("dependentRequired", 4),
    ("dependentSchemas", 7),
    ("else", 1),
    ("if", 18),
    ("maxContains", 1),
    ("minContains", 1),
    ("pattern", 1), // `\p{Letter}`: the regex crate is built without its Unicode tables
    ("patternProperties", 1), // the same
    ("propertyNames", 8),
    ("then", 2),
    ("unevaluatedItems", 23),
];

#[test]
fn every_case_within_the_set_passes() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/json-schema-test-suite/draft2020-12");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the vendored suite")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() > 40,
        "{} files in {}",
        files.len(),
        dir.display()
    );
    let (mut cases, mut tests, mut passed_cases) = (0, 0, 0);
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        for group in groups {
            cases += 1;
            let description = group["description"].as_str().unwrap_or_default();
            let validator = match Validator::new(&group["schema"]) {
                Ok(v) => v,
                Err(CompileError::Unsupported { keyword, .. }) => {
                    *skipped.entry(keyword).or_default() += 1;
                    continue;
                }
                Err(e) => {
                    failures.push(format!("{name}: {description}: does not compile: {e}"));
                    continue;
                }
            };
            let mut all = true;
            for test in group["tests"].as_array().unwrap() {
                tests += 1;
                let expected = test["valid"].as_bool().unwrap();
                let data = &test["data"];
                let valid = validator.is_valid(data);
                let errors = validator.errors(data);
                if valid != expected || errors.is_empty() != expected {
                    all = false;
                    failures.push(format!(
                        "{name}: {description}: {}: expected {expected}, is_valid {valid}, {} errors",
                        test["description"].as_str().unwrap_or_default(),
                        errors.len()
                    ));
                }
            }
            if all {
                passed_cases += 1;
            }
        }
    }
    let skipped_total: usize = skipped.values().sum();
    eprintln!(
        "JSON Schema Test Suite, draft 2020-12: {cases} cases in {} files; {passed_cases} pass ({tests} tests), {skipped_total} skipped: {skipped:?}",
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let expected: BTreeMap<String, usize> =
        SKIPPED.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect();
    assert_eq!(skipped, expected, "the skipped cases, by keyword");
}

/// Every keyword in the schemas of the `#[tool]`s linked into this binary (the demo's, the
/// fixtures', the downstream crate's: every kind of type schemars describes here), input and
/// output. A schemars upgrade that writes a new keyword changes this list, and fails here
/// before a schema the validator refuses reaches a user.
const KEYWORDS_WRITTEN: &[&str] = &[
    "$defs",
    "$ref",
    "$schema",
    "additionalProperties",
    "anyOf",
    "const",
    "default",
    "description",
    "enum",
    "format",
    "items",
    "maxItems",
    "maxLength",
    "maximum",
    "minItems",
    "minLength",
    "minimum",
    "oneOf",
    "pattern",
    "prefixItems",
    "properties",
    "required",
    "title",
    "type",
    "writeOnly",
    // An annotation (`#[arg(header = ...)]`, SEP-2243) the validator passes over.
    "x-mcp-header",
];

#[test]
fn the_generators_write_only_keywords_the_validator_knows() {
    use tool_runtime::__private::{ToolRegistration, inventory};
    use tool_runtime::Tool;
    let mut keywords = std::collections::BTreeSet::new();
    let mut schemas = 0;
    for registration in inventory::iter::<ToolRegistration> {
        let tool = &registration.0;
        for schema in [tool.input_schema(), tool.output_schema()] {
            schemas += 1;
            if let Err(e) = Validator::new(&schema) {
                panic!("`{}`: {e}: {schema}", tool.meta().name);
            }
            collect_keywords(&schema, &mut keywords);
        }
    }
    assert!(schemas > 50, "{schemas} schemas");
    let keywords: Vec<&str> = keywords.iter().map(String::as_str).collect();
    assert_eq!(
        keywords, KEYWORDS_WRITTEN,
        "the keywords of {schemas} schemas"
    );
}

/// The keywords of `schema` and of every subschema in it (not the names of properties).
fn collect_keywords(schema: &Value, out: &mut std::collections::BTreeSet<String>) {
    let Value::Object(map) = schema else { return };
    for (keyword, value) in map {
        out.insert(keyword.clone());
        match keyword.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" => {
                for sub in value.as_object().into_iter().flat_map(|m| m.values()) {
                    collect_keywords(sub, out);
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                for sub in value.as_array().into_iter().flatten() {
                    collect_keywords(sub, out);
                }
            }
            "items" | "additionalProperties" | "unevaluatedProperties" | "not" => {
                collect_keywords(value, out);
            }
            _ => {}
        }
    }
}
