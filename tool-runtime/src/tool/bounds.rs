//! What the types in an item's signature must be, as traits the macros check each type
//! against, once, at the type: a tool's parameters ([`Parameter`]), its result ([`Output`])
//! and error ([`ErrorType`]), and the values a resource template variable or a prompt argument
//! reads from text ([`TextValue`]). A type that is none of these is a compile error in the words
//! of the trait; nothing here needs implementing by hand except [`TextValue`] for one's own
//! enums and newtypes.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::num::{
    NonZeroI8, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64,
    NonZeroUsize,
};
use std::path::PathBuf;

use serde_json::Value;

use crate::tool::error::{ToolError, Violation};

/// A type a tool parameter can have: one a caller's JSON reads into and a schema describes,
/// `serde::Deserialize + schemars::JsonSchema`. Implemented for every such type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "this type must implement `serde::Deserialize` and `schemars::JsonSchema`",
    note = "derive them on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`; to have the pipeline supply it instead, use `State<T>` or `CallContext`"
)]
pub trait Parameter {
    #[doc(hidden)]
    const CHECKED: () = ();
}
impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> Parameter for T {}

/// A type a parameter marked `#[arg(header = "...")]` can have: one a client can mirror in an
/// `Mcp-Param-*` header (SEP-2243), a string, an integer or a `bool`. Not an `Option`: a header
/// names a value the call always has.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent in an `Mcp-Param-*` header",
    label = "`#[arg(header = ...)]` takes a `String`, an integer or a `bool`",
    note = "MCP clients mirror only strings, integers and booleans in headers (SEP-2243): remove `header` from this parameter, or give it one of those types"
)]
pub trait HeaderValue {
    #[doc(hidden)]
    const CHECKED: () = ();
}
impl HeaderValue for String {}
impl HeaderValue for bool {}
impl HeaderValue for i8 {}
impl HeaderValue for i16 {}
impl HeaderValue for i32 {}
impl HeaderValue for i64 {}
impl HeaderValue for isize {}
impl HeaderValue for u8 {}
impl HeaderValue for u16 {}
impl HeaderValue for u32 {}
impl HeaderValue for u64 {}
impl HeaderValue for usize {}

/// A type a tool's result can have: `serde::Serialize + schemars::JsonSchema`. Implemented for
/// every such type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool result",
    label = "this type must implement `serde::Serialize` and `schemars::JsonSchema`",
    note = "derive them on your type: `#[derive(serde::Serialize, schemars::JsonSchema)]`"
)]
pub trait Output {
    #[doc(hidden)]
    const CHECKED: () = ();
}
impl<T: serde::Serialize + schemars::JsonSchema> Output for T {}

/// A type a tool's (or resource's, prompt's, completion's) error can have: one that converts
/// into a [`ToolError`]. Implemented for every `E: Into<ToolError>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error type",
    label = "`ToolError` has no `From<{Self}>`",
    note = "for an error type of your crate, implement `From<{Self}> for tool_runtime::ToolError`, choosing the error's kind (`ToolError::failed(..)`, `ToolError::not_found(..)`, ...)",
    note = "for another crate's, convert in the fn: `.map_err(|e| ToolError::failed(e.to_string()))?`, or return `Result<T, String>`",
    note = "`String`, `&'static str`, `std::io::Error` and, with the `anyhow` feature, `anyhow::Error` convert already"
)]
pub trait ErrorType {
    #[doc(hidden)]
    const CHECKED: () = ();
}
// Not recommended: the error names this trait, in the words above, and not `From`.
#[diagnostic::do_not_recommend]
impl<E: Into<ToolError>> ErrorType for E {}

/// A tool fn's `Result<T, E>` taken apart, for the macro: `T` is described and serialized, `E`
/// converted into a [`ToolError`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool result",
    note = "a tool returns `T` or `Result<T, E>` where `E: Into<ToolError>` and `T: Serialize + JsonSchema`"
)]
pub trait IntoToolResult {
    /// The success type.
    type Ok;
    /// The error type.
    type Err;
    /// The result itself.
    ///
    /// # Errors
    /// The `Err` it is.
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
}

impl<T, E> IntoToolResult for Result<T, E> {
    type Ok = T;
    type Err = E;
    fn into_result(self) -> Self {
        self
    }
}

