//! Validation of arguments against a tool's advertised input schema.
//!
//! The schema is the contract: the same document a client reads is the one enforced, compiled
//! once per tool by the validator of [`super::validator`], or by the `jsonschema` crate (the
//! `jsonschema` feature) for a schema that uses keywords outside its set. Every violation is
//! reported at once.
//!
//! Coercion policy: none. `"5"` is not an integer and `"true"` is not a boolean. The one
//! normalisation is the one JSON Schema itself makes: a number with an integral value such as
//! `5.0` *is* an integer, so it is passed to the tool as `5`.

use serde_json::Value;

#[cfg(feature = "jsonschema")]
use super::validator::CompileError;
use super::validator::{ErrorKind, ValidationError, Validator};
use crate::tool::error::{MAX_VIOLATIONS, ToolError, Violation, escape_pointer};
use crate::tool::parsed::Node;

/// A compiled input schema.
pub(crate) struct ArgsValidator {
    engine: Engine,
    /// The top-level property names, listed when an unknown field is reported.
    known: String,
    /// Pointers of `writeOnly` (secret) values, whose violations never quote the value.
    pub(crate) secrets: Vec<String>,
}

enum Engine {
    Own(Validator),
    /// A schema with keywords outside the set.
    #[cfg(feature = "jsonschema")]
    Full(Box<jsonschema::Validator>),
}

/// Every violation is counted; the first `MAX_VIOLATIONS` are put in words.
#[derive(Default)]
struct Found {
    violations: Vec<Violation>,
    total: usize,
}

impl Found {
    fn push(
        &mut self,
        path: String,
        keyword: &str,
        property: Option<&str>,
        message: &dyn Fn() -> String,
    ) {
        self.total += 1;
        if self.violations.len() < MAX_VIOLATIONS {
            let v = Violation::new(path, keyword, message());
            self.violations.push(match property {
                Some(name) => v.with_property(name),
                None => v,
            });
        }
    }
}

