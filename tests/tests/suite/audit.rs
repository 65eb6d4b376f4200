//! The audit log: an intent before a tool runs and an outcome after, one outcome per call that
//! reached the pipeline (denials included), secrets redacted, none lost or duplicated under
//! concurrency; a call whose intent cannot be written never runs; intents left by a killed
//! process are reported as "outcome unknown".

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use tool_runtime::Secret;
use tool_runtime::layers::audit::{Audit, JsonLinesAudit};
use tool_runtime::layers::policy::DenyDestructive;
use tool_runtime::prelude::*;

/// Look something up.
#[tool(annotations(read_only))]
async fn lookup(
    /// Key
    key: String,
) -> String {
    key
}

/// Drop the table.
#[tool(annotations(destructive))]
async fn drop_table(
    /// Admin password
    password: Secret<String>,
) -> bool {
    !password.expose().is_empty()
}

/// Counts its runs.
#[tool]
async fn touch() -> bool {
    TOUCHED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    true
}

static TOUCHED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Purge old rows; its dry run counts them.
#[tool(annotations(destructive), dry_run)]
async fn purge(ctx: CallContext) -> u32 {
    PURGE_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    if ctx.dry_run() { 3 } else { 0 }
}

static PURGE_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Sweep old rows; counts its runs, dry runs included (only the test of an unwritable log
/// calls it, so no other test moves its count).
#[tool(annotations(destructive), dry_run)]
async fn sweep() -> u32 {
    SWEEP_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    0
}

static SWEEP_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "tool-tests-audit-{name}-{}.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        TempFile(path)
    }
    fn records(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.0)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).expect("every line is JSON"))
            .collect()
    }
    /// Every record, passing over lines that do not parse (cut short by a crash).
    fn records_lenient(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.0)
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
    /// The outcome records.
    fn lines(&self) -> Vec<Value> {
        self.records()
            .into_iter()
            .filter(|r| r["event"] == "outcome")
            .collect()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[tokio::test]
async fn every_call_is_recorded_with_its_outcome_and_no_secret() {
    let began = std::time::Instant::now();
    let log = TempFile::new("outcomes");
    let r = registry_builder()
        .audit(JsonLinesAudit::open(&log.0).unwrap())
        .policy(DenyDestructive::for_sources([Source::Agent]))
        .build()
        .unwrap();
    let c = |s| Caller::new(s).principal("ann").request_id("r-1");
    r.call("lookup", json!({"key": "k"}), c(Source::Cli)).await;
    r.call("lookup", json!({"key": 5}), c(Source::Http)).await;
    r.call("nope", json!({}), c(Source::Http)).await;
    r.call(
        "drop_table",
        json!({"password": "s3cret-value"}),
        c(Source::Agent),
    )
    .await;
    r.call(
        "drop_table",
        json!({"password": "s3cret-value"}),
        c(Source::Cli),
    )
    .await;
    r.call(
        "drop_table",
        json!({"password": "s3cret-value"}),
        c(Source::Cli).confirm(true),
    )
    .await;

    let lines = log.lines();
    let outcomes: Vec<&str> = lines
        .iter()
        .map(|l| l["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        [
            "ok",
            "invalid_arguments",
            "unknown_tool",
            "unknown_tool",
            "confirmation_required",
            "ok"
        ]
    );
    // The tool hidden from the agent was answered as unknown; the record keeps why.
    assert!(lines[2].get("hidden").is_none(), "{}", lines[2]);
    assert_eq!(
        lines[3]["hidden"],
        "`drop_table` is destructive, and agent callers may not call destructive tools"
    );
    let first = &lines[0];
    assert_eq!(first["tool"], "lookup");
    assert_eq!(first["source"], "cli");
    assert_eq!(first["principal"], "ann");
    assert_eq!(first["request_id"], "r-1");
    assert_eq!(first["arguments"], json!({"key": "k"}));
    assert!(first["time"].as_f64().unwrap() > 1.7e9);
    // In milliseconds, within the time the test has taken so far.
    let duration = first["duration_ms"].as_f64().unwrap();
    let elapsed_ms = began.elapsed().as_secs_f64() * 1000.0;
    assert!(duration <= elapsed_ms, "{duration} vs {elapsed_ms}");
    assert_eq!(lines[5]["arguments"], json!({"password": "[redacted]"}));
    let text = std::fs::read_to_string(&log.0).unwrap();
    assert!(!text.contains("s3cret-value"), "{text}");

    // Only the calls whose tools ran have an intent, written before their outcome.
    let records = log.records();
    let events: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r["event"].as_str().unwrap(), r["tool"].as_str().unwrap()))
        .collect();
    assert_eq!(
        events,
        [
            ("intent", "lookup"),
            ("outcome", "lookup"),
            ("outcome", "lookup"),
            ("outcome", "nope"),
            ("outcome", "drop_table"),
            ("outcome", "drop_table"),
            ("intent", "drop_table"),
            ("outcome", "drop_table"),
        ]
    );
    assert_eq!(records[0]["call"], records[1]["call"]);
    assert_ne!(records[0]["call"], records[2]["call"]);
    assert_eq!(records[6]["arguments"], json!({"password": "[redacted]"}));
    assert!(records[0].get("outcome").is_none());
}

