//! The call pipeline: the one path every call takes, whatever front end it came from, and the
//! layers it consults.
//!
//! lookup → visibility (policies' `admit`) → OAuth scopes → validate against the advertised schema → policy
//! checks and hooks → guards → confirmation of destructive tools → rate and concurrency hooks →
//! intent announced to observers (audit) → run under a time limit with panic isolation →
//! output cap → envelope → observers. One `tool.call` tracing span covers it all.
//!
//! [`Pipeline`] owns the layers; the tools it calls are the [`Catalog`]'s. Front ends reach it
//! through the registry's one entry, [`Registry::handle`](crate::Registry::handle), handing it
//! a request and the caller.

mod asking;
mod refused;
mod run;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::Value;
use tracing::Instrument;

use crate::catalog::{Catalog, RegisteredTool, ToolRef};
use crate::layers::confirm::Confirmations;
use crate::layers::hooks::{CallHook, CallObserver, Permit, StartingCall};
use crate::layers::limits::RateLimits;
use crate::layers::policy::Policy;
use crate::layers::scopes::ScopeRules;
use crate::tool::context::CallContext;
use crate::tool::definition::ToolMeta;
use crate::tool::definition::{Arguments, PendingCall};
use crate::tool::envelope::Envelope;
use crate::tool::error::{Confirmation, ErrorKind, ToolError};
use crate::tool::parsed::{Node, ParsedArgs};

use crate::schema::strict::drop_added_nulls;
use crate::schema::validate::strip_unknown;
use crate::tool::parsed::normalize_numbers;
pub(crate) use run::cancelled;
use run::{dry_run_unsupported, next_call_id, panicked, run_isolated};

/// The layers every call passes, in the order the pipeline consults them, and the options that
/// change how every call is handled.
pub(crate) struct Pipeline {
    pub(crate) policies: Vec<Arc<dyn Policy>>,
    /// The scopes each scope implies, for the scopes check after visibility.
    pub(crate) scopes: ScopeRules,
    pub(crate) hooks_before_confirmation: Vec<Arc<dyn CallHook>>,
    pub(crate) hooks_after_confirmation: Vec<Arc<dyn CallHook>>,
    /// The registry's rate limiter with each limited tool's rate: the rate-limit hook again,
    /// to charge calls refused for their arguments through the same limiter.
    pub(crate) rate_limits: Option<Arc<RateLimits>>,
    pub(crate) observers: Vec<Arc<dyn CallObserver>>,
    /// The audit sink, for reading recent calls back.
    pub(crate) audit_log: Option<Arc<dyn crate::layers::audit::Audit>>,
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
    /// The policies' decision on `tool` for the caller of `ctx`: the first refusal's reason. A
    /// refused tool is hidden from that caller.
    pub(crate) fn admit(&self, tool: &ToolMeta, ctx: &CallContext) -> Result<(), String> {
        self.policies
            .iter()
            .try_for_each(|policy| policy.admit(tool, ctx))
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
        ToolError::new(ErrorKind::UNKNOWN_TOOL, message).with_suggestions(near)
    }

    /// Whether a call of `entry` may start from a parsed tree ([`Input::Parsed`]), chosen by
    /// the input's form: a tree decodes straight into a `#[tool]`'s arguments. Arguments that
    /// need rewriting before validation (unknown fields ignored, strict mode's `null`s) take
    /// the `Value` path.
    fn parsed_path(&self, entry: &RegisteredTool, ctx: &CallContext) -> bool {
        entry.parsed_call.is_some() && !self.options.ignore_unknown_fields && !ctx.strict_nulls()
    }

    /// Whether a call's arguments are kept for its end: for the observers, or for its span when
    /// telemetry captures content.
    pub(super) fn observed(&self) -> bool {
        #[cfg(feature = "otel")]
        if crate::otel::installed().is_some_and(crate::otel::Telemetry::capture_content) {
            return true;
        }
        !self.observers.is_empty()
    }

