//! The validator of the schemas our generators write.
//!
//! Every schema validated by default comes from schemars 1.x or `#[tool]`, whose keywords are
//! a closed set; this validator knows exactly that set, and refuses a schema that uses any other
//! assertion or applicator, naming it (tool-runtime's `jsonschema` feature validates those).
//!
//! - Assertions and applicators: `type` (a name or a list), `properties`, `required`,
//!   `additionalProperties`, `patternProperties`, `unevaluatedProperties`, `minProperties`,
//!   `maxProperties`, `prefixItems`, `items`, `minItems`, `maxItems`, `uniqueItems`, `enum`,
//!   `const`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`,
//!   `minLength`, `maxLength` (in code points), `pattern` (ECMA-262), `allOf`, `anyOf`,
//!   `oneOf`, `not`, and `$ref` to anywhere in the same document (`$defs` included).
//! - Ignored, as draft 2020-12 says of annotations and of keywords it does not define:
//!   `title`, `description`, `default`, `examples`, `deprecated`, `readOnly`, `writeOnly`,
//!   `format`, `content*`, `$comment`, the root's `$id`, and any unknown keyword; `$schema`
//!   naming draft 2020-12.
//! - Refused ([`CompileError::Unsupported`]): every other keyword of draft 2020-12 (`contains`,
//!   `if`, `propertyNames`, `dependentRequired`, `unevaluatedItems`, `$dynamicRef` ...), `$id`
//!   below the root, a `$ref` that leaves the document, and a `$schema` naming another draft
//!   or meta-schema.
//!
//! A schema is compiled once into a flat list of nodes; a `$ref` is an index into it, so a
//! recursive schema is a cycle of indices. Validation reads a [`serde_json::Value`] or the HTTP
//! front end's parsed tree alike ([`Instance`]), stops at the first failure for
//! [`Validator::is_valid`], and reports every violation, each with its JSON pointer and
//! keyword, for [`Validator::errors`].

mod check;
mod compile;
mod error;
mod instance;
mod number;
mod pattern;

use serde_json::{Number, Value};

pub use error::{CompileError, ErrorKind, ValidationError};
pub(crate) use instance::Instance;

use number::Num;
use pattern::Pattern;

/// A compiled schema.
#[derive(Debug)]
pub struct Validator {
    /// The root is the first.
    nodes: Vec<Schema>,
}

/// The index of a node.
type Id = usize;

#[derive(Debug)]
enum Schema {
    /// `true` or `{}`.
    True,
    False,
    Keywords(Box<Keywords>),
}

/// A bound with its number as the schema wrote it, for messages.
#[derive(Debug)]
struct Bound {
    value: Num,
    written: Number,
}

/// One schema object's keywords, grouped by the kind of value they constrain.
#[derive(Debug, Default)]
struct Keywords {
    types: Option<Types>,
    enumeration: Option<Vec<Value>>,
    constant: Option<Value>,
    // Objects.
    properties: Vec<(Box<str>, Id)>,
    /// Whether each of `properties` is in `required`.
    property_required: Vec<bool>,
    /// How many names of `required` are among `properties`: when a value has them all as
    /// members, `required` holds without looking each one up.
    required_named: usize,
    patterns: Vec<(Pattern, Id)>,
    additional: Option<Id>,
    unevaluated: Option<Id>,
    required: Vec<Box<str>>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    // Arrays.
    prefix: Vec<Id>,
    items: Option<Id>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique: bool,
    // Strings.
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<Pattern>,
    // Numbers.
    minimum: Option<Bound>,
    maximum: Option<Bound>,
    exclusive_minimum: Option<Bound>,
    exclusive_maximum: Option<Bound>,
    multiple_of: Option<Bound>,
    // Applicators on the value itself.
    all_of: Vec<Id>,
    any_of: Vec<Id>,
    one_of: Vec<Id>,
    /// The constants of a `oneOf` whose branches each only name one (`const` and annotations,
    /// the constants distinct): an enumeration with a title per value, which holds when the
    /// value is one of them.
    one_of_constants: Option<Vec<Value>>,
    /// The subschema, and the schema as written, for its message.
    not: Option<(Id, Value)>,
    reference: Option<Id>,
}

impl Keywords {
    /// Whether any keyword applies to an object's members.
    fn reads_members(&self) -> bool {
        !self.properties.is_empty() || !self.patterns.is_empty() || self.additional.is_some()
    }
}

/// A set of JSON types, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Types(u8);

