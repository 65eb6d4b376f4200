//! The typed error every outcome that is not a success is carried in.
//!
//! One type for every front end: the CLI, HTTP and MCP adapters render a [`ToolError`] but never
//! invent their own. Its type is an [`ErrorKind`], whose table gives each front end's answer.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod kind;

pub use kind::ErrorKind;

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
/// use tool_runtime::tool::Violation;
/// use tool_runtime::ToolError;
/// let missing = Violation::new("", "required", "\"name\" is a required property")
///     .with_property("name");
/// let err = ToolError::invalid_arguments(vec![missing]);
/// let v = &err.violations()[0];
/// assert_eq!((v.keyword.as_str(), v.property.as_deref()), ("required", Some("name")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    #[serde(default)]
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

    /// The JSON pointer of what to fix: [`path`](Self::path), or for a missing property
    /// (`required`), the pointer that property would have.
    #[must_use]
    pub fn pointer(&self) -> Cow<'_, str> {
        match &self.property {
            Some(name) if self.keyword == "required" => {
                Cow::Owned(format!("{}/{}", self.path, escape_pointer(name)))
            }
            _ => Cow::Borrowed(&self.path),
        }
    }
}

/// `name` as one token of a JSON pointer (RFC 6901): `~` and `/` escaped.
pub(crate) fn escape_pointer(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
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

/// An error as every caller sees it: a stable type ([`ErrorKind`]), a message, whether
/// retrying can help, the HTTP status it maps to, and structured details.
///
/// Tools return it (or any error that converts `Into<ToolError>`) to pick their own type:
///
/// ```
/// use tool_runtime::ToolError;
/// let err = ToolError::new("not_found", "no device dev_42").with_status(404);
/// assert_eq!(err.kind(), "not_found");
/// assert!(!err.is_retryable());
/// ```
///
/// What the runtime itself attaches is typed ([`violations`](Self::violations),
/// [`suggestions`](Self::suggestions), [`retry_after`](Self::retry_after),
/// [`hint`](Self::hint), [`confirmation`](Self::confirmation)); on the wire each is a key of
/// `error.details`, beside the keys of [`with_details`](Self::with_details).
#[doc = include_str!("../../../docs/errors.md")]
#[derive(Clone, PartialEq)]
pub struct ToolError {
    kind: ErrorKind,
    message: String,
    retryable: bool,
    status: u16,
    // Boxed: keeps `Result<_, ToolError>` small on the hot path.
    details: Option<Box<Details>>,
}

/// An error's structured details: what the runtime attaches, typed, and the application's own.
#[derive(Clone, PartialEq, Default)]
struct Details {
    /// The violations listed, and how many more there were.
    violations: Vec<Violation>,
    omitted: usize,
    suggestions: Option<Vec<String>>,
    retry_after: Option<Duration>,
    confirmation: Option<Confirmation>,
    hint: Option<String>,
    /// [`ToolError::with_details`]' value; an object's keys are written beside the typed ones.
    own: Option<Value>,
    /// `details` as the wire shows it, made from the fields above whenever one changes.
    wire: Value,
}

impl Details {
    /// The wire form: the typed keys in a fixed order, then the application's own; a value
    /// that is not an object stands alone.
    /// Drops `key` from the application's own details: the runtime has set its own value.
    fn forget_own(&mut self, key: &str) {
        if let Some(Value::Object(own)) = &mut self.own {
            own.remove(key);
        }
    }

    fn render(&mut self) {
        let mut map = Map::new();
        if let Some(c) = &self.confirmation {
            map.insert("tool".into(), c.tool.clone().into());
            map.insert("arguments".into(), c.arguments.clone());
            map.insert("question".into(), c.question.clone().into());
            map.insert("token".into(), c.token.clone().into());
            map.insert("expires_in".into(), c.expires_in.as_secs().into());
            if let Some(preview) = &c.preview {
                map.insert("preview".into(), preview.clone());
            }
        }
        if !self.violations.is_empty() || self.omitted > 0 {
            let list = serde_json::to_value(&self.violations).unwrap_or_default();
            map.insert("violations".into(), list);
            if self.omitted > 0 {
                map.insert("omitted".into(), self.omitted.into());
            }
        }
        if let Some(suggestions) = &self.suggestions {
            map.insert("suggestions".into(), suggestions.clone().into());
        }
        if let Some(after) = self.retry_after {
            map.insert("retry_after".into(), after.as_secs_f64().into());
        }
        if let Some(hint) = &self.hint {
            map.insert("hint".into(), hint.clone().into());
        }
        // The application's own keys as it gave them (those read into the typed fields
        // above included), after the runtime's.
        self.wire = match &self.own {
            Some(Value::Object(own)) => {
                map.retain(|k, _| !own.contains_key(k));
                map.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
                Value::Object(map)
            }
            Some(own) if map.is_empty() => own.clone(),
            _ => Value::Object(map),
        };
    }
}

impl ToolError {
    /// An error of the given type; its HTTP status and whether it is retryable come from
    /// [`ErrorKind`]'s table (500 and not retryable for an application's own type) until set.
    pub fn new(kind: impl Into<ErrorKind>, message: impl Into<String>) -> Self {
        let kind = kind.into();
        Self {
            status: kind.status(),
            retryable: kind.is_retryable(),
            kind,
            message: message.into(),
            details: None,
        }
    }

    /// A tool's own failure of the default type `tool_failed`.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::TOOL_FAILED, message)
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
        Self::new(ErrorKind::INVALID_ARGUMENTS, message).with(|d| {
            d.violations = listed;
            d.omitted = omitted;
        })
    }

    /// An unexpected failure. The message given here is logged, never shown to the caller.
    pub fn internal(logged: impl fmt::Display) -> Self {
        tracing::error!(target: "tool_runtime::call", error = %logged, "internal error");
        Self::new(ErrorKind::INTERNAL, "internal error")
    }

    /// Not found (HTTP 404), a common type for tools' own errors.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NOT_FOUND, message)
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

    /// Attaches structured details of the application's own, shown as `error.details`
    /// exactly as given (an object's keys beside those the runtime attaches). The keys the
    /// runtime types are also read into their accessors, once, where they have the runtime's
    /// shape: `retry_after` (seconds), `hint`, `suggestions`, `violations` (each with a `path`
    /// and a `message`) and `omitted`.
    #[must_use]
    pub fn with_details(self, details: Value) -> Self {
        self.with(|d| {
            if let Value::Object(own) = &details {
                let at = |key: &str| own.get(key);
                if let Some(after) = at("retry_after")
                    .and_then(Value::as_f64)
                    .and_then(|s| Duration::try_from_secs_f64(s).ok())
                {
                    d.retry_after = Some(after);
                }
                if let Some(hint) = at("hint").and_then(Value::as_str) {
                    d.hint = Some(hint.to_owned());
                }
                if let Some(names) = at("suggestions").and_then(|n| Vec::deserialize(n).ok()) {
                    d.suggestions = Some(names);
                }
                if let Some(listed) = at("violations").and_then(|v| Vec::deserialize(v).ok()) {
                    d.violations = listed;
                    d.omitted = at("omitted")
                        .and_then(Value::as_u64)
                        .and_then(|n| usize::try_from(n).ok())
                        .unwrap_or(0);
                }
            }
            d.own = Some(details);
        })
    }

    /// An error read back from its wire form (`type`, `message`, `retryable`, `details`), as a
    /// task keeps it: its status is its type's.
    pub(crate) fn from_wire(wire: &Value) -> Self {
        let text = |key: &str| wire.get(key).and_then(Value::as_str);
        let kind = text("type").unwrap_or("internal").to_owned();
        let mut error = ToolError::new(ErrorKind::from(kind), text("message").unwrap_or_default());
        if let Some(retryable) = wire.get("retryable").and_then(Value::as_bool) {
            error = error.with_retryable(retryable);
        }
        if let Some(details) = wire.get("details") {
            error = error.with_details(details.clone());
        }
        error
    }

    /// When the call may be tried again (`details.retry_after`, in seconds; over HTTP also
    /// the `Retry-After` header of a `rate_limited` answer).
    #[must_use]
    pub fn with_retry_after(self, after: Duration) -> Self {
        self.with(|d| {
            d.retry_after = Some(after);
            d.forget_own("retry_after");
        })
    }

    /// What the caller can do about this error (`details.hint`), such as how to confirm a
    /// call where no one could be asked.
    #[must_use]
    pub fn with_hint(self, hint: impl Into<String>) -> Self {
        self.with(|d| {
            d.hint = Some(hint.into());
            d.forget_own("hint");
        })
    }

    /// Names the caller may have meant (`details.suggestions`), as an `unknown_tool` error
    /// lists them.
    #[must_use]
    pub fn with_suggestions(self, names: Vec<String>) -> Self {
        self.with(|d| {
            d.suggestions = Some(names);
            d.forget_own("suggestions");
        })
    }

    /// A `confirmation_required` error carrying `confirmation` (also in its details, for
    /// callers that read JSON).
    pub(crate) fn with_confirmation(self, confirmation: Confirmation) -> Self {
        self.with(|d| d.confirmation = Some(confirmation))
    }

    /// Changes the details and writes their wire form again.
    fn with(mut self, change: impl FnOnce(&mut Details)) -> Self {
        let details = self.details.get_or_insert_with(Box::default);
        change(details);
        details.render();
        self
    }

    /// The type, such as [`ErrorKind::INVALID_ARGUMENTS`] or a tool's own `not_found`; it
    /// compares equal to its string.
    #[must_use]
    pub fn kind(&self) -> &ErrorKind {
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

    /// Structured details as the wire shows them (`error.details`), if any.
    #[must_use]
    pub fn details(&self) -> Option<&Value> {
        self.details.as_deref().map(|d| &d.wire)
    }

    /// What a `confirmation_required` error asks: the question, the preview and the token that
    /// confirms exactly this call. `None` for every other error.
    #[must_use]
    pub fn confirmation(&self) -> Option<&Confirmation> {
        self.details.as_deref()?.confirmation.as_ref()
    }

    /// The violations listed by an `invalid_arguments` error; empty for every other type.
    #[must_use]
    pub fn violations(&self) -> &[Violation] {
        self.details.as_deref().map_or(&[], |d| &d.violations)
    }

    /// How many violations an `invalid_arguments` error found beyond those it lists.
    #[must_use]
    pub fn violations_omitted(&self) -> usize {
        self.details.as_deref().map_or(0, |d| d.omitted)
    }

    /// The names an `unknown_tool` error suggests (empty when none is near).
    #[must_use]
    pub fn suggestions(&self) -> &[String] {
        self.details
            .as_deref()
            .and_then(|d| d.suggestions.as_deref())
            .unwrap_or_default()
    }

    /// When a `rate_limited` call may be tried again.
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        self.details.as_deref()?.retry_after
    }

    /// What the caller can do about this error, if the runtime knows.
    #[must_use]
    pub fn hint(&self) -> Option<&str> {
        self.details.as_deref()?.hint.as_deref()
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("type", &self.kind)
            .field("message", &self.message)
            .field("retryable", &self.retryable)
            .field("status", &self.status)
            .field("details", &self.details())
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
            std::io::ErrorKind::PermissionDenied => Self::new(ErrorKind::FORBIDDEN, message),
            _ => Self::failed(message),
        }
    }
}

