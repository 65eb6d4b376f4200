//! The typed error every outcome that is not a success is carried in.
//!
//! One type for every front end: the CLI, HTTP and MCP adapters render a [`ToolError`] but never
//! invent their own. The `type` string is stable and documented in the error table on [`ToolError`].

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

pub mod kind {
    //! Every error type the runtime itself produces, with the HTTP status each maps to.
    //!
    //! A tool's own errors choose their own type string (`code_expired`, `card_declined`, ...);
    //! these are the ones the pipeline and the front ends produce, each worded once. On MCP every
    //! one of them is a tool result with `isError: true` except [`UNKNOWN_TOOL`], which is the
    //! JSON-RPC error `-32602` (invalid params) as the specification prescribes; see
    //! [`jsonrpc_code`].
    //!
    //! | type | HTTP | retryable |
    //! | --- | --- | --- |
    //! | [`INVALID_REQUEST`] | 400 | no |
    //! | [`DRY_RUN_UNSUPPORTED`] | 400 | no |
    //! | [`UNAUTHENTICATED`] | 401 | no |
    //! | [`FORBIDDEN`] | 403 | no |
    //! | [`UNKNOWN_TOOL`] | 404 | no |
    //! | [`NOT_FOUND`] | 404 | no |
    //! | [`METHOD_NOT_ALLOWED`] | 405 | no |
    //! | [`REQUEST_TIMEOUT`] | 408 | yes |
    //! | [`CONFIRMATION_REQUIRED`] | 409 | no |
    //! | [`CONFIRMATION_DECLINED`] | 409 | no |
    //! | [`PAYLOAD_TOO_LARGE`] | 413 | no |
    //! | [`UNSUPPORTED_MEDIA_TYPE`] | 415 | no |
    //! | [`INVALID_ARGUMENTS`] | 422 | yes |
    //! | [`RATE_LIMITED`] | 429 | yes |
    //! | [`BUDGET_EXHAUSTED`] | 429 | no |
    //! | [`CANCELLED`] | 499 | no |
    //! | [`INTERNAL`] | 500 | no |
    //! | [`TOOL_FAILED`] | 500 | no |
    //! | [`OUTPUT_TOO_LARGE`] | 500 | no |
    //! | [`UNSUPPORTED`] | 501 | no |
    //! | [`UNAVAILABLE`] | 503 | yes |
    //! | [`TIMEOUT`] | 504 | yes |

    /// The request is not JSON, or not of the request's shape.
    pub const INVALID_REQUEST: &str = "invalid_request";
    /// A dry run of a tool that does not support dry runs.
    pub const DRY_RUN_UNSUPPORTED: &str = "dry_run_unsupported";
    /// Credentials are missing or wrong where they are required.
    pub const UNAUTHENTICATED: &str = "unauthenticated";
    /// Policy or a guard refused the call.
    pub const FORBIDDEN: &str = "forbidden";
    /// No tool by that name (among those the caller may see); the error's details list the
    /// nearest names.
    pub const UNKNOWN_TOOL: &str = "unknown_tool";
    /// Something a tool looked for does not exist; over HTTP, also a route that does not.
    pub const NOT_FOUND: &str = "not_found";
    /// An HTTP route called with a method it does not take.
    pub const METHOD_NOT_ALLOWED: &str = "method_not_allowed";
    /// The request's body did not arrive in time.
    pub const REQUEST_TIMEOUT: &str = "request_timeout";
    /// A destructive call came without confirmation; the error carries a
    /// [`Confirmation`](crate::confirm::Confirmation).
    pub const CONFIRMATION_REQUIRED: &str = "confirmation_required";
    /// The user was asked to confirm a destructive call and said no; it did not run.
    pub const CONFIRMATION_DECLINED: &str = "confirmation_declined";
    /// The request's body is larger than the limit.
    pub const PAYLOAD_TOO_LARGE: &str = "payload_too_large";
    /// The request's body is not sent as JSON.
    pub const UNSUPPORTED_MEDIA_TYPE: &str = "unsupported_media_type";
    /// The arguments break the input schema.
    pub const INVALID_ARGUMENTS: &str = "invalid_arguments";
    /// Over a rate limit.
    pub const RATE_LIMITED: &str = "rate_limited";
    /// An agent run's budget (tool calls, turns, tokens) is used up; the call was not run.
    pub const BUDGET_EXHAUSTED: &str = "budget_exhausted";
    /// The caller cancelled the call (HTTP 499, nginx's "client closed request").
    pub const CANCELLED: &str = "cancelled";
    /// The tool panicked or failed unexpectedly.
    pub const INTERNAL: &str = "internal";
    /// The default type of a tool's own error.
    pub const TOOL_FAILED: &str = "tool_failed";
    /// The result is over the tool's output cap and cannot be cut.
    pub const OUTPUT_TOO_LARGE: &str = "output_too_large";
    /// The tool asked its caller for something the caller does not offer (sampling or
    /// elicitation through a front end or client without them).
    pub const UNSUPPORTED: &str = "unsupported";
    /// Not ready, or over capacity.
    pub const UNAVAILABLE: &str = "unavailable";
    /// The tool ran past its time limit and was cancelled.
    pub const TIMEOUT: &str = "timeout";