impl ArgsValidator {
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        let known = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                p.keys()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let engine = match Validator::new(schema) {
            Ok(validator) => Engine::Own(validator),
            #[cfg(feature = "jsonschema")]
            Err(CompileError::Unsupported { .. }) => Engine::Full(Box::new(
                jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .build(schema)
                    .map_err(|e| e.to_string())?,
            )),
            Err(e) => return Err(e.to_string()),
        };
        Ok(Self {
            engine,
            known,
            secrets: crate::tool::secret::write_only_paths(schema),
        })
    }

    /// Whether the parsed tree satisfies the schema; `None` where only the `Value` path can
    /// tell (a schema outside the own validator's set).
    #[cfg_attr(not(feature = "jsonschema"), allow(clippy::unnecessary_wraps))]
    pub(crate) fn admits_parsed(&self, node: &Node<'_>) -> Option<bool> {
        match &self.engine {
            Engine::Own(validator) => Some(validator.admits(node)),
            #[cfg(feature = "jsonschema")]
            Engine::Full(_) => None,
        }
    }

    /// `Ok` if `args` satisfies the schema, else every violation.
    pub(crate) fn check(&self, args: &Value) -> Result<(), ToolError> {
        let mut found = Found::default();
        match &self.engine {
            Engine::Own(validator) => {
                // The boolean check costs less than collecting errors: collect only on failure.
                if validator.is_valid(args) {
                    return Ok(());
                }
                for e in validator.errors(args) {
                    self.describe(&e, &mut found);
                }
            }
            #[cfg(feature = "jsonschema")]
            Engine::Full(validator) => {
                if validator.is_valid(args) {
                    return Ok(());
                }
                for e in validator.iter_errors(args) {
                    self.describe_full(&e, &mut found);
                }
            }
        }
        Err(ToolError::invalid_arguments_of(
            found.violations,
            found.total,
        ))
    }

    /// One violation in words: an unknown field each, a missing one by name, a secret value
    /// never quoted, and a value outside its choices told every choice.
    fn describe(&self, e: &ValidationError<'_, '_>, found: &mut Found) {
        let keyword = e.kind.keyword();
        let path = &e.path;
        match &e.kind {
            ErrorKind::AdditionalProperties(unexpected)
            | ErrorKind::UnevaluatedProperties(unexpected) => {
                // The fields are listed only where `properties` at the root names them all.
                let listed =
                    path.is_empty() && matches!(e.kind, ErrorKind::AdditionalProperties(_));
                self.unknown_fields(path, keyword, unexpected.iter().copied(), listed, found);
            }
            ErrorKind::Required(name) => {
                found.push(path.clone(), keyword, Some(name), &|| e.to_string());
            }
            _ if crate::tool::secret::is_secret_path(path, &self.secrets) => {
                self.secret(path, keyword, found);
            }
            _ => found.push(path.clone(), keyword, None, &|| {
                let message = choices_in_words(e).unwrap_or_else(|| e.to_string());
                quoting_a_prefix(&message, &e.instance)
            }),
        }
    }

    /// One violation per unknown field, pointing at the field itself.
    fn unknown_fields<'a>(
        &self,
        path: &str,
        keyword: &str,
        names: impl Iterator<Item = &'a str>,
        listed: bool,
        found: &mut Found,
    ) {
        for name in names {
            let at = format!("{path}/{}", escape_pointer(name));
            found.push(at, keyword, Some(name), &|| {
                if listed && !self.known.is_empty() {
                    format!("unknown field `{name}`; the fields are {}", self.known)
                } else if listed {
                    format!("unknown field `{name}`; this tool takes no arguments")
                } else {
                    format!("unknown field `{name}`")
                }
            });
        }
    }

    /// The validator's message quotes the value: say only which rule it breaks.
    #[allow(clippy::unused_self)] // Beside its siblings.
    fn secret(&self, path: &str, keyword: &str, found: &mut Found) {
        found.push(path.to_owned(), keyword, None, &|| {
            format!("the secret value does not satisfy `{keyword}`")
        });
    }

    /// [`ArgsValidator::describe`] for the `jsonschema` crate's violations.
    #[cfg(feature = "jsonschema")]
    fn describe_full(&self, e: &jsonschema::ValidationError<'_>, found: &mut Found) {
        use jsonschema::error::ValidationErrorKind as Kind;
        let path = e.instance_path().to_string();
        let keyword = e.kind().keyword();
        match e.kind() {
            Kind::AdditionalProperties { unexpected }
            | Kind::UnevaluatedProperties { unexpected } => {
                let listed =
                    path.is_empty() && matches!(e.kind(), Kind::AdditionalProperties { .. });
                self.unknown_fields(
                    &path,
                    keyword,
                    unexpected.iter().map(String::as_str),
                    listed,
                    found,
                );
            }
            Kind::Required { property } => {
                found.push(path, keyword, property.as_str(), &|| e.to_string());
            }
            _ if crate::tool::secret::is_secret_path(&path, &self.secrets) => {
                self.secret(&path, keyword, found);
            }
            _ => found.push(path, keyword, None, &|| {
                quoting_a_prefix(&e.to_string(), e.instance())
            }),
        }
    }
}

/// A value that is none of a set of choices (an `enum`, or an `anyOf`/`oneOf` of variants such
/// as a Rust enum's, or an `Option` of one), in words that name every choice: the validator's own
/// message lists two ("or 3 other candidates", counting `null`), or only says that no branch
/// matched. `None` for every other violation.
fn choices_in_words(e: &ValidationError<'_, '_>) -> Option<String> {
    // An object or array may have failed a branch of its own shape deeper down, which the
    // branches' verdicts on the value itself would not tell: the validator's message stays.
    if matches!(*e.instance, Value::Object(_) | Value::Array(_))
        && !matches!(e.kind, ErrorKind::Enum(_))
    {
        return None;
    }
    let mut choices = Choices::default();
    choices.collect(e, &e.path);
    let Choices { mut words, shapes } = choices;
    if words.is_empty() {
        return None;
    }
    words.extend(shapes);
    Some(match words.as_slice() {
        [one] => format!("{} is not {one}", e.instance),
        [rest @ .., last] => format!("{} is not one of {} or {last}", e.instance, rest.join(", ")),
        [] => return None,
    })
}

