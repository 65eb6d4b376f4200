//! The audit log: one record per call that reached the pipeline, denials included.
//!
//! Each record holds the time, request id, source, principal, tool, arguments (secrets
//! redacted), outcome type and duration. The default sink, [`JsonLinesAudit`], appends one JSON
//! line per call to a file: every record is written to the operating system before the answer
//! is returned (a crash of the process loses no record of an answered call), and for tools not
//! annotated read-only it is also synced to disk first (nor does a power cut). Implement
//! [`Audit`] to send records elsewhere.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;

use crate::hooks::{CallObserver, CompletedCall};

/// One audited call.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord<'a> {
    /// Seconds since the Unix epoch, with microseconds.
    pub time: f64,
    /// The request id.
    pub request_id: &'a str,
    /// `cli`, `http`, ...
    pub source: &'a str,
    /// The principal, if authenticated.
    pub principal: Option<&'a str>,
    /// The tool's name as asked for.
    pub tool: &'a str,
    /// The arguments, secrets redacted.
    pub arguments: &'a Value,
    /// `ok`, or the error type.
    pub outcome: &'a str,
    /// Milliseconds in the pipeline.
    pub duration_ms: f64,
    /// Whether the tool is annotated read-only (its records need not be synced).
    #[serde(skip)]
    pub read_only: bool,
}

/// A sink for audit records.
pub trait Audit: Send + Sync + 'static {
    /// Stores one record. Returning means the record is as durable as this sink makes it; the
    /// call's answer waits for it.
    fn record(&self, record: &AuditRecord<'_>) -> std::io::Result<()>;
}

/// Runs an [`Audit`] sink as an observer of every call.
pub(crate) struct AuditObserver<A>(pub(crate) A);

impl<A: Audit> CallObserver for AuditObserver<A> {
    fn observe<'a>(&'a self, call: CompletedCall<'a>) -> BoxFuture<'a, ()> {
        let time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| (d.as_secs_f64() * 1e6).round() / 1e6);
        let record = AuditRecord {
            time,
            request_id: call.ctx.request_id(),
            source: call.ctx.source().as_str(),
            principal: call.ctx.principal(),
            tool: &call.envelope.tool,
            arguments: call.args,
            outcome: call.envelope.error().map_or("ok", crate::ToolError::kind),
            duration_ms: (call.duration.as_secs_f64() * 1e6).round() / 1e3,
            read_only: call
                .meta
                .is_some_and(|m| m.annotations.read_only == Some(true)),
        };
        if let Err(e) = self.0.record(&record) {
            tracing::error!(target: "tool_runtime::audit", error = %e, request_id = record.request_id, "the audit record could not be written");
        }
        Box::pin(std::future::ready(()))
    }
}

/// Appends one JSON line per call to a file.
#[derive(Debug)]
pub struct JsonLinesAudit {
    file: Mutex<File>,
}

impl JsonLinesAudit {
    /// Opens (creating if needed) the file for appending.
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            file: Mutex::new(file),
        })
    }
}

impl Audit for JsonLinesAudit {
    fn record(&self, record: &AuditRecord<'_>) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // One write per line: appends from several threads never interleave inside a record.
        file.write_all(&line)?;
        if !record.read_only {
            file.sync_data()?;
        }
        Ok(())
    }
}
