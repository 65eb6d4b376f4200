//! Gemini `parameters`: the OpenAPI 3.0 subset of its `Schema` object.

use serde_json::{Map, Value, json};

use super::{Lowered, Notes, Path, describe_away};
use crate::llm::Severity;
use crate::llm::describe::add_to_description;

/// The `format`s Gemini's `Schema` accepts, by type.
fn gemini_format(ty: &str, format: &str) -> bool {
    matches!(
        (ty, format),
        ("number", "float" | "double")
            | ("integer", "int32" | "int64")
            | ("string", "enum" | "date-time")
    )
}

/// Gemini `parameters`: the OpenAPI 3.0 subset of its `Schema` object. `$ref`s inlined
/// (recursion cut after `depth` expansions, in optional properties only), type arrays and
/// `null` alternatives as `nullable`, `oneOf` of constants as a string `enum`, the rest as
/// `anyOf`; what `Schema` has no field for goes into descriptions.
pub(in crate::llm) fn gemini(input: &Value, depth: usize) -> Lowered {
    let mut notes = Notes::default();
    let mut walker = Gemini {
        root: input,
        defs: input.get("$defs").and_then(Value::as_object),
        depth,
        stack: Vec::new(),
        notes: &mut notes,
    };
    let schema = walker
        .lower(input, &Path::ROOT)
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    Lowered {
        schema,
        strict: false,
        notes: notes.notes,
    }
}

/// Keywords Gemini's `Schema` has a field for (with `type`, `properties`, `items`, `anyOf`,
/// `required`, `description`, handled on their own).
const GEMINI_KEEPS: &[&str] = &[
    "title",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
];

struct Gemini<'a, 'n> {
    root: &'a Value,
    defs: Option<&'a Map<String, Value>>,
    depth: usize,
    /// The references being expanded, outermost first.
    stack: Vec<&'a str>,
    notes: &'n mut Notes,
}

/// The keywords of a canonical subschema not lowered yet, in their order: the lowered schema
/// is built from the canonical one without copying it first.
struct Rest<'a>(Vec<(&'a str, &'a Value)>);

impl<'a> Rest<'a> {
    fn of(schema: &'a Map<String, Value>) -> Self {
        Rest(schema.iter().map(|(k, v)| (k.as_str(), v)).collect())
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// The keyword's value, now lowered (or dropped).
    fn take(&mut self, key: &str) -> Option<&'a Value> {
        let at = self.0.iter().position(|(k, _)| *k == key)?;
        Some(self.0.remove(at).1)
    }
}

