//! The canonical schemas of tools, and everything that reads them.
//!
//! - Generation (here): draft 2020-12 with every subschema inlined, so a client never has to
//!   resolve a `$ref`; `$defs` stay only for recursive types, which cannot be inlined.
//!   Fixed-width integers get their full `minimum`/`maximum`, so the schema alone rejects what
//!   the Rust type cannot hold.
//! - [`describe`]: the top-level parameters and the shape of each value, as front ends show them.
//! - [`walk`]: walks and rewrites over subschemas, for targets that re-home a schema.
//! - `validate` and `parsed`: the validator that enforces the canonical schema on every call.

pub mod describe;
pub(crate) mod parsed;
pub(crate) mod validate;
pub mod walk;

pub use describe::{Kind, Param, non_null_type, params};
pub use walk::{object_root, take_defs, walk_mut, wraps_output};

use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value};

/// The generator every tool input schema comes from (what the tool accepts: serde's
/// deserialize contract).
#[must_use]
pub fn generator() -> SchemaGenerator {
    settings().into_generator()
}

fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(IntegerBounds)
}

/// The input schema of a tool whose arguments deserialize into `A` (the struct `#[tool]`
/// generates): a closed object, untitled, with the 2020-12 `$schema`.
#[must_use]
pub fn input_schema_for<A: JsonSchema>() -> Value {
    let schema = generator().into_root_schema_for::<A>();
    finish_input(schema.to_value())
}

/// The output schema of a tool returning `T`: what the tool emits (serde's serialize
/// contract, so an `Option` field that is always written, as `null` or a value, is required).
#[must_use]
pub fn output_schema_for<T: JsonSchema>() -> Value {
    let mut value = settings()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Some(obj) = value.as_object_mut() {
        obj.insert("$schema".into(), Value::String(DRAFT_2020_12.into()));
    }
    value
}

/// The `$schema` of every emitted schema.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

fn finish_input(mut value: Value) -> Value {
    let Some(obj) = value.as_object_mut() else {
        return value;
    };
    // The generated args struct's name means nothing to a caller.
    obj.remove("title");
    obj.insert("type".into(), Value::String("object".into()));
    obj.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    obj.insert("additionalProperties".into(), Value::Bool(false));
    let mut out = Map::with_capacity(obj.len() + 1);
    out.insert("$schema".into(), Value::String(DRAFT_2020_12.into()));
    out.extend(std::mem::take(obj));
    Value::Object(out)
}

/// Adds the bounds of fixed-width integer formats that schemars leaves open.
#[derive(Debug, Clone)]
struct IntegerBounds;

impl Transform for IntegerBounds {
    fn transform(&mut self, schema: &mut Schema) {
        let bounds: Option<(Value, Value)> = match schema.get("format").and_then(Value::as_str) {
            Some("int32") => Some((i32::MIN.into(), i32::MAX.into())),
            Some("int64") => Some((i64::MIN.into(), i64::MAX.into())),
            Some("uint32") => Some((0.into(), u32::MAX.into())),
            Some("uint64") => Some((0.into(), u64::MAX.into())),
            Some("uint") => Some((0.into(), usize::MAX.into())),
            Some("int") => Some((isize::MIN.into(), isize::MAX.into())),
            _ => None,
        };
        if let (Some((min, max)), Some(obj)) = (bounds, schema.as_object_mut()) {
            obj.entry("minimum").or_insert(min);
            obj.entry("maximum").or_insert(max);
        }
        transform_subschemas(self, schema);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        a: u32,
        b: Option<i64>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        children: Vec<Tree>,
    }

    #[test]
    fn input_schemas_are_closed_objects_with_integer_bounds() {
        let s = input_schema_for::<Args>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["$schema"], DRAFT_2020_12);
        assert!(s.get("title").is_none());
        assert_eq!(s["properties"]["a"]["maximum"], u32::MAX);
        assert_eq!(s["properties"]["b"]["minimum"], i64::MIN);
        assert_eq!(s["required"], serde_json::json!(["a"]));
    }

    #[test]
    fn recursive_types_keep_their_defs() {
        let s = output_schema_for::<Tree>();
        assert!(s.to_string().contains("$ref"), "{s}");
        assert!(
            s.get("$defs").is_some() || s["properties"]["children"]["items"]["$ref"] == "#",
            "{s}"
        );
    }
}
