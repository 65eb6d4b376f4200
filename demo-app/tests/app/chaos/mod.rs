//! The chaos run: three `demo-app serve` replicas behind the shipped nginx file, on one
//! PostgreSQL and one Redis, each backend behind a TCP proxy of the test's own
//! ([`FaultProxy`]), under mixed traffic while faults come at seeded random moments: a replica
//! killed (SIGKILL) and started again, a replica paused (SIGSTOP) past its audit lease and
//! resumed, a rolling restart, and each backend stopped, blackholed (connections accepted,
//! nothing answered) and slowed. Afterwards the databases and the clients' own records are
//! checked against what the replicas promise; see `tool-runtime/docs/scale-out.md`.
//!
//! `CHAOS_SECONDS` sets how long faults come (60 by default); `CHAOS_SEED` replays a run (the
//! seed and the schedule are printed).
mod checks;
mod clients;
mod rig;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tool_runtime::agent::Api;
use tool_test_support::fake_provider::{FakeProvider, Step};

use crate::postgres::log;
use crate::replicas::readyz;
use checks::Report;
use clients::{Shared, spawn_traffic};
use rig::{Rig, Rng};

/// The audit lease: a replica paused longer than this is presumed dead by the others.
pub(crate) const LEASE: Duration = Duration::from_secs(2);

/// The limit on `device_list` that every replica shares through Redis.
pub(crate) const LIST_BURST: usize = 60;

/// How long a 2025-11-25 client waits for a call's answer.
pub(crate) const SESSION_CALL_LIMIT: Duration = Duration::from_secs(15);

/// The MCP clients in sessions.
pub(crate) const SESSION_CLIENTS: usize = 2;

/// The scheduled tasks, made due one after another across the run.
pub(crate) const TASKS: usize = 24;

/// The replicas' configuration: a short lease, short waits on the backends, a shared limit on
/// `device_list`, the scheduler on.
const CONFIG: &str = "\
[limits.device_add]\nrate = \"1000000/min\"\n\
[limits.device_pair]\nrate = \"1000000/min\"\n\
[limits.device_revoke]\nrate = \"1000000/min\"\n\
[limits.schedule_task]\nrate = \"1000000/min\"\n\
[limits.device_list]\nrate = \"60/min\"\n\
[postgres]\naudit_lease = \"2s\"\naudit_renew = \"500ms\"\nconnect_timeout = \"1s\"\n\
statement_timeout = \"1s\"\npool_wait = \"1s\"\n\
[redis]\ncommand_timeout = \"500ms\"\npool_wait = \"500ms\"\n\
[scheduler]\nenabled = true\ntick = \"200ms\"\n\
[agent]\nprovider = \"openai\"\nmodel = \"gpt-test\"\n";

/// The model key the fake provider expects.
const KEY: &str = "sk-demo-test-key-0042";

