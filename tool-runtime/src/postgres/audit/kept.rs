//! Outcomes that could not be written while PostgreSQL was out of reach, kept in memory (at
//! most [`MAX_KEPT`]) and written by the lease task once it can: a call that was answered
//! keeps its real outcome through an outage, after the `unknown` that another replica may have
//! reported meanwhile for a lease that ran out.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use crate::layers::audit::{AuditEvent, AuditRecord};

/// How many outcomes one process keeps for later; past it, an outcome that cannot be written
/// goes to the log whole, as it does with any other sink.
pub(super) const MAX_KEPT: usize = 10_000;

/// The outcomes waiting, oldest first.
#[derive(Default)]
pub(super) struct Kept(Mutex<VecDeque<Owned>>);

impl Kept {
    fn lock(&self) -> MutexGuard<'_, VecDeque<Owned>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `record`, written as `instance`, unless [`MAX_KEPT`] are waiting; whether it was
    /// kept, and whether it is the first (an outage begins).
    pub(super) fn keep(&self, instance: Arc<str>, record: &AuditRecord<'_>) -> Option<bool> {
        let mut kept = self.lock();
        if kept.len() >= MAX_KEPT {
            return None;
        }
        kept.push_back(Owned::of(instance, record));
        Some(kept.len() == 1)
    }

    /// The oldest waiting, taken out: put it back with [`Self::put_back`] if it fails again.
    pub(super) fn next(&self) -> Option<Owned> {
        self.lock().pop_front()
    }

    pub(super) fn put_back(&self, record: Owned) {
        self.lock().push_front(record);
    }

    /// Every one still waiting, taken out (at the end, for the log).
    pub(super) fn drain(&self) -> Vec<Owned> {
        self.lock().drain(..).collect()
    }
}

/// An outcome record that owns its fields, and the instance it is written as.
pub(super) struct Owned {
    pub(super) instance: Arc<str>,
    time: f64,
    call: String,
    request_id: String,
    source: String,
    principal: Option<String>,
    tool: String,
    arguments: Value,
    outcome: Option<String>,
    duration_ms: Option<f64>,
    dry_run: bool,
    hidden: Option<String>,
    trace_id: Option<String>,
    read_only: bool,
}

impl Owned {
    fn of(instance: Arc<str>, r: &AuditRecord<'_>) -> Self {
        Self {
            instance,
            time: r.time,
            call: r.call.to_owned(),
            request_id: r.request_id.to_owned(),
            source: r.source.to_owned(),
            principal: r.principal.map(str::to_owned),
            tool: r.tool.to_owned(),
            arguments: r.arguments.clone(),
            outcome: r.outcome.map(str::to_owned),
            duration_ms: r.duration_ms,
            dry_run: r.dry_run,
            hidden: r.hidden.map(str::to_owned),
            trace_id: r.trace_id.map(str::to_owned),
            read_only: r.read_only,
        }
    }

    pub(super) fn record(&self) -> AuditRecord<'_> {
        AuditRecord {
            event: AuditEvent::Outcome,
            time: self.time,
            call: &self.call,
            request_id: &self.request_id,
            source: &self.source,
            principal: self.principal.as_deref(),
            tool: &self.tool,
            arguments: &self.arguments,
            outcome: self.outcome.as_deref(),
            duration_ms: self.duration_ms,
            dry_run: self.dry_run,
            hidden: self.hidden.as_deref(),
            trace_id: self.trace_id.as_deref(),
            read_only: self.read_only,
        }
    }
}