    /// Calls the tool `name` of `catalog`, from either form of the arguments, in `ctx`.
    ///
    /// The span is made when the future is; the duration counts from its first poll.
    pub(crate) fn call<'a>(
        &'a self,
        catalog: &'a Catalog,
        name: &'a str,
        input: Input<'a>,
        ctx: CallContext,
    ) -> impl Future<Output = Called> + 'a {
        let span = refused::call_span(name, &ctx);
        async move {
            let started = Instant::now();
            let observed = self.observed();
            let call_id = if observed { next_call_id() } else { 0 };
            let observed_args = |input: Input<'_>| {
                if observed {
                    input.into_value()
                } else {
                    Value::Null
                }
            };
            let entry = catalog.get(name);
            let ran = match &entry {
                None => Ran::refused(self.unknown_tool(catalog, name, &ctx), observed_args(input)),
                // Lookup among the caller's visible tools: a hidden tool is answered as one that
                // does not exist, before its arguments are looked at; the policy's reason goes
                // to the log and the observers only.
                Some(entry) => match self.admit(entry.meta(), &ctx) {
                    Err(reason) => Ran {
                        hidden: Some(reason),
                        ..Ran::refused(self.unknown_tool(catalog, name, &ctx), observed_args(input))
                    },
                    // Visible, but its scopes not granted: refused before anything else,
                    // naming the scopes, so that the client can ask for them.
                    Ok(()) => match self.scopes.refusal(entry.meta(), &ctx) {
                        Some(refused) => Ran::refused(refused, observed_args(input)),
                        None => self.run(entry, input, &ctx, call_id).await,
                    },
                },
            };
            self.conclude(name, entry.as_ref(), ran, &ctx, call_id, started.elapsed())
                .await
        }
        .instrument(span)
    }

    /// Work an item does for a caller beside its call (a completion of one of its arguments, a
    /// template's listing of its resources), run as the item: `entry` is the item, found among
    /// those the caller may see, so its roles and the policies' `admit` decided already. The
    /// hooks at the rate-limit and concurrency points see it as a call of the item (`request`
    /// as its arguments): its rate is charged and a concurrency slot held while it runs; it runs
    /// under the item's time limit, its panics caught, its caller's cancellation watched.
    ///
    /// It is not told to the observers: it changes nothing, answers only names the caller may
    /// list, and a completion is asked at each keystroke (an audit record each, with the
    /// PostgreSQL audit two commits, would cost more than the work itself).
    pub(crate) async fn serve<T>(
        &self,
        entry: &RegisteredTool,
        ctx: &CallContext,
        request: Value,
        work: BoxFuture<'_, Result<T, ToolError>>,
    ) -> Result<T, ToolError> {
        if let Some(refused) = self.scopes.refusal(entry.meta(), ctx) {
            return Err(refused);
        }
        let mut pending = pending(entry, Arguments::value(request), ctx);
        let mut permits = Vec::new();
        run_hooks(&self.hooks_after_confirmation, &mut pending, &mut permits).await?;
        let outcome = run_isolated(entry, work, ctx, self.limit_of(entry)).await;
        drop(permits);
        outcome
    }

    /// Validates and decodes the arguments, passes the layers, runs the tool and caps its
    /// output.
    async fn run(
        &self,
        entry: &RegisteredTool,
        input: Input<'_>,
        ctx: &CallContext,
        call_id: u64,
    ) -> Ran {
        let observed = self.observed();
        let observed_args = |node: &Node<'_>| {
            if observed {
                node.to_value()
            } else {
                Value::Null
            }
        };
        // A tree that validates is decoded straight into the tool's arguments; anything else
        // takes the `Value` path, which reports every violation.
        let decoded = match &input {
            Input::Parsed(node) => self.start_parsed(entry, node, ctx).map(|s| (node, s)),
            Input::Value(_) => None,
        };
        let mut ran = match decoded {
            Some((node, Err(e))) => Ran::refused(e, observed_args(node)),
            // No layer to consult: straight to the tool, without the boxed general path.
            Some((node, Ok(fut))) if self.nothing_between(entry, ctx) => {
                stage("validated");
                let observed_args = observed_args(node);
                match self.announce(entry, &observed_args, ctx, call_id).await {
                    Ok(()) => {
                        let outcome = run_isolated(entry, fut, ctx, self.limit_of(entry)).await;
                        stage("tool returned");
                        Ran::started(outcome, observed_args)
                    }
                    Err(e) => Ran::refused(e, observed_args),
                }
            }
            Some((node, Ok(fut))) => {
                stage("validated");
                let pending = pending(entry, Arguments::tree(node), ctx);
                Box::pin(self.pass_layers_and_run(entry, pending, Some(fut), call_id)).await
            }
            None => {
                let mut args = input.into_value();
                match self.validate(entry, &mut args, ctx) {
                    Ok(()) => {
                        stage("validated");
                        let pending = pending(entry, Arguments::value(args), ctx);
                        Box::pin(self.pass_layers_and_run(entry, pending, None, call_id)).await
                    }
                    Err(e) => {
                        let e = self.charged(entry, ctx, e).await;
                        Ran::refused(e, if observed { args } else { Value::Null })
                    }
                }
            }
        };
        if let Ok(result) = ran.outcome {
            ran.outcome = self.capped(entry, result).map(|(result, cut)| {
                ran.truncated = cut;
                result
            });
        }
        ran
    }

    /// Normalizes the arguments of the `Value` path and checks them against the input schema.
    fn validate(
        &self,
        entry: &RegisteredTool,
        args: &mut Value,
        ctx: &CallContext,
    ) -> Result<(), ToolError> {
        normalize_numbers(args);
        if ctx.strict_nulls() {
            drop_added_nulls(entry.input_schema(), args);
        }
        if self.options.ignore_unknown_fields {
            let dropped = strip_unknown(entry.input_schema(), args);
            if !dropped.is_empty() {
                tracing::debug!(target: "tool_runtime::call", ?dropped, "ignored unknown fields");
            }
        }
        entry.check_arguments(args)
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
        if !self.parsed_path(entry, ctx) {
            return None;
        }
        let call = entry.parsed_call?;
        if !entry.validator().ok()?.admits_parsed(node)? {
            return None;
        }
        // Decoding only: the tool's code runs when its future is first polled, after any layer.
        match std::panic::catch_unwind(AssertUnwindSafe(|| call(ParsedArgs { node }, ctx))) {
            Ok(fut) => Some(Ok(fut?)),
            Err(panic) => Some(Err(panicked(&entry.meta, &*panic))),
        }
    }

    /// `result` within the tool's output cap, and whether it was cut.
    fn capped(&self, entry: &RegisteredTool, result: Value) -> Result<(Value, bool), ToolError> {
        let cap = entry.meta.max_output.unwrap_or(self.options.max_output);
        crate::layers::output_cap::apply(result, cap, entry.meta.truncate_output, &entry.meta.name)
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
        entry
            .meta
            .options
            .timeout
            .unwrap_or(self.options.default_timeout)
    }

    /// Everything between validation and the tool (dry runs, policy checks, hooks, guards,
    /// confirmation, the intent told to observers), then the tool under its time limit with
    /// the hooks' permits held: `decoded` when the arguments were decoded from a tree and
    /// nothing rewrote them.
    async fn pass_layers_and_run(
        &self,
        entry: &RegisteredTool,
        mut pending: PendingCall<'_>,
        decoded: Option<ToolFuture>,
        call_id: u64,
    ) -> Ran {
        let observed = self.observed();
        let mut previewed = false;
        let permits = match self
            .pass_layers(entry, &mut pending, call_id, &mut previewed)
            .await
        {
            Ok(permits) => permits,
            Err(e) => {
                let observed_args = if observed {
                    pending.args.take()
                } else {
                    Value::Null
                };
                // A preview that ran was announced: its intent gets this outcome.
                return Ran {
                    started: previewed,
                    ..Ran::refused(e, observed_args)
                };
            }
        };
        let ctx = &pending.ctx;
        let fut = match decoded {
            Some(fut) if !pending.args.rewritten() => Ok(fut),
            _ => {
                // Observers (audit) see the arguments after the call; copy them only when
                // someone looks.
                let args = if observed {
                    pending.args().clone()
                } else {
                    pending.args.take()
                };
                // A tool whose `call` panics before returning its future is isolated too.
                std::panic::catch_unwind(AssertUnwindSafe(|| entry.tool.call(args, ctx.clone())))
                    .map_err(|panic| panicked(&entry.meta, &*panic))
            }
        };
        let outcome = match fut {
            Ok(fut) => run_isolated(entry, fut, ctx, self.limit_of(entry)).await,
            Err(e) => Err(e),
        };
        stage("tool returned");
        drop(permits);
        let observed_args = if observed {
            pending.args.take()
        } else {
            Value::Null
        };
        Ran::started(outcome, observed_args)
    }

    /// The layers a call passes before its tool runs, in order; the permits the hooks gave, to
    /// be held while it runs. `previewed` is set when an unconfirmed call's dry-run preview was
    /// announced to the observers and run.
    async fn pass_layers(
        &self,
        entry: &RegisteredTool,
        pending: &mut PendingCall<'_>,
        call_id: u64,
        previewed: &mut bool,
    ) -> Result<Vec<Permit>, ToolError> {
        let ctx = pending.ctx.clone();
        if ctx.dry_run() && !entry.meta.dry_run {
            return Err(dry_run_unsupported(&entry.meta));
        }
        for policy in &self.policies {
            policy
                .check(pending)
                .map_err(|reason| ToolError::new(ErrorKind::FORBIDDEN, reason))?;
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
            self.confirmation(entry, pending, call_id, previewed)
                .await?;
            stage("confirmed");
        }
        run_hooks(&self.hooks_after_confirmation, pending, &mut permits).await?;
        stage("admitted");
        self.announce(entry, pending.args(), &ctx, call_id).await?;
        Ok(permits)
    }

    /// `rejected`, the error of a call refused for its arguments, after charging the call to
    /// the caller's rate limit: once over it, the answer is `rate_limited`; a limiter that
    /// cannot count answers with its own error.
    async fn charged(
        &self,
        entry: &RegisteredTool,
        ctx: &CallContext,
        rejected: ToolError,
    ) -> ToolError {
        match &self.rate_limits {
            Some(limits) => limits
                .charge(&entry.meta.name, ctx.principal())
                .await
                .err()
                .unwrap_or(rejected),
            None => rejected,
        }
    }

    /// Tells the observers (audit) that the tool is about to run: a call that passed every
    /// check, or the dry-run preview of an unconfirmed call (`ctx` is then the preview's). The
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
        stage("intent recorded");
        Ok(())
    }

    /// An unconfirmed call of a destructive tool: `Ok` if it brought a token issued for exactly
    /// this call, else `confirmation_required` with the question, the tool's dry-run preview
    /// (for tools that have one) and a new token. See [`crate::layers::confirm`]. A confirmation store
    /// that cannot take or keep the token ends the call with its error, before any of the
    /// tool's code runs: the token is kept first, the preview made after.
    ///
    /// The preview is the tool's code at work, so it runs as a call does: it passes the hooks
    /// after confirmation (charged to the rate limit, holding a concurrency permit) and is
    /// announced to the observers (the audit's intent, as a dry run) first; a refusal there
    /// ends the call with that error instead of the question.
    async fn confirmation(
        &self,
        entry: &RegisteredTool,
        pending: &mut PendingCall<'_>,
        call_id: u64,
        previewed: &mut bool,
    ) -> Result<(), ToolError> {
        let name = entry.name();
        let ctx = pending.ctx.clone();
        let token = ctx.confirmation_token();
        if let Some(token) = token
            && self
                .confirmations
                .redeem(token, name, pending.args(), ctx.principal())
                .await?
        {
            return Ok(());
        }
        let issued = self
            .confirmations
            .issue(name, pending.args(), ctx.principal())
            .await?;
        let preview = if entry.meta.dry_run {
            let preview_ctx = ctx.for_preview();
            let mut permits = Vec::new();
            run_hooks(&self.hooks_after_confirmation, pending, &mut permits).await?;
            self.announce(entry, pending.args(), &preview_ctx, call_id)
                .await?;
            *previewed = true;
            let args = pending.args().clone();
            let fut = std::panic::catch_unwind(AssertUnwindSafe(|| {
                entry.tool.call(args, preview_ctx.clone())
            }));
            let preview = match fut {
                Ok(fut) => run_isolated(entry, fut, &preview_ctx, self.limit_of(entry))
                    .await
                    .and_then(|v| self.capped(entry, v).map(|(v, _)| v))
                    .ok(),
                Err(_) => None,
            };
            drop(permits);
            preview
        } else {
            None
        };
        let args = pending.args();
        Err(crate::layers::confirm::required(
            &entry.meta,
            &entry.redact(args),
            preview,
            issued,
            self.confirmations.lifetime(),
            token.is_some(),
        ))
    }
}

