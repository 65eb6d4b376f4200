//! The audit log, written ahead: a call's intent is recorded before its tool runs, and its
//! outcome after.
//!
//! Every call that reached the pipeline gets an `outcome` record (denials included: a call refused
//! before its tool runs has only that). Before a tool's code runs, an `intent` record is
//! written: for a call that passed every check, and for the dry-run preview of an unconfirmed
//! destructive call (marked `dry_run`, its outcome then `confirmation_required`). If the intent
//! cannot be written the call is refused with `unavailable` and its tool never runs: no effect
//! goes unrecorded. A process killed while a tool runs leaves an
//! intent with no outcome; the next process to open the log alone reports each such call as
//! "outcome unknown" (a warning, [`Audit::recover`], and an `outcome` record
//! with outcome `unknown`).
//!
//! Records hold the time, a call id joining intent and outcome, the request id, source,
//! principal, tool, arguments (secrets redacted; long strings cut to their start, with their
//! length and SHA-256; a record's arguments at most [`MAX_RECORDED_ARGUMENTS`] bytes), then the
//! outcome type and duration. The default sink, [`JsonLinesAudit`], appends one JSON line per
//! record: each is written to the operating system before the call goes on (a crash of the
//! process loses none), and for tools not annotated read-only also synced to disk first (nor
//! does a power cut). Implement [`Audit`] to send records elsewhere.
#![doc = include_str!("../../docs/audit.md")]

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::layers::hooks::{CallObserver, CompletedCall, StartingCall};
use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::hex;

/// Strings in recorded arguments longer than this many bytes keep only their start, with their
/// length and SHA-256.
pub const MAX_RECORDED_STRING: usize = 256;

/// A record's arguments, serialized, are at most this many bytes; larger ones are replaced by
/// their length and SHA-256.
pub const MAX_RECORDED_ARGUMENTS: usize = 16 * 1024;

/// Which record of a call this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditEvent {
    /// The tool is about to run: the call passed every check, or it is the dry-run preview of
    /// an unconfirmed destructive call.
    Intent,
    /// The call ended; the caller gets its answer once this is recorded.
    Outcome,
}

/// One audit record.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord<'a> {
    /// `intent` or `outcome`.
    pub event: AuditEvent,
    /// Seconds since the Unix epoch, with microseconds.
    pub time: f64,
    /// Joins a call's intent and outcome records; unique across processes sharing a log.
    pub call: &'a str,
    /// The request id.
    pub request_id: &'a str,
    /// `cli`, `http`, ...
    pub source: &'a str,
    /// The principal, if authenticated.
    pub principal: Option<&'a str>,
    /// The tool's name as asked for.
    pub tool: &'a str,
    /// The arguments: secrets redacted, large values cut (see the module documentation).
    pub arguments: &'a Value,
    /// `ok`, or the error type (outcome records only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<&'a str>,
    /// Milliseconds in the pipeline (outcome records only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// A dry run: the tool was asked only what it would do (the preview of an unconfirmed
    /// destructive call, or a call with a dry run).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// For a tool hidden from its caller, who was answered `unknown_tool`: the policy's reason
    /// (outcome records only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden: Option<&'a str>,
    /// The W3C trace id of the trace the call belongs to, when its caller sent one (an HTTP
    /// request's `traceparent` header).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<&'a str>,
    /// Whether the tool is annotated read-only (its records need not be synced).
    #[serde(skip)]
    pub read_only: bool,
}

/// A sink for audit records.
///
/// Its methods return futures, so that a sink on the network (such as the PostgreSQL one of the
/// `postgres` feature) waits without holding a runtime worker.
pub trait Audit: Send + Sync + 'static {
    /// Stores one record. Resolving to `Ok` means the record is as durable as this sink makes
    /// it; the call waits for it. An `Err` on an intent refuses the call with `unavailable`,
    /// its message included, which the caller reads: name the kind of store that failed, never
    /// where it is or how to log in (log that).
    fn record<'a>(&'a self, record: &'a AuditRecord<'a>) -> BoxFuture<'a, std::io::Result<()>>;

    /// The latest `limit` outcome records (of `tool` only, if given), newest first: what the
    /// console's activity list and `GET /audit` show. A sink that cannot read its records back
    /// answers `Unsupported`, the default.
    fn recent<'a>(
        &'a self,
        limit: usize,
        tool: Option<&'a str>,
    ) -> BoxFuture<'a, std::io::Result<Vec<Value>>> {
        let _ = (limit, tool);
        Box::pin(std::future::ready(Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "this audit sink cannot be read back",
        ))))
    }

    /// The calls whose intent was recorded by a process that ended before their outcome was:
    /// each is given an `outcome` record with outcome `unknown`, exactly once across the
    /// processes sharing the sink, and returned. [`JsonLinesAudit`] finds them when it opens
    /// its log and returns those; a shared sink looks for processes whose lease expired. The
    /// default finds none.
    fn recover(&self) -> BoxFuture<'_, std::io::Result<Vec<UnknownOutcome>>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }
}