    /// The HTTP status of an error type: the table above, 500 for a type not in it.
    #[must_use]
    pub fn status(kind: &str) -> u16 {
        match kind {
            INVALID_REQUEST | DRY_RUN_UNSUPPORTED => 400,
            UNAUTHENTICATED => 401,
            FORBIDDEN => 403,
            UNKNOWN_TOOL | NOT_FOUND => 404,
            METHOD_NOT_ALLOWED => 405,
            REQUEST_TIMEOUT => 408,
            CONFIRMATION_REQUIRED | CONFIRMATION_DECLINED => 409,
            PAYLOAD_TOO_LARGE => 413,
            UNSUPPORTED_MEDIA_TYPE => 415,
            INVALID_ARGUMENTS => 422,
            RATE_LIMITED | BUDGET_EXHAUSTED => 429,
            CANCELLED => 499,
            UNSUPPORTED => 501,
            UNAVAILABLE => 503,
            TIMEOUT => 504,
            _ => 500,
        }
    }

    /// Whether retrying the same call can help, by type: a model that sent bad arguments can
    /// fix them; limits, time-outs and late bodies pass.
    #[must_use]
    pub fn retryable(kind: &str) -> bool {
        matches!(
            kind,
            INVALID_ARGUMENTS | RATE_LIMITED | UNAVAILABLE | TIMEOUT | REQUEST_TIMEOUT
        )
    }

    /// The JSON-RPC error code an error type is answered with on MCP, where it is a protocol
    /// error rather than a tool result: `-32602` (invalid params) for [`UNKNOWN_TOOL`]; `None`
    /// for every other type, which is a tool result with `isError: true`.
    #[must_use]
    pub fn jsonrpc_code(kind: &str) -> Option<i32> {
        match kind {
            UNKNOWN_TOOL => Some(-32602),
            _ => None,
        }
    }
}

/// At most this many violations are listed in an `invalid_arguments` error; the rest are counted
/// in `details.omitted`.
pub(crate) const MAX_VIOLATIONS: usize = 100;

/// Paths, messages and properties of violations longer than this (in bytes) keep only their start and end.
const MAX_VIOLATION_TEXT: usize = 300;

/// Shortens `text` to about [`MAX_VIOLATION_TEXT`] bytes: its start, how much was left out, its
/// end. An answer never echoes a large rejected value.
fn shorten_in_place(text: &mut String) {
    if text.len() <= MAX_VIOLATION_TEXT {
        return;
    }
    let head = floor_boundary(text, MAX_VIOLATION_TEXT * 2 / 3);
    let tail = ceil_boundary(text, text.len() - MAX_VIOLATION_TEXT / 3);
    *text = format!(
        "{}… ({} bytes left out) …{}",
        &text[..head],
        tail - head,
        &text[tail..]
    );
}

