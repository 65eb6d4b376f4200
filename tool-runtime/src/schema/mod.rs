//! The canonical schemas of tools, and everything that reads them.
//!
//! - Generation (here): draft 2020-12 with every subschema inlined, so a client never has to
//!   resolve a `$ref`; `$defs` stay only for recursive types, which cannot be inlined.
//!   Fixed-width integers get their full `minimum`/`maximum`, so the schema alone rejects what
//!   the Rust type cannot hold.
//! - `walk`: walks and rewrites over subschemas, for targets that re-home a schema; its
//!   `object_root` and `wraps_output` are how MCP gets an object at the root of every output
//!   schema.
//! - `validator`: the validator of the keywords our generators write; `validate`: the
//!   arguments of a call checked against the canonical schema, and every violation in words.

pub(crate) mod strict;
pub(crate) mod validate;
pub(crate) mod validator;
pub(crate) mod walk;

pub(crate) use walk::object_root;

use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value};

/// The generator every tool input schema comes from (what the tool accepts: serde's
/// deserialize contract), with every struct's object closed to unknown fields.
#[must_use]
pub fn generator() -> SchemaGenerator {
    settings().with_transform(CloseObjects).into_generator()
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
    // An `Option` parameter left out is `None`: `"default": null` (which the generated struct's
    // `#[serde(default)]` makes schemars write) says nothing more.
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for prop in props.values_mut() {
            if let Some(p) = prop.as_object_mut()
                && p.get("default") == Some(&Value::Null)
            {
                p.remove("default");
            }
        }
    }
    let mut out = Map::with_capacity(obj.len() + 1);
    out.insert("$schema".into(), Value::String(DRAFT_2020_12.into()));
    out.extend(std::mem::take(obj));
    Value::Object(out)
}

/// Closes every object with named `properties` to unknown fields (`additionalProperties:
/// false`), at every depth, as the arguments object itself is: a misspelt or stray field in a
/// nested struct is an error, not silently dropped.
///
/// Left as they are: objects that say what else they take (`additionalProperties` or
/// `unevaluatedProperties` already present: maps, `#[serde(deny_unknown_fields)]`, and the
/// opt-out `#[schemars(extend("additionalProperties" = true))]` on a type), and objects with
/// `properties` composed with `allOf`, `anyOf` or `oneOf` (a `#[serde(flatten)]`ed enum), whose
/// fields are split between the object and its branches: closing either would refuse the
/// other's fields. What lies deeper is closed as usual.
#[derive(Debug, Clone)]
struct CloseObjects;

const COMPOSITIONS: [&str; 3] = ["allOf", "anyOf", "oneOf"];

impl Transform for CloseObjects {
    fn transform(&mut self, schema: &mut Schema) {
        let Some(obj) = schema.as_object_mut() else {
            return;
        };
        if !obj.get("properties").is_some_and(Value::is_object) {
            transform_subschemas(self, schema);
            return;
        }
        let composed: Vec<(&str, Value)> = COMPOSITIONS
            .iter()
            .filter_map(|key| obj.remove(*key).map(|branches| (*key, branches)))
            .collect();
        if composed.is_empty()
            && !obj.contains_key("additionalProperties")
            && !obj.contains_key("unevaluatedProperties")
        {
            obj.insert("additionalProperties".into(), Value::Bool(false));
        }
        transform_subschemas(self, schema);
        for (key, mut branches) in composed {
            // The branches share the object's fields: only what is inside them is closed.
            for branch in branches.as_array_mut().into_iter().flatten() {
                if let Ok(mut sub) = Schema::try_from(std::mem::take(branch)) {
                    transform_subschemas(self, &mut sub);
                    *branch = sub.to_value();
                }
            }
            if let Some(obj) = schema.as_object_mut() {
                obj.insert(key.into(), branches);
            }
        }
    }
}

/// The bounds of the fixed-width integer type behind a schema's `format` (`"uint32"` →
/// `0..=4294967295`), or `None` for any other format.
pub(crate) fn integer_bounds(format: &str) -> Option<(i128, i128)> {
    let size = |n: usize| i128::try_from(n).unwrap_or(i128::MAX);
    let signed_size = |n: isize| i128::try_from(n).unwrap_or(i128::MIN);
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        "int" => (signed_size(isize::MIN), signed_size(isize::MAX)),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" => (0, u64::MAX.into()),
        "uint" => (0, size(usize::MAX)),
        _ => return None,
    })
}

/// Adds the bounds of fixed-width integer formats that schemars leaves open.
#[derive(Debug, Clone)]
struct IntegerBounds;

impl Transform for IntegerBounds {
    fn transform(&mut self, schema: &mut Schema) {
        let number = |n: i128| {
            i64::try_from(n)
                .map(Value::from)
                .or_else(|_| u64::try_from(n).map(Value::from))
                .ok()
        };
        let bounds = schema
            .get("format")
            .and_then(Value::as_str)
            .and_then(integer_bounds);
        if let (Some((min, max)), Some(obj)) = (bounds, schema.as_object_mut()) {
            if let Some(min) = number(min) {
                obj.entry("minimum").or_insert(min);
            }
            if let Some(max) = number(max) {
                obj.entry("maximum").or_insert(max);
            }
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

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    #[serde(untagged)]
    enum Shape {
        Circle { radius: u8 },
        Square { side: u8 },
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Drawing {
        name: String,
        #[serde(flatten)]
        shape: Shape,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Canvas {
        drawing: Drawing,
        tree: Tree,
    }

    #[test]
    fn nested_objects_are_closed_unless_composed() {
        use serde_json::json;
        let s = input_schema_for::<Canvas>();
        let validator = validator::Validator::new(&s).unwrap();
        // A flattened enum's fields live beside the object's own: both stay open, and a
        // variant's fields are taken.
        let drawing = &s["properties"]["drawing"];
        assert!(drawing.get("additionalProperties").is_none(), "{drawing}");
        let tree = json!({"children": [{"children": []}]});
        for variant in [json!({"radius": 1}), json!({"side": 2})] {
            let mut drawing = json!({"name": "c"});
            drawing
                .as_object_mut()
                .unwrap()
                .extend(variant.as_object().unwrap().clone());
            let args = json!({"drawing": drawing, "tree": tree});
            assert!(validator.is_valid(&args), "{args} {s}");
        }
        // Every plain struct is closed, a recursive one in `$defs` too.
        let stray = json!({"drawing": {"name": "c", "radius": 1}, "tree": {"children": [{"children": [], "leaf": 1}]}});
        assert!(!validator.is_valid(&stray), "{s}");
        assert_eq!(s["$defs"]["Tree"]["additionalProperties"], false, "{s}");
    }
}
