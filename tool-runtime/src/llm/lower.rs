//! The lowering walks, one per provider family. Each takes the canonical input schema and
//! returns the target's schema and what it found on the way, by JSON Pointer.

use serde_json::{Map, Value, json};

use super::describe::{add_to_description, phrases};
use super::{Finding, Severity};

/// A lowered input schema.
pub(super) struct Lowered {
    pub(super) schema: Value,
    /// Sent as a strict schema.
    pub(super) strict: bool,
    notes: Vec<(String, Severity, String)>,
}

impl Lowered {
    /// The schema, and the notes as findings about `tool`.
    pub(super) fn into_parts(self, tool: &str) -> (Value, bool, Vec<Finding>) {
        let findings = self
            .notes
            .into_iter()
            .map(|(path, severity, message)| Finding {
                tool: tool.to_owned(),
                path,
                severity,
                message,
            })
            .collect();
        (self.schema, self.strict, findings)
    }
}

/// What is recorded while walking.
#[derive(Default)]
struct Notes {
    notes: Vec<(String, Severity, String)>,
    /// Why the schema cannot be strict, when it cannot.
    not_strict: Vec<String>,
}

impl Notes {
    fn add(&mut self, path: &str, severity: Severity, message: impl Into<String>) {
        self.notes.push((path.to_owned(), severity, message.into()));
    }
}

/// Moves `keys` of `schema` (those present) into its description, with one warning.
fn describe_away(
    schema: &mut Map<String, Value>,
    keys: &[&str],
    path: &str,
    notes: &mut Notes,
    why: &str,
) {
    let present: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| schema.contains_key(*k))
        .collect();
    if present.is_empty() {
        return;
    }
    if let Some(words) = phrases(schema, &present) {
        add_to_description(schema, &words);
        notes.add(
            path,
            Severity::Warning,
            format!(
                "{}: {why}; moved into the description (\"{words}\")",
                list(&present)
            ),
        );
    } else {
        notes.add(
            path,
            Severity::Note,
            format!("{}: {why}; dropped (nothing a model needs)", list(&present)),
        );
    }
    for k in present {
        schema.shift_remove(k);
    }
}

fn list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn child(path: &str, segment: &str) -> String {
    let mut out = String::with_capacity(path.len() + segment.len() + 1);
    out.push_str(path);
    out.push('/');
    for c in segment.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// Keywords no strict form accepts: a schema using them is sent non-strict.
const NEVER_STRICT: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contains",
    "prefixItems",
];

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
pub(super) fn openai(input: &Value, strict: bool) -> Lowered {
    if !strict {
        return Lowered {
            schema: without_dialect(input),
            strict: false,
            notes: Vec::new(),
        };
    }
    let mut notes = Notes::default();
    let mut schema = without_dialect(input);
    openai_walk(&mut schema, "", &mut notes);
    let mut sizes = Sizes::default();
    sizes.measure(&schema, 0);
    notes.not_strict.extend(sizes.over_openai_limits());
    if notes.not_strict.is_empty() {
        return Lowered {
            schema,
            strict: true,
            notes: notes.notes,
        };
    }
    Lowered {
        schema: without_dialect(input),
        strict: false,
        notes: vec![(
            String::new(),
            Severity::Warning,
            format!("sent with `strict: false`: {}", notes.not_strict.join("; ")),
        )],
    }
}