/// The largest char boundary of `s` at or below `i`.
pub(crate) fn floor_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `s` at or above `i`.
fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// One way the arguments break the input schema: where, which rule, and what is wrong in words.
///
/// Serialized in `details.violations[]` as `path`, `message`, `keyword` and, when there is
/// one, `property`. Read `keyword` and `property` to act on a violation (find the field a
/// missing property belongs to, say which flag to pass); the message is for people.
///
/// ```
/// use tool_runtime::{ToolError, Violation};
/// let missing = Violation::new("", "required", "\"name\" is a required property")
///     .with_property("name");
/// let err = ToolError::invalid_arguments(vec![missing]);
/// let v = &err.violations()[0];
/// assert_eq!((v.keyword.as_str(), v.property.as_deref()), ("required", Some("name")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Violation {
    /// JSON pointer (RFC 6901) to the offending value inside the arguments; `""` is the root.
    /// For a missing property, the object that lacks it.
    pub path: String,
    /// What is wrong, in words.
    pub message: String,
    /// The JSON Schema keyword the value breaks, as the validator names it: `required`,
    /// `type`, `minimum`, `additionalProperties`, `pattern`, ... A check outside the schema
    /// names its own: `decode` when the validated arguments do not decode into the tool's
    /// parameters, `format` for a tool's own check of a string's syntax.
    pub keyword: String,
    /// The property the keyword names, when it is not the value at `path` itself: the missing
    /// one of `required` (`path` is its object), the unexpected one of `additionalProperties`
    /// or `unevaluatedProperties` (`path` ends with it, as the value to remove). `None`
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
}

impl Violation {
    /// A violation of `keyword` at `path` (a JSON pointer), naming no property.
    pub fn new(
        path: impl Into<String>,
        keyword: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
            keyword: keyword.into(),
            property: None,
        }
    }

    /// The property the keyword names (see [`property`](Self::property)).
    #[must_use]
    pub fn with_property(mut self, property: impl Into<String>) -> Self {
        self.property = Some(property.into());
        self
    }
}

/// A destructive call waiting for its caller's yes: what a `confirmation_required` error asks.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Confirmation {
    /// The tool.
    pub tool: String,
    /// The arguments, secrets redacted.
    pub arguments: Value,
    /// The question to put to the user ("Revoke device dev_1?").
    pub question: String,
    /// The tool's dry-run result, for tools that support dry runs.
    pub preview: Option<Value>,
    /// Confirms exactly this call, once, for the same principal: send it back with
    /// [`Caller::confirmation`](crate::Caller::confirmation).
    pub token: String,
    /// How long the token stays valid after it was issued.
    pub expires_in: Duration,
}

/// An error as every caller sees it: a stable `type`, a message, whether retrying can help,
/// the HTTP status it maps to, and optional structured details.
///
/// Tools return it (or any error that converts `Into<ToolError>`) to pick their own type:
///
/// ```
/// use tool_runtime::ToolError;
/// let err = ToolError::new("not_found", "no device dev_42").with_status(404);
/// assert_eq!(err.kind(), "not_found");
/// assert!(!err.is_retryable());
/// ```
#[doc = include_str!("../../docs/errors.md")]
#[derive(Clone, PartialEq)]
pub struct ToolError {
    kind: Cow<'static, str>,
    message: String,
    retryable: bool,
    status: u16,
    // Boxed: keeps `Result<_, ToolError>` small on the hot path.
    details: Option<Box<Value>>,
    /// What a `confirmation_required` error asks; see [`confirmation`](Self::confirmation).
    confirmation: Option<Box<Confirmation>>,
}

impl ToolError {
    /// A tool's own error with the given type; HTTP status 500 and not retryable until set.
    pub fn new(kind: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        let kind = kind.into();
        let status = kind::status(&kind);
        Self {
            retryable: kind::retryable(&kind),
            kind,
            message: message.into(),
            status,
            details: None,
            confirmation: None,
        }
    }