impl<A: Audit + ?Sized> Audit for std::sync::Arc<A> {
    fn record<'a>(&'a self, record: &'a AuditRecord<'a>) -> BoxFuture<'a, std::io::Result<()>> {
        (**self).record(record)
    }

    fn recent<'a>(
        &'a self,
        limit: usize,
        tool: Option<&'a str>,
    ) -> BoxFuture<'a, std::io::Result<Vec<Value>>> {
        (**self).recent(limit, tool)
    }

    fn recover(&self) -> BoxFuture<'_, std::io::Result<Vec<UnknownOutcome>>> {
        (**self).recover()
    }
}

/// How much of the end of a log [`JsonLinesAudit::recent`](Audit::recent) reads.
const RECENT_WINDOW: u64 = 4 * 1024 * 1024;

/// Runs an [`Audit`] sink as an observer of every call.
pub(crate) struct AuditObserver<A> {
    sink: A,
    /// Makes call ids unique across the processes and replicas that share a sink: 64 random
    /// bits per process.
    process: String,
}

impl<A> AuditObserver<A> {
    pub(crate) fn new(sink: A) -> Self {
        let mut random = [0; 8];
        if getrandom::fill(&mut random).is_err() {
            // No random source: the process id and the clock still tell processes apart.
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            random[..4].copy_from_slice(&std::process::id().to_le_bytes());
            random[4..].copy_from_slice(&nanos.to_le_bytes());
        }
        Self {
            sink,
            process: hex(&random),
        }
    }

    fn call_id(&self, call_id: u64) -> String {
        format!("{}-{call_id}", self.process)
    }
}

/// How often, and after how long, an outcome that could not be written is tried again before
/// it is logged in full instead.
const OUTCOME_RETRIES: [Duration; 3] = [
    Duration::from_millis(50),
    Duration::from_millis(200),
    Duration::from_millis(500),
];

/// The trace a call belongs to: the one its caller named, or with telemetry, the trace of the
/// call's span (which continues the caller's when it named one).
fn trace_id(ctx: &crate::CallContext) -> Option<Cow<'_, str>> {
    if let Some(trace_id) = ctx.trace_id() {
        return Some(Cow::Borrowed(trace_id));
    }
    #[cfg(feature = "otel")]
    if let Some(trace_id) = crate::otel::trace_id(&tracing::Span::current()) {
        return Some(Cow::Owned(trace_id));
    }
    None
}

impl<A: Audit> CallObserver for AuditObserver<A> {
    fn starting<'a>(&'a self, call: StartingCall<'a>) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            let id = self.call_id(call.call_id);
            let arguments = bounded(call.args);
            let trace_id = trace_id(call.ctx);
            let record = AuditRecord {
                event: AuditEvent::Intent,
                time: now(),
                call: &id,
                request_id: call.ctx.request_id(),
                source: call.ctx.source().as_str(),
                principal: call.ctx.principal(),
                tool: &call.meta.name,
                arguments: &arguments,
                outcome: None,
                duration_ms: None,
                dry_run: call.ctx.dry_run(),
                hidden: None,
                trace_id: trace_id.as_deref(),
                read_only: call.meta.annotations.read_only == Some(true),
            };
            self.sink.record(&record).await.map_err(|e| {
                tracing::error!(target: "tool_runtime::layers::audit", error = %e, request_id = record.request_id, tool = record.tool, "the audit record could not be written; the call is refused");
                ToolError::new(
                    ErrorKind::UNAVAILABLE,
                    format!("the call was not run: its audit record could not be written ({e})"),
                )
            })
        })
    }

    fn observe<'a>(&'a self, call: CompletedCall<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let id = self.call_id(call.call_id);
            let arguments = bounded(call.args);
            let trace_id = trace_id(call.ctx);
            let record = AuditRecord {
                event: AuditEvent::Outcome,
                time: now(),
                call: &id,
                request_id: call.ctx.request_id(),
                source: call.ctx.source().as_str(),
                principal: call.ctx.principal(),
                tool: &call.envelope.tool,
                arguments: &arguments,
                outcome: Some(call.envelope.error().map_or("ok", |e| e.kind().as_str())),
                duration_ms: Some((call.duration.as_secs_f64() * 1e6).round() / 1e3),
                dry_run: call.ctx.dry_run(),
                hidden: call.hidden,
                trace_id: trace_id.as_deref(),
                read_only: call
                    .meta
                    .is_some_and(|m| m.annotations.read_only == Some(true)),
            };
            let mut error = match self.sink.record(&record).await {
                Ok(()) => return,
                Err(e) => e,
            };
            for pause in OUTCOME_RETRIES {
                tokio::time::sleep(pause).await;
                match self.sink.record(&record).await {
                    Ok(()) => return,
                    Err(e) => error = e,
                }
            }
            // The tool has run (or was refused): its answer stands. The record goes to the log
            // whole, so it is not lost; a started call also keeps its intent, which is reported
            // as "outcome unknown" once its process has ended.
            let record = serde_json::to_string(&record).unwrap_or_default();
            tracing::error!(target: "tool_runtime::layers::audit", error = %error, %record, "the audit record of the outcome could not be written; here it is");
        })
    }
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| (d.as_secs_f64() * 1e6).round() / 1e6)
}

