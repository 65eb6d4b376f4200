//! Reading a tool's canonical input schema the way front ends present it: its top-level
//! parameters in declaration order, and the shape of each one's value.
//!
//! The CLI builds flags from these, `GET /tools` lists them as `params`; per-target lowering
//! (LLM tool specs) starts from the same reading.

use serde_json::Value;

use crate::tool::definition::ParamHint;

/// One top-level parameter of a tool's input schema.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Param<'a> {
    /// The property name, as callers send it.
    pub name: &'a str,
    /// The property's subschema.
    pub schema: &'a Value,
    /// Listed in the schema's `required`.
    pub required: bool,
    /// What the macro knows beyond the schema (short flag, positional, path), when it does.
    pub hint: Option<&'a ParamHint>,
}

impl<'a> Param<'a> {
    /// The property's `description`, or `""`.
    #[must_use]
    pub(crate) fn description(&self) -> &'a str {
        self.schema["description"].as_str().unwrap_or_default()
    }

    /// The property's `default`, when it has one.
    #[must_use]
    pub(crate) fn default(&self) -> Option<&'a Value> {
        self.schema.get("default")
    }

    /// The shape of the parameter's value.
    #[must_use]
    pub(crate) fn kind(&self) -> Kind {
        Kind::of(self.schema)
    }
}

/// The parameters of `input` (a tool's input schema): first those `hints` name, in the hints'
/// order (the function's parameter order), then any other property in the schema's order.
#[must_use]
pub(crate) fn params<'a>(input: &'a Value, hints: &'a [ParamHint]) -> Vec<Param<'a>> {
    let Some(props) = input["properties"].as_object() else {
        return Vec::new();
    };
    let required = |name: &str| {
        input["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|n| n == name))
    };
    let mut out: Vec<Param<'a>> = hints
        .iter()
        .filter_map(|h| {
            props.get_key_value(&*h.name).map(|(k, v)| Param {
                name: k.as_str(),
                schema: v,
                required: required(k),
                hint: Some(h),
            })
        })
        .collect();
    for (k, v) in props {
        if !out.iter().any(|p| p.name == k) {
            out.push(Param {
                name: k.as_str(),
                schema: v,
                required: required(k),
                hint: None,
            });
        }
    }
    out
}

/// The shape of a value a subschema admits, seen through `Option` (a `null` alternative).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `true` or `false`.
    Boolean,
    /// An integer; the narrowest Rust integer type its `format` names (`"u32"`, `"i64"`, ...).
    Integer(&'static str),
    /// Any number.
    Number,
    /// A string; `Some` lists the only strings allowed (a unit-variant enum).
    String(Option<Vec<String>>),
    /// An array of items of this kind.
    Array(Box<Kind>),
    /// Objects, maps, data-carrying enums and any other union: only JSON says it.
    Json,
}

impl Kind {
    /// The kind of values `schema` admits.
    #[must_use]
    pub(crate) fn of(schema: &Value) -> Kind {
        if let Some(choices) = string_choices(schema) {
            return Kind::String(Some(choices));
        }
        // `Option<T>`: `"type": ["integer", "null"]`, or `anyOf: [T, {"type": "null"}]`.
        for key in ["anyOf", "oneOf"] {
            if let Some(alts) = schema[key].as_array() {
                let non_null: Vec<&Value> = alts.iter().filter(|a| a["type"] != "null").collect();
                if let [one] = non_null.as_slice() {
                    return Kind::of(one);
                }
            }
        }
        match non_null_type(schema) {
            Some("boolean") => Kind::Boolean,
            Some("integer") => Kind::Integer(integer_type(schema)),
            Some("number") => Kind::Number,
            Some("string") => Kind::String(None),
            Some("array") => Kind::Array(Box::new(Kind::of(&schema["items"]))),
            _ => Kind::Json,
        }
    }

    /// One word for simple UIs: `boolean`, `integer`, `number`, `string`, `array` or `json`.
    #[must_use]
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Kind::Boolean => "boolean",
            Kind::Integer(_) => "integer",
            Kind::Number => "number",
            Kind::String(_) => "string",
            Kind::Array(_) => "array",
            Kind::Json => "json",
        }
    }
}

/// The one JSON type a schema admits besides `null`: `"integer"` for both
/// `{"type": "integer"}` and `{"type": ["integer", "null"]}`; `None` when there is no single one.
#[must_use]
pub(crate) fn non_null_type(schema: &Value) -> Option<&str> {
    match &schema["type"] {
        Value::String(t) => Some(t.as_str()),
        Value::Array(ts) => {
            let mut non_null = ts.iter().filter_map(Value::as_str).filter(|t| *t != "null");
            match (non_null.next(), non_null.next()) {
                (Some(one), None) => Some(one),
                _ => None,
            }
        }
        _ => None,
    }
}

fn integer_type(schema: &Value) -> &'static str {
    match schema["format"].as_str() {
        Some("uint8") => "u8",
        Some("uint16") => "u16",
        Some("uint32") => "u32",
        Some("uint64" | "uint") => "u64",
        Some("int8") => "i8",
        Some("int16") => "i16",
        Some("int32") => "i32",
        _ => "i64",
    }
}

/// String values of `enum`, or of a `oneOf` of (documented) `const` variants.
fn string_choices(schema: &Value) -> Option<Vec<String>> {
    if let Some(values) = schema["enum"].as_array() {
        return values
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect();
    }
    let alts = schema["oneOf"].as_array()?;
    let mut out = Vec::new();
    for alt in alts {
        if let Some(c) = alt["const"].as_str() {
            out.push(c.to_owned());
        } else if let Some(values) = alt["enum"].as_array() {
            for v in values {
                out.push(v.as_str()?.to_owned());
            }
        } else {
            return None;
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn kinds_see_through_option_and_name_enums() {
        assert_eq!(
            Kind::of(&json!({"type": ["integer", "null"], "format": "uint32"})),
            Kind::Integer("u32")
        );
        assert_eq!(
            Kind::of(
                &json!({"anyOf": [{"type": "array", "items": {"type": "boolean"}}, {"type": "null"}]})
            ),
            Kind::Array(Box::new(Kind::Boolean))
        );
        assert_eq!(
            Kind::of(&json!({"oneOf": [{"const": "a"}, {"enum": ["b", "c"]}]})),
            Kind::String(Some(vec!["a".into(), "b".into(), "c".into()]))
        );
        let data_enum =
            json!({"oneOf": [{"const": "a"}, {"type": "object", "properties": {"b": {}}}]});
        assert_eq!(Kind::of(&data_enum), Kind::Json);
        assert_eq!(Kind::of(&data_enum).word(), "json");
        assert_eq!(
            Kind::of(&json!({"type": ["string", "integer"]})),
            Kind::Json
        );
    }

    #[test]
    fn params_follow_the_hints_then_the_schema() {
        let input = json!({
            "type": "object",
            "properties": {"b": {"type": "string", "description": "bee"}, "a": {"type": "integer", "default": 3}, "c": {}},
            "required": ["b"]
        });
        let hints = [ParamHint {
            name: "a".into(),
            short: None,
            positional: false,
            path: false,
        }];
        let got: Vec<(&str, bool, &str, Option<&Value>)> = params(&input, &hints)
            .iter()
            .map(|p| (p.name, p.required, p.description(), p.default()))
            .collect();
        assert_eq!(
            got,
            [
                ("a", false, "", Some(&json!(3))),
                ("b", true, "bee", None),
                ("c", false, "", None)
            ]
        );
    }
}
