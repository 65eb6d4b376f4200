//! [`ErrorKind`]: the type of an error, and the one table of what each front end answers for it.

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;

/// The stable type of an error (`error.type` on the wire): one of the runtime's own, each an
/// associated constant, or an application's own (`"code_expired"`, `"card_declined"`, ...),
/// made from a string.
///
/// One table gives, for every type the runtime produces, the HTTP status, whether retrying can
/// help, the JSON-RPC error code on MCP (where the type is a protocol error rather than a tool
/// result with `isError: true`) and the CLI's exit code. An application's own type maps to 500,
/// not retryable, a tool result on MCP, exit code 1, until the error says otherwise
/// ([`ToolError::with_status`](super::ToolError::with_status),
/// [`ToolError::with_retryable`](super::ToolError::with_retryable)).
///
/// | type | HTTP | retryable | JSON-RPC | CLI exit |
/// | --- | --- | --- | --- | --- |
/// | [`INVALID_REQUEST`](Self::INVALID_REQUEST) | 400 | no | | 2 |
/// | [`DRY_RUN_UNSUPPORTED`](Self::DRY_RUN_UNSUPPORTED) | 400 | no | | 1 |
/// | [`UNAUTHENTICATED`](Self::UNAUTHENTICATED) | 401 | no | | 3 |
/// | [`FORBIDDEN`](Self::FORBIDDEN) | 403 | no | | 3 |
/// | [`INSUFFICIENT_SCOPE`](Self::INSUFFICIENT_SCOPE) | 403 | no | | 3 |
/// | [`UNKNOWN_TOOL`](Self::UNKNOWN_TOOL) | 404 | no | -32602 | 2 |
/// | [`NOT_FOUND`](Self::NOT_FOUND) | 404 | no | | 1 |
/// | [`METHOD_NOT_ALLOWED`](Self::METHOD_NOT_ALLOWED) | 405 | no | | 1 |
/// | [`REQUEST_TIMEOUT`](Self::REQUEST_TIMEOUT) | 408 | yes | | 1 |
/// | [`CONFIRMATION_REQUIRED`](Self::CONFIRMATION_REQUIRED) | 409 | no | | 3 |
/// | [`CONFIRMATION_DECLINED`](Self::CONFIRMATION_DECLINED) | 409 | no | | 3 |
/// | [`INPUT_REQUIRED`](Self::INPUT_REQUIRED) | 409 | no | | 3 |
/// | [`PAYLOAD_TOO_LARGE`](Self::PAYLOAD_TOO_LARGE) | 413 | no | | 1 |
/// | [`UNSUPPORTED_MEDIA_TYPE`](Self::UNSUPPORTED_MEDIA_TYPE) | 415 | no | | 1 |
/// | [`INVALID_ARGUMENTS`](Self::INVALID_ARGUMENTS) | 422 | yes | | 2 |
/// | [`RATE_LIMITED`](Self::RATE_LIMITED) | 429 | yes | | 1 |
/// | [`BUDGET_EXHAUSTED`](Self::BUDGET_EXHAUSTED) | 429 | no | | 1 |
/// | [`CANCELLED`](Self::CANCELLED) | 499 | no | | 1 |
/// | [`INTERNAL`](Self::INTERNAL) | 500 | no | | 1 |
/// | [`TOOL_FAILED`](Self::TOOL_FAILED) | 500 | no | | 1 |
/// | [`OUTPUT_TOO_LARGE`](Self::OUTPUT_TOO_LARGE) | 500 | no | | 1 |
/// | [`UNSUPPORTED`](Self::UNSUPPORTED) | 501 | no | | 1 |
/// | [`UNAVAILABLE`](Self::UNAVAILABLE) | 503 | yes | | 1 |
/// | [`TIMEOUT`](Self::TIMEOUT) | 504 | yes | | 1 |
///
/// ```
/// use tool_runtime::{ErrorKind, ToolError};
/// assert_eq!(ErrorKind::RATE_LIMITED.status(), 429);
/// assert!(ErrorKind::RATE_LIMITED.is_retryable());
/// assert_eq!(ErrorKind::UNKNOWN_TOOL.jsonrpc_code(), Some(-32602));
/// let mine = ToolError::new("card_declined", "the card was declined");
/// assert_eq!(mine.kind(), "card_declined");
/// assert_eq!(mine.kind().exit_code(), 1);
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorKind(Cow<'static, str>);

/// What a front end answers for one error type: a row of [`ErrorKind`]'s table.
struct Row {
    name: &'static str,
    status: u16,
    retryable: bool,
    jsonrpc: Option<i32>,
    exit: u8,
}

const fn row(name: &'static str, status: u16, retryable: bool, exit: u8) -> Row {
    Row {
        name,
        status,
        retryable,
        jsonrpc: None,
        exit,
    }
}

/// The table of the runtime's own types; see [`ErrorKind`].
static TABLE: [Row; 25] = [
    row("invalid_request", 400, false, 2),
    row("dry_run_unsupported", 400, false, 1),
    row("unauthenticated", 401, false, 3),
    row("forbidden", 403, false, 3),
    row("insufficient_scope", 403, false, 3),
    Row {
        jsonrpc: Some(-32042),
        ..row("authorization_required", 403, false, 3)
    },
    Row {
        jsonrpc: Some(-32602),
        ..row("unknown_tool", 404, false, 2)
    },
    row("not_found", 404, false, 1),
    row("method_not_allowed", 405, false, 1),
    row("request_timeout", 408, true, 1),
    row("confirmation_required", 409, false, 3),
    row("confirmation_declined", 409, false, 3),
    row("input_required", 409, false, 3),
    row("payload_too_large", 413, false, 1),
    row("unsupported_media_type", 415, false, 1),
    row("invalid_arguments", 422, true, 2),
    row("rate_limited", 429, true, 1),
    row("budget_exhausted", 429, false, 1),
    row("cancelled", 499, false, 1),
    row("internal", 500, false, 1),
    row("tool_failed", 500, false, 1),
    row("output_too_large", 500, false, 1),
    row("unsupported", 501, false, 1),
    row("unavailable", 503, true, 1),
    row("timeout", 504, true, 1),
];

/// An application's own type: 500, not retryable, a tool result on MCP, exit code 1.
static APPLICATION: Row = row("", 500, false, 1);

impl ErrorKind {
    /// The request is not JSON, or not of the request's shape.
    pub const INVALID_REQUEST: Self = Self::from_static("invalid_request");
    /// A dry run of a tool that does not support dry runs.
    pub const DRY_RUN_UNSUPPORTED: Self = Self::from_static("dry_run_unsupported");
    /// Credentials are missing or wrong where they are required.
    pub const UNAUTHENTICATED: Self = Self::from_static("unauthenticated");
    /// Policy or a guard refused the call.
    pub const FORBIDDEN: Self = Self::from_static("forbidden");
    /// The caller's token lacks OAuth scopes the item needs; the error's `details` has
    /// `scopes`, every scope the call needs. Over HTTP (and `/mcp`) the 403 carries the
    /// challenge a client steps up on: `WWW-Authenticate: Bearer error="insufficient_scope",
    /// scope="..."`.
    pub const INSUFFICIENT_SCOPE: Self = Self::from_static("insufficient_scope");
    /// The call needs the caller's account at another service, which they have not connected:
    /// the error's `details` has `url`, the page where they connect it, and `elicitation_id`.
    /// On MCP it is the error `-32042` with that URL as a URL elicitation (to a client that
    /// declared URL elicitation; to any other, a tool error whose text has the URL).
    pub const AUTHORIZATION_REQUIRED: Self = Self::from_static("authorization_required");
    /// No tool by that name among those the caller may see (a tool hidden from the caller
    /// answers so too); [`ToolError::suggestions`](super::ToolError::suggestions) lists the
    /// nearest names.
    pub const UNKNOWN_TOOL: Self = Self::from_static("unknown_tool");
    /// Something a tool looked for does not exist; over HTTP, also a route that does not.
    pub const NOT_FOUND: Self = Self::from_static("not_found");
    /// An HTTP route called with a method it does not take.
    pub const METHOD_NOT_ALLOWED: Self = Self::from_static("method_not_allowed");
    /// The request's body did not arrive in time.
    pub const REQUEST_TIMEOUT: Self = Self::from_static("request_timeout");
    /// A destructive call came without confirmation; the error carries a
    /// [`Confirmation`](crate::tool::Confirmation).
    pub const CONFIRMATION_REQUIRED: Self = Self::from_static("confirmation_required");
    /// The user was asked to confirm a destructive call and said no; it did not run.
    pub const CONFIRMATION_DECLINED: Self = Self::from_static("confirmation_declined");
    /// The call asked its caller for input that comes with the call made again (MCP's
    /// input-required result, protocol 2026-07-28): the round ends here, and the tool runs
    /// again from the top with the answers. A tool sees it from
    /// [`CallContext::elicit`](crate::CallContext::elicit) and its kin and passes it on with
    /// `?`; the client never sees it as an error.
    pub const INPUT_REQUIRED: Self = Self::from_static("input_required");
    /// The request's body is larger than the limit.
    pub const PAYLOAD_TOO_LARGE: Self = Self::from_static("payload_too_large");
    /// The request's body is not sent as JSON.
    pub const UNSUPPORTED_MEDIA_TYPE: Self = Self::from_static("unsupported_media_type");
    /// The arguments break the input schema;
    /// [`ToolError::violations`](super::ToolError::violations) lists how.
    pub const INVALID_ARGUMENTS: Self = Self::from_static("invalid_arguments");
    /// Over a rate limit; [`ToolError::retry_after`](super::ToolError::retry_after) says when
    /// to try again.
    pub const RATE_LIMITED: Self = Self::from_static("rate_limited");
    /// An agent run's budget (tool calls, turns, tokens) is used up; the call was not run.
    pub const BUDGET_EXHAUSTED: Self = Self::from_static("budget_exhausted");
    /// The caller cancelled the call (HTTP 499, nginx's "client closed request").
    pub const CANCELLED: Self = Self::from_static("cancelled");
    /// The tool panicked or failed unexpectedly.
    pub const INTERNAL: Self = Self::from_static("internal");
    /// The default type of a tool's own error.
    pub const TOOL_FAILED: Self = Self::from_static("tool_failed");
    /// The result is over the tool's output cap and cannot be cut.
    pub const OUTPUT_TOO_LARGE: Self = Self::from_static("output_too_large");
    /// The tool asked its caller for something the caller does not offer (sampling or
    /// elicitation through a front end or client without them).
    pub const UNSUPPORTED: Self = Self::from_static("unsupported");
    /// Not ready, or over capacity.
    pub const UNAVAILABLE: Self = Self::from_static("unavailable");
    /// The tool ran past its time limit and was cancelled.
    pub const TIMEOUT: Self = Self::from_static("timeout");

    /// A type named by a string known at compile time, usable in a `const`.
    #[must_use]
    pub const fn from_static(name: &'static str) -> Self {
        Self(Cow::Borrowed(name))
    }

    /// The type as it is written on the wire.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn row(&self) -> &'static Row {
        TABLE
            .iter()
            .find(|row| row.name == self.as_str())
            .unwrap_or(&APPLICATION)
    }

    /// The HTTP status of this type: the table's, 500 for an application's own type.
    #[must_use]
    pub fn status(&self) -> u16 {
        self.row().status
    }

    /// Whether retrying the same call can help, by type: a model that sent bad arguments can
    /// fix them; limits, time-outs and late bodies pass.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        self.row().retryable
    }

    /// The JSON-RPC error code this type is answered with on MCP, where it is a protocol error:
    /// `-32602` (invalid params) for [`UNKNOWN_TOOL`](Self::UNKNOWN_TOOL), as the specification
    /// prescribes, and `-32042` for
    /// [`AUTHORIZATION_REQUIRED`](Self::AUTHORIZATION_REQUIRED) to a 2025-11-25 client that
    /// opens URLs; `None` for every other type, which is a tool result with `isError: true`.
    #[must_use]
    pub fn jsonrpc_code(&self) -> Option<i32> {
        self.row().jsonrpc
    }

    /// The exit code of a CLI call that ends with this type: 2 for a call that was wrong
    /// (arguments, request, tool name), 3 for one that was refused (authentication, policy,
    /// confirmation), 1 for every other failure.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        self.row().exit
    }
}

impl From<&'static str> for ErrorKind {
    fn from(name: &'static str) -> Self {
        Self::from_static(name)
    }
}

impl From<String> for ErrorKind {
    fn from(name: String) -> Self {
        Self(Cow::Owned(name))
    }
}

impl From<Cow<'static, str>> for ErrorKind {
    fn from(name: Cow<'static, str>) -> Self {
        Self(name)
    }
}

impl AsRef<str> for ErrorKind {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for ErrorKind {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<ErrorKind> for &ErrorKind {
    fn eq(&self, other: &ErrorKind) -> bool {
        *self == other
    }
}

impl PartialEq<ErrorKind> for str {
    fn eq(&self, other: &ErrorKind) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<ErrorKind> for &str {
    fn eq(&self, other: &ErrorKind) -> bool {
        *self == other.as_str()
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}