/// A log that cannot be written refuses every call before its tool runs: `/dev/full` takes the
/// open but fails every write.
#[tokio::test]
async fn a_call_whose_intent_cannot_be_written_is_refused_and_never_runs() {
    let r = registry_builder()
        .audit(JsonLinesAudit::open("/dev/full").unwrap())
        .build()
        .unwrap();
    let env = r.call("touch", json!({}), Caller::new(Source::Cli)).await;
    assert_eq!(env.error().unwrap().kind(), "unavailable", "{env:?}");
    // The message says what failed: here the device, which is full.
    let message = env.error().unwrap().message();
    assert!(
        message.starts_with("the call was not run: its audit record could not be written (")
            && message.contains("No space left on device"),
        "{message}"
    );
    assert_eq!(TOUCHED.load(std::sync::atomic::Ordering::SeqCst), 0);
    // Nor does the dry run that would preview a destructive call's question.
    let env = r.call("sweep", json!({}), Caller::new(Source::Cli)).await;
    assert_eq!(env.error().unwrap().kind(), "unavailable", "{env:?}");
    assert_eq!(SWEEP_RUNS.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// The dry run that previews an unconfirmed destructive call is tool code at work: it has an
/// intent (marked as a dry run) before it runs, and the call's outcome after.
#[tokio::test]
async fn the_preview_of_an_unconfirmed_call_has_an_intent_and_an_outcome() {
    let log = TempFile::new("preview");
    let r = registry_builder()
        .audit(JsonLinesAudit::open(&log.0).unwrap())
        .build()
        .unwrap();
    let env = r.call("purge", json!({}), Caller::new(Source::Http)).await;
    let question = env.error().unwrap().confirmation().expect("a question");
    assert_eq!(question.preview, Some(json!(3)));
    let records = log.records();
    let seen: Vec<(&str, bool, Option<&str>)> = records
        .iter()
        .map(|r| {
            (
                r["event"].as_str().unwrap(),
                r["dry_run"] == true,
                r["outcome"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("intent", true, None),
            ("outcome", false, Some("confirmation_required"))
        ]
    );
    assert_eq!(records[0]["call"], records[1]["call"]);
}

/// Long strings are stored as their start with length and hash, so rejected calls with huge
/// values cannot fill the disk; the record stays small.
#[tokio::test]
async fn a_huge_argument_is_recorded_by_its_start_length_and_hash() {
    let log = TempFile::new("huge");
    let r = registry_builder()
        .audit(JsonLinesAudit::open(&log.0).unwrap())
        .build()
        .unwrap();
    let huge = "h".repeat(1_000_000);
    r.call("lookup", json!({"key": huge}), Caller::new(Source::Http))
        .await;
    r.call(
        "lookup",
        json!({"key": 5, "x": huge}),
        Caller::new(Source::Http),
    )
    .await;
    let size = std::fs::metadata(&log.0).unwrap().len();
    assert!(size < 2_000, "{size} bytes of audit");
    let records = log.records();
    let key = records[0]["arguments"]["key"].as_str().unwrap();
    assert!(key.starts_with("hhhh"), "{key}");
    let hash = key
        .split_once("[1000000 bytes, sha256 ")
        .and_then(|(_, h)| h.strip_suffix(']'))
        .expect("length and hash");
    assert_eq!(hash.len(), 64);
    // The rejected call's record is as small.
    assert_eq!(records[2]["outcome"], "invalid_arguments");
    assert_eq!(
        records[2]["arguments"]["x"]
            .as_str()
            .unwrap()
            .split_once(" [")
            .unwrap()
            .1,
        format!("1000000 bytes, sha256 {hash}]")
    );
}

/// A process killed while a tool runs leaves an intent without an outcome; the next process to
/// open the log reports it once as "outcome unknown", and records that outcome.
#[test]
fn an_intent_without_outcome_is_reported_once_as_outcome_unknown() {
    let log = TempFile::new("unknown");
    std::fs::write(
        &log.0,
        concat!(
            r#"{"event":"intent","time":1.5,"call":"aa-1","request_id":"r-done","source":"cli","principal":null,"tool":"lookup","arguments":{}}"#,
            "\n",
            r#"{"event":"outcome","time":1.6,"call":"aa-1","request_id":"r-done","source":"cli","principal":null,"tool":"lookup","arguments":{},"outcome":"ok","duration_ms":1.0}"#,
            "\n",
            r#"{"event":"intent","time":2.5,"call":"aa-2","request_id":"r-lost","source":"http","principal":"ann","tool":"drop_table","arguments":{"password":"[redacted]"}}"#,
            "\n",
            // A dry run cut short has had no effect to check.
            r#"{"event":"intent","time":2.55,"call":"aa-3","request_id":"r-preview","source":"http","principal":"ann","tool":"purge","arguments":{},"dry_run":true}"#,
            "\n",
            // A record cut short by the kill.
            r#"{"event":"outcome","time":2.6,"call":"aa-"#,
        ),
    )
    .unwrap();
    let audit = JsonLinesAudit::open(&log.0).unwrap();
    let unknown = unknown_outcomes(&audit);
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert_eq!(
        (
            unknown[0].call.as_str(),
            unknown[0].tool.as_str(),
            unknown[0].request_id.as_str()
        ),
        ("aa-2", "drop_table", "r-lost")
    );
    drop(audit);
    let records = log.records_lenient();
    let resolved = records
        .iter()
        .find(|r| r["call"] == "aa-2" && r["event"] == "outcome")
        .expect("the unknown outcome is recorded");
    assert_eq!(resolved["outcome"], "unknown");
    assert_eq!(resolved["principal"], "ann");

    // Reported once: the next open finds nothing left.
    assert!(unknown_outcomes(&JsonLinesAudit::open(&log.0).unwrap()).is_empty());
}

/// What the log reports as "outcome unknown" (found when it was opened).
fn unknown_outcomes(audit: &JsonLinesAudit) -> Vec<tool_runtime::layers::audit::UnknownOutcome> {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(audit.recover())
        .unwrap()
}

/// While another process (here: another open handle) has the log open, an intent without an
/// outcome may be its call in flight: it is not reported.
#[test]
fn an_intent_is_not_reported_while_another_holder_has_the_log_open() {
    let log = TempFile::new("shared");
    let first = JsonLinesAudit::open(&log.0).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log.0)
        .unwrap()
        .write_all(
            br#"{"event":"intent","time":2.5,"call":"bb-1","request_id":"r","source":"cli","principal":null,"tool":"lookup","arguments":{}}
"#,
        )
        .unwrap();
    assert!(unknown_outcomes(&JsonLinesAudit::open(&log.0).unwrap()).is_empty());
    drop(first);
    assert_eq!(
        unknown_outcomes(&JsonLinesAudit::open(&log.0).unwrap()).len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_lose_and_duplicate_no_record() {
    let log = TempFile::new("concurrent");
    let r = Arc::new(
        registry_builder()
            .audit(JsonLinesAudit::open(&log.0).unwrap())
            .build()
            .unwrap(),
    );
    let calls: Vec<_> = (0..400)
        .map(|i| {
            let r = Arc::clone(&r);
            tokio::spawn(async move {
                let tool = if i % 4 == 0 { "drop_table" } else { "lookup" };
                let args = if i % 4 == 0 {
                    json!({"password": "x"})
                } else {
                    json!({"key": format!("k{i}")})
                };
                r.call(
                    tool,
                    args,
                    Caller::new(Source::Http)
                        .request_id(format!("req-{i}"))
                        .confirm(true),
                )
                .await
            })
        })
        .collect();
    for c in calls {
        assert!(c.await.unwrap().is_ok());
    }
    let lines = log.lines();
    assert_eq!(lines.len(), 400);
    // 300 lookups and 100 confirmed drops ran: an intent each.
    assert_eq!(log.records().len(), 800);
    let ids: HashSet<&str> = lines
        .iter()
        .map(|l| l["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 400, "no duplicates, none lost");
}

/// An HTTP request's W3C `traceparent` puts its trace id on both records of the call; a
/// malformed one (upper-case hex, an all-zero trace id, a short field) puts none.
#[tokio::test]
async fn records_carry_the_trace_id_of_the_requests_traceparent() {
    use tower::ServiceExt;
    let log = TempFile::new("trace");
    let registry = Arc::new(
        registry_builder()
            .audit(JsonLinesAudit::open(&log.0).unwrap())
            .build()
            .unwrap(),
    );
    let router = tool_runtime::http::router(registry, tool_runtime::http::ServerOptions::default());
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    for traceparent in [
        format!("00-{trace}-00f067aa0ba902b7-01"),
        format!("00-{}-00f067aa0ba902b7-01", trace.to_uppercase()),
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01".to_owned(),
        format!("00-{trace}-00f067aa0ba902b7"),
    ] {
        let request = axum::http::Request::post("/tools/lookup")
            .header("content-type", "application/json")
            .header("traceparent", traceparent)
            .body(axum::body::Body::from(r#"{"key": "k"}"#))
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), 200);
    }
    let traces: Vec<Value> = log
        .records()
        .iter()
        .map(|r| r.get("trace_id").cloned().unwrap_or(Value::Null))
        .collect();
    assert_eq!(
        traces,
        [
            json!(trace),
            json!(trace),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null
        ]
    );
}

/// A sink whose first `failing` outcome writes fail, as a store that is briefly away.
struct Flaky {
    failing: std::sync::atomic::AtomicUsize,
    outcomes: std::sync::Mutex<Vec<String>>,
}

impl Audit for Flaky {
    fn record<'a>(
        &'a self,
        record: &'a tool_runtime::layers::audit::AuditRecord<'a>,
    ) -> futures_util::future::BoxFuture<'a, std::io::Result<()>> {
        use std::sync::atomic::Ordering;
        let result = match record.outcome {
            None => Ok(()),
            Some(_) if self.failing.load(Ordering::SeqCst) > 0 => {
                self.failing.fetch_sub(1, Ordering::SeqCst);
                Err(std::io::Error::other("the store is away"))
            }
            Some(outcome) => {
                self.outcomes.lock().unwrap().push(outcome.to_owned());
                Ok(())
            }
        };
        Box::pin(std::future::ready(result))
    }
}

/// An outcome the sink refuses is tried again: a sink back within the retries gets it once.
#[tokio::test]
async fn an_outcome_that_cannot_be_written_is_tried_again() {
    let sink = Arc::new(Flaky {
        failing: 2.into(),
        outcomes: Vec::new().into(),
    });
    let r = registry_builder().audit(sink.clone()).build().unwrap();
    let env = r
        .call("lookup", json!({"key": "k"}), Caller::new(Source::Cli))
        .await;
    assert!(env.is_ok(), "{env:?}");
    assert_eq!(*sink.outcomes.lock().unwrap(), ["ok"]);
}

/// The tools of this file, and no others: the test binary holds other files' tools too.
fn registry_builder() -> tool_runtime::registry::RegistryBuilder {
    tool_runtime::Registry::builder()
        .without_inventory()
        .tool(lookup::descriptor())
        .tool(drop_table::descriptor())
        .tool(touch::descriptor())
        .tool(purge::descriptor())
        .tool(sweep::descriptor())
}
