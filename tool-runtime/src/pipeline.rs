//! The call pipeline: the one path every call takes, whatever front end it came from.
//!
//! lookup → validate against the advertised schema → policy and guard hooks → confirmation of
//! destructive tools → rate and concurrency hooks → run under a time limit with panic isolation
//! → envelope → observers (audit). One `tool.call` tracing span covers it all.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::Value;
use tracing::Instrument;

use crate::context::{CallContext, Caller};
use crate::definition::ToolMeta;
use crate::envelope::{Envelope, EnvelopeMeta};
use crate::error::{ToolError, kind};
use crate::hooks::{CallHook, CompletedCall, PendingCall, Permit};
use crate::parsed::{Node, ParsedArgs};
use crate::registry::{RegisteredTool, Registry};
use crate::validate::{normalize_numbers, strip_unknown};

impl Registry {
    /// Calls tool `name` with `args` on behalf of `caller`, and returns the envelope.
    ///
    /// Never panics and never returns early: every outcome, including an unknown tool, invalid
    /// arguments, a refusal, a panicking tool and a time-out, is an envelope.
    ///
    /// (Written as a fn returning a future, not an `async fn`, which would keep `args` and
    /// `caller` in the future for the whole call.)
    pub fn call<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        caller: Caller,
    ) -> impl Future<Output = Envelope> + 'a {
        self.call_in_context(
            name,
            self.get(name),
            Input::Value(args),
            self.context(caller),
        )
    }

    /// The tool `name` if a call to it may start from a parsed tree ([`Input::Parsed`]):
    /// nothing on its way needs the arguments as a `Value`. Front ends ask before parsing, so a
    /// call that would take the `Value` path anyway is parsed once.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn parsed_entry(&self, name: &str) -> Option<&RegisteredTool> {
        self.get(name).filter(|entry| self.parsed_path(entry))
    }

    fn parsed_path(&self, entry: &RegisteredTool) -> bool {
        entry.parsed_call.is_some()
            && entry.meta.guards.is_empty()
            && !self.hooks_read_arguments
            && !self.options.ignore_unknown_fields
    }

    /// The context of a call by `caller` (made before the call, by a front end that keeps only
    /// this while it reads the arguments).
    pub(crate) fn context(&self, caller: Caller) -> CallContext {
        caller.into_context(self.state.clone())
    }

    /// [`call`](Self::call) of `entry`, the tool `name` if there is one, from either form of
    /// the arguments, in a context made by [`context`](Self::context).
    ///
    /// The span is made when the future is; the duration counts from its first poll. A fn
    /// returning a future, not an `async fn`, which would keep its arguments in the future
    /// beside the call's own state: it is on every call's path and moved with it.
    pub(crate) fn call_in_context<'a>(
        &'a self,
        name: &'a str,
        entry: Option<&'a RegisteredTool>,
        input: Input<'a>,
        ctx: CallContext,
    ) -> impl Future<Output = Envelope> + 'a {
        let span = tracing::info_span!(
            target: "tool_runtime::call",
            "tool.call",
            tool = name,
            source = ctx.source().as_str(),
            request_id = ctx.request_id(),
        );
        async move {
            let started = Instant::now();
            // The arguments as observers see them: filled in only when there are observers or
            // the call takes the `Value` path.
            let mut args = Value::Null;
            let mut truncated = false;
            let outcome = match entry {
                None => {
                    if !self.observers.is_empty() {
                        args = input.into_value();
                    }
                    Err(self.unknown_tool(name))
                }
                Some(entry) => {
                    // The tree's path is awaited here rather than in a nested `async fn`: each
                    // level would be one more future built and moved on every call.
                    let parsed = match &input {
                        Input::Parsed { node, .. } => self
                            .start_parsed(entry, node, &ctx)
                            .map(|start| (node, start)),
                        Input::Value(_) => None,
                    };
                    let result = match parsed {
                        Some((node, start)) => {
                            if !self.observers.is_empty() {
                                // What the `Value` path would show: numbers normalized alike.
                                args = node.to_value();
                            }
                            match start {
                                Ok(fut) if self.no_hooks() => {
                                    let limit = self.limit_of(entry);
                                    run_isolated(entry, fut, &ctx, limit).await
                                }
                                // Hooks that do not read the arguments (limits, role checks).
                                Ok(fut) => {
                                    let mut pending = PendingCall {
                                        meta: entry.meta.clone(),
                                        args: Value::Null,
                                        ctx: ctx.clone(),
                                        args_rewritten: false,
                                    };
                                    Box::pin(self.admit_and_run(entry, &mut pending, |_| fut)).await
                                }
                                Err(e) => Err(e),
                            }
                        }
                        // Boxed: inline, its state (validation, hooks) would make every call's
                        // future larger, the tree path's too (HTTP moves it into a box anyway).
                        None => Box::pin(self.run(entry, input, &mut args, &ctx)).await,
                    };
                    result.and_then(|result| self.capped(entry, result, &mut truncated))
                }
            };
            let duration = started.elapsed();
            let envelope = Envelope {
                tool: name.to_owned(),
                outcome,
                meta: EnvelopeMeta {
                    request_id: ctx.request_id().to_owned(),
                    // Microsecond resolution: finer digits are noise.
                    duration_ms: Some((duration.as_secs_f64() * 1_000_000.0).round() / 1000.0),
                    truncated,
                },
            };
            match &envelope.outcome {
                Ok(_) => tracing::debug!(target: "tool_runtime::call", ?duration, "ok"),
                Err(e) => tracing::info!(
                    target: "tool_runtime::call",
                    ?duration,
                    error.type = e.kind(),
                    error.message = e.message(),
                    "error"
                ),
            }
            // Observers (audit) never see secrets.
            let redacted = entry
                .filter(|_| !self.observers.is_empty())
                .and_then(|e| e.redacted(&args));
            let shown = redacted.as_ref().unwrap_or(&args);
            for observer in &self.observers {
                observer
                    .observe(CompletedCall {
                        meta: entry.map(|e| &*e.meta),
                        args: shown,
                        ctx: &ctx,
                        envelope: &envelope,
                        duration,
                    })
                    .await;
            }
            envelope
        }
        .instrument(span)
    }

    async fn run(
        &self,
        entry: &RegisteredTool,
        input: Input<'_>,
        args: &mut Value,
        ctx: &CallContext,
    ) -> Result<Value, ToolError> {
        *args = input.into_value();
        normalize_numbers(args);
        if self.options.ignore_unknown_fields {
            let dropped = strip_unknown(entry.input_schema(), args);
            if !dropped.is_empty() {
                tracing::debug!(target: "tool_runtime::call", ?dropped, "ignored unknown fields");
            }
        }
        entry.check_arguments(args)?;

        let mut pending = PendingCall {
            meta: entry.meta.clone(),
            args: std::mem::take(args),
            ctx: ctx.clone(),
            args_rewritten: false,
        };
        let observed = !self.observers.is_empty();
        let result = self
            .admit_and_run(entry, &mut pending, |pending| {
                // Observers (audit) see the arguments after the call; copy them only when
                // someone looks.
                let args = if observed {
                    pending.args.clone()
                } else {
                    std::mem::take(&mut pending.args)
                };
                entry.tool.call(args, pending.ctx.clone())
            })
            .await;
        *args = pending.args;
        result
    }

    /// Starts the call from a parsed tree: the tool's (not yet polled) future, or the error that
    /// ends the call; `None` to take the `Value` path instead, when something needs the
    /// arguments as a value, the tree does not validate (the `Value` path reports every
    /// violation), or the arguments do not decode from it.
    fn start_parsed(
        &self,
        entry: &RegisteredTool,
        node: &Node<'_>,
        ctx: &CallContext,
    ) -> Option<Result<ToolFuture, ToolError>> {
        // An unconfirmed destructive call is refused with its arguments quoted.
        let refused = entry.meta.annotations.needs_confirmation() && !ctx.confirmed();
        if !self.parsed_path(entry) || (refused && !ctx.dry_run()) {
            return None;
        }
        let call = entry.parsed_call?;
        if !entry.parsed_validator()?.is_valid(node) {
            return None;
        }
        if ctx.dry_run() && !entry.meta.dry_run {
            return Some(Err(dry_run_unsupported(&entry.meta)));
        }
        // Decoding only: the tool's code runs when its future is first polled, after any hook.
        match std::panic::catch_unwind(AssertUnwindSafe(|| call(ParsedArgs { node }, ctx))) {
            Ok(fut) => Some(Ok(fut?)),
            Err(panic) => Some(Err(panicked(&entry.meta, &*panic))),
        }
    }

    /// `result` within the tool's output cap; `truncated` set if it was cut.
    fn capped(
        &self,
        entry: &RegisteredTool,
        result: Value,
        truncated: &mut bool,
    ) -> Result<Value, ToolError> {
        let cap = entry.meta.max_output.unwrap_or(self.options.max_output);
        let (result, cut) =
            crate::output_cap::apply(result, cap, entry.meta.truncate_output, &entry.meta.name)?;
        *truncated = cut;
        Ok(result)
    }

    fn no_hooks(&self) -> bool {
        self.hooks_before_confirmation.is_empty() && self.hooks_after_confirmation.is_empty()
    }

    fn limit_of(&self, entry: &RegisteredTool) -> Duration {
        entry.meta.timeout.unwrap_or(self.options.default_timeout)
    }

    /// Everything between validation and the tool: dry runs, hooks, guards, confirmation; then
    /// the tool, started by `start`, under its time limit with the hooks' permits held.
    async fn admit_and_run<'e>(
        &self,
        entry: &'e RegisteredTool,
        pending: &mut PendingCall,
        start: impl FnOnce(&mut PendingCall) -> BoxFuture<'e, Result<Value, ToolError>>,
    ) -> Result<Value, ToolError> {
        if pending.ctx.dry_run() && !entry.meta.dry_run {
            return Err(dry_run_unsupported(&entry.meta));
        }
        let mut permits: Vec<Permit> = Vec::new();
        // An empty list costs no future at all.
        if !self.hooks_before_confirmation.is_empty() {
            run_hooks(&self.hooks_before_confirmation, pending, &mut permits).await?;
        }
        for guard in &entry.meta.guards {
            guard(pending)?;
        }
        if pending.args_rewritten {
            normalize_numbers(&mut pending.args);
            entry.check_arguments(&pending.args)?;
        }
        // A dry run changes nothing, so it needs no confirmation.
        if entry.meta.annotations.needs_confirmation()
            && !pending.ctx.confirmed()
            && !pending.ctx.dry_run()
        {
            return Err(confirmation_required(
                &entry.meta,
                &entry.redact(&pending.args),
            ));
        }
        if !self.hooks_after_confirmation.is_empty() {
            run_hooks(&self.hooks_after_confirmation, pending, &mut permits).await?;
        }

        let limit = self.limit_of(entry);
        // A tool whose `call` panics before returning its future is isolated too.
        let result = match std::panic::catch_unwind(AssertUnwindSafe(|| start(pending))) {
            Ok(fut) => run_isolated(entry, fut, &pending.ctx, limit).await,
            Err(panic) => Err(panicked(&entry.meta, &*panic)),
        };
        drop(permits);
        result
    }
}

