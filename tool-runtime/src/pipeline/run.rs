//! Running a tool in isolation: under its time limit, with its panics caught and its caller's
//! cancellation watched; and the errors of a call that could not run.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use crate::catalog::RegisteredTool;
use crate::tool::context::CallContext;
use crate::tool::definition::ToolMeta;
use crate::tool::error::{ErrorKind, ToolError};

/// A number for each observed call, unique in the process.
pub(super) fn next_call_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

pub(super) fn dry_run_unsupported(meta: &ToolMeta) -> ToolError {
    ToolError::new(
        ErrorKind::DRY_RUN_UNSUPPORTED,
        format!(
            "`{}` does not support dry runs; call it without dry_run to run it",
            meta.name
        ),
    )
}

pub(super) fn panicked(meta: &ToolMeta, panic: &(dyn std::any::Any + Send)) -> ToolError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-string panic payload)".to_owned());
    ToolError::internal(format_args!("tool `{}` panicked: {message}", meta.name))
}

/// Runs the tool under its time limit, turning a panic into `internal` and a cancellation by
/// the caller into `cancelled`. The tool's future is dropped (cancelled) on time-out.
pub(super) async fn run_isolated<T>(
    entry: &RegisteredTool,
    fut: BoxFuture<'_, Result<T, ToolError>>,
    ctx: &CallContext,
    limit: Duration,
) -> Result<T, ToolError> {
    let started = tokio::time::Instant::now();
    let mut fut = AssertUnwindSafe(fut).catch_unwind();
    // The deadline counts from the start, as if the timer had been there from the first poll.
    let timed = |fut| match started.checked_add(limit) {
        Some(deadline) => tokio::time::timeout_at(deadline, fut),
        None => tokio::time::timeout(limit, fut),
    };
    // Finished on its first poll: no timer or watch was needed, since `Timeout` and the biased
    // watch below poll the tool before anything else and could not have stopped it either.
    // Otherwise the timer and the watch are boxed: most calls need neither, and inline they
    // would make every call's future larger (it is moved as it is wrapped, layer by layer).
    let outcome = if let Poll::Ready(done) =
        std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut fut).poll(cx))).await
    {
        Ok(done)
    } else if ctx.caller_cancels() {
        // Watching a token costs a lock: only when the caller brought one.
        let watched = Box::pin(async {
            tokio::select! {
                biased;
                r = timed(fut) => Some(r),
                () = ctx.cancellation().cancelled() => None,
            }
        });
        match watched.await {
            Some(r) => r,
            None => {
                return Err(cancelled());
            }
        }
    } else {
        Box::pin(timed(fut)).await
    };
    match outcome {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => Err(panicked(&entry.meta, &*panic)),
        Err(_elapsed) => {
            ctx.cancel();
            Err(ToolError::new(
                ErrorKind::TIMEOUT,
                format!(
                    "`{}` did not finish within {} and was cancelled",
                    entry.meta.name,
                    humanize(limit)
                ),
            ))
        }
    }
}

/// The error of a call its caller cancelled.
pub(crate) fn cancelled() -> ToolError {
    ToolError::new(ErrorKind::CANCELLED, "the caller cancelled the call")
}

fn humanize(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}