/// The schema without `$schema`, which no provider takes.
pub(super) fn without_dialect(input: &Value) -> Value {
    match input {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| k.as_str() != "$schema")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn openai_walk(schema: &mut Value, path: &str, notes: &mut Notes) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    for k in NEVER_STRICT {
        if obj.contains_key(*k) {
            notes.not_strict.push(format!("`{k}` at {}", at(path)));
        }
    }
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
    let away: Vec<String> = obj
        .keys()
        .filter(|k| {
            !(OPENAI_KEEPS.contains(&k.as_str())
                || NEVER_STRICT.contains(&k.as_str())
                || k.as_str() == "format")
        })
        .cloned()
        .collect();
    let away: Vec<&str> = away.iter().map(String::as_str).collect();
    describe_away(
        obj,
        &away,
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
        let required: Vec<String> = required_of(obj);
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            let mut all = Vec::with_capacity(props.len());
            for (name, prop) in props.iter_mut() {
                let p = child(&child(path, "properties"), name);
                openai_walk(prop, &p, notes);
                if !required.contains(name) {
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
            obj.insert("properties".into(), json!({}));
            obj.insert("required".into(), json!([]));
        }
    }
    walk_children(obj, path, &mut |v, p| openai_walk(v, p, notes));
}

/// Anthropic `input_schema`: the canonical schema; strict, additionally closed objects and
/// no numeric or length bounds (moved into descriptions), no recursion.
pub(super) fn anthropic(input: &Value, strict: bool) -> Lowered {
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
        anthropic_walk(&mut schema, "", &mut notes);
    }
    if notes.not_strict.is_empty() {
        return Lowered {
            schema,
            strict: true,
            notes: notes.notes,
        };
    }
    Lowered {
        schema: without_dialect(input),
        strict: false,
        notes: vec![(
            String::new(),
            Severity::Warning,
            format!("sent non-strict: {}", notes.not_strict.join("; ")),
        )],
    }
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

fn anthropic_walk(schema: &mut Value, path: &str, notes: &mut Notes) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    for k in NEVER_STRICT {
        if *k != "allOf" && obj.contains_key(*k) {
            notes.not_strict.push(format!("`{k}` at {}", at(path)));
        }
    }
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
    let away: Vec<String> = obj
        .keys()
        .filter(|k| {
            !(ANTHROPIC_KEEPS.contains(&k.as_str())
                || (k.as_str() == "format" && format_ok)
                || (k.as_str() == "minItems" && min_items_ok))
        })
        .cloned()
        .collect();
    let away: Vec<&str> = away.iter().map(String::as_str).collect();
    describe_away(
        obj,
        &away,
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
            for (name, prop) in props.iter_mut() {
                anthropic_walk(prop, &child(&child(path, "properties"), name), notes);
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
pub(super) fn optional_and_union_params(schema: &Value) -> (usize, usize) {
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
pub(super) fn gemini(input: &Value, depth: usize) -> Lowered {
    let mut notes = Notes::default();
    let defs = input
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut walker = Gemini {
        root: input,
        defs: &defs,
        depth,
        stack: Vec::new(),
        notes: &mut notes,
    };
    let schema = walker
        .lower(input, "")
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

struct Gemini<'a> {
    root: &'a Value,
    defs: &'a Map<String, Value>,
    depth: usize,
    /// The references being expanded, outermost first.
    stack: Vec<String>,
    notes: &'a mut Notes,
}

impl Gemini<'_> {
    /// The lowered subschema, or `None` when recursion was cut here.
    fn lower(&mut self, schema: &Value, path: &str) -> Option<Value> {
        let Some(src) = schema.as_object() else {
            return Some(json!({}));
        };
        if let Some(r) = src.get("$ref").and_then(Value::as_str) {
            let target = if r == "#" {
                Some(self.root)
            } else {
                r.strip_prefix("#/$defs/").and_then(|n| self.defs.get(n))
            };
            let Some(target) = target else {
                self.notes
                    .add(path, Severity::Error, format!("`$ref` {r} points nowhere"));
                return Some(json!({}));
            };
            if self.stack.iter().filter(|s| *s == r).count() >= self.depth {
                return None;
            }
            self.stack.push(r.to_owned());
            let inlined = self.lower(target, path);
            self.stack.pop();
            let mut inlined = inlined?;
            // Keywords next to the `$ref` (a description) apply too.
            if let (Some(desc), Some(o)) = (src.get("description"), inlined.as_object_mut()) {
                o.insert("description".into(), desc.clone());
            }
            return Some(inlined);
        }
        let mut obj = src.clone();
        let mut out = Map::new();
        for k in ["$schema", "$defs", "examples", "$comment"] {
            obj.shift_remove(k);
        }
        self.types_and_unions(&mut obj, &mut out, path)?;
        values(&mut obj, &mut out);
        self.object(&mut obj, &mut out, path)?;
        self.leftovers(obj, &mut out, path);
        Some(Value::Object(out))
    }

    /// `type` (type arrays as `nullable` or `anyOf`), `oneOf` (of constants: a string enum;
    /// else `anyOf`) and `anyOf` (a `null` alternative as `nullable`).
    fn types_and_unions(
        &mut self,
        obj: &mut Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
    ) -> Option<()> {
        // Type arrays: one type and `nullable`, or `anyOf` of each.
        let mut nullable = false;
        match obj.shift_remove("type") {
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
                out.insert("type".into(), t);
            }
            None => {}
        }
        // `oneOf` of string constants: a string enum.
        if let Some(Value::Array(alts)) = obj.get("oneOf")
            && let Some(values) = string_constants(alts)
        {
            obj.shift_remove("oneOf");
            out.insert("type".into(), json!("string"));
            out.insert("enum".into(), Value::Array(values));
            self.notes.add(
                path,
                Severity::Note,
                "`oneOf` of constants sent as a string `enum`",
            );
        }
        for key in ["oneOf", "anyOf"] {
            let Some(Value::Array(alts)) = obj.shift_remove(key) else {
                continue;
            };
            if key == "oneOf" {
                self.notes.add(
                    path,
                    Severity::Note,
                    "`oneOf` sent as `anyOf` (the alternatives exclude each other)",
                );
            }
            let mut lowered = Vec::new();
            for (i, alt) in alts.iter().enumerate() {
                if alt.get("type").and_then(Value::as_str) == Some("null") {
                    nullable = true;
                    continue;
                }
                lowered.push(self.lower(alt, &child(&child(path, key), &i.to_string()))?);
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
        obj: &mut Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
    ) -> Option<()> {
        // Objects: properties (an optional one that recursion cut is dropped), `required`.
        if let Some(Value::Object(props)) = obj.shift_remove("properties") {
            let required = required_of(obj);
            obj.shift_remove("required");
            let mut lowered = Map::new();
            for (name, prop) in &props {
                let p = child(&child(path, "properties"), name);
                match self.lower(prop, &p) {
                    Some(v) => {
                        lowered.insert(name.clone(), v);
                    }
                    None if required.contains(name) => return None,
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
                .filter(|r| lowered.contains_key(*r))
                .map(|r| json!(r))
                .collect();
            out.insert("properties".into(), Value::Object(lowered));
            if !kept.is_empty() {
                out.insert("required".into(), Value::Array(kept));
            }
        }
        match obj.shift_remove("additionalProperties") {
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
        if let Some(items) = obj.shift_remove("items") {
            out.insert("items".into(), self.lower(&items, &child(path, "items"))?);
        }
        if obj.contains_key("prefixItems") {
            self.notes.add(
                path,
                Severity::Error,
                "a tuple (`prefixItems`): Gemini cannot describe it",
            );
            obj.shift_remove("prefixItems");
        }
        Some(())
    }

    /// Whatever is left has no `Schema` field: into the description, or an error when the
    /// meaning would change.
    fn leftovers(&mut self, mut obj: Map<String, Value>, out: &mut Map<String, Value>, path: &str) {
        obj.shift_remove("required");
        for k in [
            "allOf",
            "not",
            "if",
            "then",
            "else",
            "dependentSchemas",
            "patternProperties",
        ] {
            if obj.shift_remove(k).is_some() {
                self.notes.add(
                    path,
                    Severity::Error,
                    format!(
                        "`{k}`: Gemini cannot describe it; send `parametersJsonSchema` instead"
                    ),
                );
            }
        }
        let rest: Vec<String> = obj.keys().cloned().collect();
        let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
        if !rest.is_empty() {
            let mut removed = obj.clone();
            if let Some(d) = out.get("description") {
                removed.insert("description".into(), d.clone());
            }
            describe_away(
                &mut removed,
                &rest,
                path,
                self.notes,
                "no field in Gemini's `Schema`",
            );
            if let Some(d) = removed.shift_remove("description") {
                out.insert("description".into(), d);
            }
        }
    }
}

/// `const` and `enum` (only strings), `format` (those `Schema` knows), and the keywords
/// `Schema` has fields for.
fn values(obj: &mut Map<String, Value>, out: &mut Map<String, Value>) {
    if let Some(Value::String(c)) = obj.get("const") {
        out.insert("enum".into(), json!([c]));
        obj.shift_remove("const");
        out.entry("type").or_insert(json!("string"));
    }
    if let Some(Value::Array(values)) = obj.get("enum") {
        if values.iter().all(Value::is_string) {
            out.insert("enum".into(), Value::Array(values.clone()));
            obj.shift_remove("enum");
        } else if values.iter().filter(|v| !v.is_null()).all(Value::is_string) {
            out.insert(
                "enum".into(),
                Value::Array(values.iter().filter(|v| v.is_string()).cloned().collect()),
            );
            out.insert("nullable".into(), json!(true));
            obj.shift_remove("enum");
        }
    }
    if let Some(f) = obj.get("format").and_then(Value::as_str) {
        let ty = out.get("type").and_then(Value::as_str).unwrap_or_default();
        if gemini_format(ty, f) {
            out.insert("format".into(), json!(f));
            obj.shift_remove("format");
        }
    }
    for k in GEMINI_KEEPS {
        if let Some(v) = obj.shift_remove(*k) {
            out.insert((*k).to_owned(), v);
        }
    }
    if let Some(d) = obj.shift_remove("description") {
        out.insert("description".into(), d);
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

/// Removes, in `arguments`, the `null`s the canonical `schema` does not allow where the field
/// is optional: OpenAI strict mode's way of leaving a field out.
pub(super) fn drop_added_nulls(schema: &Value, arguments: &mut Value) {
    match arguments {
        Value::Object(args) => {
            let Some(props) = schema["properties"].as_object() else {
                return;
            };
            let required = schema.as_object().map(required_of).unwrap_or_default();
            args.retain(|name, value| {
                let Some(prop) = props.get(name) else {
                    return true;
                };
                !(value.is_null() && !required.contains(name) && !admits_null(prop))
            });
            for (name, value) in args.iter_mut() {
                if let Some(prop) = props.get(name) {
                    drop_added_nulls(&non_null_branch(prop), value);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for v in items {
                    drop_added_nulls(item, v);
                }
            }
        }
        _ => {}
    }
}

/// The schema an `Option<T>` wraps (`anyOf: [T, null]`), or the schema itself.
fn non_null_branch(schema: &Value) -> Value {
    if let Some(alts) = schema.get("anyOf").and_then(Value::as_array) {
        let non_null: Vec<&Value> = alts.iter().filter(|a| a["type"] != "null").collect();
        if let [one] = non_null.as_slice() {
            return (*one).clone();
        }
    }
    schema.clone()
}

fn admits_null(schema: &Value) -> bool {
    match &schema["type"] {
        Value::String(t) if t == "null" => return true,
        Value::Array(ts) if ts.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    if schema.get("const") == Some(&Value::Null) {
        return true;
    }
    if schema["enum"]
        .as_array()
        .is_some_and(|v| v.contains(&Value::Null))
    {
        return true;
    }
    ["anyOf", "oneOf"].iter().any(|k| {
        schema[*k]
            .as_array()
            .is_some_and(|alts| alts.iter().any(admits_null))
    })
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

/// Calls `f` on every direct subschema of `obj` but `properties` (handled by the caller):
/// `items`, `anyOf`/`oneOf` alternatives, `$defs`, `additionalProperties` schemas.
fn walk_children(obj: &mut Map<String, Value>, path: &str, f: &mut dyn FnMut(&mut Value, &str)) {
    for (key, value) in obj.iter_mut() {
        match key.as_str() {
            "items" | "additionalProperties" if value.is_object() => f(value, &child(path, key)),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(alts) = value {
                    let p = child(path, key);
                    for (i, alt) in alts.iter_mut().enumerate() {
                        f(alt, &child(&p, &i.to_string()));
                    }
                }
            }
            "$defs" => {
                if let Value::Object(defs) = value {
                    let p = child(path, key);
                    for (name, def) in defs.iter_mut() {
                        f(def, &child(&p, name));
                    }
                }
            }
            _ => {}
        }
    }
}

fn is_object(obj: &Map<String, Value>) -> bool {
    obj.get("type").and_then(Value::as_str) == Some("object") || obj.contains_key("properties")
}

fn required_of(obj: &Map<String, Value>) -> Vec<String> {
    obj.get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
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

fn at(path: &str) -> String {
    if path.is_empty() {
        "the root".into()
    } else {
        path.to_owned()
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