impl Types {
    const NAMES: [&'static str; 7] = [
        "null", "boolean", "object", "array", "number", "string", "integer",
    ];
    const NULL: u8 = 1;
    const BOOLEAN: u8 = 1 << 1;
    const OBJECT: u8 = 1 << 2;
    const ARRAY: u8 = 1 << 3;
    const NUMBER: u8 = 1 << 4;
    const STRING: u8 = 1 << 5;
    const INTEGER: u8 = 1 << 6;

    fn named(name: &str) -> Option<u8> {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|bit| 1 << bit)
    }

    /// The names in the set, in the order of [`Types::NAMES`].
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMES
            .iter()
            .enumerate()
            .filter(move |(bit, _)| self.0 & (1 << bit) != 0)
            .map(|(_, name)| *name)
    }

    /// Whether the set admits `instance`: an integral number is an `integer` and a `number`.
    fn admit<I: Instance>(self, instance: &I) -> bool {
        let bits = match instance.kind() {
            instance::Kind::Null => Self::NULL,
            instance::Kind::Boolean => Self::BOOLEAN,
            instance::Kind::Object => Self::OBJECT,
            instance::Kind::Array => Self::ARRAY,
            instance::Kind::String => Self::STRING,
            instance::Kind::Number(n) if Num::of(n).is_integer() => Self::INTEGER | Self::NUMBER,
            instance::Kind::Number(_) => Self::NUMBER,
        };
        // `number` admits every number, `integer` only integral ones.
        self.0 & bits != 0
    }
}

impl Validator {
    /// Compiles `schema` (draft 2020-12); a keyword outside the set, or a malformed schema, is
    /// an error.
    pub fn new(schema: &Value) -> Result<Self, CompileError> {
        compile::compile(schema).map(|nodes| Self { nodes })
    }

