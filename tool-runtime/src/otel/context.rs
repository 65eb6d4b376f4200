//! W3C trace context in and out: from and into HTTP headers and the `_meta` of MCP messages
//! (`traceparent`, `tracestate` and `baggage` as flat keys, as the MCP conventions say).

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

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The context a request's headers carry (an empty one without a valid `traceparent`).
pub(crate) fn from_headers(headers: &http::HeaderMap) -> opentelemetry::Context {
    TraceContextPropagator::new().extract(&opentelemetry_http::HeaderExtractor(headers))
}

/// `traceparent` (and `tracestate`) of `span` into `headers`, when the span is recorded.
pub(crate) fn into_headers(span: &tracing::Span, headers: &mut http::HeaderMap) {
    if super::installed().is_some() {
        TraceContextPropagator::new().inject_context(
            &span.context(),
            &mut opentelemetry_http::HeaderInjector(headers),
        );
    }
}

/// The context of an MCP message's `_meta`.
pub(crate) fn from_meta(meta: &Map<String, Value>) -> opentelemetry::Context {
    TraceContextPropagator::new().extract(&MetaCarrier(meta))
}

/// `traceparent` (and `tracestate`) of `span` into an MCP message's `_meta`.
pub(crate) fn into_meta(span: &tracing::Span, meta: &mut Map<String, Value>) {
    if super::installed().is_some() {
        TraceContextPropagator::new().inject_context(&span.context(), &mut MetaInjector(meta));
    }
}

/// Makes `cx` the parent of `span` (not yet entered) when it holds a remote span context.
/// Returns whether it did.
pub(crate) fn adopt(span: &tracing::Span, cx: opentelemetry::Context) -> bool {
    cx.span().span_context().is_valid() && span.set_parent(cx).is_ok()
}

/// The trace id of `span`, 32 lower-case hex digits, when telemetry is installed and the span is
/// recorded.
pub(crate) fn trace_id(span: &tracing::Span) -> Option<String> {
    super::installed()?;
    let cx = span.context();
    let span_context = cx.span().span_context().clone();
    span_context
        .is_valid()
        .then(|| span_context.trace_id().to_string())
}

struct MetaCarrier<'a>(&'a Map<String, Value>);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

struct MetaInjector<'a>(&'a mut Map<String, Value>);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}
