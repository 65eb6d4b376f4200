//! The way back: a model's arguments under a lowered schema, as the canonical schema means
//! them.

use serde_json::Value;

use super::{admits_null, required_of};

/// Removes, in `arguments`, the `null`s the canonical `schema` does not allow where the field
/// is optional: OpenAI strict mode's way of leaving a field out.
pub(in crate::llm) fn drop_added_nulls(schema: &Value, arguments: &mut Value) {
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
