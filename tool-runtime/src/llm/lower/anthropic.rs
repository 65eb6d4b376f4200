//! Anthropic `input_schema`, and the subset strict tool use accepts.

use serde_json::{Map, Value, json};

use super::{
    Lowered, Notes, Path, at, describe_unkept, is_object, required_of, walk_children,
    without_dialect,
};
use crate::llm::Severity;

/// Anthropic `input_schema`: the canonical schema; strict, additionally closed objects and
/// no numeric or length bounds (moved into descriptions), no recursion.
pub(in crate::llm) fn anthropic(input: &Value, strict: bool) -> Lowered {
    if !strict {
        return Lowered {
            schema: without_dialect(input),
            strict: false,
            notes: Vec::new(),
        };
    }
    let mut notes = Notes::default();
    if input.get("$defs").is_some() || has_ref(input) {
        notes.not_strict.push("a recursive type".into());
    }
    let mut schema = without_dialect(input);
    if notes.not_strict.is_empty() {
        anthropic_walk(&mut schema, &Path::ROOT, &mut notes);
    }
    notes.lowered(schema, input, "sent non-strict")
}

/// The `format`s Anthropic strict tool use accepts.
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The keywords Anthropic strict tool use accepts (with `format` and `minItems` checked on
/// their own); the rest moves into descriptions.
const ANTHROPIC_KEEPS: &[&str] = &[
    "type",
    "anyOf",
    "allOf",
    "enum",
    "const",
    "description",
    "title",
    "properties",
    "additionalProperties",
    "required",
    "items",
    "$ref",
    "$defs",
];

/// Whether Anthropic strict tool use keeps the keyword `k`.
fn kept(k: &str, format_ok: bool, min_items_ok: bool) -> bool {
    ANTHROPIC_KEEPS.contains(&k)
        || (k == "format" && format_ok)
        || (k == "minItems" && min_items_ok)
}

fn anthropic_walk(schema: &mut Value, path: &Path<'_>, notes: &mut Notes) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    notes.never_strict(obj, path, &["allOf"]);
    if let Some(one_of) = obj.shift_remove("oneOf") {
        obj.insert("anyOf".into(), one_of);
        notes.add(
            path,
            Severity::Note,
            "`oneOf` sent as `anyOf` (the alternatives exclude each other)",
        );
    }
    // One type per schema: a type array becomes `anyOf` of each type, the other keywords
    // going with the non-null one.
    if let Some(Value::Array(types)) = obj.get("type").cloned() {
        split_type_array(obj, &types);
        notes.add(
            path,
            Severity::Note,
            "type array sent as `anyOf` of each type",
        );
    }
    // A constant or an enum says its type: the strict form leaves `type` out next to it.
    if obj.contains_key("const") || obj.contains_key("enum") {
        obj.shift_remove("type");
    }
    let format_ok = obj.get("format").and_then(Value::as_str).is_some_and(|f| {
        obj.get("type").and_then(Value::as_str) == Some("string") && ANTHROPIC_FORMATS.contains(&f)
    });
    let min_items_ok = obj
        .get("minItems")
        .and_then(Value::as_u64)
        .is_some_and(|n| n <= 1);
    describe_unkept(
        obj,
        |k| kept(k, format_ok, min_items_ok),
        path,
        notes,
        "not supported by Anthropic strict tool use",
    );
    if is_object(obj) {
        match obj.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => notes
                .not_strict
                .push(format!("a map (`additionalProperties`) at {}", at(path))),
        }
        obj.insert("additionalProperties".into(), Value::Bool(false));
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            let props_path = path.key("properties");
            for (name, prop) in props.iter_mut() {
                anthropic_walk(prop, &props_path.key(name), notes);
            }
        }
    }
    walk_children(obj, path, &mut |v, p| anthropic_walk(v, p, notes));
}

/// `{"type": ["string", "null"], "minLength": 1, "description": d}` as
/// `{"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}], "description": d}`.
fn split_type_array(obj: &mut Map<String, Value>, types: &[Value]) {
    obj.shift_remove("type");
    let description = obj.shift_remove("description");
    let title = obj.shift_remove("title");
    let rest = std::mem::take(obj);
    let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
    let mut alternatives = Vec::new();
    for (i, t) in non_null.iter().enumerate() {
        let mut alt = if i == 0 { rest.clone() } else { Map::new() };
        alt.insert("type".into(), (*t).clone());
        alternatives.push(Value::Object(alt));
    }
    if non_null.len() < types.len() {
        alternatives.push(json!({"type": "null"}));
    }
    obj.insert("anyOf".into(), Value::Array(alternatives));
    if let Some(d) = description {
        obj.insert("description".into(), d);
    }
    if let Some(t) = title {
        obj.insert("title".into(), t);
    }
}

/// The optional parameters and the parameters with unions of a (strict) input schema, as
/// Anthropic counts them against its per-request limits.
pub(in crate::llm) fn optional_and_union_params(schema: &Value) -> (usize, usize) {
    let required = schema.as_object().map(required_of).unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else {
        return (0, 0);
    };
    let optional = props.keys().filter(|k| !required.contains(k)).count();
    let unions = props
        .values()
        .filter(|p| p.get("anyOf").is_some() || p.get("oneOf").is_some() || p["type"].is_array())
        .count();
    (optional, unions)
}

fn has_ref(schema: &Value) -> bool {
    match schema {
        Value::Object(o) => {
            o.contains_key("$ref")
                || o.iter()
                    .any(|(k, v)| k != "default" && k != "const" && k != "enum" && has_ref(v))
        }
        Value::Array(a) => a.iter().any(has_ref),
        _ => false,
    }
}
