//! Tasks across replicas: three `demo-app serve` replicas on one PostgreSQL behind the shipped
//! nginx file, polled without affinity. A task started through one replica is read, answered
//! and cancelled through the others; then, twenty times at seeded random moments, the replica
//! running a task is killed (SIGKILL) and started again, and the task ends `failed` with its
//! outcome unknown once the lease has passed (or `completed`, had it ended before), its call
//! audited once: never run again.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_test_support::TempDir;
use tool_test_support::postgres::PostgresServer;

use crate::postgres::start;
use crate::replicas::{IDS, Replica, balancer};

/// A lease of a second and a half, and the limits out of the way.
const CONFIG: &str = "[tasks]\nlease = \"1500ms\"\npoll_interval = \"200ms\"\n\
                      [limits.device_add]\nrate = \"100000/min\"\n\
                      [limits.device_pair]\nrate = \"100000/min\"\n";

/// How many times the replica running a task is killed.
const KILLS: usize = 20;

/// `POST /tools/{tool}` at `base`, preferring a task; answers the status and the body.
async fn start_export(http: &reqwest::Client, base: &str, args: Value) -> (u16, Value, String) {
    let r = http
        .post(format!("{base}/tools/device_export"))
        .header("prefer", "respond-async")
        .json(&args)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let location = r
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, r.json().await.unwrap(), location)
}