/// `args` as a record stores them: long strings cut, and the whole at most
/// [`MAX_RECORDED_ARGUMENTS`] bytes. Borrowed when nothing needs cutting.
fn bounded(args: &Value) -> Cow<'_, Value> {
    let cut = if has_long_string(args) {
        Cow::Owned(cut_strings(args))
    } else {
        Cow::Borrowed(args)
    };
    let size = serde_json::to_vec(&*cut).map_or(0, |v| v.len());
    if size <= MAX_RECORDED_ARGUMENTS {
        return cut;
    }
    let full = serde_json::to_vec(args).unwrap_or_default();
    Cow::Owned(serde_json::json!({
        "$truncated": { "bytes": full.len(), "sha256": hex(&Sha256::digest(&full)) }
    }))
}

fn has_long_string(v: &Value) -> bool {
    match v {
        Value::String(s) => s.len() > MAX_RECORDED_STRING,
        Value::Array(items) => items.iter().any(has_long_string),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.len() > MAX_RECORDED_STRING || has_long_string(v)),
        _ => false,
    }
}

fn cut_strings(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(cut(s)),
        Value::Array(items) => Value::Array(items.iter().map(cut_strings).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (cut(k), cut_strings(v))).collect())
        }
        other => other.clone(),
    }
}

/// A string longer than [`MAX_RECORDED_STRING`] as `"<start>… [<n> bytes, sha256 <hex>]"`.
fn cut(s: &str) -> String {
    if s.len() <= MAX_RECORDED_STRING {
        return s.to_owned();
    }
    let end = crate::tool::error::floor_boundary(s, 64);
    format!(
        "{}… [{} bytes, sha256 {}]",
        &s[..end],
        s.len(),
        hex(&Sha256::digest(s.as_bytes()))
    )
}

/// A call whose intent was recorded by a process that ended before its outcome was.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownOutcome {
    /// The call id.
    pub call: String,
    /// The tool.
    pub tool: String,
    /// The request id.
    pub request_id: String,
    /// When the intent was recorded (seconds since the Unix epoch).
    pub time: f64,
}

/// Appends one JSON line per record to a file.
///
/// Several processes may share one log (a server and command-line calls). Each holds a shared
/// lock on the file while it is open; the one that opens it alone (no other process has it
/// open) first looks for intents without outcomes and records them as `unknown`.
#[derive(Debug)]
pub struct JsonLinesAudit {
    file: Mutex<File>,
    unknown: Vec<UnknownOutcome>,
}

/// A line that marks everything before it as resolved: recovery reads only what follows the
/// last one. Every record starts with `{"event":`, so only a record can match at a line start.
const CHECKPOINT: &[u8] = b"{\"event\":\"checkpoint\"";

/// Recovery writes a checkpoint once it has read more than this, so the next reads less.
const CHECKPOINT_AFTER: usize = 64 * 1024;