/// The values (`"pinned"`) and shapes (`an object`) a value was compared with, `null` left out.
#[derive(Default)]
struct Choices {
    words: Vec<String>,
    shapes: Vec<String>,
}

impl Choices {
    fn add(&mut self, value: &Value) {
        let word = value.to_string();
        if !value.is_null() && !self.words.contains(&word) {
            self.words.push(word);
        }
    }

    /// What `e` compared the value at `here` with; branches of nested `anyOf`/`oneOf` too,
    /// but not verdicts on values inside it.
    fn collect(&mut self, e: &ValidationError<'_, '_>, here: &str) {
        if e.path != here {
            return;
        }
        match &e.kind {
            ErrorKind::Const(expected) => self.add(expected),
            ErrorKind::Enum(options) => {
                for option in *options {
                    self.add(option);
                }
            }
            ErrorKind::AnyOf(context) | ErrorKind::OneOfNone(context) => {
                for error in context.iter().flatten() {
                    self.collect(error, here);
                }
            }
            ErrorKind::Type(types) => {
                let names: Vec<&str> = types.names().collect();
                if let [t] = names.as_slice()
                    && *t != "null"
                {
                    let article = match *t {
                        "integer" | "object" | "array" => "an",
                        _ => "a",
                    };
                    let shape = format!("{article} {t}");
                    if !self.shapes.contains(&shape) {
                        self.shapes.push(shape);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `message` with a long rejected value it quotes cut to its first few characters: an answer
/// says which value it means without sending it back.
fn quoting_a_prefix(message: &str, instance: &Value) -> String {
    const SHOWN: usize = 40;
    if message.len() <= SHOWN * 2 {
        return message.to_owned();
    }
    let quoted = instance.to_string();
    if quoted.len() <= SHOWN || !message.contains(&quoted) {
        return message.to_owned();
    }
    let cut = crate::tool::error::floor_boundary(&quoted, SHOWN);
    let short = format!("{}… ({} bytes)", &quoted[..cut], quoted.len());
    message.replacen(&quoted, &short, 1)
}

/// Whether the empty object `{}` satisfies `schema` by its root keywords alone, so that a call
/// without arguments needs no compiled validator (compiling one costs more than the rest of a
/// command-line call's framework work). Conservative: `true` only when every root keyword is one
/// that `{}` cannot fail — annotations, keywords about properties that are present (none are),
/// `type` allowing `"object"`, an empty `required`, `minProperties: 0`, a `maxProperties` — so that
/// `true` implies the validator would accept `{}`. Any other keyword (`$ref`, `allOf`, `not`,
/// `enum`, `if`, one this list does not know ...) means "compile and ask the validator".
///
/// A schema that does not compile is then reported on the first call with arguments (and at
/// start by [`Registry::warm_up`](crate::Registry::warm_up), which servers run), not on a call
/// without them.
pub(crate) fn accepts_empty_object(schema: &Value) -> bool {
    let Some(root) = schema.as_object() else {
        return false;
    };
    root.iter().all(|(keyword, value)| match keyword.as_str() {
        "$schema"
        | "$comment"
        | "title"
        | "description"
        | "default"
        | "examples"
        | "deprecated"
        | "readOnly"
        | "writeOnly"
        | "$defs"
        | "definitions"
        | "properties"
        | "patternProperties"
        | "additionalProperties"
        | "propertyNames"
        | "unevaluatedProperties"
        | "dependentRequired"
        | "dependentSchemas" => true,
        "type" => match value {
            Value::String(t) => t == "object",
            Value::Array(types) => types.iter().any(|t| t == "object"),
            _ => false,
        },
        "required" => value.as_array().is_some_and(Vec::is_empty),
        "minProperties" => value.as_u64() == Some(0),
        "maxProperties" => value.as_u64().is_some(),
        _ => false,
    })
}

/// `{}`.
pub(crate) fn is_empty_object(args: &Value) -> bool {
    args.as_object().is_some_and(serde_json::Map::is_empty)
}

/// Removes the fields the schema does not declare from every closed object of `args` (the
/// registry's `ignore_unknown_fields` option), at every depth: through `properties`, `items`,
/// `$ref`s into `$defs`, and the one object branch of an `anyOf`/`oneOf` (an `Option`). Returns
/// the removed fields' JSON pointers, for the trace.
pub(crate) fn strip_unknown(schema: &Value, args: &mut Value) -> Vec<String> {
    let mut removed = Vec::new();
    strip_at(schema, schema, args, &mut String::new(), &mut removed, 0);
    removed
}

fn strip_at(
    root: &Value,
    schema: &Value,
    value: &mut Value,
    path: &mut String,
    removed: &mut Vec<String>,
    depth: usize,
) {
    // Deeper than any argument the body limits let through; a recursive schema ends here.
    if depth > 128 {
        return;
    }
    let Some(schema) = schema.as_object() else {
        return;
    };
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
    {
        strip_at(root, target, value, path, removed, depth + 1);
    }
    for key in ["anyOf", "oneOf"] {
        let objects: Vec<&Value> = schema
            .get(key)
            .and_then(Value::as_array)
            .map(|branches| {
                branches
                    .iter()
                    .filter(|b| b.get("properties").is_some() || b.get("$ref").is_some())
                    .collect()
            })
            .unwrap_or_default();
        if let [only] = objects.as_slice() {
            strip_at(root, only, value, path, removed, depth + 1);
        }
    }
    match value {
        Value::Object(map) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                map.retain(|k, _| {
                    let known = props.contains_key(k);
                    if !known {
                        removed.push(format!("{path}/{}", escape_pointer(k)));
                    }
                    known
                });
            }
            for (k, v) in map.iter_mut() {
                if let Some(sub) = props.get(k) {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&escape_pointer(k));
                    strip_at(root, sub, v, path, removed, depth + 1);
                    path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            let Some(sub) = schema.get("items") else {
                return;
            };
            for (i, v) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                strip_at(root, sub, v, path, removed, depth + 1);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1},
                "s": {"type": "string"}
            },
            "required": ["n"],
            "additionalProperties": false
        })
    }

    #[test]
    fn reports_every_violation_with_a_pointer() {
        let v = ArgsValidator::compile(&schema()).unwrap();
        let err = v.check(&json!({"n": 0, "s": 5, "x": 1})).unwrap_err();
        let mut paths: Vec<_> = err.violations().iter().map(|v| v.path.clone()).collect();
        paths.sort();
        assert_eq!(paths, ["/n", "/s", "/x"]);
        let unknown = err.violations().iter().find(|v| v.path == "/x").unwrap();
        assert_eq!(
            unknown.message,
            "unknown field `x`; the fields are `n`, `s`"
        );
    }

    /// Each violation names the keyword it breaks, and the property a `required` or an
    /// unknown-field violation is about, whatever its message says.
    #[test]
    fn violations_name_their_keyword_and_property() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1},
                "s": {"type": "string", "pattern": "^a"},
                "o": {"type": "object", "properties": {"k": {"type": "string"}},
                      "required": ["k"], "additionalProperties": false},
                "u": {"type": "object", "properties": {"k": {"type": "string"}},
                      "unevaluatedProperties": false},
                "secret": {"type": "string", "writeOnly": true, "minLength": 8}
            },
            "required": ["n", "s"],
            "additionalProperties": false
        });
        let v = ArgsValidator::compile(&schema).unwrap();
        let found = |args: Value| {
            let mut found: Vec<(String, String, Option<String>)> = v
                .check(&args)
                .unwrap_err()
                .violations()
                .iter()
                .map(|v| (v.path.clone(), v.keyword.clone(), v.property.clone()))
                .collect();
            found.sort();
            found
        };
        let at = |path: &str, keyword: &str, property: Option<&str>| {
            (
                path.to_owned(),
                keyword.to_owned(),
                property.map(str::to_owned),
            )
        };
        assert_eq!(
            found(json!({"o": {"x/y": 1}, "u": {"k": "v", "z": 2}, "secret": "short", "w": 0})),
            [
                at("", "required", Some("n")),
                at("", "required", Some("s")),
                at("/o", "required", Some("k")),
                at("/o/x~1y", "additionalProperties", Some("x/y")),
                at("/secret", "minLength", None),
                at("/u/z", "unevaluatedProperties", Some("z")),
                at("/w", "additionalProperties", Some("w")),
            ]
        );
        assert_eq!(
            found(json!({"n": 0, "s": "b"})),
            [at("/n", "minimum", None), at("/s", "pattern", None)]
        );
        assert_eq!(found(json!({"n": "1", "s": "a"})), [at("/n", "type", None)]);
        // An unevaluated property is reported like an unknown one, at the field.
        let err = v
            .check(&json!({"n": 1, "s": "a", "u": {"z": 2}}))
            .unwrap_err();
        assert_eq!(err.violations()[0].message, "unknown field `z`");
    }

    #[test]
    fn unknown_nested_fields_point_at_the_field() {
        let schema = json!({"type": "object", "properties": {"o": {"type": "object",
            "properties": {}, "additionalProperties": false}}, "additionalProperties": false});
        let v = ArgsValidator::compile(&schema).unwrap();
        let err = v.check(&json!({"o": {"a/b": 1}})).unwrap_err();
        assert_eq!(err.violations()[0].path, "/o/a~1b");
    }

    /// `accepts_empty_object` may say "compile" where `{}` would pass, never "no need" where it
    /// would fail: checked against the validator on roots that accept and roots that reject.
    #[test]
    fn accepts_empty_object_implies_the_validator_accepts_it() {
        let empty = json!({});
        let cases = [
            (schema(), false),
            (
                json!({"type": "object", "properties": {"n": {"type": "integer"}},
                    "additionalProperties": false}),
                true,
            ),
            (
                json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                    "title": "T", "description": "d", "required": [], "minProperties": 0,
                    "maxProperties": 3, "patternProperties": {"^x": false},
                    "unevaluatedProperties": false, "$defs": {"d": {"type": "string"}}}),
                true,
            ),
            // Keywords only the `jsonschema` feature validates.
            #[cfg(feature = "jsonschema")]
            (
                json!({"type": "object", "propertyNames": {"maxLength": 1},
                    "dependentRequired": {"a": ["b"]}, "dependentSchemas": {"a": false}}),
                true,
            ),
            (json!({"type": ["object", "null"]}), true),
            (json!({}), true),
            (json!({"type": "string"}), false),
            (json!({"type": ["string", "null"]}), false),
            (json!({"required": ["a"]}), false),
            (json!({"minProperties": 1}), false),
            (json!({"maxProperties": -1}), false),
            (json!({"not": {}}), false),
            (json!({"anyOf": [{"required": ["a"]}]}), false),
            (json!({"allOf": [{"type": "string"}]}), false),
            (json!({"oneOf": [{}, {}]}), false),
            (json!({"if": {}, "then": false}), false),
            (json!({"enum": [1]}), false),
            (json!({"const": {"a": 1}}), false),
            (
                json!({"$ref": "#/$defs/d", "$defs": {"d": {"required": ["a"]}}}),
                false,
            ),
            (json!({"x-unknown": 1}), false),
            (json!(true), false),
            (json!(false), false),
        ];
        for (schema, expected) in cases {
            let accepts = accepts_empty_object(&schema);
            assert_eq!(accepts, expected, "{schema}");
            let valid = ArgsValidator::compile(&schema).map(|v| v.check(&empty).is_ok());
            assert!(
                !accepts || valid == Ok(true),
                "{schema}: said yes, the validator says {valid:?}"
            );
        }
        assert!(is_empty_object(&empty));
        assert!(!is_empty_object(&json!({"a": 1})));
        assert!(!is_empty_object(&json!([])));
    }

    #[test]
    fn a_long_rejected_value_is_quoted_by_its_start_only() {
        let schema = json!({"type": "object", "properties": {"s": {"type": "string",
            "maxLength": 3}, "t": {"enum": ["a", "b"]}}});
        let v = ArgsValidator::compile(&schema).unwrap();
        let long = "y".repeat(100_000);
        let err = v.check(&json!({"s": long, "t": long})).unwrap_err();
        for violation in err.violations() {
            assert!(violation.message.len() < 200, "{}", violation.message);
            assert!(
                violation.message.contains("\"yyyy"),
                "{}",
                violation.message
            );
            assert!(
                violation.message.contains("(100002 bytes)"),
                "{}",
                violation.message
            );
        }
        assert!(serde_json::to_string(&err).unwrap().len() < 1000);
    }

    #[test]
    fn thousands_of_unknown_fields_give_a_bounded_answer() {
        let v = ArgsValidator::compile(&schema()).unwrap();
        let mut args = serde_json::Map::new();
        args.insert("n".into(), json!(1));
        for i in 0..5000 {
            args.insert(format!("field{i}"), json!("z".repeat(100)));
        }
        let err = v.check(&Value::Object(args)).unwrap_err();
        assert_eq!(err.violations().len(), MAX_VIOLATIONS);
        assert_eq!(err.details().unwrap()["omitted"], 4900);
        assert!(serde_json::to_string(&err).unwrap().len() < 20_000);
    }

    #[test]
    fn strings_are_not_integers() {
        let v = ArgsValidator::compile(&schema()).unwrap();
        assert!(v.check(&json!({"n": "5"})).is_err());
        assert!(v.check(&json!({"n": 5})).is_ok());
    }

    #[test]
    fn a_value_outside_its_choices_is_told_every_choice() {
        let schema = json!({
            "type": "object",
            "properties": {
                "size": {"enum": ["s", "m", "l", "xl", null]},
                "filter": {"anyOf": [
                    {"oneOf": [
                        {"const": "pinned", "description": "Pinned ones"},
                        {"const": "all"},
                        {"type": "object", "properties": {"tag": {"type": "string"}},
                         "required": ["tag"], "additionalProperties": false}
                    ]},
                    {"type": "null"}
                ]}
            }
        });
        let v = ArgsValidator::compile(&schema).unwrap();
        let e = v
            .check(&json!({"size": "xxl", "filter": "pinnd"}))
            .unwrap_err();
        let messages: Vec<String> = e.violations().iter().map(|v| v.message.clone()).collect();
        assert!(
            messages.contains(&r#""xxl" is not one of "s", "m", "l" or "xl""#.to_owned()),
            "{messages:?}"
        );
        assert!(
            messages.iter().any(
                |m| m.starts_with(r#""pinnd" is not one of "pinned", "all""#)
                    && m.contains("an object")
            ),
            "{messages:?}"
        );
    }

    #[test]
    fn strip_unknown_reaches_every_closed_object() {
        let schema = json!({
            "type": "object", "additionalProperties": false,
            "properties": {
                "a": {"anyOf": [
                    {"type": "object", "additionalProperties": false,
                     "properties": {"n": {"type": "integer"}}},
                    {"type": "null"}
                ]},
                "list": {"type": "array", "items": {"$ref": "#/$defs/T"}},
                "map": {"type": "object", "additionalProperties": {"type": "object"}}
            },
            "$defs": {"T": {"type": "object", "additionalProperties": false,
                            "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/T"}}}}}
        });
        let mut x = json!({
            "a": {"n": 1, "x/y": 2},
            "list": [{"kids": [{"z": 1}]}, {"w": 0}],
            "map": {"k": {"any": 1}},
            "top": 0
        });
        let mut removed = strip_unknown(&schema, &mut x);
        removed.sort();
        assert_eq!(
            removed,
            ["/a/x~1y", "/list/0/kids/0/z", "/list/1/w", "/top"]
        );
        assert_eq!(
            x,
            json!({"a": {"n": 1}, "list": [{"kids": [{}]}, {}], "map": {"k": {"any": 1}}})
        );
    }

    #[test]
    fn strip_unknown_keeps_declared_properties() {
        let mut x = json!({"n": 1, "zzz": 2});
        assert_eq!(strip_unknown(&schema(), &mut x), ["/zzz"]);
        assert_eq!(x, json!({"n": 1}));
    }
}
