//! The lowering walks, one per provider family. Each takes the canonical input schema and
//! returns the target's schema and what it found on the way, by JSON Pointer.
//!
//! This file holds what every target shares: the [`Lowered`] result and the notes taken on the
//! way, moving keywords into descriptions, JSON Pointer paths and the walk over subschemas.
//! Each target has its own file; `accept` turns a model's arguments back into what the
//! canonical schema means.

mod anthropic;
mod gemini;
mod mcp;
mod openai;

use std::fmt::{self, Write as _};

use serde_json::{Map, Value};

use super::describe::{add_to_description, phrases};
use super::{Finding, Severity};

pub(super) use self::anthropic::{anthropic, optional_and_union_params};
pub(super) use self::gemini::gemini;
pub(super) use self::mcp::mcp;
pub(super) use self::openai::openai;
pub(super) use crate::schema::strict::{admits_null, required_of};

/// A lowered input schema.
pub(super) struct Lowered {
    pub(super) schema: Value,
    /// Sent as a strict schema.
    pub(super) strict: bool,
    notes: Vec<(String, Severity, String)>,
}

impl Lowered {
    /// The schema, and the notes as findings about `tool`.
    pub(super) fn into_parts(self, tool: &str) -> (Value, bool, Vec<Finding>) {
        let findings = self
            .notes
            .into_iter()
            .map(|(path, severity, message)| Finding {
                tool: tool.to_owned(),
                path,
                severity,
                message,
            })
            .collect();
        (self.schema, self.strict, findings)
    }
}

/// What is recorded while walking.
#[derive(Default)]
struct Notes {
    notes: Vec<(String, Severity, String)>,
    /// Why the schema cannot be strict, when it cannot.
    not_strict: Vec<String>,
}

impl Notes {
    fn add(&mut self, path: &Path<'_>, severity: Severity, message: impl Into<String>) {
        self.notes
            .push((path.to_string(), severity, message.into()));
    }

    /// Records each keyword of `obj` that no strict form accepts (but those `allowed`).
    fn never_strict(&mut self, obj: &Map<String, Value>, path: &Path<'_>, allowed: &[&str]) {
        let refused = |k: &str| !allowed.contains(&k) && NEVER_STRICT.contains(&k);
        if !obj.keys().any(|k| refused(k)) {
            return;
        }
        for k in NEVER_STRICT {
            if refused(k) && obj.contains_key(*k) {
                self.not_strict.push(format!("`{k}` at {}", at(path)));
            }
        }
    }

    /// The strict `schema` with its notes when nothing kept it from being strict; else the
    /// canonical `input` sent non-strict, with one warning (`fallback`) saying why.
    fn lowered(self, schema: Value, input: &Value, fallback: &str) -> Lowered {
        if self.not_strict.is_empty() {
            return Lowered {
                schema,
                strict: true,
                notes: self.notes,
            };
        }
        Lowered {
            schema: without_dialect(input),
            strict: false,
            notes: vec![(
                String::new(),
                Severity::Warning,
                format!("{fallback}: {}", self.not_strict.join("; ")),
            )],
        }
    }
}

/// Moves `keys` of `schema` (those present) into its description, with one warning.
fn describe_away(
    schema: &mut Map<String, Value>,
    keys: &[&str],
    path: &Path<'_>,
    notes: &mut Notes,
    why: &str,
) {
    let present: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| schema.contains_key(*k))
        .collect();
    if present.is_empty() {
        return;
    }
    if let Some(words) = phrases(schema, &present) {
        add_to_description(schema, &words);
        notes.add(
            path,
            Severity::Warning,
            format!(
                "{}: {why}; moved into the description (\"{words}\")",
                list(&present)
            ),
        );
    } else {
        notes.add(
            path,
            Severity::Note,
            format!("{}: {why}; dropped (nothing a model needs)", list(&present)),
        );
    }
    for k in present {
        schema.shift_remove(k);
    }
}

/// Moves every keyword of `schema` that `kept` does not keep into its description
/// ([`describe_away`]).
fn describe_unkept(
    schema: &mut Map<String, Value>,
    kept: impl Fn(&str) -> bool,
    path: &Path<'_>,
    notes: &mut Notes,
    why: &str,
) {
    if schema.keys().all(|k| kept(k)) {
        return;
    }
    let away: Vec<String> = schema.keys().filter(|k| !kept(k)).cloned().collect();
    let away: Vec<&str> = away.iter().map(String::as_str).collect();
    describe_away(schema, &away, path, notes, why);
}

fn list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a subschema sits in the canonical input schema: a JSON Pointer, written out only
/// when a note is taken there (most subschemas get none).
#[derive(Clone, Copy)]
pub(super) struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Segment<'a>,
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    /// The schema itself (`""`).
    pub(super) const ROOT: Path<'static> = Path {
        parent: None,
        segment: Segment::Root,
    };

    /// The member `key` of the subschema here.
    fn key(&'a self, key: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            segment: Segment::Key(key),
        }
    }

    /// The item `index` of the array here.
    fn index(&'a self, index: usize) -> Path<'a> {
        Path {
            parent: Some(self),
            segment: Segment::Index(index),
        }
    }

    fn is_root(&self) -> bool {
        self.parent.is_none()
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            parent.fmt(f)?;
        }
        match self.segment {
            Segment::Root => Ok(()),
            Segment::Index(i) => write!(f, "/{i}"),
            Segment::Key(key) => {
                f.write_char('/')?;
                for c in key.chars() {
                    match c {
                        '~' => f.write_str("~0")?,
                        '/' => f.write_str("~1")?,
                        c => f.write_char(c)?,
                    }
                }
                Ok(())
            }
        }
    }
}

/// Keywords no strict form accepts: a schema using them is sent non-strict.
const NEVER_STRICT: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contains",
    "prefixItems",
];

/// The schema without `$schema`, which no provider takes.
pub(super) fn without_dialect(input: &Value) -> Value {
    match input {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| k.as_str() != "$schema")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Calls `f` on every direct subschema of `obj` but `properties` (handled by the caller):
/// `items`, `anyOf`/`oneOf` alternatives, `$defs`, `additionalProperties` schemas.
fn walk_children(
    obj: &mut Map<String, Value>,
    path: &Path<'_>,
    f: &mut dyn FnMut(&mut Value, &Path<'_>),
) {
    for (key, value) in obj.iter_mut() {
        match key.as_str() {
            "items" | "additionalProperties" if value.is_object() => f(value, &path.key(key)),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(alts) = value {
                    let p = path.key(key);
                    for (i, alt) in alts.iter_mut().enumerate() {
                        f(alt, &p.index(i));
                    }
                }
            }
            "$defs" => {
                if let Value::Object(defs) = value {
                    let p = path.key(key);
                    for (name, def) in defs.iter_mut() {
                        f(def, &p.key(name));
                    }
                }
            }
            _ => {}
        }
    }
}

fn is_object(obj: &Map<String, Value>) -> bool {
    obj.get("type").and_then(Value::as_str) == Some("object") || obj.contains_key("properties")
}

fn at(path: &Path<'_>) -> String {
    if path.is_root() {
        "the root".into()
    } else {
        path.to_string()
    }
}
