//! The instruments: what is measured, in the names and units the docs list, and the Prometheus
//! text of all of them (`GET /metrics`).
//!
//! No attribute holds a principal, an argument or a result: tool names, outcome kinds, sources,
//! methods, routes, status codes, providers and models only.

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

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};

use super::names;

/// Every instrument this crate records.
#[derive(Debug)]
pub(super) struct Instruments {
    calls: Counter<u64>,
    call_duration: Histogram<f64>,
    http_duration: Histogram<f64>,
    mcp_server_duration: Histogram<f64>,
    mcp_client_duration: Histogram<f64>,
    mcp_sessions: UpDownCounter<i64>,
    token_usage: Histogram<u64>,
    gen_ai_duration: Histogram<f64>,
    pub(super) exported: Counter<u64>,
}

impl Instruments {
    pub(super) fn new(meter: &Meter) -> Self {
        let seconds = |name: &'static str, description: &'static str, buckets: &[f64]| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(buckets.to_vec())
                .build()
        };
        Self {
            calls: meter
                .u64_counter(names::CALLS)
                .with_unit("{call}")
                .with_description("Calls through the pipeline, by tool, outcome and source")
                .build(),
            call_duration: seconds(
                names::CALL_DURATION,
                "How long calls took, from admission to envelope",
                &names::DURATION_BUCKETS,
            ),
            http_duration: seconds(
                names::HTTP_SERVER_DURATION,
                "Duration of HTTP server requests",
                &names::HTTP_BUCKETS,
            ),
            mcp_server_duration: seconds(
                names::MCP_SERVER_DURATION,
                "Duration of MCP requests served",
                &names::DURATION_BUCKETS,
            ),
            mcp_client_duration: seconds(
                names::MCP_CLIENT_DURATION,
                "Duration of MCP requests to mounted servers",
                &names::DURATION_BUCKETS,
            ),
            mcp_sessions: meter
                .i64_up_down_counter(names::MCP_SESSIONS)
                .with_unit("{session}")
                .with_description("MCP sessions open on this process")
                .build(),
            token_usage: meter
                .u64_histogram(names::GEN_AI_TOKEN_USAGE)
                .with_unit("{token}")
                .with_description("Tokens a model request used, by type")
                .with_boundaries(names::TOKEN_BUCKETS.to_vec())
                .build(),
            gen_ai_duration: seconds(
                names::GEN_AI_DURATION,
                "Duration of model requests",
                &names::GEN_AI_DURATION_BUCKETS,
            ),
            exported: meter
                .u64_counter(names::EXPORTED)
                .with_unit("{span}")
                .with_description(
                    "Spans handed to the OTLP exporter; with error.type, dropped because the \
                     export failed",
                )
                .build(),
        }
    }
}

fn instruments() -> Option<&'static Instruments> {
    super::installed().map(|t| &t.instruments)
}

/// A call ended: `outcome` is `ok` or the error kind (`rate_limited`, `confirmation_required`,
/// `invalid_arguments`, ...).
pub(crate) fn call(tool: &str, outcome: &str, source: &str, elapsed: Duration) {
    if let Some(i) = instruments() {
        let attributes = [
            KeyValue::new(names::GEN_AI_TOOL_NAME, tool.to_owned()),
            KeyValue::new("outcome", outcome.to_owned()),
            KeyValue::new("source", source.to_owned()),
        ];
        i.calls.add(1, &attributes);
        i.call_duration.record(elapsed.as_secs_f64(), &attributes);
    }
}

/// An HTTP request was answered: `method` is one the conventions know, or `_OTHER`; `route`
/// the route it matched.
pub(crate) fn http_request(
    method: &'static str,
    route: Option<&str>,
    status: u16,
    elapsed: Duration,
) {
    if let Some(i) = instruments() {
        let mut attributes = vec![
            KeyValue::new("http.request.method", method),
            KeyValue::new("http.response.status_code", i64::from(status)),
        ];
        if let Some(route) = route {
            attributes.push(KeyValue::new("http.route", route.to_owned()));
        }
        if status >= 500 {
            attributes.push(KeyValue::new(names::ERROR_TYPE, status.to_string()));
        }
        i.http_duration.record(elapsed.as_secs_f64(), &attributes);
    }
}

/// What an MCP operation was, for its duration.
#[derive(Debug, Default)]
pub(crate) struct McpOperation<'a> {
    pub(crate) method: &'a str,
    pub(crate) tool: Option<&'a str>,
    pub(crate) error: Option<&'a str>,
    pub(crate) protocol: Option<&'a str>,
}

impl McpOperation<'_> {
    fn attributes(&self) -> Vec<KeyValue> {
        let mut attributes = vec![KeyValue::new("mcp.method.name", self.method.to_owned())];
        if let Some(tool) = self.tool {
            attributes.push(KeyValue::new(names::GEN_AI_TOOL_NAME, tool.to_owned()));
            attributes.push(KeyValue::new(names::GEN_AI_OPERATION, "execute_tool"));
        }
        if let Some(error) = self.error {
            attributes.push(KeyValue::new(names::ERROR_TYPE, error.to_owned()));
        }
        if let Some(protocol) = self.protocol {
            attributes.push(KeyValue::new("mcp.protocol.version", protocol.to_owned()));
        }
        attributes
    }
}

/// An MCP request this process served ended.
pub(crate) fn mcp_served(operation: &McpOperation<'_>, elapsed: Duration) {
    if let Some(i) = instruments() {
        i.mcp_server_duration
            .record(elapsed.as_secs_f64(), &operation.attributes());
    }
}

/// An MCP request to a mounted server ended.
pub(crate) fn mcp_sent(operation: &McpOperation<'_>, elapsed: Duration) {
    if let Some(i) = instruments() {
        i.mcp_client_duration
            .record(elapsed.as_secs_f64(), &operation.attributes());
    }
}

/// An MCP session opened (`1`) or closed (`-1`) on this process.
pub(crate) fn mcp_sessions(delta: i64) {
    if let Some(i) = instruments() {
        i.mcp_sessions.add(delta, &[]);
    }
}

/// What a model request was, for its duration and token usage.
#[derive(Debug)]
pub(crate) struct ModelRequest<'a> {
    pub(crate) provider: &'a str,
    pub(crate) model: &'a str,
    pub(crate) error: Option<&'a str>,
    pub(crate) input_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
}

/// A model request ended.
pub(crate) fn model_request(request: &ModelRequest<'_>, elapsed: Duration) {
    let Some(i) = instruments() else { return };
    let mut attributes = vec![
        KeyValue::new(names::GEN_AI_OPERATION, "chat"),
        KeyValue::new("gen_ai.provider.name", request.provider.to_owned()),
        KeyValue::new("gen_ai.request.model", request.model.to_owned()),
    ];
    for (kind, tokens) in [
        ("input", request.input_tokens),
        ("output", request.output_tokens),
    ] {
        if let Some(tokens) = tokens {
            let mut typed = attributes.clone();
            typed.push(KeyValue::new("gen_ai.token.type", kind));
            i.token_usage.record(tokens, &typed);
        }
    }
    if let Some(error) = request.error {
        attributes.push(KeyValue::new(names::ERROR_TYPE, error.to_owned()));
    }
    i.gen_ai_duration.record(elapsed.as_secs_f64(), &attributes);
}