/// What a call came to, as a front end renders it: the envelope; the tool that answered, held
/// so that what a front end reads of it after the call (how to render its result) is of the
/// tool that ran, whatever the registry has become since; and the question to put back to the
/// caller when its [`Ask`](crate::tool::Ask) deferred it.
#[derive(Debug)]
pub struct Called {
    /// The outcome, as every front end reports it.
    pub envelope: Envelope,
    /// `None` when the pipeline answered `unknown_tool`: no tool of that name, or one hidden
    /// from the caller.
    pub(crate) tool: Option<Arc<RegisteredTool>>,
    /// The question deferred to the caller ([`Answer::Deferred`](crate::tool::Answer::Deferred)).
    pub(crate) question: Option<Confirmation>,
}

impl Called {
    /// The tool that answered; `None` when the pipeline answered `unknown_tool` itself (no
    /// tool of that name, or one hidden from the caller; a tool's own error of that type comes
    /// with its tool).
    #[must_use]
    pub fn tool(&self) -> Option<&RegisteredTool> {
        self.tool.as_deref()
    }

    /// The question to put back to the caller with this answer, when the caller's
    /// [`Ask`](crate::tool::Ask) answered [`Deferred`](crate::tool::Answer::Deferred).
    #[must_use]
    pub fn question(&self) -> Option<&Confirmation> {
        self.question.as_ref()
    }
}

