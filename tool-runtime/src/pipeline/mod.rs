//! The call pipeline: the one path every call takes, whatever front end it came from, and the
//! layers it consults.
//!
//! lookup → visibility (policies' `admit`) → validate against the advertised schema → policy
//! checks and hooks → guards → confirmation of destructive tools → rate and concurrency hooks →
//! intent announced to observers (audit) → run under a time limit with panic isolation →
//! output cap → envelope → observers. One `tool.call` tracing span covers it all.
//!
//! [`Pipeline`] owns the layers; the tools it calls are the [`Catalog`]'s. Front ends reach it
//! through [`Registry::call`](crate::Registry::call) (and
//! [`call_asking`](crate::Registry::call_asking)), handing it a name, the arguments and the
//! caller.

mod asking;
mod run;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::Value;
use tracing::Instrument;

use crate::catalog::{Catalog, RegisteredTool, ToolRef};
use crate::confirm::Confirmations;
use crate::context::CallContext;
use crate::definition::ToolMeta;
use crate::definition::{Arguments, PendingCall};
use crate::envelope::{Envelope, EnvelopeMeta};
use crate::error::{ToolError, kind};
use crate::hooks::{CallHook, CallObserver, CompletedCall, Permit, StartingCall};
use crate::limits::RateLimits;
use crate::parsed::{Node, ParsedArgs};
use crate::policy::Policy;

use crate::validate::{normalize_numbers, strip_unknown};
pub(crate) use run::cancelled;
use run::{dry_run_unsupported, next_call_id, panicked, run_isolated};

/// The layers every call passes, in the order the pipeline consults them, and the options that
/// change how every call is handled.
pub(crate) struct Pipeline {
    pub(crate) policies: Vec<Arc<dyn Policy>>,
    pub(crate) hooks_before_confirmation: Vec<Arc<dyn CallHook>>,
    pub(crate) hooks_after_confirmation: Vec<Arc<dyn CallHook>>,
    /// The rate-limit hook again, to charge calls refused for their arguments.
    pub(crate) rate_limits: Option<Arc<RateLimits>>,
    pub(crate) observers: Vec<Arc<dyn CallObserver>>,
    pub(crate) options: Options,
    pub(crate) confirmations: Confirmations,
}

/// Options that change how every call is handled.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) ignore_unknown_fields: bool,
    pub(crate) default_timeout: Duration,
    pub(crate) max_output: usize,
}

impl Pipeline {
    /// The policies' decision on `tool` for the caller of `ctx`: the first refusal, as
    /// `forbidden`.
    pub(crate) fn admit(&self, tool: &ToolMeta, ctx: &CallContext) -> Result<(), ToolError> {
        for policy in &self.policies {
            policy
                .admit(tool, ctx)
                .map_err(|reason| ToolError::new(kind::FORBIDDEN, reason))?;
        }
        Ok(())
    }