    /// A tool's own failure of the default type `tool_failed`.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(kind::TOOL_FAILED, message)
    }

    /// Arguments that break the schema, listed in `details.violations`.
    ///
    /// The answer stays small whatever was sent: at most 100 are listed (the
    /// number left out is `details.omitted`), and a path, message or property longer than a few
    /// hundred characters keeps only its start and end.
    #[must_use]
    pub fn invalid_arguments(violations: Vec<Violation>) -> Self {
        let total = violations.len();
        Self::invalid_arguments_of(violations, total)
    }

    /// [`invalid_arguments`](Self::invalid_arguments) where `listed` are the first of `total`.
    pub(crate) fn invalid_arguments_of(mut listed: Vec<Violation>, total: usize) -> Self {
        listed.truncate(MAX_VIOLATIONS);
        for v in &mut listed {
            shorten_in_place(&mut v.path);
            shorten_in_place(&mut v.message);
            if let Some(property) = &mut v.property {
                shorten_in_place(property);
            }
        }
        let omitted = total.saturating_sub(listed.len());
        let message = match listed.as_slice() {
            [one] if total == 1 && one.path.is_empty() => {
                format!("invalid arguments: {}", one.message)
            }
            [one] if total == 1 => format!("invalid arguments: {}: {}", one.path, one.message),
            _ if omitted > 0 => format!(
                "invalid arguments: {total} violations; the first {} are listed, and {omitted} more",
                listed.len()
            ),
            _ => format!("invalid arguments: {total} violations"),
        };
        let list = serde_json::to_value(listed).unwrap_or_default();
        let details = if omitted > 0 {
            serde_json::json!({ "violations": list, "omitted": omitted })
        } else {
            serde_json::json!({ "violations": list })
        };
        Self::new(kind::INVALID_ARGUMENTS, message).with_details(details)
    }

    /// An unexpected failure. The message given here is logged, never shown to the caller.
    pub fn internal(logged: impl fmt::Display) -> Self {
        tracing::error!(target: "tool_runtime::call", error = %logged, "internal error");
        Self::new(kind::INTERNAL, "internal error")
    }

    /// Not found (HTTP 404), a common type for tools' own errors.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(kind::NOT_FOUND, message)
    }

    /// Sets the HTTP status this error maps to.
    #[must_use]
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// Sets whether a caller (or a model) should retry the same call.
    #[must_use]
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// Attaches structured details, shown as `error.details`.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// The stable type string, such as `invalid_arguments` or a tool's own `not_found`.
    #[must_use]
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The message shown to the caller.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether retrying the same call can help.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }

    /// The HTTP status this error maps to.
    #[must_use]
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Structured details, if any.
    #[must_use]
    pub fn details(&self) -> Option<&Value> {
        self.details.as_deref()
    }

    /// What a `confirmation_required` error asks: the question, the preview and the token that
    /// confirms exactly this call. `None` for every other error.
    #[must_use]
    pub fn confirmation(&self) -> Option<&Confirmation> {
        self.confirmation.as_deref()
    }

    /// A `confirmation_required` error carrying `confirmation` (also in its details, for
    /// callers that read JSON).
    pub(crate) fn with_confirmation(mut self, confirmation: Confirmation) -> Self {
        self.confirmation = Some(Box::new(confirmation));
        self
    }

    /// The violations of an `invalid_arguments` error; empty for every other type.
    #[must_use]
    pub fn violations(&self) -> Vec<Violation> {
        let Some(list) = self
            .details
            .as_deref()
            .and_then(|d| d.get("violations"))
            .and_then(Value::as_array)
        else {
            return Vec::new();
        };
        list.iter()
            .map(|v| {
                let text = |key: &str| v[key].as_str().unwrap_or_default().to_owned();
                Violation {
                    path: text("path"),
                    message: text("message"),
                    keyword: text("keyword"),
                    property: v["property"].as_str().map(str::to_owned),
                }
            })
            .collect()
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("type", &self.kind)
            .field("message", &self.message)
            .field("retryable", &self.retryable)
            .field("status", &self.status)
            .field("details", &self.details)
            .field("confirmation", &self.confirmation)
            .finish()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ToolError {}

/// `Result<T, String>` from a tool: a `tool_failed` error with this message.
impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self::failed(message)
    }
}

/// `Result<T, &'static str>` from a tool: a `tool_failed` error with this message.
impl From<&'static str> for ToolError {
    fn from(message: &'static str) -> Self {
        Self::failed(message)
    }
}

/// `Result<T, std::io::Error>` from a tool: a missing file is `not_found` (404), a refused
/// permission `forbidden` (403), anything else `tool_failed`; the message is the error's own.
impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        Self::of_io(e.kind(), e.to_string())
    }
}

/// `Result<T, anyhow::Error>` from a tool (feature `anyhow`): a [`ToolError`] inside is
/// returned as it is; otherwise the message is the error with its context
/// (`"reading config.toml: No such file or directory"`), its kind `tool_failed`, or that of an
/// `std::io::Error` inside (as above).
#[cfg(feature = "anyhow")]
impl From<anyhow::Error> for ToolError {
    fn from(e: anyhow::Error) -> Self {
        match e.downcast::<Self>() {
            Ok(tool_error) => tool_error,
            Err(e) => {
                let message = format!("{e:#}");
                match e.downcast_ref::<std::io::Error>() {
                    Some(io) => Self::of_io(io.kind(), message),
                    None => Self::failed(message),
                }
            }
        }
    }
}

