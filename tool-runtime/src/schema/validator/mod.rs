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
//!   `format`, `content*`, `$comment`, `$schema`, the root's `$id`, and any unknown keyword.
//! - Refused ([`CompileError::Unsupported`]): every other keyword of draft 2020-12 (`contains`,
//!   `if`, `propertyNames`, `dependentRequired`, `unevaluatedItems`, `$dynamicRef` ...), `$id`
//!   below the root, and a `$ref` that leaves the document.
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
        let bits = if instance.is_null() {
            Self::NULL
        } else if instance.as_bool().is_some() {
            Self::BOOLEAN
        } else if instance.members().is_some() {
            Self::OBJECT
        } else if instance.as_array().is_some() {
            Self::ARRAY
        } else if instance.as_str().is_some() {
            Self::STRING
        } else if instance
            .as_number()
            .is_some_and(|n| Num::of(n).is_integer())
        {
            Self::INTEGER | Self::NUMBER
        } else {
            Self::NUMBER
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
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.admits(instance)
    }

    /// Whether `instance`, in either representation, satisfies the schema.
    pub(crate) fn admits<I: Instance>(&self, instance: &I) -> bool {
        check::Run::<I>::new(self, false).check(0, instance, 0)
    }

    /// Every violation of the schema by `instance`, in document order; empty if it is valid.
    pub fn errors<'v>(&'v self, instance: &Value) -> Vec<ValidationError<'v>> {
        let mut run = check::Run::new(self, true);
        run.check(0, instance, 0);
        run.into_errors()
    }
}
