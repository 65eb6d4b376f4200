//! Walks and rewrites over a schema's subschemas: what every target that re-homes a schema
//! needs (OpenAPI's `components`, MCP's object root, LLM tool specs).

use schemars::Schema;
use schemars::transform::transform_subschemas;
use serde_json::{Map, Value, json};

/// Calls `visit` on `schema` and then on every subschema below it, depth first: the values
/// of `properties`, `$defs`, `items`, `anyOf`, `not`, ... (never `default`, `const`, `enum`
/// or `examples`, which are instances, not schemas). Boolean schemas are skipped.
pub(crate) fn walk_mut(schema: &mut Value, visit: &mut dyn FnMut(&mut Map<String, Value>)) {
    struct Walk<'f>(&'f mut dyn FnMut(&mut Map<String, Value>));
    impl schemars::transform::Transform for Walk<'_> {
        fn transform(&mut self, schema: &mut Schema) {
            if let Some(obj) = schema.as_object_mut() {
                (self.0)(obj);
            }
            transform_subschemas(self, schema);
        }
    }
    if let Ok(schema) = <&mut Schema>::try_from(schema) {
        schemars::transform::Transform::transform(&mut Walk(visit), schema);
    }
}

/// The formats the JSON Schema specification defines (2020-12, the format vocabulary).
pub(crate) const JSON_SCHEMA_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops from `schema` and its subschemas every `format` that neither the JSON Schema
/// specification ([`JSON_SCHEMA_FORMATS`]) nor `also` defines. schemars names the Rust type
/// behind a number (`uint32`, `int64`, `double`, ...), which the bounds beside it already say
/// (`IntegerBounds`) and which the validator does not read; validators that know only the
/// specification's formats (ajv, in the MCP TypeScript SDK) warn of each one. The canonical
/// schema keeps them: the CLI and the parameter descriptions read them.
pub(crate) fn standard_formats_only(schema: &mut Value, also: &[&str]) {
    walk_mut(schema, &mut |obj| {
        if obj
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| !JSON_SCHEMA_FORMATS.contains(&f) && !also.contains(&f))
        {
            obj.shift_remove("format");
        }
    });
}

/// `schema` with an object at its root, and whether it had to be wrapped: a schema that is
/// not always an object becomes `{"type": "object", "properties": {"result": schema},
/// "required": ["result"]}` (its `$defs` move to the new root, where its `$ref`s point).
/// MCP's `outputSchema` needs this; the instance is wrapped the same way
/// ([`wraps_output`] says when).
#[must_use]
pub(crate) fn object_root(schema: &Value) -> (Value, bool) {
    if !wraps_output(schema) {
        return (schema.clone(), false);
    }
    let mut inner = schema.clone();
    let mut wrapper = Map::new();
    if let Some(s) = inner.get("$schema").cloned() {
        wrapper.insert("$schema".into(), s);
    }
    if let Some(obj) = inner.as_object_mut() {
        obj.remove("$schema");
        if let Some(defs) = obj.remove("$defs") {
            wrapper.insert("$defs".into(), defs);
        }
    }
    wrapper.insert("type".into(), json!("object"));
    wrapper.insert("properties".into(), json!({ "result": inner }));
    wrapper.insert("required".into(), json!(["result"]));
    wrapper.insert("additionalProperties".into(), json!(false));
    (Value::Object(wrapper), true)
}

/// Whether instances of `schema` must be wrapped as `{"result": ...}` to have an object root:
/// all but schemas that are always objects.
#[must_use]
pub(crate) fn wraps_output(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) != Some("object")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_formats_json_schema_defines_are_kept() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "ttl": {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 4_294_967_295_u64},
                "ratio": {"type": "number", "format": "double", "default": {"format": "uint8"}},
                "at": {"type": "string", "format": "date-time"},
                "items": {"type": "array", "items": {"$ref": "#/$defs/Small"}},
            },
            "$defs": {"Small": {"type": "integer", "format": "int32"}},
        });
        let mut openapi = schema.clone();
        standard_formats_only(&mut schema, &[]);
        let p = &schema["properties"];
        assert_eq!(
            p["ttl"],
            json!({"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64})
        );
        assert!(p["ratio"].get("format").is_none());
        assert_eq!(
            p["ratio"]["default"],
            json!({"format": "uint8"}),
            "an instance, kept as it is"
        );
        assert_eq!(p["at"]["format"], "date-time");
        assert!(schema["$defs"]["Small"].get("format").is_none());
        standard_formats_only(&mut openapi, &["int32", "double"]);
        assert_eq!(openapi["properties"]["ratio"]["format"], "double");
        assert_eq!(openapi["$defs"]["Small"]["format"], "int32");
        assert!(openapi["properties"]["ttl"].get("format").is_none());
    }

    #[test]
    fn walks_reach_subschemas_but_not_instances() {
        let mut s = json!({
            "properties": {
                "a": {"$ref": "#/$defs/A", "default": {"$ref": "#/$defs/A"}},
                "b": {"anyOf": [{"$ref": "#"}, {"type": "null"}]},
                "c": {"type": "array", "items": {"$ref": "#/$defs/A"}, "examples": [{"$ref": "x"}]}
            },
            "$defs": {"A": {"type": "object", "additionalProperties": {"$ref": "#/$defs/A"}}}
        });
        let mut refs = Vec::new();
        walk_mut(&mut s, &mut |o| {
            if let Some(r) = o.get("$ref").and_then(Value::as_str) {
                refs.push(r.to_owned());
            }
        });
        refs.sort();
        assert_eq!(refs, ["#", "#/$defs/A", "#/$defs/A", "#/$defs/A"]);
    }

    #[test]
    fn non_object_outputs_are_wrapped_and_definitions_move_up() {
        let (list, wrapped) = object_root(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array", "items": {"$ref": "#/$defs/Node"},
            "$defs": {"Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}
        }));
        assert!(wrapped);
        assert_eq!(list["type"], "object");
        assert_eq!(list["required"], json!(["result"]));
        assert_eq!(list["properties"]["result"]["type"], "array");
        assert!(list["$defs"]["Node"].is_object());
        assert!(list["properties"]["result"].get("$defs").is_none());
        assert_eq!(
            list["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );

        let object = json!({"type": "object", "properties": {}});
        assert_eq!(object_root(&object), (object, false));
        // A nullable object may be null: wrapped too.
        let (nullable, wrapped) = object_root(&json!({"type": ["object", "null"]}));
        assert!(wrapped, "{nullable}");
    }
}