/// A call of `entry` with `args` in `ctx`, as the layers see it.
fn pending<'a>(entry: &RegisteredTool, args: Arguments<'a>, ctx: &CallContext) -> PendingCall<'a> {
    PendingCall {
        meta: entry.meta.clone(),
        args,
        ctx: ctx.clone(),
    }
}

/// What one call came to, with what the observers are told of it.
struct Ran {
    outcome: Result<Value, ToolError>,
    /// For a tool hidden from the caller (answered as unknown), the policy's reason.
    hidden: Option<String>,
    /// The arguments as observers see them (`Null` when there are none).
    observed_args: Value,
    /// Whether its tool was started: the call passed every check, or its dry-run preview ran.
    started: bool,
    /// Whether the result was cut to the output cap.
    truncated: bool,
}

impl Ran {
    /// A call refused before its tool started.
    fn refused(error: ToolError, observed_args: Value) -> Self {
        Self {
            outcome: Err(error),
            hidden: None,
            observed_args,
            started: false,
            truncated: false,
        }
    }

    /// A call whose tool was started.
    fn started(outcome: Result<Value, ToolError>, observed_args: Value) -> Self {
        Self {
            outcome,
            hidden: None,
            observed_args,
            started: true,
            truncated: false,
        }
    }
}

/// A started call of a tool.
type ToolFuture = BoxFuture<'static, Result<Value, ToolError>>;

/// The arguments of a call as a front end received them.
#[derive(Debug)]
pub(crate) enum Input<'a> {
    /// Already a `serde_json::Value` (the CLI, MCP, `POST /invoke`, library callers).
    Value(Value),
    /// A body parsed into a tree (`POST /tools/{name}`), which a `#[tool]` decodes without a
    /// `Value`; made into one when the call needs it (a tool that takes no tree, arguments
    /// that break the schema, a layer that reads them).
    Parsed(Node<'a>),
}

impl Input<'_> {
    pub(crate) fn into_value(self) -> Value {
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

/// A stage of the call passed: an event on its span when telemetry is on
/// (`otel::spans::stage`).
pub(super) fn stage(name: &'static str) {
    #[cfg(feature = "otel")]
    crate::otel::spans::stage(name);
    #[cfg(not(feature = "otel"))]
    let _ = name;
}
