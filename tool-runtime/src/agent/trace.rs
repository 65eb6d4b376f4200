//! A run's span, `invoke_agent {name}` in the GenAI conventions, and the model's id of each tool
//! call handed to the call's span (`execute_tool {name}`, made by the pipeline).

use tracing::field::Empty;

use super::client;
use super::transcript::ToolCall;
use super::{Run, RunError, RunOutput};
use crate::Caller;

/// The span of a run: the agent's name, the provider and model of its first tier, the
/// conversation (a [`RunContext`](super::RunContext)'s chat) and the caller's request id.
pub(super) fn run_span(run: &Run) -> tracing::Span {
    let inner = &run.agent.inner;
    let tiers = &inner.tiers;
    let model = run
        .tier
        .as_deref()
        .and_then(|tier| tiers.get(tier))
        .or_else(|| tiers.get(tiers.default_name()))
        .expect("the default tier exists");
    let span = tracing::info_span!(
        target: "tool_runtime::agent",
        "invoke_agent",
        otel.name = Empty,
        otel.kind = "internal",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.provider.name = model.api.provider_name(),
        gen_ai.request.model = model.name.as_str(),
        gen_ai.agent.name = inner.name.as_deref(),
        gen_ai.conversation.id = run.conversation.as_deref(),
        request_id = run.caller.given_request_id(),
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
    );
    if !span.is_disabled() {
        span.record(
            "otel.name",
            match &inner.name {
                Some(name) => format!("invoke_agent {name}"),
                None => "invoke_agent".to_owned(),
            },
        );
    }
    span
}

/// The run's token totals on its span and, for a run that ended without an answer, why.
pub(super) fn run_ended(span: &tracing::Span, result: &Result<RunOutput, RunError>) {
    if span.is_disabled() {
        return;
    }
    let usage = match result {
        Ok(output) => output.transcript.usage,
        Err(e) => e.transcript.usage,
    };
    span.record(
        "gen_ai.usage.input_tokens",
        client::count(usage.input_tokens),
    );
    span.record(
        "gen_ai.usage.output_tokens",
        client::count(usage.output_tokens),
    );
    #[cfg(feature = "otel")]
    if let Err(e) = result {
        crate::otel::spans::failed(span, e.kind.name());
    }
}

/// `caller` with the id the model gave `call`, which the call's span (`execute_tool {name}`)
/// records as `gen_ai.tool.call.id` (with telemetry only).
#[cfg_attr(not(feature = "otel"), allow(unused_variables))]
pub(super) fn with_call_id(caller: Caller, call: &ToolCall) -> Caller {
    #[cfg(feature = "otel")]
    if crate::otel::installed().is_some() {
        return caller.extension(crate::otel::spans::ToolCallId(call.id.clone()));
    }
    caller
}
