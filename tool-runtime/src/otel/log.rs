//! The log line of an event inside a recorded span, prefixed with its trace and span ids, so
//! that a line on standard error leads to its trace.

use std::fmt;

use opentelemetry::trace::TraceContextExt;
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// A log line format that writes `trace_id=… span_id=…` before what `F` writes.
#[derive(Debug)]
pub(crate) struct WithTraceIds<F>(pub(crate) F);

impl<S, N, F> FormatEvent<S, N> for WithTraceIds<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        // The current span as the subscriber knows it, not as this log's filter sees it: a
        // span the log does not write (the request's, at the default level) still has a trace.
        // Read before the formatter takes the spans' extensions' locks, which this takes too.
        let ids = tracing::dispatcher::get_default(|dispatch| {
            let id = dispatch.current_span().id()?.clone();
            tracing_opentelemetry::get_otel_context(&id, dispatch)
        });
        if let Some(cx) = ids {
            let span = cx.span();
            let span_context = span.span_context();
            if span_context.is_valid() {
                write!(
                    writer,
                    "trace_id={} span_id={} ",
                    span_context.trace_id(),
                    span_context.span_id()
                )?;
            }
        }
        self.0.format_event(ctx, writer, event)
    }
}