impl Serialize for ToolError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", &self.kind)?;
        map.serialize_entry("message", &self.message)?;
        map.serialize_entry("retryable", &self.retryable)?;
        if let Some(details) = self.details() {
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
            (ErrorKind::INVALID_REQUEST, 400),
            (ErrorKind::UNAUTHENTICATED, 401),
            (ErrorKind::FORBIDDEN, 403),
            (ErrorKind::INSUFFICIENT_SCOPE, 403),
            (ErrorKind::UNKNOWN_TOOL, 404),
            (ErrorKind::CONFIRMATION_REQUIRED, 409),
            (ErrorKind::INVALID_ARGUMENTS, 422),
            (ErrorKind::RATE_LIMITED, 429),
            (ErrorKind::INTERNAL, 500),
            (ErrorKind::UNAVAILABLE, 503),
            (ErrorKind::TIMEOUT, 504),
            (ErrorKind::TOOL_FAILED, 500),
            (ErrorKind::DRY_RUN_UNSUPPORTED, 400),
            (ErrorKind::NOT_FOUND, 404),
            (ErrorKind::METHOD_NOT_ALLOWED, 405),
            (ErrorKind::REQUEST_TIMEOUT, 408),
            (ErrorKind::CONFIRMATION_DECLINED, 409),
            (ErrorKind::INPUT_REQUIRED, 409),
            (ErrorKind::PAYLOAD_TOO_LARGE, 413),
            (ErrorKind::UNSUPPORTED_MEDIA_TYPE, 415),
            (ErrorKind::BUDGET_EXHAUSTED, 429),
            (ErrorKind::CANCELLED, 499),
            (ErrorKind::from("card_declined"), 500),
        ];
        for (kind, status) in table {
            assert_eq!(ToolError::new(kind.clone(), "x").status(), status, "{kind}");
        }
    }

    #[test]
    fn exit_codes_follow_the_documented_table() {
        for (k, code) in [
            ("invalid_arguments", 2),
            ("invalid_request", 2),
            ("unknown_tool", 2),
            ("forbidden", 3),
            ("unauthenticated", 3),
            ("confirmation_required", 3),
            ("confirmation_declined", 3),
            ("internal", 1),
            ("timeout", 1),
            ("not_found", 1),
            ("card_declined", 1),
        ] {
            assert_eq!(ToolError::new(k, "x").kind().exit_code(), code, "{k}");
        }
    }

    #[test]
    fn typed_details_are_written_beside_the_applications_own() {
        let err = ToolError::new(ErrorKind::RATE_LIMITED, "slow down")
            .with_details(serde_json::json!({"bucket": "writes", "retry_after": "ignored"}))
            .with_retry_after(Duration::from_millis(1500))
            .with_hint("wait");
        assert_eq!(err.retry_after(), Some(Duration::from_millis(1500)));
        assert_eq!(err.hint(), Some("wait"));
        assert_eq!(
            serde_json::to_string(err.details().unwrap()).unwrap(),
            r#"{"retry_after":1.5,"hint":"wait","bucket":"writes"}"#
        );
        let unknown = ToolError::new(ErrorKind::UNKNOWN_TOOL, "no tool")
            .with_suggestions(vec!["device_add".into()]);
        assert_eq!(unknown.suggestions(), ["device_add"]);
        assert_eq!(unknown.details().unwrap()["suggestions"][0], "device_add");
        // A tool's own details are shown as given, and read where they have the typed shape.
        let given = serde_json::json!({"retry_after": 7, "hint": 3, "violations": [],
                                       "suggestions": [{"x": 1}]});
        let own = ToolError::new(ErrorKind::RATE_LIMITED, "slow down").with_details(given.clone());
        assert_eq!(own.retry_after(), Some(Duration::from_secs(7)));
        assert_eq!(own.hint(), None);
        assert!(own.suggestions().is_empty());
        assert_eq!(own.details(), Some(&given));
        let listed = serde_json::json!({"violations": [{"path": "/a", "message": "bad",
                                        "expected": "a number"}], "omitted": 3});
        let own = ToolError::new("invalid_arguments", "bad").with_details(listed.clone());
        assert_eq!(own.violations()[0].path, "/a");
        assert_eq!(own.violations_omitted(), 3);
        assert_eq!(own.details(), Some(&listed));
        // What the runtime sets later replaces the tool's own value.
        let hinted = own.with_hint("try again");
        assert_eq!(hinted.details().unwrap()["hint"], "try again");
        let plain = ToolError::new("x", "y").with_details(serde_json::json!([1, 2]));
        assert_eq!(plain.details(), Some(&serde_json::json!([1, 2])));
        assert!(plain.suggestions().is_empty() && plain.violations().is_empty());
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