impl<'a> Gemini<'a, '_> {
    /// The lowered subschema, or `None` when recursion was cut here.
    fn lower(&mut self, schema: &'a Value, path: &Path<'_>) -> Option<Value> {
        let Some(src) = schema.as_object() else {
            return Some(json!({}));
        };
        if let Some(r) = src.get("$ref").and_then(Value::as_str) {
            let target = if r == "#" {
                Some(self.root)
            } else {
                r.strip_prefix("#/$defs/")
                    .and_then(|n| self.defs.and_then(|defs| defs.get(n)))
            };
            let Some(target) = target else {
                self.notes
                    .add(path, Severity::Error, format!("`$ref` {r} points nowhere"));
                return Some(json!({}));
            };
            if self.stack.iter().filter(|s| **s == r).count() >= self.depth {
                return None;
            }
            self.stack.push(r);
            let inlined = self.lower(target, path);
            self.stack.pop();
            let mut inlined = inlined?;
            // Keywords next to the `$ref` (a description) apply too.
            if let (Some(desc), Some(o)) = (src.get("description"), inlined.as_object_mut()) {
                o.insert("description".into(), desc.clone());
            }
            return Some(inlined);
        }
        let mut rest = Rest::of(src);
        let mut out = Map::new();
        for k in ["$schema", "$defs", "examples", "$comment"] {
            rest.take(k);
        }
        self.types_and_unions(&mut rest, &mut out, path)?;
        values(&mut rest, &mut out);
        self.object(&mut rest, &mut out, path)?;
        self.leftovers(&mut rest, &mut out, path);
        Some(Value::Object(out))
    }

    /// `type` (type arrays as `nullable` or `anyOf`), `oneOf` (of constants: a string enum;
    /// else `anyOf`) and `anyOf` (a `null` alternative as `nullable`).
    fn types_and_unions(
        &mut self,
        rest: &mut Rest<'a>,
        out: &mut Map<String, Value>,
        path: &Path<'_>,
    ) -> Option<()> {
        // Type arrays: one type and `nullable`, or `anyOf` of each.
        let mut nullable = false;
        match rest.take("type") {
            Some(Value::Array(types)) => {
                let non_null: Vec<&str> = types
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|t| *t != "null")
                    .collect();
                nullable = non_null.len() < types.len();
                match non_null.as_slice() {
                    [one] => {
                        out.insert("type".into(), json!(one));
                    }
                    many => {
                        out.insert(
                            "anyOf".into(),
                            Value::Array(many.iter().map(|t| json!({"type": t})).collect()),
                        );
                    }
                }
                self.notes.add(
                    path,
                    Severity::Note,
                    "type array sent as one type with `nullable`, or `anyOf`",
                );
            }
            Some(t) => {
                out.insert("type".into(), t.clone());
            }
            None => {}
        }
        // `oneOf` of string constants: a string enum.
        if let Some(Value::Array(alts)) = rest.get("oneOf")
            && let Some(values) = string_constants(alts)
        {
            rest.take("oneOf");
            out.insert("type".into(), json!("string"));
            out.insert("enum".into(), Value::Array(values));
            self.notes.add(
                path,
                Severity::Note,
                "`oneOf` of constants sent as a string `enum`",
            );
        }
        for key in ["oneOf", "anyOf"] {
            let Some(Value::Array(alts)) = rest.take(key) else {
                continue;
            };
            if key == "oneOf" {
                self.notes.add(
                    path,
                    Severity::Note,
                    "`oneOf` sent as `anyOf` (the alternatives exclude each other)",
                );
            }
            let key_path = path.key(key);
            let mut lowered = Vec::new();
            for (i, alt) in alts.iter().enumerate() {
                if alt.get("type").and_then(Value::as_str) == Some("null") {
                    nullable = true;
                    continue;
                }
                lowered.push(self.lower(alt, &key_path.index(i))?);
            }
            match lowered.len() {
                1 => {
                    if let Some(Value::Object(one)) = lowered.pop() {
                        for (k, v) in one {
                            out.entry(k).or_insert(v);
                        }
                    }
                }
                _ => {
                    out.insert("anyOf".into(), Value::Array(lowered));
                }
            }
        }
        if nullable {
            out.insert("nullable".into(), json!(true));
        }
        Some(())
    }

    /// `properties` (an optional one that recursion cut is dropped), `required`, maps
    /// (described), `items`.
    fn object(
        &mut self,
        rest: &mut Rest<'a>,
        out: &mut Map<String, Value>,
        path: &Path<'_>,
    ) -> Option<()> {
        // Objects: properties (an optional one that recursion cut is dropped), `required`.
        if let Some(Value::Object(props)) = rest.take("properties") {
            let required: Vec<&str> = rest
                .take("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let props_path = path.key("properties");
            let mut lowered = Map::new();
            for (name, prop) in props {
                let p = props_path.key(name);
                match self.lower(prop, &p) {
                    Some(v) => {
                        lowered.insert(name.clone(), v);
                    }
                    None if required.contains(&name.as_str()) => return None,
                    None => self.notes.add(
                        &p,
                        Severity::Warning,
                        format!(
                            "left out: a recursive type expanded {} times already",
                            self.depth
                        ),
                    ),
                }
            }
            let kept: Vec<Value> = required
                .iter()
                .filter(|r| lowered.contains_key(**r))
                .map(|r| json!(r))
                .collect();
            out.insert("properties".into(), Value::Object(lowered));
            if !kept.is_empty() {
                out.insert("required".into(), Value::Array(kept));
            }
        }
        match rest.take("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => {
                add_to_description(out, "an object with any keys");
                self.notes.add(
                    path,
                    Severity::Warning,
                    "a map: Gemini has no `additionalProperties`; described instead",
                );
            }
            Some(values) => {
                let kind = values.get("type").and_then(Value::as_str).unwrap_or("any");
                add_to_description(
                    out,
                    &format!("an object with any keys, each value of type {kind}"),
                );
                self.notes.add(
                    path,
                    Severity::Warning,
                    "a map: Gemini has no `additionalProperties`; described instead",
                );
            }
        }
        if let Some(items) = rest.take("items") {
            out.insert("items".into(), self.lower(items, &path.key("items"))?);
        }
        if rest.take("prefixItems").is_some() {
            self.notes.add(
                path,
                Severity::Error,
                "a tuple (`prefixItems`): Gemini cannot describe it",
            );
        }
        Some(())
    }

    /// Whatever is left has no `Schema` field: into the description, or an error when the
    /// meaning would change.
    fn leftovers(&mut self, rest: &mut Rest<'a>, out: &mut Map<String, Value>, path: &Path<'_>) {
        rest.take("required");
        for k in [
            "allOf",
            "not",
            "if",
            "then",
            "else",
            "dependentSchemas",
            "patternProperties",
        ] {
            if rest.take(k).is_some() {
                self.notes.add(
                    path,
                    Severity::Error,
                    format!(
                        "`{k}`: Gemini cannot describe it; send `parametersJsonSchema` instead"
                    ),
                );
            }
        }
        if rest.0.is_empty() {
            return;
        }
        let keys: Vec<&str> = rest.0.iter().map(|(k, _)| *k).collect();
        let mut removed: Map<String, Value> = rest
            .0
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).clone()))
            .collect();
        if let Some(d) = out.get("description") {
            removed.insert("description".into(), d.clone());
        }
        describe_away(
            &mut removed,
            &keys,
            path,
            self.notes,
            "no field in Gemini's `Schema`",
        );
        if let Some(d) = removed.shift_remove("description") {
            out.insert("description".into(), d);
        }
    }
}