/// A started call of a tool.
type ToolFuture = BoxFuture<'static, Result<Value, ToolError>>;

/// The arguments of a call as a front end received them.
pub(crate) enum Input<'a> {
    /// Already a `serde_json::Value` (the CLI, MCP, `POST /invoke`, library callers).
    Value(Value),
    /// A body parsed into a tree (`POST /tools/{name}`); `bytes` are parsed again into a
    /// `Value` if the call needs one.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Parsed { node: &'a Node<'a>, bytes: &'a [u8] },
}

impl Input<'_> {
    fn into_value(self) -> Value {
        match self {
            Input::Value(value) => value,
            // The bytes parsed into the tree, so they parse; the tree would do as a fallback.
            Input::Parsed { node, bytes } => {
                serde_json::from_slice(bytes).unwrap_or_else(|_| node.to_value())
            }
        }
    }
}

fn dry_run_unsupported(meta: &ToolMeta) -> ToolError {
    ToolError::new(
        kind::DRY_RUN_UNSUPPORTED,
        format!(
            "`{}` does not support dry runs; call it without dry_run to run it",
            meta.name
        ),
    )
}

fn panicked(meta: &ToolMeta, panic: &(dyn std::any::Any + Send)) -> ToolError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-string panic payload)".to_owned());
    ToolError::internal(format_args!("tool `{}` panicked: {message}", meta.name))
}

