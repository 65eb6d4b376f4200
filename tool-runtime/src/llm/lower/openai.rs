//! OpenAI function tools (Chat Completions and Responses): strict mode's schema subset, and
//! the size limits a strict schema must keep within.

use serde_json::{Map, Value, json};

use super::{
    Lowered, NEVER_STRICT, Notes, Path, admits_null, at, describe_away, describe_unkept, is_object,
    walk_children, without_dialect,
};
use crate::llm::Severity;

/// The keywords OpenAI strict mode accepts (with `format` checked on its own); the rest moves
/// into descriptions.
const OPENAI_KEEPS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "oneOf",
    "enum",
    "const",
    "description",
    "title",
    "$ref",
    "$defs",
    "pattern",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

/// The `format`s OpenAI strict mode accepts.
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// OpenAI function tools. Strict: every object closed, every property required (an optional
/// one nullable), no `default`, only supported formats, `oneOf` as `anyOf`, within the size
/// limits; otherwise the canonical schema, non-strict, with the reasons.
pub(in crate::llm) fn openai(input: &Value, strict: bool) -> Lowered {
    if !strict {
        return Lowered {
            schema: without_dialect(input),
            strict: false,
            notes: Vec::new(),
        };
    }
    let mut notes = Notes::default();
    let mut schema = without_dialect(input);
    openai_walk(&mut schema, &Path::ROOT, &mut notes);
    let mut sizes = Sizes::default();
    sizes.measure(&schema, 0);
    notes.not_strict.extend(sizes.over_openai_limits());
    notes.lowered(schema, input, "sent with `strict: false`")
}

/// Whether OpenAI strict mode keeps the keyword `k` (`format` is judged by its value).
fn kept(k: &str) -> bool {
    OPENAI_KEEPS.contains(&k) || NEVER_STRICT.contains(&k) || k == "format"
}

fn openai_walk(schema: &mut Value, path: &Path<'_>, notes: &mut Notes) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    notes.never_strict(obj, path, &[]);
    if let Some(f) = obj.get("format").and_then(Value::as_str)
        && !OPENAI_FORMATS.contains(&f)
    {
        describe_away(
            obj,
            &["format"],
            path,
            notes,
            "a format OpenAI strict mode does not support",
        );
    }
    describe_unkept(
        obj,
        kept,
        path,
        notes,
        "not supported in OpenAI strict mode",
    );
    if let Some(one_of) = obj.shift_remove("oneOf") {
        obj.insert("anyOf".into(), one_of);
        notes.add(
            path,
            Severity::Note,
            "`oneOf` sent as `anyOf` (the alternatives exclude each other)",
        );
    }
    if is_object(obj) {
        match obj.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => notes
                .not_strict
                .push(format!("a map (`additionalProperties`) at {}", at(path))),
        }
        obj.insert("additionalProperties".into(), Value::Bool(false));
        // Taken out while the properties are walked, and replaced in place by all of them.
        let required = obj.get_mut("required").map(std::mem::take);
        let is_required = |name: &str| {
            required
                .as_ref()
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|n| n == name))
        };
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            let mut all = Vec::with_capacity(props.len());
            let props_path = path.key("properties");
            for (name, prop) in props.iter_mut() {
                let p = props_path.key(name);
                openai_walk(prop, &p, notes);
                if !is_required(name) {
                    make_nullable(prop);
                    notes.add(
                        &p,
                        Severity::Note,
                        "optional: sent as required and nullable (`null` means left out)",
                    );
                }
                all.push(Value::String(name.clone()));
            }
            obj.insert("required".into(), Value::Array(all));
        } else {
            obj.insert("properties".into(), Value::Object(Map::new()));
            obj.insert("required".into(), Value::Array(Vec::new()));
        }
    }
    walk_children(obj, path, &mut |v, p| openai_walk(v, p, notes));
}

/// Makes a subschema also admit `null`.
fn make_nullable(schema: &mut Value) {
    if admits_null(schema) {
        return;
    }
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    match obj.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            obj.insert("type".into(), json!([t, "null"]));
            if let Some(Value::Array(values)) = obj.get_mut("enum") {
                values.push(Value::Null);
            }
            return;
        }
        Some(Value::Array(ts)) => {
            ts.push(json!("null"));
            if let Some(Value::Array(values)) = obj.get_mut("enum") {
                values.push(Value::Null);
            }
            return;
        }
        _ => {}
    }
    if let Some(Value::Array(alts)) = obj.get_mut("anyOf") {
        alts.push(json!({"type": "null"}));
        return;
    }
    let description = obj.shift_remove("description");
    let inner = Value::Object(std::mem::take(obj));
    obj.insert("anyOf".into(), json!([inner, {"type": "null"}]));
    if let Some(d) = description {
        obj.insert("description".into(), d);
    }
}

/// The sizes OpenAI strict mode limits.
#[derive(Default)]
struct Sizes {
    properties: usize,
    depth: usize,
    enum_values: usize,
    text: usize,
}

impl Sizes {
    fn measure(&mut self, schema: &Value, depth: usize) {
        let Some(obj) = schema.as_object() else {
            return;
        };
        let mut depth = depth;
        if let Some(Value::Object(props)) = obj.get("properties") {
            depth += 1;
            self.depth = self.depth.max(depth);
            self.properties += props.len();
            self.text += props.keys().map(String::len).sum::<usize>();
        }
        for k in ["enum"] {
            if let Some(Value::Array(values)) = obj.get(k) {
                self.enum_values += values.len();
                self.text += values
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::len)
                    .sum::<usize>();
            }
        }
        if let Some(Value::String(c)) = obj.get("const") {
            self.text += c.len();
        }
        for (key, value) in obj {
            match key.as_str() {
                "properties" | "$defs" => {
                    if let Value::Object(m) = value {
                        for v in m.values() {
                            self.measure(v, depth);
                        }
                    }
                }
                "items" | "additionalProperties" => self.measure(value, depth),
                "anyOf" | "oneOf" => {
                    if let Value::Array(a) = value {
                        for v in a {
                            self.measure(v, depth);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn over_openai_limits(&self) -> Vec<String> {
        let mut over = Vec::new();
        if self.properties > 5000 {
            over.push(format!("{} properties (at most 5,000)", self.properties));
        }
        if self.depth > 10 {
            over.push(format!("objects nested {} deep (at most 10)", self.depth));
        }
        if self.enum_values > 1000 {
            over.push(format!("{} enum values (at most 1,000)", self.enum_values));
        }
        if self.text > 120_000 {
            over.push(format!(
                "{} characters of names and values (at most 120,000)",
                self.text
            ));
        }
        over
    }
}