impl JsonLinesAudit {
    /// Opens (creating if needed) the file for appending, and resolves the intents left without
    /// outcomes by processes that ended, if no other process has the file open.
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<Self> {
        let path = path.as_ref();
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)?;
        let unknown = match file.try_lock() {
            Ok(()) => {
                let found = recover(&mut file);
                file.unlock()?;
                file.lock_shared()?;
                found?
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                // Another process has it open: it resolved what was left when it opened it.
                file.lock_shared()?;
                Vec::new()
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        };
        for u in &unknown {
            tracing::warn!(
                target: "tool_runtime::layers::audit",
                log = %path.display(),
                call = %u.call,
                tool = %u.tool,
                request_id = %u.request_id,
                started = u.time,
                "outcome unknown: the process ended while this call ran; check its effect"
            );
        }
        Ok(Self {
            file: Mutex::new(file),
            unknown,
        })
    }
}

/// Reads the log since its last checkpoint, appends an `unknown` outcome for every intent
/// without one, and a checkpoint if that was a long read. The caller holds the exclusive lock.
fn recover(file: &mut File) -> std::io::Result<Vec<UnknownOutcome>> {
    let tail = since_checkpoint(file)?;
    let mut open: HashMap<String, Value> = HashMap::new();
    for line in tail.split(|&b| b == b'\n') {
        // A line cut short by a crash does not parse, and is passed over.
        let Ok(record) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let Some(call) = record["call"].as_str() else {
            continue;
        };
        match record["event"].as_str() {
            // A dry run changes nothing: one left without an outcome has no effect to check.
            Some("intent") if record["dry_run"] != true => {
                open.insert(call.to_owned(), record);
            }
            Some("outcome") => {
                open.remove(call);
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    // A record cut short by a crash must not swallow the next one.
    if !tail.is_empty() && !tail.ends_with(b"\n") {
        out.push(b'\n');
    }
    let mut unknown: Vec<UnknownOutcome> = open
        .into_values()
        .map(|mut intent| {
            let found = UnknownOutcome {
                call: intent["call"].as_str().unwrap_or_default().to_owned(),
                tool: intent["tool"].as_str().unwrap_or_default().to_owned(),
                request_id: intent["request_id"].as_str().unwrap_or_default().to_owned(),
                time: intent["time"].as_f64().unwrap_or_default(),
            };
            intent["event"] = "outcome".into();
            intent["time"] = now().into();
            intent["outcome"] = "unknown".into();
            if let Ok(line) = serde_json::to_vec(&intent) {
                out.extend_from_slice(&line);
                out.push(b'\n');
            }
            found
        })
        .collect();
    unknown.sort_by(|a, b| a.time.total_cmp(&b.time));
    if tail.len() > CHECKPOINT_AFTER || !unknown.is_empty() {
        out.extend_from_slice(CHECKPOINT);
        out.extend_from_slice(format!(",\"time\":{}}}\n", now()).as_bytes());
    }
    if !out.is_empty() {
        file.write_all(&out)?;
        file.sync_data()?;
    }
    Ok(unknown)
}

/// The bytes after the last checkpoint line (the whole file if there is none), read backwards
/// in blocks so that a long log with a recent checkpoint costs one block.
fn since_checkpoint(file: &mut File) -> std::io::Result<Vec<u8>> {
    const BLOCK: u64 = 64 * 1024;
    let mut end = file.seek(SeekFrom::End(0))?;
    let mut tail: Vec<u8> = Vec::new();
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let mut block = vec![0; usize::try_from(end - start).unwrap_or(0)];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut block)?;
        block.extend_from_slice(&tail);
        tail = block;
        end = start;
        // The last checkpoint at a line start in what has been read (a match straddling the
        // block boundary is found with the next block).
        let at_line_start = |i: usize| i == 0 && end == 0 || i > 0 && tail[i - 1] == b'\n';
        if let Some(i) = (0..tail.len())
            .rev()
            .filter(|&i| tail[i..].starts_with(CHECKPOINT))
            .find(|&i| at_line_start(i))
        {
            tail.drain(..i);
            // Drop the checkpoint line itself.
            let next = tail
                .iter()
                .position(|&b| b == b'\n')
                .map_or(tail.len(), |n| n + 1);
            tail.drain(..next);
            return Ok(tail);
        }
    }
    Ok(tail)
}

impl Audit for JsonLinesAudit {
    /// Writes the line before the future is returned: a local file answers at once.
    fn record<'a>(&'a self, record: &'a AuditRecord<'a>) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(std::future::ready(self.append(record)))
    }

    /// Reads the last 4 MiB of the log: older records are not listed.
    fn recent<'a>(
        &'a self,
        limit: usize,
        tool: Option<&'a str>,
    ) -> BoxFuture<'a, std::io::Result<Vec<Value>>> {
        Box::pin(std::future::ready(self.read_recent(limit, tool)))
    }

    /// The calls found when the log was opened.
    fn recover(&self) -> BoxFuture<'_, std::io::Result<Vec<UnknownOutcome>>> {
        Box::pin(std::future::ready(Ok(self.unknown.clone())))
    }
}

