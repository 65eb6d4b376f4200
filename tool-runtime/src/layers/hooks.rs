//! The named points where cross-cutting layers plug into the call pipeline.
//!
//! Policy, guards, rate and concurrency limits ([`CallHook`]) run after the arguments are
//! validated and before the tool; audit sinks ([`CallObserver`]) see every finished call,
//! denials included. Front ends never run any of this themselves: they call
//! [`Registry::call`](crate::Registry::call), and every hook applies to every caller.

use std::fmt;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::tool::context::CallContext;
use crate::tool::definition::{PendingCall, ToolMeta};
use crate::tool::envelope::Envelope;
use crate::tool::error::ToolError;

/// Where a [`CallHook`] runs. Hooks run in this order; within one point, in registration order.
/// The built-in confirmation check of destructive tools sits between `Guard` and `RateLimit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookPoint {
    /// Registry-wide policy: may deny with `forbidden`.
    Policy,
    /// Per-tool guards: may deny, or rewrite the arguments (which are then validated again).
    Guard,
    /// Rate limits: may deny with `rate_limited`.
    RateLimit,
    /// Concurrency limits: may wait for a slot, or deny with `unavailable`.
    Concurrency,
}

/// Something a hook holds for the duration of the call, such as a concurrency slot; dropped
/// when the call ends.
pub struct Permit(Option<Box<dyn Send>>);

impl Permit {
    /// Nothing to hold: the hook only decides.
    #[must_use]
    pub fn none() -> Self {
        Self(None)
    }

    /// Holds `value` until the call ends.
    pub fn hold(value: impl Send + 'static) -> Self {
        Self(Some(Box::new(value)))
    }
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Permit(held)"
        } else {
            "Permit(none)"
        })
    }
}

/// A layer that may deny a call, rewrite its arguments, or hold a resource while it runs.
pub trait CallHook: Send + Sync + 'static {
    /// Where in the pipeline this hook runs.
    fn point(&self) -> HookPoint;

    /// Decides on one call: `Ok(permit)` lets it go on, `Err` ends it with that error.
    fn before<'a>(
        &'a self,
        call: &'a mut PendingCall<'_>,
    ) -> BoxFuture<'a, Result<Permit, ToolError>>;
}

/// A tool about to run, as audit sinks see it: a call that passed every check, or the dry-run
/// preview of an unconfirmed destructive call (its `ctx` is then the preview's dry-run context,
/// `ctx.dry_run()` true), which runs before the call ends as `confirmation_required`.
#[derive(Debug)]
pub struct StartingCall<'a> {
    /// The tool's metadata.
    pub meta: &'a ToolMeta,
    /// The arguments the tool receives, with secret values replaced by `"[redacted]"`.
    pub args: &'a Value,
    /// The caller and per-call handles.
    pub ctx: &'a CallContext,
    /// This call's number, unique in the process; the same in its [`CompletedCall`].
    pub call_id: u64,
}

/// A finished call, as audit sinks and metrics see it.
#[derive(Debug)]
pub struct CompletedCall<'a> {
    /// This call's number, unique in the process; the same in its [`StartingCall`].
    pub call_id: u64,
    /// Whether the tool was started ([`CallObserver::starting`] was called for this call),
    /// including for the dry-run preview of an unconfirmed destructive call.
    pub started: bool,
    /// The tool's metadata; `None` when no tool had the requested name.
    pub meta: Option<&'a ToolMeta>,
    /// The arguments as the tool received them (or as they came, if the call was refused),
    /// with secret values replaced by `"[redacted]"`.
    pub args: &'a Value,
    /// The caller and per-call handles.
    pub ctx: &'a CallContext,
    /// What the caller receives.
    pub envelope: &'a Envelope,
    /// Time spent in the pipeline.
    pub duration: Duration,
    /// When the tool exists but is hidden from this caller, the policy's reason: the caller was
    /// answered `unknown_tool`, as for a tool that does not exist, and only the log and the
    /// observers learn why.
    pub hidden: Option<&'a str>,
}

/// Sees every call that reached the pipeline, after its envelope is made and before it is
/// returned, denials included. The audit log is one.
pub trait CallObserver: Send + Sync + 'static {
    /// Called when a call has passed every check, just before the tool runs; an `Err` refuses
    /// the call (the tool never runs) with that error. Also called before the dry-run preview of
    /// an unconfirmed destructive call (tools with `#[tool(dry_run)]`), with the preview's
    /// dry-run context (`ctx.dry_run()` true): an `Err` there ends the call with that error
    /// instead of the question; once the preview has run, the call's
    /// [`CompletedCall::started`] is true, though it ends as `confirmation_required`. The audit
    /// log records the call's intent here, so that a call whose record cannot be written never
    /// has an effect. The default does nothing.
    fn starting<'a>(&'a self, call: StartingCall<'a>) -> BoxFuture<'a, Result<(), ToolError>> {
        let _ = call;
        Box::pin(std::future::ready(Ok(())))
    }

    /// Records one call. The envelope is returned to the caller once this future completes,
    /// so a sink that must be durable before the answer (audit of mutating tools) awaits here.
    fn observe<'a>(&'a self, call: CompletedCall<'a>) -> BoxFuture<'a, ()>;
}
