//! Arguments as OpenAI's strict mode makes a model write them, taken back to what the canonical
//! schema means: strict mode wants every field `required`, so lowering makes an optional field
//! nullable, and a model leaves it out by sending `null`. Shared by the lowering (which adds
//! those nulls) and the pipeline (which drops them for a caller shown that form).

use serde_json::{Map, Value};

/// Removes, in `arguments`, the `null`s the canonical `schema` does not allow where the field
/// is optional: OpenAI strict mode's way of leaving a field out.
pub(crate) fn drop_added_nulls(schema: &Value, arguments: &mut Value) {
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

/// Whether `schema` lets `null` through (a `null` type, const or enum value, or an alternative
/// that does).
pub(crate) fn admits_null(schema: &Value) -> bool {
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

/// The `required` names of an object schema.
pub(crate) fn required_of(obj: &Map<String, Value>) -> Vec<String> {
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