/// `const` and `enum` (only strings), `format` (those `Schema` knows), and the keywords
/// `Schema` has fields for.
fn values(rest: &mut Rest<'_>, out: &mut Map<String, Value>) {
    if let Some(Value::String(c)) = rest.get("const") {
        out.insert("enum".into(), json!([c]));
        rest.take("const");
        out.entry("type").or_insert(json!("string"));
    }
    if let Some(Value::Array(values)) = rest.get("enum") {
        if values.iter().all(Value::is_string) {
            out.insert("enum".into(), Value::Array(values.clone()));
            rest.take("enum");
        } else if values.iter().filter(|v| !v.is_null()).all(Value::is_string) {
            out.insert(
                "enum".into(),
                Value::Array(values.iter().filter(|v| v.is_string()).cloned().collect()),
            );
            out.insert("nullable".into(), json!(true));
            rest.take("enum");
        }
    }
    if let Some(f) = rest.get("format").and_then(Value::as_str) {
        let ty = out.get("type").and_then(Value::as_str).unwrap_or_default();
        if gemini_format(ty, f) {
            out.insert("format".into(), json!(f));
            rest.take("format");
        }
    }
    for k in GEMINI_KEEPS {
        if let Some(v) = rest.take(k) {
            out.insert((*k).to_owned(), v.clone());
        }
    }
    if let Some(d) = rest.take("description") {
        out.insert("description".into(), d.clone());
    }
}

/// The values of a `oneOf` whose every alternative is a string `const` (or string `enum`).
fn string_constants(alts: &[Value]) -> Option<Vec<Value>> {
    let mut out = Vec::new();
    for alt in alts {
        if let Some(c @ Value::String(_)) = alt.get("const") {
            out.push(c.clone());
        } else if let Some(Value::Array(values)) = alt.get("enum") {
            if !values.iter().all(Value::is_string) {
                return None;
            }
            out.extend(values.iter().cloned());
        } else {
            return None;
        }
    }
    (!out.is_empty()).then_some(out)
}