impl JsonLinesAudit {
    fn append(&self, record: &AuditRecord<'_>) -> std::io::Result<()> {
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

    fn read_recent(&self, limit: usize, tool: Option<&str>) -> std::io::Result<Vec<Value>> {
        let mut tail = Vec::new();
        {
            let mut file = self
                .file
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let end = file.seek(SeekFrom::End(0))?;
            file.seek(SeekFrom::Start(end.saturating_sub(RECENT_WINDOW)))?;
            Read::by_ref(&mut *file)
                .take(RECENT_WINDOW)
                .read_to_end(&mut tail)?;
        }
        let mut found = Vec::new();
        // Newest first; a first line cut by the window, or by a crash, does not parse.
        for line in tail.rsplit(|&b| b == b'\n') {
            if found.len() >= limit {
                break;
            }
            let Ok(record) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if record["event"] == "outcome" && tool.is_none_or(|t| record["tool"] == t) {
                found.push(record);
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn recent_lists_outcomes_newest_first_by_tool() {
        let path = std::env::temp_dir().join(format!("audit-recent-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let log = JsonLinesAudit::open(&path).unwrap();
        let args = json!({});
        for (i, (event, tool)) in [
            (AuditEvent::Intent, "a"),
            (AuditEvent::Outcome, "a"),
            (AuditEvent::Outcome, "b"),
            (AuditEvent::Outcome, "a"),
        ]
        .into_iter()
        .enumerate()
        {
            let call = i.to_string();
            log.append(&AuditRecord {
                event,
                time: 0.0,
                call: &call,
                request_id: "r",
                source: "cli",
                principal: None,
                tool,
                arguments: &args,
                outcome: (event == AuditEvent::Outcome).then_some("ok"),
                duration_ms: None,
                dry_run: false,
                hidden: None,
                trace_id: None,
                read_only: true,
            })
            .unwrap();
        }
        let calls = |limit, tool| -> Vec<String> {
            log.read_recent(limit, tool)
                .unwrap()
                .iter()
                .map(|r| r["call"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(calls(10, None), ["3", "2", "1"]);
        assert_eq!(calls(10, Some("a")), ["3", "1"]);
        assert_eq!(calls(1, None), ["3"]);
        drop(log);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn long_strings_and_large_arguments_are_cut_with_length_and_hash() {
        let small = json!({"a": "short", "n": 5});
        assert!(matches!(bounded(&small), Cow::Borrowed(_)));

        let long = "é".repeat(1000);
        let v = bounded(&json!({"a": long, "list": [long]})).into_owned();
        let a = v["a"].as_str().unwrap();
        assert!(a.starts_with("éé") && a.len() < 200, "{a}");
        assert!(a.contains("[2000 bytes, sha256 "), "{a}");
        assert_eq!(v["list"][0], v["a"]);

        let many: Vec<String> = (0..2000).map(|i| format!("item {i}")).collect();
        let v = bounded(&json!({ "many": many })).into_owned();
        let size = v["$truncated"]["bytes"].as_u64().unwrap();
        assert!(size > 16 * 1024);
        assert_eq!(v["$truncated"]["sha256"].as_str().unwrap().len(), 64);
    }

    #[test]
    fn the_checkpoint_search_finds_the_last_one_at_a_line_start() {
        let dir = std::env::temp_dir().join(format!("audit-cp-{}", std::process::id()));
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&dir)
            .unwrap();
        let filler = format!("{{\"event\":\"outcome\",\"x\":\"{}\"}}\n", "y".repeat(100));
        let mut text = String::new();
        text.push_str("{\"event\":\"checkpoint\",\"time\":1}\n");
        for _ in 0..2000 {
            text.push_str(&filler);
        }
        text.push_str("{\"event\":\"checkpoint\",\"time\":2}\n");
        text.push_str("{\"event\":\"intent\",\"arguments\":{\"event\":\"checkpoint\"}}\n");
        file.write_all(text.as_bytes()).unwrap();
        let tail = since_checkpoint(&mut file).unwrap();
        assert_eq!(
            String::from_utf8(tail).unwrap(),
            "{\"event\":\"intent\",\"arguments\":{\"event\":\"checkpoint\"}}\n"
        );
        drop(file);
        let _ = std::fs::remove_file(&dir);
    }
}
