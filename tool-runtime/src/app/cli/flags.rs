//! A tool's parameter as a flag of its subcommand: the clap argument, what its help says
//! (kind, constraints, an example of a JSON value's shape, the words an enum takes), and the
//! value parser that turns a word into JSON of the schema's kind.

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Arg, ArgAction, Command, ValueHint};
use serde_json::Value;

use crate::front::describe::{Kind, Param};

/// The id of `--params-json`.
pub(crate) const PARAMS_JSON: &str = "params-json";

pub(super) fn param_arg(param: &Param<'_>, position: &mut usize) -> Arg {
    let (name, hint) = (param.name, param.hint);
    let kind = flag_kind(param.schema);
    let words = if kind == Kind::Json {
        unit_words(param.schema)
    } else {
        Vec::new()
    };
    let mut help = param.description().to_owned();
    for note in notes(param, &kind, &words) {
        if !help.is_empty() {
            help.push(' ');
        }
        help.push('[');
        help.push_str(&note);
        help.push(']');
    }
    let mut arg = Arg::new(name.to_owned()).help(help);
    let positional = hint.is_some_and(|h| h.positional);
    if positional {
        *position += 1;
        arg = arg.index(*position).value_name(name.to_uppercase());
    } else {
        arg = arg
            .long(name.replace('_', "-"))
            .value_name(name.to_uppercase());
        if let Some(c) = hint.and_then(|h| h.short) {
            arg = arg.short(c);
        }
    }
    if hint.is_some_and(|h| h.path) {
        arg = arg.value_hint(ValueHint::FilePath);
    }
    arg = match &kind {
        Kind::Boolean => arg.action(ArgAction::SetTrue),
        Kind::Array(item) => arg
            .action(ArgAction::Append)
            .value_parser(JsonValueParser((**item).clone(), Vec::new())),
        Kind::Json => arg
            .action(ArgAction::Set)
            .value_parser(JsonValueParser(Kind::Json, words)),
        other => arg
            .action(ArgAction::Set)
            .value_parser(JsonValueParser(other.clone(), Vec::new())),
    };
    if param.required && kind != Kind::Boolean {
        arg = arg.required_unless_present(PARAMS_JSON);
    }
    arg
}

/// What help says of a parameter besides its description: required, its default, and the
/// constraints of its schema (range, length, pattern). Integer bounds that are only the Rust
/// type's own (`u32` → `0..=4294967295`) are left out.
fn notes(param: &Param<'_>, kind: &Kind, words: &[String]) -> Vec<String> {
    let schema = param.schema;
    let mut notes = Vec::new();
    if param.required && *kind != Kind::Boolean {
        notes.push("required".to_owned());
    }
    if let Some(default) = param.default() {
        let shown = default
            .as_str()
            .map_or_else(|| default.to_string(), str::to_owned);
        notes.push(format!("default: {shown}"));
    }
    let own = schema
        .get("format")
        .and_then(Value::as_str)
        .and_then(crate::schema::integer_bounds);
    let bound = |key: &str, natural: Option<i128>| {
        schema
            .get(key)
            .filter(|v| v.is_number() && as_i128(v).is_none_or(|n| Some(n) != natural))
            .map(ToString::to_string)
    };
    let (min, max) = (
        bound("minimum", own.map(|b| b.0)),
        bound("maximum", own.map(|b| b.1)),
    );
    let (above, below) = (
        bound("exclusiveMinimum", None),
        bound("exclusiveMaximum", None),
    );
    let range = match (min, above, max, below) {
        (None, None, None, None) => None,
        (min, above, max, below) => {
            let low = min
                .map(|m| format!("≥ {m}"))
                .or(above.map(|m| format!("> {m}")));
            let high = max
                .map(|m| format!("≤ {m}"))
                .or(below.map(|m| format!("< {m}")));
            Some(low.into_iter().chain(high).collect::<Vec<_>>().join(", "))
        }
    };
    if let Some(range) = range {
        notes.push(format!("range: {range}"));
    }
    for (what, min, max) in [
        ("length", "minLength", "maxLength"),
        ("items", "minItems", "maxItems"),
    ] {
        let (low, high) = (schema.get(min), schema.get(max));
        match (low, high) {
            (Some(l), Some(h)) if l == h => notes.push(format!("{what}: {l}")),
            (Some(l), Some(h)) => notes.push(format!("{what}: {l} to {h}")),
            (Some(l), None) => notes.push(format!("{what}: at least {l}")),
            (None, Some(h)) => notes.push(format!("{what}: at most {h}")),
            (None, None) => {}
        }
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        notes.push(format!("pattern: {pattern}"));
    }
    if *kind == Kind::Json
        && let Some(example) = example(schema, 0).filter(|e| e.is_object() || e.is_array())
    {
        let or = if words.is_empty() { "" } else { "or " };
        notes.push(format!("{or}JSON, such as {example}"));
    }
    notes
}

/// The plain words among a parameter's values: the unit variants of an enum that also has
/// variants with data (an enum of words only is a [`Kind::String`] with choices), also inside
/// an `Option`. They are accepted as they are; anything else is read as JSON.
fn unit_words(schema: &Value) -> Vec<String> {
    let mut words = Vec::new();
    collect_words(schema, &mut words, 0);
    words
}

fn collect_words(schema: &Value, words: &mut Vec<String>, depth: usize) {
    if depth > 4 {
        return;
    }
    if let Some(word) = schema.get("const").and_then(Value::as_str) {
        words.push(word.to_owned());
    }
    for value in schema
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(word) = value.as_str() {
            words.push(word.to_owned());
        }
    }
    for key in ["anyOf", "oneOf"] {
        for branch in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            collect_words(branch, words, depth + 1);
        }
    }
}