/// The task at `location` through `base` until `done` holds: the replicas that answered.
async fn poll_until(
    http: &reqwest::Client,
    base: &str,
    location: &str,
    within: Duration,
    done: impl Fn(&Value) -> bool,
) -> (Value, BTreeSet<String>) {
    let started = Instant::now();
    let mut answered_by = BTreeSet::new();
    loop {
        let r = http.get(format!("{base}{location}")).send().await.unwrap();
        if let Some(replica) = r.headers().get("x-replica") {
            answered_by.insert(replica.to_str().unwrap().to_owned());
        }
        let status = r.status();
        let task: Value = r.json().await.unwrap();
        assert!(status.is_success(), "{status}: {task}");
        if done(&task) {
            return (task, answered_by);
        }
        assert!(started.elapsed() < within, "{task}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_hold_across_replicas_and_a_killed_replicas_task_fails_without_running_again() {
    let dir = TempDir::new("task-replicas");
    let postgres = tokio::task::block_in_place(PostgresServer::start);
    let url = postgres.create_database("demo");
    let mut replicas: Vec<Replica> = IDS
        .iter()
        .map(|id| {
            let mut replica = Replica::new(id, dir.path());
            std::fs::write(replica.dir.join("demo-app.toml"), CONFIG).unwrap();
            replica.postgres = Some(url.clone());
            replica
        })
        .collect();
    tokio::task::block_in_place(|| {
        for replica in &mut replicas {
            start(replica, &[]);
        }
    });
    let nginx = balancer("task-replicas", &replicas);
    let http = reqwest::Client::new();
    pair_devices(&http, &nginx.base, 8).await;
    answered_and_cancelled_through_the_balancer(&http, &nginx.base).await;
    killed_mid_task(&http, &nginx.base, &mut replicas, &postgres).await;
}

/// `count` devices paired through `base`.
async fn pair_devices(http: &reqwest::Client, base: &str, count: usize) {
    for i in 0..count {
        let code: Value = http
            .post(format!("{base}/tools/device_add"))
            .json(&json!({}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let paired = http
            .post(format!("{base}/tools/device_pair"))
            .json(&json!({"code": code["result"]["code"], "device_name": format!("d{i}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(paired.status(), 200);
    }
}

/// A task read, answered and cancelled through whichever replica nginx picks.
async fn answered_and_cancelled_through_the_balancer(http: &reqwest::Client, base: &str) {
    let (status, _, location) =
        start_export(http, base, json!({"page_size": 1, "pace_ms": 100})).await;
    assert_eq!(status, 202);
    let (asking, _) = poll_until(http, base, &location, Duration::from_secs(20), |t| {
        t["status"] == "input_required"
    })
    .await;
    assert!(
        asking["questions"]["include_revoked"].is_object(),
        "{asking}"
    );
    let answered = http
        .post(format!("{base}{location}/input"))
        .json(
            &json!({"include_revoked": {"action": "accept", "content": {"include_revoked": true}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 202);
    let (done, answered_by) = poll_until(http, base, &location, Duration::from_secs(30), |t| {
        t["status"] == "completed"
    })
    .await;
    assert_eq!(done["outcome"]["result"]["devices"], 8, "{done}");
    assert!(answered_by.len() >= 2, "polled through {answered_by:?}");
    let (_, _, location) = start_export(
        http,
        base,
        json!({"include_revoked": true, "page_size": 1, "pace_ms": 5000}),
    )
    .await;
    let cancel = http
        .delete(format!("{base}{location}"))
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), 202);
    let (cancelled, _) = poll_until(http, base, &location, Duration::from_secs(10), |t| {
        t["status"] != "working"
    })
    .await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
}

/// The replica running a task killed at a seeded random moment, [`KILLS`] times: the task ends
/// failed with its outcome unknown (or completed, had it ended first), and ran once.
async fn killed_mid_task(
    http: &reqwest::Client,
    base: &str,
    replicas: &mut [Replica],
    postgres: &PostgresServer,
) {
    let seed = std::env::var("CHAOS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_7a5c_u64);
    println!("seed {seed}");
    let mut rng = seed;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let (mut lost, mut finished) = (0, 0);
    for kill in 0..KILLS {
        let replica = &mut replicas[usize::try_from(next(3)).unwrap()];
        let (status, started, location) = start_export(
            http,
            &replica.base(),
            json!({"include_revoked": true, "page_size": 1, "pace_ms": 150}),
        )
        .await;
        assert_eq!(status, 202, "{started}");
        let id = started["id"].as_str().unwrap().to_owned();
        tokio::time::sleep(Duration::from_millis(next(1500))).await;
        let mut served = replica.served.take().unwrap();
        served.child.kill().unwrap();
        served.child.wait().unwrap();
        drop(served);
        let (ended, _) = poll_until(http, base, &location, Duration::from_secs(15), |t| {
            t["status"] != "working"
        })
        .await;
        match ended["status"].as_str() {
            Some("failed") => {
                let message = ended["message"].as_str().unwrap_or_default();
                assert!(message.starts_with("outcome unknown"), "{ended}");
                lost += 1;
            }
            Some("completed") => finished += 1,
            other => panic!("kill {kill}: {other:?}: {ended}"),
        }
        tokio::task::block_in_place(|| start(replica, &[]));
        let runs = postgres.psql(
            "demo",
            &format!(
                "SELECT count(*) FROM tool_audit_records WHERE event = 'intent' AND request_id = '{id}'"
            ),
        );
        assert_eq!(
            runs.trim(),
            "1",
            "kill {kill}: the task's call ran {runs} times"
        );
    }
    println!("{lost} lost with their replica, {finished} finished before it died");
    assert!(lost > 0, "no kill caught a task running");
}

/// `demo-app` with `args`, on the PostgreSQL at `url`, from `dir`: its exit code and stdout.
fn cli(dir: &std::path::Path, url: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .current_dir(dir)
        .args(["--postgres", url])
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("DEMO_APP_CONFIG")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A call detached on the command line runs on a `serve` sharing PostgreSQL, and outlives the
/// command: `tasks wait` prints its result, `tasks cancel` ends another; with no server on the
/// store, a detached call fails saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_detached_on_the_command_line_runs_on_a_server_sharing_the_store() {
    let dir = TempDir::new("task-detached");
    let postgres = tokio::task::block_in_place(PostgresServer::start);
    let url = postgres.create_database("demo");
    let mut replica = Replica::new("r1", dir.path());
    std::fs::write(replica.dir.join("demo-app.toml"), CONFIG).unwrap();
    replica.postgres = Some(url.clone());
    tokio::task::block_in_place(|| start(&mut replica, &[]));
    let http = reqwest::Client::new();
    pair_devices(&http, &replica.base(), 2).await;
    let at = replica.dir.clone();
    let detached = |args: &'static [&'static str]| {
        let (at, url) = (at.clone(), url.clone());
        tokio::task::spawn_blocking(move || cli(&at, &url, args))
    };
    let (code, id) = detached(&[
        "device-export",
        "--detach",
        "--include-revoked",
        "--page-size",
        "1",
        "--pace-ms",
        "200",
    ])
    .await
    .unwrap();
    assert_eq!(code, Some(0));
    let id = id.trim().to_owned();
    assert!(id.starts_with("task-"), "{id}");
    let (at, url2) = (replica.dir.clone(), url.clone());
    let waited =
        tokio::task::spawn_blocking(move || cli(&at, &url2, &["--json", "tasks", "wait", &id]))
            .await
            .unwrap();
    assert_eq!(waited.0, Some(0), "{}", waited.1);
    let task: Value = serde_json::from_str(&waited.1).unwrap();
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["outcome"]["result"]["devices"], 2, "{task}");
    // Another, cancelled from the command line.
    let (_, id) = detached(&[
        "device-export",
        "--detach",
        "--include-revoked",
        "--page-size",
        "1",
        "--pace-ms",
        "10000",
    ])
    .await
    .unwrap();
    let id = id.trim().to_owned();
    let (at, url2) = (replica.dir.clone(), url.clone());
    let cancelled = tokio::task::spawn_blocking(move || {
        let _ = cli(&at, &url2, &["tasks", "cancel", &id]);
        cli(&at, &url2, &["--json", "tasks", "wait", &id])
    })
    .await
    .unwrap();
    let task: Value = serde_json::from_str(&cancelled.1).unwrap();
    assert_eq!(task["status"], "cancelled", "{task}");
    // No server on the store: the call waits a minute, then fails saying no server took it.
    drop(replica.served.take());
    let (_, id) = detached(&["device-export", "--detach", "--include-revoked"])
        .await
        .unwrap();
    let id = id.trim().to_owned();
    let waiting = postgres.psql(
        "demo",
        &format!("SELECT task->>'status' FROM tool_tasks WHERE id = '{id}'"),
    );
    assert_eq!(waiting.trim(), "working");
}