async fn run_hooks(
    hooks: &[std::sync::Arc<dyn CallHook>],
    pending: &mut PendingCall,
    permits: &mut Vec<Permit>,
) -> Result<(), ToolError> {
    for hook in hooks {
        permits.push(hook.before(pending).await?);
    }
    Ok(())
}

fn confirmation_required(meta: &ToolMeta, args: &Value) -> ToolError {
    ToolError::new(
        kind::CONFIRMATION_REQUIRED,
        format!(
            "`{}` is destructive and was not run: it would {} with {}; confirm the call to run it",
            meta.name,
            meta.summary.trim_end_matches('.').to_lowercase(),
            args
        ),
    )
    .with_details(serde_json::json!({ "tool": &*meta.name, "arguments": args }))
}

/// Runs the tool under its time limit, turning a panic into `internal` and a cancellation by
/// the caller into `cancelled`. The tool's future is dropped (cancelled) on time-out.
async fn run_isolated(
    entry: &RegisteredTool,
    fut: BoxFuture<'_, Result<Value, ToolError>>,
    ctx: &CallContext,
    limit: Duration,
) -> Result<Value, ToolError> {
    let started = tokio::time::Instant::now();
    let mut fut = AssertUnwindSafe(fut).catch_unwind();
    let timed = |fut| match started.checked_add(limit) {
        Some(deadline) => tokio::time::timeout_at(deadline, fut),
        None => tokio::time::timeout(limit, fut),
    };
    // Watching a token costs a lock per call: only when the caller brought one. The timer and
    // the watch are boxed: most calls need neither, and inline they would make every call's
    // future larger (it is moved as it is wrapped, layer by layer).
    let outcome = if ctx.caller_cancels() {
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
                return Err(
                    ToolError::new("cancelled", "the caller cancelled the call").with_status(499)
                );
            }
        }
    } else if let Poll::Ready(done) =
        std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut fut).poll(cx))).await
    {
        // Finished on its first poll: no timer was needed, since `Timeout` polls its future
        // before looking at the deadline and could not have stopped it either.
        Ok(done)
    } else {
        // The deadline counts from the start, as if the timer had been there from the first poll.
        Box::pin(timed(fut)).await
    };
    match outcome {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => Err(panicked(&entry.meta, &*panic)),
        Err(_elapsed) => {
            ctx.cancel();
            Err(ToolError::new(
                kind::TIMEOUT,
                format!(
                    "`{}` did not finish within {} and was cancelled",
                    entry.meta.name,
                    humanize(limit)
                ),
            ))
        }
    }
}

fn humanize(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}
