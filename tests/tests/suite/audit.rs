//! The audit log: one JSON line per call that reached the pipeline, denials included, secrets
//! redacted, none lost or duplicated under concurrency.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use tool_runtime::Secret;
use tool_runtime::audit::JsonLinesAudit;
use tool_runtime::policy::DenyDestructive;
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
    fn lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.0)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).expect("every line is JSON"))
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
            "forbidden",
            "confirmation_required",
            "ok"
        ]
    );
    let first = &lines[0];
    assert_eq!(first["tool"], "lookup");
    assert_eq!(first["source"], "cli");
    assert_eq!(first["principal"], "ann");
    assert_eq!(first["request_id"], "r-1");
    assert_eq!(first["arguments"], json!({"key": "k"}));
    assert!(first["time"].as_f64().unwrap() > 1.7e9);
    assert!(first["duration_ms"].as_f64().unwrap() >= 0.0);
    assert_eq!(lines[5]["arguments"], json!({"password": "[redacted]"}));
    let text = std::fs::read_to_string(&log.0).unwrap();
    assert!(!text.contains("s3cret-value"), "{text}");
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
    let ids: HashSet<&str> = lines
        .iter()
        .map(|l| l["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 400, "no duplicates, none lost");
}

/// The tools of this file, and no others: the test binary holds other files' tools too.
fn registry_builder() -> tool_runtime::RegistryBuilder {
    tool_runtime::Registry::builder()
        .without_inventory()
        .tool(lookup::descriptor())
        .tool(drop_table::descriptor())
}