impl ToolError {
    fn of_io(io_kind: std::io::ErrorKind, message: String) -> Self {
        match io_kind {
            std::io::ErrorKind::NotFound => Self::not_found(message),
            std::io::ErrorKind::PermissionDenied => Self::new(kind::FORBIDDEN, message),
            _ => Self::failed(message),
        }
    }
}

impl Serialize for ToolError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", &*self.kind)?;
        map.serialize_entry("message", &self.message)?;
        map.serialize_entry("retryable", &self.retryable)?;
        if let Some(details) = &self.details {
            map.serialize_entry("details", details)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_types_map_to_the_documented_statuses() {
        let table = [
            (kind::INVALID_REQUEST, 400),
            (kind::UNAUTHENTICATED, 401),
            (kind::FORBIDDEN, 403),
            (kind::UNKNOWN_TOOL, 404),
            (kind::CONFIRMATION_REQUIRED, 409),
            (kind::INVALID_ARGUMENTS, 422),
            (kind::RATE_LIMITED, 429),
            (kind::INTERNAL, 500),
            (kind::UNAVAILABLE, 503),
            (kind::TIMEOUT, 504),
            (kind::TOOL_FAILED, 500),
            (kind::DRY_RUN_UNSUPPORTED, 400),
            (kind::NOT_FOUND, 404),
            (kind::METHOD_NOT_ALLOWED, 405),
            (kind::REQUEST_TIMEOUT, 408),
            (kind::CONFIRMATION_DECLINED, 409),
            (kind::PAYLOAD_TOO_LARGE, 413),
            (kind::UNSUPPORTED_MEDIA_TYPE, 415),
            (kind::BUDGET_EXHAUSTED, 429),
            (kind::CANCELLED, 499),
            ("card_declined", 500),
        ];
        for (kind, status) in table {
            assert_eq!(ToolError::new(kind, "x").status(), status, "{kind}");
        }
    }

    #[test]
    fn violations_round_trip_through_details() {
        let v = vec![
            Violation::new("/a", "minimum", "must be >= 1"),
            Violation::new("", "required", "\"b\" is a required property").with_property("b"),
        ];
        let err = ToolError::invalid_arguments(v.clone());
        assert_eq!(err.violations(), v);
        // `property` is left out where there is none; `keyword` is always there.
        assert_eq!(
            err.details().unwrap()["violations"],
            serde_json::json!([
                {"path": "/a", "message": "must be >= 1", "keyword": "minimum"},
                {"path": "", "message": "\"b\" is a required property", "keyword": "required",
                 "property": "b"}
            ])
        );
        let err = ToolError::invalid_arguments(v[..1].to_vec());
        assert!(err.is_retryable());
        assert_eq!(err.message(), "invalid arguments: /a: must be >= 1");
    }

    #[test]
    fn an_answer_lists_at_most_a_hundred_violations_each_short() {
        let many: Vec<Violation> = (0..250)
            .map(|i| {
                Violation::new(
                    format!("/{}", "p".repeat(10_000)),
                    "type",
                    format!("é{} is wrong {i}", "x".repeat(100_000)),
                )
            })
            .collect();
        let err = ToolError::invalid_arguments(many);
        assert_eq!(err.violations().len(), MAX_VIOLATIONS);
        assert_eq!(err.details().unwrap()["omitted"], 150);
        assert_eq!(
            err.message(),
            "invalid arguments: 250 violations; the first 100 are listed, and 150 more"
        );
        let first = &err.violations()[0];
        assert!(first.message.len() < 400, "{}", first.message);
        assert!(first.message.starts_with("éxxx"));
        assert!(first.message.ends_with("x is wrong 0"));
        assert!(first.path.len() < 400);
        assert!(serde_json::to_string(&err).unwrap().len() < 100 * 800);
        // An unknown property's name is kept short like its path.
        let long = "q".repeat(10_000);
        let err = ToolError::invalid_arguments(vec![
            Violation::new(format!("/{long}"), "additionalProperties", "unknown field")
                .with_property(long),
        ]);
        assert!(err.violations()[0].property.as_ref().unwrap().len() < 400);
    }
}
