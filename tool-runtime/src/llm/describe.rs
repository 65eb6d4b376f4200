//! Constraints a target cannot express, in plain words for the field's description: "between
//! 30 and 86400; default 300".

use serde_json::{Map, Value};

/// Phrases for the keywords of `schema` named in `keys` (those being removed), in a fixed
/// order, joined with `"; "`; `None` when none says anything a model needs.
pub(super) fn phrases(schema: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    let has = |k: &str| keys.contains(&k);
    let num = |k: &str| schema.get(k).filter(|_| has(k)).map(show);
    let mut out: Vec<String> = Vec::new();
    match (num("minimum"), num("maximum")) {
        (Some(lo), Some(hi)) if !full_width(schema) => out.push(format!("between {lo} and {hi}")),
        (Some(_), Some(_)) if unsigned(schema) => out.push("non-negative".into()),
        (Some(lo), None) => out.push(format!("at least {lo}")),
        (None, Some(hi)) => out.push(format!("at most {hi}")),
        _ => {}
    }
    if let Some(v) = num("exclusiveMinimum") {
        out.push(format!("greater than {v}"));
    }
    if let Some(v) = num("exclusiveMaximum") {
        out.push(format!("less than {v}"));
    }
    if let Some(v) = num("multipleOf") {
        out.push(format!("a multiple of {v}"));
    }
    match (num("minLength"), num("maxLength")) {
        (Some(lo), Some(hi)) if lo == hi => out.push(format!("exactly {lo} characters")),
        (Some(lo), Some(hi)) => out.push(format!("{lo} to {hi} characters")),
        (Some(lo), None) => out.push(format!("at least {lo} characters")),
        (None, Some(hi)) => out.push(format!("at most {hi} characters")),
        (None, None) => {}
    }
    if let Some(p) = schema
        .get("pattern")
        .filter(|_| has("pattern"))
        .and_then(Value::as_str)
    {
        out.push(format!("matching the regular expression {p}"));
    }
    match (num("minItems"), num("maxItems")) {
        (Some(lo), Some(hi)) => out.push(format!("{lo} to {hi} items")),
        (Some(lo), None) => out.push(format!("at least {lo} items")),
        (None, Some(hi)) => out.push(format!("at most {hi} items")),
        (None, None) => {}
    }
    if has("uniqueItems") && schema.get("uniqueItems") == Some(&Value::Bool(true)) {
        out.push("no item twice".into());
    }
    if let Some(f) = schema
        .get("format")
        .filter(|_| has("format"))
        .and_then(Value::as_str)
        && !is_integer_format(f)
    {
        out.push(format!("format {f}"));
    }
    if let Some(c) = schema.get("const").filter(|_| has("const")) {
        out.push(format!("always {}", show(c)));
    }
    if let Some(values) = schema
        .get("enum")
        .filter(|_| has("enum"))
        .and_then(Value::as_array)
    {
        let list: Vec<String> = values.iter().map(show).collect();
        out.push(format!("one of {}", list.join(", ")));
    }
    if let Some(d) = schema.get("default").filter(|_| has("default")) {
        out.push(format!("default {}", show(d)));
    }
    (!out.is_empty()).then(|| out.join("; "))
}

/// `description` with `extra` added: `"Seconds to live (between 30 and 86400; default 300)"`.
pub(super) fn add_to_description(schema: &mut Map<String, Value>, extra: &str) {
    let text = match schema.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() => format!("{} ({extra})", d.trim_end()),
        _ => capitalize(extra),
    };
    schema.insert("description".into(), Value::String(text));
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A value as a model reads it: strings quoted, numbers and the rest as JSON.
fn show(v: &Value) -> String {
    v.to_string()
}

fn is_integer_format(f: &str) -> bool {
    matches!(
        f,
        "int8"
            | "int16"
            | "int32"
            | "int64"
            | "int"
            | "uint8"
            | "uint16"
            | "uint32"
            | "uint64"
            | "uint"
    )
}

/// The bounds are just the full range of the integer's Rust type: nothing a model needs
/// beyond "non-negative".
fn full_width(schema: &Map<String, Value>) -> bool {
    let Some(format) = schema.get("format").and_then(Value::as_str) else {
        return false;
    };
    let (lo, hi) = (&schema["minimum"], &schema["maximum"]);
    let range: (Value, Value) = match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        "int" => (isize::MIN.into(), isize::MAX.into()),
        "uint8" => (0.into(), u8::MAX.into()),
        "uint16" => (0.into(), u16::MAX.into()),
        "uint32" => (0.into(), u32::MAX.into()),
        "uint64" => (0.into(), u64::MAX.into()),
        "uint" => (0.into(), usize::MAX.into()),
        _ => return false,
    };
    (lo, hi) == (&range.0, &range.1)
}

fn unsigned(schema: &Map<String, Value>) -> bool {
    schema
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| f.starts_with("uint"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn of(v: &Value, keys: &[&str]) -> Option<String> {
        phrases(v.as_object().unwrap(), keys)
    }

    #[test]
    fn constraints_read_as_plain_words() {
        let ttl = json!({"type": "integer", "format": "uint32", "minimum": 30, "maximum": 86400, "default": 300});
        assert_eq!(
            of(&ttl, &["minimum", "maximum", "default", "format"]).as_deref(),
            Some("between 30 and 86400; default 300")
        );
        let full = json!({"format": "uint32", "minimum": 0, "maximum": u32::MAX});
        assert_eq!(
            of(&full, &["minimum", "maximum"]).as_deref(),
            Some("non-negative")
        );
        let signed = json!({"format": "int64", "minimum": i64::MIN, "maximum": i64::MAX});
        assert_eq!(of(&signed, &["minimum", "maximum", "format"]), None);
        let name =
            json!({"minLength": 1, "maxLength": 64, "pattern": "^[a-z]+$", "format": "email"});
        assert_eq!(
            of(&name, &["minLength", "maxLength", "pattern", "format"]).as_deref(),
            Some("1 to 64 characters; matching the regular expression ^[a-z]+$; format email")
        );
        let mut field = Map::new();
        add_to_description(&mut field, "at most 3 items");
        assert_eq!(field["description"], "At most 3 items");
        add_to_description(&mut field, "default []");
        assert_eq!(field["description"], "At most 3 items (default [])");
    }
}
