//! How every call ends — its envelope made, logged and told to the observers (audit) — and
//! the calls a front end refuses itself, which end the same way without running anything.
//!
//! A front end that decides a call on its own (the agent's budgets and retry cap, arguments
//! that are not JSON) still reports it through [`Pipeline::refuse`], so that every decision
//! about a call leaves one audit record, as a call refused inside the pipeline does.

use std::future::Future;
use std::time::{Duration, Instant};

use serde_json::Value;
use tracing::Instrument;

use crate::catalog::{Catalog, RegisteredTool, ToolRef};
use crate::layers::hooks::CompletedCall;
use crate::tool::context::CallContext;
use crate::tool::envelope::{Envelope, EnvelopeMeta};
use crate::tool::error::ToolError;

use super::{Called, Pipeline, Ran, next_call_id};

/// The `tool.call` span every call, run or refused, is logged under.
/// With telemetry, it is the GenAI conventions' `execute_tool {name}` span (`execute_tool`
/// once the call finds no tool of that name the caller may see: `measure`).
pub(super) fn call_span(name: &str, ctx: &CallContext) -> tracing::Span {
    #[cfg(feature = "otel")]
    if crate::otel::installed().is_some() {
        let call_id = ctx.extension::<crate::otel::spans::ToolCallId>();
        return crate::otel::spans::tool_call(
            name,
            ctx.source().as_str(),
            ctx.request_id(),
            call_id.as_deref(),
        );
    }
    tracing::info_span!(
        target: "tool_runtime::call",
        "tool.call",
        tool = name,
        source = ctx.source().as_str(),
        request_id = ctx.request_id(),
    )
}

impl Pipeline {
    /// Ends the call `name` (of `entry`, when a tool has that name) as `error` without running
    /// anything: the envelope a refusal inside the pipeline would make, and one record of it
    /// for every observer, with a fresh call id and `started: false` (no
    /// [`starting`](crate::layers::hooks::CallObserver::starting) before it).
    ///
    /// `args` are what the observers see, redacted as for any call. Arguments that are not an
    /// object (the raw text of arguments that are not JSON, as a string) cannot be searched
    /// for secrets: for a tool with secret parameters they are recorded as `"[redacted]"`. A
    /// tool hidden from the caller is answered `unknown_tool`, as the pipeline answers it.
    pub(crate) fn refuse<'a>(
        &'a self,
        catalog: &'a Catalog,
        name: &'a str,
        args: Value,
        ctx: CallContext,
        error: ToolError,
    ) -> impl Future<Output = Called> + 'a {
        let span = call_span(name, &ctx);
        async move {
            let started = Instant::now();
            let observed = self.observed();
            let entry = catalog.get(name);
            let observed_args = match (&entry, args) {
                (_, _) if !observed => Value::Null,
                (Some(entry), args) if !args.is_object() && has_secrets(entry) => {
                    Value::String(crate::tool::secret::REDACTED.to_owned())
                }
                (_, args) => args,
            };
            // A tool hidden from the caller is one it was told does not exist, whatever the
            // front end refused the call for.
            let hidden = entry
                .as_ref()
                .and_then(|e| self.admit(e.meta(), &ctx).err());
            let error = match hidden {
                Some(_) => self.unknown_tool(catalog, name, &ctx),
                None => error,
            };
            let call_id = if observed { next_call_id() } else { 0 };
            self.conclude(
                name,
                entry.as_ref(),
                Ran {
                    hidden,
                    ..Ran::refused(error, observed_args)
                },
                &ctx,
                call_id,
                started.elapsed(),
            )
            .await
        }
        .instrument(span)
    }

    /// What a call of `name` that came to `ran` in `duration` answers: its envelope, logged and
    /// told to every observer (with its arguments redacted) before it is returned, and the tool
    /// that answered (not one the caller was told does not exist).
    pub(super) async fn conclude(
        &self,
        name: &str,
        found: Option<&ToolRef<'_>>,
        ran: Ran,
        ctx: &CallContext,
        call_id: u64,
        duration: Duration,
    ) -> Called {
        let tool = found.filter(|_| ran.hidden.is_none()).map(ToolRef::shared);
        let entry = found.map(|t| &**t);
        let envelope = Envelope {
            tool: name.to_owned(),
            outcome: ran.outcome,
            meta: EnvelopeMeta {
                request_id: ctx.request_id().to_owned(),
                // Microsecond resolution: finer digits are noise.
                duration_ms: Some((duration.as_secs_f64() * 1_000_000.0).round() / 1000.0),
                truncated: ran.truncated,
            },
        };
        match &envelope.outcome {
            Ok(_) => tracing::debug!(target: "tool_runtime::call", ?duration, "ok"),
            Err(e) => tracing::info!(
                target: "tool_runtime::call",
                ?duration,
                error.type = e.kind().as_str(),
                error.message = e.message(),
                hidden = ran.hidden.as_deref(),
                "error"
            ),
        }
        #[cfg(feature = "otel")]
        measure(
            name,
            entry,
            ran.hidden.is_some(),
            &ran.observed_args,
            ctx,
            &envelope,
            duration,
        );
        let called = |envelope| Called {
            envelope,
            tool,
            question: None,
        };
        if self.observers.is_empty() {
            return called(envelope);
        }
        // Observers (audit) never see secrets.
        let redacted = entry.and_then(|e| e.redacted(&ran.observed_args));
        let args = redacted.as_ref().unwrap_or(&ran.observed_args);
        for observer in &self.observers {
            observer
                .observe(CompletedCall {
                    call_id,
                    started: ran.started,
                    meta: entry.map(RegisteredTool::meta),
                    args,
                    ctx,
                    envelope: &envelope,
                    duration,
                    hidden: ran.hidden.as_deref(),
                })
                .await;
        }
        super::stage("outcome recorded");
        called(envelope)
    }
}

#[cfg(feature = "otel")]
/// The call's metrics and the end of its span. Its tool is named only when it exists and
/// the caller may see it: a name a caller made up is not a metric's attribute (`_unknown`
/// there), nor in the span's name (`execute_tool` alone).
fn measure(
    name: &str,
    entry: Option<&RegisteredTool>,
    hidden: bool,
    observed_args: &Value,
    ctx: &CallContext,
    envelope: &Envelope,
    duration: Duration,
) {
    let Some(telemetry) = crate::otel::installed() else {
        return;
    };
    let outcome = match &envelope.outcome {
        Ok(_) => "ok",
        Err(e) => e.kind().as_str(),
    };
    let span = tracing::Span::current();
    let tool = if entry.is_some() && !hidden {
        name
    } else {
        crate::otel::spans::renamed(&span, "execute_tool");
        "_unknown"
    };
    crate::otel::metrics::call(tool, outcome, ctx.source().as_str(), duration);
    let error = envelope.outcome.as_ref().err();
    let error = error.map(|e| (e.kind().as_str(), e.message()));
    if telemetry.capture_content() {
        let redacted = entry.and_then(|e| e.redacted(observed_args));
        let arguments = redacted.as_ref().unwrap_or(observed_args);
        let result = envelope.outcome.as_ref().ok();
        crate::otel::spans::call_ended(&span, error, Some(arguments), result);
    } else {
        crate::otel::spans::call_ended(&span, error, None, None);
    }
}

/// Whether `entry`'s schema has secret parameters (whose values observers never see).
fn has_secrets(entry: &RegisteredTool) -> bool {
    // Nothing in a string can be redacted by path: a copy is made only when there are secrets.
    entry.redacted(&Value::String(String::new())).is_some()
}