/// A type a resource template variable or a prompt argument can have: one value read from
/// the text a URI or the wire carries. Strings, numbers, `bool`, `char`, paths, addresses and
/// `Option`s of them are; a struct with fields is not, since one text holds one value.
///
/// A value is read as a string first, then as JSON (numbers, `bool`), so an enum of unit
/// variants or a newtype reads from text as serde derives it; say so with an empty impl:
///
/// ```
/// use tool_runtime::tool::TextValue;
///
/// #[derive(serde::Deserialize)]
/// #[serde(rename_all = "lowercase")]
/// enum Shelf {
///     Fiction,
///     Poetry,
/// }
/// impl TextValue for Shelf {}
///
/// #[derive(serde::Deserialize)]
/// struct NoteId(u32);
/// impl TextValue for NoteId {}
///
/// let shelf = Shelf::from_text("shelf", Some(&"poetry".to_owned())).unwrap();
/// assert!(matches!(shelf, Shelf::Poetry));
/// let NoteId(id) = NoteId::from_text("id", Some(&"7".to_owned())).unwrap();
/// assert_eq!(id, 7);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read from a URI variable or prompt argument",
    label = "one text holds one value: a string, number, bool, char, path or address",
    note = "for an enum of unit variants or a newtype deriving `serde::Deserialize`, write `impl tool_runtime::tool::TextValue for {Self} {{}}`",
    note = "for a value with fields, take its parts as separate variables or arguments, or a `String` of JSON to parse in the fn"
)]
pub trait TextValue: serde::de::DeserializeOwned {
    /// Reads the value named `name` from its text: as a string first (`String`, enums), then
    /// as JSON (numbers, bools); absent, from `null` (an `Option` is `None`, anything else is
    /// missing).
    ///
    /// # Errors
    /// A value that does not read is `invalid_arguments` with a violation at `/{name}` that
    /// says what was expected.
    fn from_text(name: &str, text: Option<&String>) -> Result<Self, ToolError> {
        let invalid = |keyword: &str, message: String| {
            ToolError::invalid_arguments(vec![Violation::new(format!("/{name}"), keyword, message)])
        };
        let Some(text) = text else {
            return Self::deserialize(Value::Null)
                .map_err(|_| invalid("required", format!("`{name}` is required")));
        };
        match Self::deserialize(Value::String(text.clone())) {
            Ok(value) => Ok(value),
            Err(as_string) => match serde_json::from_str::<Value>(text) {
                Ok(json) => Self::deserialize(json)
                    .map_err(|e| invalid("type", format!("`{name}` is `{text}`: {e}"))),
                Err(_) => Err(invalid(
                    "type",
                    format!("`{name}` is `{text}`: {as_string}"),
                )),
            },
        }
    }
}

macro_rules! text_values {
    ($($ty:ty),* $(,)?) => {
        $(impl TextValue for $ty {})*
    };
}

text_values!(
    String,
    Cow<'static, str>,
    Box<str>,
    PathBuf,
    bool,
    char,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64,
    NonZeroI8,
    NonZeroI16,
    NonZeroI32,
    NonZeroI64,
    NonZeroU8,
    NonZeroU16,
    NonZeroU32,
    NonZeroU64,
    NonZeroUsize,
    IpAddr,
    Ipv4Addr,
    Ipv6Addr,
    SocketAddr,
);

impl<T: TextValue> TextValue for Option<T> {}

/// What is wrong with the `x-mcp-header` marks (SEP-2243) of the parameters of a tool written
/// by hand or mounted from another server, which `#[arg(header = ...)]` checks when it compiles: each must be an HTTP field name, unique
/// case aside, on a string, integer or boolean parameter. MCP clients leave out a tool whose marks
/// break these rules.
pub(crate) fn header_problem(props: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    for (param, schema) in props {
        let Some(header) = schema.get("x-mcp-header") else {
            continue;
        };
        let name = header.as_str().unwrap_or_default();
        if !tool_grammar::is_header_name(name) {
            return Some(format!(
                "parameter `{param}`: `x-mcp-header` must be an HTTP header name, such as \"Region\", not {header}"
            ));
        }
        if !seen.insert(name.to_ascii_lowercase()) {
            return Some(format!(
                "parameter `{param}`: another parameter is sent in the header `Mcp-Param-{name}` already (header names ignore case)"
            ));
        }
        let kind = schema.get("type").and_then(serde_json::Value::as_str);
        if !matches!(kind, Some("string" | "integer" | "boolean")) {
            return Some(format!(
                "parameter `{param}`: `x-mcp-header` goes on a string, integer or boolean parameter (its `type`), as MCP clients mirror only those in headers"
            ));
        }
    }
    None
}