    /// The tools of `catalog` the caller of `ctx` may see, sorted by name.
    pub(crate) fn visible<'c>(&self, catalog: &'c Catalog, ctx: &CallContext) -> Vec<ToolRef<'c>> {
        let mut tools = catalog.tools();
        if !self.policies.is_empty() {
            tools.retain(|t| self.admit(t.meta(), ctx).is_ok());
        }
        tools
    }

    /// `unknown_tool`, suggesting only names the caller may see.
    pub(crate) fn unknown_tool(
        &self,
        catalog: &Catalog,
        name: &str,
        ctx: &CallContext,
    ) -> ToolError {
        let visible = self.visible(catalog, ctx);
        let near = crate::catalog::nearest(name, visible.iter().map(|t| t.name()));
        let message = if near.is_empty() {
            format!("no tool named `{name}`")
        } else {
            format!(
                "no tool named `{name}`; did you mean {}?",
                near.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        ToolError::new(kind::UNKNOWN_TOOL, message)
            .with_details(serde_json::json!({ "suggestions": near }))
    }

    /// Whether a call of `entry` may start from a parsed tree ([`Input::Parsed`]). Trees come
    /// only from the HTTP front end: other builds compile no validator for them.
    fn parsed_path(&self, entry: &RegisteredTool) -> bool {
        cfg!(feature = "http") && entry.parsed_call.is_some() && !self.options.ignore_unknown_fields
    }

    /// Calls `entry`, the tool `name` of `catalog` if there is one, from either form of the
    /// arguments, in `ctx`.
    ///
    /// The span is made when the future is; the duration counts from its first poll.
    pub(crate) fn call<'a>(
        &'a self,
        catalog: &'a Catalog,
        name: &'a str,
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
            let observed = !self.observers.is_empty();
            let call_id = if observed { next_call_id() } else { 0 };
            // The arguments as observers see them: filled in only when there are observers.
            let mut shown = Value::Null;
            let mut truncated = false;
            let mut tool_started = false;
            let entry = catalog.get(name);
            let outcome = match &entry {
                None => {
                    if observed {
                        shown = input.into_value();
                    }
                    Err(self.unknown_tool(catalog, name, &ctx))
                }
                // Lookup among the caller's visible tools: a hidden tool is refused before its
                // arguments are looked at.
                Some(entry) => {
                    if let Err(e) = self.admit(entry.meta(), &ctx) {
                        if observed {
                            shown = input.into_value();
                        }
                        Err(e)
                    } else {
                        // A tree that validates, with no layer to consult, runs without the
                        // boxed general path.
                        let bare = match &input {
                            Input::Parsed(node) if self.nothing_between(entry, &ctx) => {
                                self.start_parsed(entry, node, &ctx).map(|s| (*node, s))
                            }
                            _ => None,
                        };
                        let mark = Started {
                            call_id,
                            started: &mut tool_started,
                        };
                        let result = if let Some((node, started)) = bare {
                            if observed {
                                shown = node.to_value();
                            }
                            self.run_bare(entry, started, &shown, &ctx, mark).await
                        } else {
                            Box::pin(self.run(entry, input, &ctx, &mut shown, mark)).await
                        };
                        result.and_then(|result| self.capped(entry, result, &mut truncated))
                    }
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
                .as_ref()
                .filter(|_| observed)
                .and_then(|e| e.redacted(&shown));
            let args = redacted.as_ref().unwrap_or(&shown);
            for observer in &self.observers {
                observer
                    .observe(CompletedCall {
                        call_id,
                        started: tool_started,
                        meta: entry.as_ref().map(|e| e.meta()),
                        args,
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

    /// Runs a call started from a tree with no layer between (`started`: the tool's future, or
    /// why it could not start), once the observers have been told.
    async fn run_bare(
        &self,
        entry: &RegisteredTool,
        started: Result<ToolFuture, ToolError>,
        shown: &Value,
        ctx: &CallContext,
        mark: Started<'_>,
    ) -> Result<Value, ToolError> {
        let fut = started?;
        self.announce(entry, shown, ctx, mark.call_id).await?;
        *mark.started = true;
        run_isolated(entry, fut, ctx, self.limit_of(entry)).await
    }

    /// Validates and decodes the arguments, then admits and runs the call. `shown` receives
    /// the arguments as observers see them, when there are observers.
    async fn run(
        &self,
        entry: &RegisteredTool,
        input: Input<'_>,
        ctx: &CallContext,
        shown: &mut Value,
        mark: Started<'_>,
    ) -> Result<Value, ToolError> {
        let observed = !self.observers.is_empty();
        // A tree that validates is decoded straight into the tool's arguments; anything else
        // takes the `Value` path, which reports every violation.
        let started = match &input {
            Input::Parsed(node) => match self.start_parsed(entry, node, ctx) {
                Some(Ok(fut)) => Some((*node, fut)),
                Some(Err(e)) => {
                    if observed {
                        *shown = node.to_value();
                    }
                    return Err(e);
                }
                None => None,
            },
            Input::Value(_) => None,
        };
        let (mut pending, fut) = if let Some((node, fut)) = started {
            (
                PendingCall {
                    meta: entry.meta.clone(),
                    args: Arguments::tree(node),
                    ctx: ctx.clone(),
                },
                Some(fut),
            )
        } else {
            let mut args = input.into_value();
            normalize_numbers(&mut args);
            if self.options.ignore_unknown_fields {
                let dropped = strip_unknown(entry.input_schema(), &mut args);
                if !dropped.is_empty() {
                    tracing::debug!(target: "tool_runtime::call", ?dropped, "ignored unknown fields");
                }
            }
            if let Err(e) = entry.check_arguments(&args) {
                if observed {
                    *shown = args;
                }
                return Err(self.charged(entry, ctx, e));
            }
            (
                PendingCall {
                    meta: entry.meta.clone(),
                    args: Arguments::value(args),
                    ctx: ctx.clone(),
                },
                None,
            )
        };
        let result = self.admit_and_run(entry, &mut pending, fut, mark).await;
        if observed {
            *shown = pending.args.take();
        }
        result
    }

    /// Starts the call from a parsed tree: the tool's (not yet polled) future, or the error that
    /// ends the call; `None` to take the `Value` path instead, when the tree does not validate
    /// (the `Value` path reports every violation) or the arguments do not decode from it.
    fn start_parsed(
        &self,
        entry: &RegisteredTool,
        node: &Node<'_>,
        ctx: &CallContext,
    ) -> Option<Result<ToolFuture, ToolError>> {
        if !self.parsed_path(entry) {
            return None;
        }
        let call = entry.parsed_call?;
        #[cfg(feature = "http")]
        if !entry.parsed_validator()?.is_valid(node) {
            return None;
        }
        // Decoding only: the tool's code runs when its future is first polled, after any layer.
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

    /// Whether no layer has anything to decide on a call of `entry` by this caller: no policy,
    /// hook or guard, no confirmation, no dry run.
    fn nothing_between(&self, entry: &RegisteredTool, ctx: &CallContext) -> bool {
        self.policies.is_empty()
            && self.hooks_before_confirmation.is_empty()
            && self.hooks_after_confirmation.is_empty()
            && entry.meta.guards.is_empty()
            && !entry.meta.annotations.needs_confirmation()
            && !ctx.dry_run()
    }

    fn limit_of(&self, entry: &RegisteredTool) -> Duration {
        entry.meta.timeout.unwrap_or(self.options.default_timeout)
    }

    /// Everything between validation and the tool: dry runs, policy checks, hooks, guards,
    /// confirmation; then the tool (`decoded`, when the arguments were decoded from a tree and
    /// nothing rewrote them) under its time limit with the hooks' permits held.
    async fn admit_and_run(
        &self,
        entry: &RegisteredTool,
        pending: &mut PendingCall<'_>,
        decoded: Option<ToolFuture>,
        started: Started<'_>,
    ) -> Result<Value, ToolError> {
        let ctx = pending.ctx.clone();
        if ctx.dry_run() && !entry.meta.dry_run {
            return Err(dry_run_unsupported(&entry.meta));
        }
        for policy in &self.policies {
            policy
                .check(pending)
                .map_err(|reason| ToolError::new(kind::FORBIDDEN, reason))?;
        }
        let mut permits: Vec<Permit> = Vec::new();
        run_hooks(&self.hooks_before_confirmation, pending, &mut permits).await?;
        for guard in &entry.meta.guards {
            guard(pending)?;
        }
        if pending.args.rewritten() {
            pending.args.normalize();
            entry.check_arguments(pending.args())?;
        }
        // A dry run changes nothing, so it needs no confirmation.
        if entry.meta.annotations.needs_confirmation() && !ctx.confirmed() && !ctx.dry_run() {
            self.confirmation(entry, pending.args(), &ctx).await?;
        }
        run_hooks(&self.hooks_after_confirmation, pending, &mut permits).await?;
        if !self.observers.is_empty() {
            self.announce(entry, pending.args(), &ctx, started.call_id)
                .await?;
        }
        *started.started = true;

        let fut = match decoded {
            Some(fut) if !pending.args.rewritten() => fut,
            _ => {
                // Observers (audit) see the arguments after the call; copy them only when
                // someone looks.
                let args = if self.observers.is_empty() {
                    pending.args.take()
                } else {
                    pending.args().clone()
                };
                // A tool whose `call` panics before returning its future is isolated too.
                match std::panic::catch_unwind(AssertUnwindSafe(|| {
                    entry.tool.call(args, ctx.clone())
                })) {
                    Ok(fut) => fut,
                    Err(panic) => return Err(panicked(&entry.meta, &*panic)),
                }
            }
        };
        let result = run_isolated(entry, fut, &ctx, self.limit_of(entry)).await;
        drop(permits);
        result
    }

    /// `rejected`, the error of a call refused for its arguments, after charging the call to
    /// the caller's rate limit: once over it, the answer is `rate_limited`.
    fn charged(&self, entry: &RegisteredTool, ctx: &CallContext, rejected: ToolError) -> ToolError {
        match &self.rate_limits {
            Some(limits) => limits
                .charge(&entry.meta.name, ctx.principal())
                .err()
                .unwrap_or(rejected),
            None => rejected,
        }
    }

    /// Tells the observers (audit) that the call passed every check and is about to run. The
    /// first that refuses (an intent that cannot be recorded) ends the call: the tool never
    /// runs.
    async fn announce(
        &self,
        entry: &RegisteredTool,
        args: &Value,
        ctx: &CallContext,
        call_id: u64,
    ) -> Result<(), ToolError> {
        if self.observers.is_empty() {
            return Ok(());
        }
        let redacted = entry.redacted(args);
        let args = redacted.as_ref().unwrap_or(args);
        for observer in &self.observers {
            observer
                .starting(StartingCall {
                    meta: &entry.meta,
                    args,
                    ctx,
                    call_id,
                })
                .await?;
        }
        Ok(())
    }

    /// An unconfirmed call of a destructive tool: `Ok` if it brought a token issued for exactly
    /// this call, else `confirmation_required` with the question, the tool's dry-run preview
    /// (for tools that have one) and a new token. See [`crate::confirm`].
    async fn confirmation(
        &self,
        entry: &RegisteredTool,
        args: &Value,
        ctx: &CallContext,
    ) -> Result<(), ToolError> {
        let name = entry.name();
        let token = ctx.confirmation_token();
        if token.is_some_and(|t| self.confirmations.redeem(t, name, args, ctx.principal())) {
            return Ok(());
        }
        let preview = if entry.meta.dry_run {
            let preview_ctx = ctx.for_preview();
            let fut = std::panic::catch_unwind(AssertUnwindSafe(|| {
                entry.tool.call(args.clone(), preview_ctx.clone())
            }));
            match fut {
                Ok(fut) => run_isolated(entry, fut, &preview_ctx, self.limit_of(entry))
                    .await
                    .and_then(|v| self.capped(entry, v, &mut false))
                    .ok(),
                Err(_) => None,
            }
        } else {
            None
        };
        let issued = self.confirmations.issue(name, args, ctx.principal());
        Err(crate::confirm::required(
            &entry.meta,
            &entry.redact(args),
            preview,
            issued,
            token.is_some(),
        ))
    }
}

/// Where the general path says that the tool was started, and under which call number.
struct Started<'a> {
    call_id: u64,
    started: &'a mut bool,
}

/// A started call of a tool.
type ToolFuture = BoxFuture<'static, Result<Value, ToolError>>;

/// The arguments of a call as a front end received them.
pub(crate) enum Input<'a> {
    /// Already a `serde_json::Value` (the CLI, MCP, `POST /invoke`, library callers).
    Value(Value),
    /// A body parsed into a tree (`POST /tools/{name}`), which a `#[tool]` decodes without a
    /// `Value`; made into one when the call needs it (a tool that takes no tree, arguments
    /// that break the schema, a layer that reads them).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Parsed(&'a Node<'a>),
}

impl Input<'_> {
    fn into_value(self) -> Value {
        match self {
            Input::Value(value) => value,
            Input::Parsed(node) => node.to_value(),
        }
    }
}

async fn run_hooks(
    hooks: &[std::sync::Arc<dyn CallHook>],
    pending: &mut PendingCall<'_>,
    permits: &mut Vec<Permit>,
) -> Result<(), ToolError> {
    for hook in hooks {
        permits.push(hook.before(pending).await?);
    }
    Ok(())
}