/// The run: traffic and faults for `CHAOS_SECONDS`, then every check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_keep_their_promises_under_seeded_faults() {
    let seconds: u64 = std::env::var("CHAOS_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let seed: u64 = std::env::var("CHAOS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
                .into()
        });
    eprintln!(
        "chaos: seed {seed} for {seconds} s (CHAOS_SEED={seed} CHAOS_SECONDS={seconds} to replay)"
    );
    // Mixed, so that no seed leaves the generator at zero (where it would stay).
    let mut rng = Rng(seed ^ 0x9E37_79B9_7F4A_7C15);
    let script = (0..TASKS)
        .map(|i| Step::text(&format!("done {i}")))
        .collect();
    let fake = FakeProvider::start(Api::OpenAiChat, KEY, script).await;
    let env = [
        ("OPENAI_API_KEY", KEY),
        ("OPENAI_BASE_URL", fake.base_url.as_str()),
    ];
    let mut rig = Rig::start(&env).await;
    let http = reqwest::Client::new();

    // Tasks scheduled an hour ahead, then made due across the run, one statement.
    let at = chrono::Utc::now() + chrono::Duration::hours(1);
    for i in 0..TASKS {
        let body = json!({"prompt": format!("Chaos task {i}."), "schedule_type": "once",
                          "schedule_value": at.to_rfc3339()});
        let response = http
            .post(format!("{}/tools/schedule_task", rig.nginx.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
    }
    let spacing = (seconds * 1000 / TASKS as u64).max(1);
    rig.sql(&format!(
        "UPDATE tasks SET next_run = floor(extract(epoch FROM now()))::bigint + 1 + \
         (n * {spacing}) / 1000 FROM (SELECT task_id AS id, row_number() OVER (ORDER BY task_id) - 1 AS n \
         FROM tasks) o WHERE task_id = o.id"
    ));

    let stop = Arc::new(AtomicBool::new(false));
    let record: Shared = Arc::default();
    let started = Instant::now();
    let traffic = spawn_traffic(&rig.nginx.base, &stop, &record);

    let (schedule, faults) = rig
        .run_faults(&mut rng, started + Duration::from_secs(seconds), &env)
        .await;
    // A last quiet while under traffic, then the traffic stops.
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::Relaxed);
    for t in traffic {
        t.await.unwrap();
    }
    let ran_for = started.elapsed();

    // Every replica ready again, none restarted for it.
    for r in &mut rig.replicas {
        let deadline = Instant::now() + Duration::from_secs(20);
        while readyz(&http, &r.base()).await != Some(200) {
            assert!(
                Instant::now() < deadline,
                "{} not ready again:\n{}",
                r.id,
                log(r)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let exited = r.served.as_mut().unwrap().child.try_wait().unwrap();
        assert!(exited.is_none(), "{} exited: {exited:?}\n{}", r.id, log(r));
    }

    let record = std::mem::take(&mut *record.lock().unwrap());
    let mut report = Report::default();
    report.check_answers(&record, &schedule);
    report.check_audit(&rig, &record, &schedule);
    report.check_devices(&rig, &record);
    report.check_rate(&record, ran_for);
    report.check_tasks(&rig, &fake, &schedule).await;
    assert!(
        record.reused.is_empty(),
        "tokens redeemed twice: {:?}\n{schedule}",
        record.reused
    );
    // A session call in flight on a replica killed has no one left to answer it; every other
    // fault (a pause, a drain, a backend) answers it. So does a session's return to its
    // restarted replica while a call on the one that stood in awaits its client's answer: the
    // replicas relay the answer through Redis.
    let kills = faults.get("replica killed").copied().unwrap_or_default();
    assert!(
        record.lost.len() <= kills * SESSION_CLIENTS,
        "MCP session calls lost beyond the {kills} kills: {:?}\n{schedule}\n{}{}",
        record.lost,
        warnings(&rig),
        cut_off(&rig)
    );
    eprintln!(
        "chaos: seed {seed}, {:.0} s of traffic, faults: {faults:?}\n{}\n{}\nlost: {:?}",
        ran_for.as_secs_f64(),
        report.lines.join("\n"),
        record.mcp.join("\n"),
        record.lost
    );
}

/// The requests nginx had sent a replica that gave no answer (a 502), for a failure's report:
/// its errors other than a connection refused, which it takes to another replica.
fn cut_off(rig: &Rig) -> String {
    let log = rig.nginx.error_log();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("[error]") && !l.contains("while connecting to upstream"))
        .collect();
    let mut out = format!("nginx cut off {} requests; the last:\n", lines.len());
    for l in &lines[lines.len().saturating_sub(20)..] {
        out += l;
        out.push('\n');
    }
    out
}

/// What the replicas warned of, for a failure's report: the last lines at WARN or ERROR.
fn warnings(rig: &Rig) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for r in &rig.replicas {
        let log = log(r);
        let lines: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("WARN") || l.contains("ERROR"))
            .collect();
        let _ = writeln!(out, "{} warned {} times; the last:", r.id, lines.len());
        for l in &lines[lines.len().saturating_sub(30)..] {
            out += l;
            out.push('\n');
        }
    }
    out
}