    /// Whether `instance` satisfies the schema; stops at the first failure.
    #[must_use]
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.admits(instance)
    }

    /// Whether `instance`, in either representation, satisfies the schema.
    pub(crate) fn admits<I: Instance>(&self, instance: &I) -> bool {
        check::Run::<I>::new(self, false).check(0, instance, 0)
    }

    /// Every violation of the schema by `instance`, in document order; empty if it is valid.
    #[must_use]
    pub fn errors<'v, 'i>(&'v self, instance: &'i Value) -> Vec<ValidationError<'v, 'i>> {
        let mut run = check::Run::new(self, true);
        run.check(0, instance, 0);
        run.into_errors()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn found(schema: &Value, instance: &Value) -> Vec<(String, &'static str)> {
        let v = Validator::new(schema).unwrap();
        let errors: Vec<_> = v
            .errors(instance)
            .iter()
            .map(|e| (e.path.clone(), e.kind.keyword()))
            .collect();
        assert_eq!(
            errors.is_empty(),
            v.is_valid(instance),
            "{schema} {instance}"
        );
        errors
    }

    #[test]
    fn keywords_outside_the_set_are_refused_by_name_and_place() {
        for (schema, keyword, at) in [
            (json!({"contains": {}}), "contains", ""),
            (
                json!({"properties": {"a": {"if": true}}}),
                "if",
                "/properties/a",
            ),
            (
                json!({"$defs": {"d": {"$id": "x"}}, "$ref": "#/$defs/d"}),
                "$id",
                "/$defs/d",
            ),
            (
                json!({"items": {"unevaluatedItems": false}}),
                "unevaluatedItems",
                "/items",
            ),
            (json!({"$ref": "http://example.com/s.json"}), "$ref", ""),
            (json!({"$ref": "#anchor"}), "$ref", ""),
            (
                json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
                "$schema",
                "",
            ),
        ] {
            let e = Validator::new(&schema).unwrap_err();
            assert_eq!(e.unsupported_keyword(), Some(keyword), "{schema}");
            let CompileError::Unsupported { at: place, .. } = &e else {
                unreachable!()
            };
            assert_eq!(place, at, "{schema}");
            assert!(e.to_string().contains("`jsonschema` feature"), "{e}");
        }
        // The root's `$id`, annotations and unknown keywords assert nothing.
        let v = Validator::new(
            &json!({"$id": "https://x/s", "title": "t", "format": "email",
            "x-order": 1, "readOnly": true, "contentEncoding": "base64"}),
        )
        .unwrap();
        assert!(v.is_valid(&json!("not an email")));
    }

    #[test]
    fn malformed_keywords_say_where() {
        for (schema, at) in [
            (json!({"type": "text"}), "/type"),
            (
                json!({"properties": {"a": {"minLength": -1}}}),
                "/properties/a/minLength",
            ),
            (json!({"anyOf": []}), "/anyOf"),
            (json!({"items": [{}]}), "/items"),
            (json!({"$ref": "#/$defs/missing"}), "/$ref"),
            (json!({"multipleOf": 0}), "/multipleOf"),
            (json!({"required": [1]}), "/required"),
            (json!({"not": 3}), "/not"),
        ] {
            let e = Validator::new(&schema).unwrap_err();
            let CompileError::Invalid { at: place, .. } = &e else {
                panic!("{schema}: {e}")
            };
            assert_eq!(place, at, "{schema}");
        }
    }

    #[test]
    fn every_violation_is_reported_with_its_pointer_and_keyword() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "multipleOf": 2},
                "list": {"type": "array", "items": {"type": "string", "maxLength": 2},
                         "uniqueItems": true},
                "pair": {"type": "array", "prefixItems": [{"type": "integer"}], "items": false},
                "a~b/c": {"const": 1},
                "z": true
            },
            "required": ["n", "z"],
            "additionalProperties": false
        });
        assert_eq!(
            found(
                &schema,
                &json!({"n": 0.5, "list": ["abc", "abc"], "pair": [1, 2, 3],
                "a~b/c": 2, "x": 1})
            ),
            [
                ("/n".into(), "type"),
                ("/n".into(), "minimum"),
                ("/n".into(), "multipleOf"),
                ("/list/0".into(), "maxLength"),
                ("/list/1".into(), "maxLength"),
                ("/list".into(), "uniqueItems"),
                ("/pair".into(), "items"),
                ("/a~0b~1c".into(), "const"),
                (String::new(), "additionalProperties"),
                (String::new(), "required"),
            ]
        );
        assert!(found(&schema, &json!({"n": 4.0, "z": null, "list": ["a", "b"]})).is_empty());
    }

    /// An enumeration with a title per value (`oneOf` of `const` branches) is one set; equal
    /// constants, or a branch with more than annotations, are tried branch by branch.
    #[test]
    fn a_one_of_of_distinct_constants_holds_for_exactly_its_values() {
        let titled = json!({"oneOf": [
            {"const": "daily", "title": "Every day", "type": "string"},
            {"const": "weekly", "description": "Every week"},
            {"const": 3, "type": ["integer", "null"]}
        ]});
        let v = Validator::new(&titled).unwrap();
        assert!(v.nodes.iter().any(|node| matches!(node,
            Schema::Keywords(k) if k.one_of_constants.as_ref().is_some_and(|c| c.len() == 3))));
        for value in [json!("daily"), json!("weekly"), json!(3.0)] {
            assert!(found(&titled, &value).is_empty(), "{value}");
        }
        assert_eq!(found(&titled, &json!("hourly")), [(String::new(), "oneOf")]);
        let hourly = json!("hourly");
        let errors = v.errors(&hourly);
        assert!(
            errors[0].to_string().contains("not valid under any"),
            "{errors:?}"
        );
        // 1 and 1.0 are one value: both branches hold, which `oneOf` refuses.
        let twice = json!({"oneOf": [{"const": 1}, {"const": 1.0}]});
        assert_eq!(found(&twice, &json!(1)), [(String::new(), "oneOf")]);
        let mixed = json!({"oneOf": [{"const": "a"}, {"const": "b", "minLength": 5}]});
        assert_eq!(found(&mixed, &json!("b")), [(String::new(), "oneOf")]);
        assert!(found(&mixed, &json!("a")).is_empty());
        // A `type` its constant is not of makes the branch hold for nothing.
        let mistyped = json!({"oneOf": [{"const": "a"}, {"const": "b", "type": "integer"}]});
        assert_eq!(found(&mistyped, &json!("b")), [(String::new(), "oneOf")]);
    }

    /// The shape `#[serde(flatten)]` of an enum gives: the object's own fields, the variants'
    /// in `oneOf`, and `unevaluatedProperties: false` over both.
    #[test]
    fn unevaluated_properties_see_what_valid_branches_evaluated() {
        let schema = json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "oneOf": [
                {"properties": {"radius": {"type": "integer"}}, "required": ["radius"]},
                {"properties": {"side": {"type": "integer"}}, "required": ["side"]}
            ],
            "allOf": [{"$ref": "#/$defs/tagged"}],
            "$defs": {"tagged": {"properties": {"tag": {"type": "string"}}}},
            "unevaluatedProperties": false
        });
        assert!(found(&schema, &json!({"name": "c", "radius": 1, "tag": "t"})).is_empty());
        // `side` belongs to the branch that failed: unevaluated.
        assert_eq!(
            found(&schema, &json!({"name": "c", "radius": 1, "side": "x"})),
            [(String::new(), "unevaluatedProperties")]
        );
        let v = Validator::new(&schema).unwrap();
        let circle = json!({"radius": 1, "x": 1, "y": 2});
        let errors = v.errors(&circle);
        let ErrorKind::UnevaluatedProperties(names) = &errors[0].kind else {
            panic!("{errors:?}")
        };
        assert_eq!(names, &["x", "y"]);
    }

    #[test]
    fn recursive_schemas_validate_and_reference_loops_end() {
        let tree = json!({
            "$ref": "#/$defs/node",
            "$defs": {"node": {"type": "object", "properties": {
                "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                "additionalProperties": false}}
        });
        assert!(found(&tree, &json!({"kids": [{"kids": [{}]}]})).is_empty());
        assert_eq!(
            found(&tree, &json!({"kids": [{"kids": [{"x": 1}]}]})),
            [("/kids/0/kids/0".into(), "additionalProperties")]
        );
        // A loop that never reads into the value means nothing: refused, not run forever.
        for looping in [
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
                "$ref": "#/$defs/a"}),
            json!({"prefixItems": [{"type": "integer"}, {"$ref": "#/prefixItems/1"}]}),
            json!({"anyOf": [{"type": "string"}, {"not": {"$ref": "#"}}]}),
        ] {
            let e = Validator::new(&looping).unwrap_err();
            assert!(e.to_string().contains("loop back"), "{looping}: {e}");
        }
        // Deep but finite: every level applies to the same value.
        let mut deep = json!({"type": "integer"});
        for _ in 0..100 {
            deep = json!({"allOf": [deep]});
        }
        let v = Validator::new(&deep).unwrap();
        assert!(
            !v.is_valid(&json!(1)),
            "past the depth limit: refused, never a stack overflow"
        );
    }

    #[test]
    fn numbers_strings_and_types_follow_the_specification() {
        let s = json!({"type": ["integer", "null"], "maximum": 18_446_744_073_709_551_615_u64});
        assert!(found(&s, &json!(5.0)).is_empty());
        assert!(found(&s, &json!(null)).is_empty());
        assert_eq!(found(&s, &json!(5.5)), [(String::new(), "type")]);
        // 2^64 as a float is above u64::MAX.
        assert_eq!(
            found(&s, &json!(18_446_744_073_709_551_616.0_f64)),
            [(String::new(), "maximum")]
        );
        // Lengths count code points, not bytes.
        let s = json!({"minLength": 2, "maxLength": 2});
        assert!(found(&s, &json!("é😀")).is_empty());
        assert_eq!(found(&s, &json!("é")), [(String::new(), "minLength")]);
        // A keyword for one kind of value ignores the others.
        assert!(found(&s, &json!(7)).is_empty());
        let s = json!({"enum": [1, [1, {"a": 2}]]});
        assert!(found(&s, &json!(1.0)).is_empty());
        assert!(found(&s, &json!([1.0, {"a": 2.0}])).is_empty());
        assert_eq!(found(&s, &json!(true)), [(String::new(), "enum")]);
    }

    #[test]
    fn messages_name_the_value_and_the_rule() {
        let v = Validator::new(&json!({"properties": {"n": {"minimum": 1}, "s": {"enum":
            ["a", "b", "c", "d"]}, "o": {"not": {"type": "string"}}}, "required": ["r"],
            "additionalProperties": false}))
        .unwrap();
        let messages: Vec<String> = v
            .errors(&json!({"n": 0, "s": "x", "o": "y", "q": 1}))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            messages,
            [
                "0 is less than the minimum of 1",
                "\"x\" is not one of \"a\", \"b\" or 2 other candidates",
                "{\"type\":\"string\"} is not allowed for \"y\"",
                "Additional properties are not allowed ('q' was unexpected)",
                "\"r\" is a required property",
            ]
        );
    }

    #[test]
    fn the_parsed_tree_is_read_as_its_value_is() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "array",
            "items": {"enum": [1, "x", {"k": null}]}}}, "required": ["a"],
            "additionalProperties": false});
        let v = Validator::new(&schema).unwrap();
        for text in [
            r#"{"a": [1, "x", {"k": null}, 1.0]}"#,
            r#"{"a": [2]}"#,
            r#"{"a": [{"k": 0}]}"#,
            r#"{"b": 1}"#,
            r#"{"a": []}"#,
        ] {
            let node = crate::tool::parsed::Node::parse(text.as_bytes()).unwrap();
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(v.admits(&node), v.is_valid(&value), "{text}");
        }
    }
}
