//! What the spans of this crate carry for OpenTelemetry beyond their `tracing` fields: their
//! names in the conventions, their attributes, their outcome. Each does nothing unless
//! telemetry is installed, so the log lines of a build without it stay as they are.

// Reason: each front end uses some of these; a build with fewer front ends leaves the others unused.
#![cfg_attr(
    not(all(
        feature = "http",
        feature = "mcp-client",
        feature = "agent",
        feature = "cli"
    )),
    allow(dead_code)
)]

use opentelemetry::trace::Status;
use serde_json::Value;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::{installed, names};

/// The id a model gave a tool call, left in the call's extensions by the agent for its span
/// (`gen_ai.tool.call.id`).
pub(crate) struct ToolCallId(pub(crate) String);

/// The pipeline's `tool.call` span, with telemetry installed: the same fields, and those of
/// the GenAI conventions' `execute_tool {name}` (with `gen_ai.tool.call.id` when a model asked
/// for the call, [`ToolCallId`]). All given as the span is made: one visit of its fields. A
/// call that finds no tool of that name the caller may see is [`renamed`] `execute_tool`.
pub(crate) fn tool_call(
    tool: &str,
    source: &str,
    request_id: &str,
    call_id: Option<&ToolCallId>,
) -> tracing::Span {
    let span = tracing::info_span!(
        target: "tool_runtime::call",
        "tool.call",
        tool,
        source,
        request_id,
        otel.name = %format_args!("execute_tool {tool}"),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.id = tracing::field::Empty,
    );
    if let Some(id) = call_id {
        span.record("gen_ai.tool.call.id", id.0.as_str());
    }
    span
}

/// How a call ended, on its span: `error.type` and an error status for an error (its message
/// only when content is captured: it may quote the arguments), and with capture on, the
/// arguments (already redacted) and the result.
pub(crate) fn call_ended(
    span: &tracing::Span,
    error: Option<(&str, &str)>,
    arguments: Option<&Value>,
    result: Option<&Value>,
) {
    let Some(telemetry) = installed() else { return };
    if span.is_disabled() {
        return;
    }
    let capture = telemetry.capture_content();
    if let Some((kind, message)) = error {
        span.set_attribute(names::ERROR_TYPE, kind.to_owned());
        span.set_status(Status::error(if capture {
            message.to_owned()
        } else {
            kind.to_owned()
        }));
    }
    if capture {
        if let Some(arguments) = arguments {
            span.set_attribute("gen_ai.tool.call.arguments", arguments.to_string());
        }
        if let Some(result) = result {
            span.set_attribute("gen_ai.tool.call.result", result.to_string());
        }
    }
}

/// Renames `span` when telemetry is installed: its `otel.name` is read only until the span
/// starts (when first entered), this is for a name decided later.
pub(crate) fn renamed(span: &tracing::Span, name: impl Into<std::borrow::Cow<'static, str>>) {
    use opentelemetry::trace::TraceContextExt as _;
    if installed().is_some() && !span.is_disabled() {
        span.context().span().update_name(name);
    }
}

/// Sets an attribute on `span` when telemetry is installed.
pub(crate) fn attribute(
    span: &tracing::Span,
    key: &'static str,
    value: impl Into<opentelemetry::Value>,
) {
    if installed().is_some() && !span.is_disabled() {
        span.set_attribute(key, value);
    }
}

/// Marks `span` failed with `error_type` (its status description too).
pub(crate) fn failed(span: &tracing::Span, error_type: &str) {
    if installed().is_some() && !span.is_disabled() {
        span.set_attribute(names::ERROR_TYPE, error_type.to_owned());
        span.set_status(Status::error(error_type.to_owned()));
    }
}

/// A stage of the current call passed (`validated`, `admitted`, `tool returned`, ...): an event
/// on its span, whose time tells how long the stage before it took.
pub(crate) fn stage(name: &'static str) {
    if installed().is_some() {
        let span = tracing::Span::current();
        if !span.is_disabled() {
            span.add_event(name, Vec::new());
        }
    }
}
