//! A bounded load test on loopback: 200 concurrent callers for 3 s (`TOOL_TESTS_LOAD_SECONDS`
//! for longer) against the HTTP front end
//! with rate and concurrency limits engaged, the audit log on, and the demo's SQLite store
//! (a pool of connections) taking a write transaction on every third call. Only designed responses come
//! back, the audit log has exactly one record per answered call, and memory stays flat.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_runtime::http::{self, ServerOptions};
use tool_runtime::layers::audit::JsonLinesAudit;

const CALLERS: usize = 200;

/// How long the callers call: 3 s in the default suite, `TOOL_TESTS_LOAD_SECONDS` to soak longer.
fn run_for() -> Duration {
    let seconds = std::env::var("TOOL_TESTS_LOAD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    Duration::from_secs(seconds)
}

/// This process's resident size, from `/proc` (the test runs on Linux only).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line in /proc/self/status")
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_callers_under_limits_get_only_designed_answers() {
    let run_for = run_for();
    let dir = tool_test_support::TempDir::new("load");
    let audit_path = dir.join("audit.jsonl");
    let config = demo_app::config::Config::parse(demo_app::config::DEFAULT).unwrap();
    let registry = config
        .apply(demo_app::registry_builder())
        .concurrency_limit("device_list", Some(2))
        .concurrency_queue(8)
        .audit(JsonLinesAudit::open(&audit_path).unwrap())
        .state(
            demo_app::Stores::sqlite(dir.join("load.db"))
                .unwrap()
                .devices,
        )
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(
        listener,
        http::router(Arc::new(registry), ServerOptions::default()),
        async {
            let _ = stopped.await;
        },
        &http::ServerOptions::default().grace(Duration::from_secs(5)),
    ));

    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CALLERS)
        .build()
        .unwrap();
    let deadline = Instant::now() + run_for;
    let mut rss = Vec::new();
    let callers: Vec<_> = (0..CALLERS)
        .map(|i| tokio::spawn(call_until(client.clone(), base.clone(), i, deadline)))
        .collect();
    rss.push(rss_kib());
    for _ in 0..4 {
        tokio::time::sleep(run_for / 5).await;
        rss.push(rss_kib());
    }
    let mut answers = Vec::new();
    for c in callers {
        answers.extend(c.await.unwrap());
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();

    let mut by_outcome: BTreeMap<(u16, String), usize> = BTreeMap::new();
    for (status, kind, _) in &answers {
        *by_outcome.entry((*status, kind.clone())).or_default() += 1;
    }
    // No `internal`: SQLite never answered `database is locked` to 200 callers.
    let designed = [
        (200, "ok"),
        (400, "invalid_code"),
        (429, "rate_limited"),
        (503, "unavailable"),
    ];
    for ((status, kind), count) in &by_outcome {
        assert!(
            designed.contains(&(*status, kind.as_str())),
            "undesigned response {status} {kind} ({count} times): {by_outcome:?}"
        );
    }
    assert!(
        by_outcome.get(&(200, "ok".into())).copied().unwrap_or(0) > 100,
        "{by_outcome:?}"
    );
    assert!(
        by_outcome.contains_key(&(429, "rate_limited".into())),
        "the rate limit engaged: {by_outcome:?}"
    );

    check_audit(&audit_path, &answers);

    // Memory flat: after warm-up, the resident size grows by less than 64 MiB.
    let growth = rss.last().unwrap().saturating_sub(rss[1]);
    assert!(
        growth < 64 * 1024,
        "RSS grew by {growth} KiB during the run: {rss:?}"
    );
    eprintln!(
        "load: {} answers, {by_outcome:?}, RSS KiB {rss:?}",
        answers.len()
    );
}

/// One outcome record per answered call: none lost, none duplicated; every intent has its
/// outcome.
fn check_audit(audit_path: &std::path::Path, answers: &[(u16, String, String)]) {
    let text = std::fs::read_to_string(audit_path).unwrap();
    let (records, intents): (Vec<Value>, Vec<Value>) = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .partition(|r| r["event"] == "outcome");
    assert_eq!(records.len(), answers.len(), "records vs answers");
    let finished: HashSet<&str> = records
        .iter()
        .map(|r| r["call"].as_str().unwrap())
        .collect();
    for intent in &intents {
        assert!(
            finished.contains(intent["call"].as_str().unwrap()),
            "{intent}"
        );
    }
    let ids: HashSet<&str> = records
        .iter()
        .map(|r| r["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), answers.len(), "duplicated records");
    for (_, _, id) in answers {
        assert!(ids.contains(id.as_str()), "no record of {id}");
    }
}

/// One caller: requests until the deadline; returns (status, error type or "ok", request id).
async fn call_until(
    client: reqwest::Client,
    base: String,
    i: usize,
    deadline: Instant,
) -> Vec<(u16, String, String)> {
    let mut seen: Vec<(u16, String, String)> = Vec::new();
    let mut n = 0u64;
    while Instant::now() < deadline {
        n += 1;
        let (tool, body) = match n % 3 {
            0 => ("device_add", json!({"workspace": format!("w{i}")})),
            1 => ("device_list", json!({"workspace": format!("w{i}")})),
            // A write transaction on the database every time (the code never matches).
            _ => ("device_pair", json!({"code": "0000", "device_name": "x"})),
        };
        let id = format!("load-{i}-{n}");
        let r = client
            .post(format!("{base}/tools/{tool}"))
            .header("x-request-id", &id)
            .json(&body)
            .send()
            .await
            .expect("the server answers every request");
        let status = r.status().as_u16();
        let env: Value = r.json().await.expect("every answer is JSON");
        let kind = env["error"]["type"].as_str().unwrap_or("ok").to_owned();
        seen.push((status, kind, id));
    }
    seen
}