/// A small value of `schema`'s shape for help (`{"name":"...","parts":[]}`): required fields
/// only (all when none is), one item per list, `"..."` for text; `None` past a few levels or
/// at a recursive `$ref`.
fn example(schema: &Value, depth: usize) -> Option<Value> {
    if depth > 3 {
        return None;
    }
    if let Some(c) = schema.get("const") {
        return Some(c.clone());
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|values| values.iter().find(|v| !v.is_null()))
    {
        return Some(first.clone());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let examples: Vec<Value> = branches
                .iter()
                .filter_map(|b| example(b, depth + 1))
                .filter(|e| !e.is_null())
                .collect();
            // A variant with data shows more than a word does.
            return examples
                .iter()
                .find(|e| e.is_object() || e.is_array())
                .or(examples.first())
                .cloned();
        }
    }
    match crate::front::describe::non_null_type(schema)? {
        "object" => {
            let props = schema.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = serde_json::Map::new();
            if let Some(props) = props {
                for (name, sub) in props {
                    if (required.is_empty() || required.contains(&name.as_str()))
                        && let Some(value) = example(sub, depth + 1)
                    {
                        out.insert(name.clone(), value);
                    }
                }
            } else if let Some(values) =
                schema.get("additionalProperties").filter(|v| v.is_object())
            {
                out.insert("key".into(), example(values, depth + 1)?);
            }
            Some(Value::Object(out))
        }
        "array" => Some(Value::Array(
            schema
                .get("items")
                .and_then(|items| example(items, depth + 1))
                .into_iter()
                .collect(),
        )),
        "string" => Some(Value::String("...".into())),
        "integer" | "number" => Some(schema.get("minimum").cloned().unwrap_or(Value::from(0))),
        "boolean" => Some(Value::Bool(false)),
        _ => None,
    }
}

fn as_i128(v: &Value) -> Option<i128> {
    v.as_i64()
        .map(i128::from)
        .or_else(|| v.as_u64().map(i128::from))
}

/// How one parameter's text on the command line becomes JSON: the value's [`Kind`], except that
/// items of an array flag that are not scalars (arrays, objects, booleans) are JSON text each.
pub(crate) fn flag_kind(schema: &Value) -> Kind {
    match Kind::of(schema) {
        Kind::Array(item) => match *item {
            Kind::Array(_) | Kind::Json | Kind::Boolean => Kind::Array(Box::new(Kind::Json)),
            scalar => Kind::Array(Box::new(scalar)),
        },
        other => other,
    }
}

/// Parses a flag's text into a JSON value of the parameter's Rust type, with clap's own
/// parsers (and so clap's error messages) for numbers.
#[derive(Debug, Clone)]
pub(crate) struct JsonValueParser(pub(crate) Kind, pub(crate) Vec<String>);

impl TypedValueParser for JsonValueParser {
    type Value = Value;

    fn parse_ref(
        &self,
        cmd: &Command,
        arg: Option<&Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Value, clap::Error> {
        macro_rules! int {
            ($t:ty) => {
                clap::value_parser!($t)
                    .parse_ref(cmd, arg, value)
                    .map(Value::from)
            };
        }
        match &self.0 {
            Kind::Integer("u8") => int!(u8),
            Kind::Integer("u16") => int!(u16),
            Kind::Integer("u32") => int!(u32),
            Kind::Integer("u64") => int!(u64),
            Kind::Integer("i8") => int!(i8),
            Kind::Integer("i16") => int!(i16),
            Kind::Integer("i32") => int!(i32),
            Kind::Integer(_) => int!(i64),
            Kind::Number => {
                let text = clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)?;
                match text.trim().parse::<f64>() {
                    Ok(n) if n.is_finite() => Ok(Value::from(n)),
                    _ => Err(invalid_value(cmd, arg, &text, "not a number")),
                }
            }
            Kind::String(Some(choices)) => {
                let parser = clap::builder::PossibleValuesParser::new(
                    choices.iter().map(|c| PossibleValue::new(c.clone())),
                );
                parser.parse_ref(cmd, arg, value).map(Value::String)
            }
            Kind::Boolean | Kind::String(None) | Kind::Array(_) => {
                clap::builder::StringValueParser::new()
                    .parse_ref(cmd, arg, value)
                    .map(Value::String)
            }
            Kind::Json => {
                let text = clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)?;
                if self.1.contains(&text) {
                    return Ok(Value::String(text));
                }
                serde_json::from_str(&text).map_err(|e| {
                    let why = if self.1.is_empty() {
                        format!("not JSON: {e}")
                    } else {
                        format!("neither one of {} nor JSON ({e})", self.1.join(", "))
                    };
                    invalid_value(cmd, arg, &text, &why)
                })
            }
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        match &self.0 {
            Kind::String(Some(choices)) => Some(Box::new(
                choices.iter().map(|c| PossibleValue::new(c.clone())),
            )),
            Kind::Json if !self.1.is_empty() => Some(Box::new(
                self.1.iter().map(|w| PossibleValue::new(w.clone())),
            )),
            _ => None,
        }
    }
}

/// A clap "invalid value" error (exit code 2), worded like clap's own.
fn invalid_value(cmd: &Command, arg: Option<&Arg>, value: &str, why: &str) -> clap::Error {
    let arg = arg.map_or_else(String::new, ToString::to_string);
    clap::Error::raw(
        clap::error::ErrorKind::ValueValidation,
        format!("invalid value '{value}' for '{arg}': {why}\n"),
    )
    .with_cmd(cmd)
}
