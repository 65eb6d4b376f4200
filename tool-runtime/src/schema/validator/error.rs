//! What goes wrong: a schema that does not compile, and a value that breaks a schema.

use std::borrow::Cow;
use std::fmt;

use serde_json::{Number, Value};

use super::Types;

/// A schema this validator cannot compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileError {
    /// A keyword outside the set this validator knows (see the module's documentation).
    Unsupported {
        /// The keyword, as the schema spells it.
        keyword: String,
        /// Where it is in the schema, as a JSON pointer.
        at: String,
        /// Why, where the keyword alone does not say (a `$ref` that leaves the document).
        detail: Option<String>,
    },
    /// A keyword whose value is not what draft 2020-12 requires.
    Invalid {
        /// Where, as a JSON pointer into the schema.
        at: String,
        /// What is wrong.
        message: String,
    },
}

impl CompileError {
    /// The keyword outside the set, for [`CompileError::Unsupported`].
    #[must_use]
    pub fn unsupported_keyword(&self) -> Option<&str> {
        match self {
            CompileError::Unsupported { keyword, .. } => Some(keyword),
            CompileError::Invalid { .. } => None,
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |at: &str| {
            if at.is_empty() {
                "at the root".to_owned()
            } else {
                format!("at `{at}`")
            }
        };
        match self {
            CompileError::Unsupported {
                keyword,
                at: place,
                detail,
            } => {
                write!(f, "the schema uses `{keyword}` {}", at(place))?;
                if let Some(detail) = detail {
                    write!(f, " ({detail})")?;
                }
                f.write_str(
                    ", which tool-runtime's own validator cannot check; \
                     its `jsonschema` feature validates such schemas",
                )
            }
            CompileError::Invalid { at: place, message } => {
                write!(f, "the schema is invalid {}: {message}", at(place))
            }
        }
    }
}

impl std::error::Error for CompileError {}

/// One violation: where, which keyword, and what. It borrows from the validator (`'v`) and
/// from the value checked (`'i`): collecting every error copies nothing of the value.
#[derive(Debug)]
pub struct ValidationError<'v, 'i> {
    /// The JSON pointer of the value that breaks the keyword.
    pub path: String,
    /// That value.
    pub instance: Cow<'i, Value>,
    /// What it breaks.
    pub kind: ErrorKind<'v, 'i>,
}

/// The keyword broken, with what a message needs.
#[derive(Debug)]
#[allow(missing_docs)] // Each variant is the keyword it names.
pub enum ErrorKind<'v, 'i> {
    FalseSchema,
    Type(Types),
    Required(&'v str),
    /// The members no `properties` or `patternProperties` names.
    AdditionalProperties(Vec<&'i str>),
    UnevaluatedProperties(Vec<&'i str>),
    /// Items past the `prefixItems` of a schema whose `items` is `false`.
    AdditionalItems(usize),
    MinProperties(u64),
    MaxProperties(u64),
    MinItems(u64),
    MaxItems(u64),
    UniqueItems,
    MinLength(u64),
    MaxLength(u64),
    Pattern(&'v str),
    Minimum(&'v Number),
    Maximum(&'v Number),
    ExclusiveMinimum(&'v Number),
    ExclusiveMaximum(&'v Number),
    MultipleOf(&'v Number),
    Enum(&'v [Value]),
    Const(&'v Value),
    /// What each branch said.
    AnyOf(Vec<Vec<ValidationError<'v, 'i>>>),
    /// No branch matched; what each said.
    OneOfNone(Vec<Vec<ValidationError<'v, 'i>>>),
    OneOfMany,
    Not(&'v Value),
    /// References that loop without reading further into the value.
    TooDeep,
}

impl ErrorKind<'_, '_> {
    /// The keyword broken.
    #[must_use]
    pub fn keyword(&self) -> &'static str {
        match self {
            ErrorKind::FalseSchema => "false",
            ErrorKind::Type(_) => "type",
            ErrorKind::Required(_) => "required",
            ErrorKind::AdditionalProperties(_) => "additionalProperties",
            ErrorKind::UnevaluatedProperties(_) => "unevaluatedProperties",
            ErrorKind::AdditionalItems(_) => "items",
            ErrorKind::MinProperties(_) => "minProperties",
            ErrorKind::MaxProperties(_) => "maxProperties",
            ErrorKind::MinItems(_) => "minItems",
            ErrorKind::MaxItems(_) => "maxItems",
            ErrorKind::UniqueItems => "uniqueItems",
            ErrorKind::MinLength(_) => "minLength",
            ErrorKind::MaxLength(_) => "maxLength",
            ErrorKind::Pattern(_) => "pattern",
            ErrorKind::Minimum(_) => "minimum",
            ErrorKind::Maximum(_) => "maximum",
            ErrorKind::ExclusiveMinimum(_) => "exclusiveMinimum",
            ErrorKind::ExclusiveMaximum(_) => "exclusiveMaximum",
            ErrorKind::MultipleOf(_) => "multipleOf",
            ErrorKind::Enum(_) => "enum",
            ErrorKind::Const(_) => "const",
            ErrorKind::AnyOf(_) => "anyOf",
            ErrorKind::OneOfNone(_) | ErrorKind::OneOfMany => "oneOf",
            ErrorKind::Not(_) => "not",
            ErrorKind::TooDeep => "$ref",
        }
    }
}

/// `s` if `n` is not 1.
fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

fn quoted_names(f: &mut fmt::Formatter<'_>, names: &[&str]) -> fmt::Result {
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "'{name}'")?;
    }
    f.write_str(if names.len() == 1 {
        " was unexpected)"
    } else {
        " were unexpected)"
    })
}

impl fmt::Display for ValidationError<'_, '_> {
    #[allow(clippy::too_many_lines)] // One arm per keyword.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value: &Value = &self.instance;
        match &self.kind {
            ErrorKind::FalseSchema => write!(f, "False schema does not allow {value}"),
            ErrorKind::Type(types) => {
                let names: Vec<String> = types.names().map(|t| format!("\"{t}\"")).collect();
                match names.as_slice() {
                    [one] => write!(f, "{value} is not of type {one}"),
                    many => write!(f, "{value} is not of types {}", many.join(", ")),
                }
            }
            ErrorKind::Required(name) => write!(f, "{} is a required property", Value::from(*name)),
            ErrorKind::AdditionalProperties(names) => {
                f.write_str("Additional properties are not allowed (")?;
                quoted_names(f, names)
            }
            ErrorKind::UnevaluatedProperties(names) => {
                f.write_str("Unevaluated properties are not allowed (")?;
                quoted_names(f, names)
            }
            ErrorKind::AdditionalItems(limit) => {
                let extra: Vec<String> = value
                    .as_array()
                    .map(|items| items.iter().skip(*limit).map(Value::to_string).collect())
                    .unwrap_or_default();
                write!(f, "Additional items are not allowed ({}", extra.join(", "))?;
                f.write_str(if extra.len() == 1 {
                    " was unexpected)"
                } else {
                    " were unexpected)"
                })
            }
            ErrorKind::MinProperties(n) => write!(
                f,
                "{value} has less than {n} propert{}",
                plural(*n, "y", "ies")
            ),
            ErrorKind::MaxProperties(n) => write!(
                f,
                "{value} has more than {n} propert{}",
                plural(*n, "y", "ies")
            ),
            ErrorKind::MinItems(n) => {
                write!(f, "{value} has less than {n} item{}", plural(*n, "", "s"))
            }
            ErrorKind::MaxItems(n) => {
                write!(f, "{value} has more than {n} item{}", plural(*n, "", "s"))
            }
            ErrorKind::UniqueItems => write!(f, "{value} has non-unique elements"),
            ErrorKind::MinLength(n) => write!(
                f,
                "{value} is shorter than {n} character{}",
                plural(*n, "", "s")
            ),
            ErrorKind::MaxLength(n) => write!(
                f,
                "{value} is longer than {n} character{}",
                plural(*n, "", "s")
            ),
            ErrorKind::Pattern(pattern) => write!(f, "{value} does not match \"{pattern}\""),
            ErrorKind::Minimum(n) => write!(f, "{value} is less than the minimum of {n}"),
            ErrorKind::Maximum(n) => write!(f, "{value} is greater than the maximum of {n}"),
            ErrorKind::ExclusiveMinimum(n) => {
                write!(f, "{value} is less than or equal to the minimum of {n}")
            }
            ErrorKind::ExclusiveMaximum(n) => {
                write!(f, "{value} is greater than or equal to the maximum of {n}")
            }
            ErrorKind::MultipleOf(n) => write!(f, "{value} is not a multiple of {n}"),
            ErrorKind::Enum(options) => {
                // The first few choices; the rest counted.
                const SHOWN: usize = 3;
                write!(f, "{value} is not one of ")?;
                let words: Vec<String> = options.iter().map(Value::to_string).collect();
                if words.len() <= SHOWN {
                    match words.as_slice() {
                        [] => Ok(()),
                        [one] => f.write_str(one),
                        [rest @ .., last] => write!(f, "{} or {last}", rest.join(", ")),
                    }
                } else {
                    let shown = &words[..SHOWN - 1];
                    write!(
                        f,
                        "{} or {} other candidates",
                        shown.join(", "),
                        words.len() - shown.len()
                    )
                }
            }
            ErrorKind::Const(expected) => write!(f, "{expected} was expected"),
            ErrorKind::AnyOf(_) => write!(
                f,
                "{value} is not valid under any of the schemas listed in the 'anyOf' keyword"
            ),
            ErrorKind::OneOfNone(_) => write!(
                f,
                "{value} is not valid under any of the schemas listed in the 'oneOf' keyword"
            ),
            ErrorKind::OneOfMany => write!(
                f,
                "{value} is valid under more than one of the schemas listed in the 'oneOf' keyword"
            ),
            ErrorKind::Not(schema) => write!(f, "{schema} is not allowed for {value}"),
            ErrorKind::TooDeep => write!(
                f,
                "the schema's references loop without reading further into {value}"
            ),
        }
    }
}
