//! `cargo bench -p tool-tests --bench http` (needs `wrk`: `apt-get install wrk`)
//!
//! Requests per second of `POST /tools/add` through the HTTP front end (pipeline included)
//! against a hand-written axum handler that deserializes the same struct and calls the same fn,
//! both served from this process on loopback, measured alternately with the same `wrk` settings.
//!
//! The server (one tokio worker) runs on CPU 0 and `wrk` on CPU 1 (`taskset`), so the load
//! generator does not take the server's CPU: with both floating over two shared cores, the
//! ratio moved between 0.83 and 0.92 from run to run for the same code. The ratio reported is
//! the median of the per-round ratios (each round measures both servers back to back, which one
//! first alternating). Beside it, the server's CPU time per request (this process's user and
//! system time over each run, divided by the requests wrk counted): steal time on a shared
//! host lowers throughput but is not CPU time of ours, so that ratio moves less.
//!
//! A third server is the hand-written handler answering what the framework answers: the
//! `x-request-id` header and the envelope's `meta` (the request id and the call's duration).
//! Set beside the other two, it tells the cost of that answer from the cost of the rest.

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Json;
use axum::routing::post;
use serde_json::{Value, json};
use tool_runtime::http::{self, ServerOptions};

#[path = "common/add.rs"]
#[expect(dead_code)] // Reason: wrk sends this bench's requests, not `add::request()`.
mod add;

/// Rounds by default; `HTTP_BENCH_ROUNDS=N` for more on a noisy machine.
const ROUNDS: usize = 9;
const SECONDS: u32 = 3;
const CONNECTIONS: u32 = 32;

fn main() {
    // Threads inherit the affinity of the thread that starts them: pin this one before the
    // runtime's worker exists.
    // `HTTP_BENCH_PIN=0`: the earlier set-up, two workers and wrk floating over both cores.
    let pin = std::env::var("HTTP_BENCH_PIN").map_or(true, |v| v != "0");
    let pinned = pin
        && Command::new("taskset")
            .args(["-p", "-c", "0", &std::process::id().to_string()])
            .output()
            .is_ok_and(|o| o.status.success());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(if pin { 1 } else { 2 })
        .enable_all()
        .build()
        .unwrap();
    let bases = rt.block_on(async {
        [
            spawn(http::router(add::registry(), ServerOptions::default())).await,
            spawn(add::hand_written()).await,
            spawn(same_answer()).await,
        ]
    });

    let script = std::env::temp_dir().join(format!("wrk-post-{}.lua", std::process::id()));
    std::fs::write(
        &script,
        "wrk.method = \"POST\"\nwrk.body = '{\"a\": 20, \"b\": 22}'\nwrk.headers[\"Content-Type\"] = \"application/json\"\n",
    )
    .unwrap();
    // Check each answers correctly before measuring.
    for base in &bases {
        let out = Command::new("curl")
            .args([
                "-s",
                "-X",
                "POST",
                "-H",
                "content-type: application/json",
                "-d",
                r#"{"a": 20, "b": 22}"#,
                &format!("{base}/tools/add"),
            ])
            .output()
            .expect("curl");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["result"], 42, "{base}: {v}");
    }

    let rounds = std::env::var("HTTP_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(ROUNDS);
    let mut runs = Vec::new();
    for round in 0..rounds {
        // Which server goes first rotates, so a drift in the machine's speed within a round
        // favours none.
        let mut run = [None; 3];
        for k in 0..3 {
            let server = (round + k) % 3;
            run[server] = Some(wrk(&bases[server], &script, pinned));
        }
        runs.push(run.map(Option::unwrap));
    }
    report(&runs);
    println!(
        "(wrk -t1 -c{CONNECTIONS} -d{SECONDS}s, {rounds} rounds, {})",
        match (pin, pinned) {
            (true, true) => "server (1 worker) on CPU 0, wrk on CPU 1",
            (true, false) => "not pinned: taskset failed",
            (false, _) => "not pinned (HTTP_BENCH_PIN=0), server with 2 workers",
        }
    );
    let _ = std::fs::remove_file(&script);
}

/// The hand-written handler answering what the framework answers: a request id in a header and
/// in the body's `meta`, with the call's duration.
fn same_answer() -> axum::Router {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    axum::Router::new().route(
        "/tools/add",
        post(|Json(args): Json<add::AddArgs>| async move {
            let started = Instant::now();
            let id = format!(
                "req-{:08x}-{:06}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            );
            let meta = |id: &str| {
                json!({"request_id": id, "duration_ms": started.elapsed().as_secs_f64() * 1e3})
            };
            let body = match add::add(args.a, args.b).await {
                Ok(sum) => json!({"tool": "add", "status": "ok", "result": sum, "meta": meta(&id)}),
                Err(e) => json!({"tool": "add", "status": "error", "error": e, "meta": meta(&id)}),
            };
            ([(http::REQUEST_ID, id)], Json(body))
        }),
    )
}

async fn spawn(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(http::serve(
        listener,
        app,
        std::future::pending(),
        &http::ServerOptions::default().grace(Duration::from_secs(1)),
    ));
    base
}

/// What one wrk run measured: requests per second, and the server's CPU time per request in
/// microseconds (this process's user + system time over the run, which steal time on a shared
/// host does not inflate the way it does wall-clock throughput), and the user time of it.
#[derive(Clone, Copy)]
struct Run {
    rps: f64,
    cpu: f64,
    user: f64,
}

/// The medians of the rounds (ours, hand-written, hand-written with our answer): throughput, CPU
/// and user time per request, and the per-round ratios.
fn report(runs: &[[Run; 3]]) {
    let median = |of: &dyn Fn(&[Run; 3]) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(of).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let listed = |of: &dyn Fn(&[Run; 3]) -> f64| {
        let v: Vec<String> = runs.iter().map(|r| format!("{:.3}", of(r))).collect();
        v.join(" ")
    };
    let names = [
        "tool-runtime POST /tools/add",
        "hand-written axum handler",
        "hand-written, our answer",
    ];
    for (k, name) in names.iter().enumerate() {
        println!(
            "http/{name:<36} median {:>8.0} req/s, CPU {:.2} µs a request, of which user {:.2} µs",
            median(&|r| r[k].rps),
            median(&|r| r[k].cpu),
            median(&|r| r[k].user),
        );
    }
    for (k, name) in [(1, "hand-written"), (2, "hand-written, our answer")] {
        let ratio = |r: &[Run; 3]| r[0].rps / r[k].rps;
        let cpu_ratio = |r: &[Run; 3]| r[k].cpu / r[0].cpu;
        println!(
            "http/ours vs {name}: throughput ratio per round {}",
            listed(&ratio)
        );
        println!(
            "http/ours vs {name}: throughput {:.3}, CPU {:.3} (medians of rounds; target >= 1.0 against hand-written)",
            median(&ratio),
            median(&cpu_ratio)
        );
    }
}

/// One wrk run against `base`.
fn wrk(base: &str, script: &std::path::Path, pinned: bool) -> Run {
    let mut command = if pinned {
        let mut c = Command::new("taskset");
        c.args(["-c", "1", "wrk"]);
        c
    } else {
        Command::new("wrk")
    };
    let (user_before, system_before) = cpu_ticks();
    let out = command
        .args([
            "-t1",
            &format!("-c{CONNECTIONS}"),
            &format!("-d{SECONDS}s"),
            "-s",
            script.to_str().unwrap(),
            &format!("{base}/tools/add"),
        ])
        .output()
        .expect("wrk is needed: apt-get install wrk");
    let (user_after, system_after) = cpu_ticks();
    let user = user_after - user_before;
    let cpu = user + system_after - system_before;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("Non-2xx"), "errors during the run:\n{text}");
    let rps = text
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no Requests/sec in wrk output:\n{text}"));
    // "  123456 requests in 3.00s, ..."
    let requests: f64 = text
        .lines()
        .find_map(|l| l.trim().split_once(" requests in "))
        .and_then(|(n, _)| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no request count in wrk output:\n{text}"));
    // `/proc` counts in USER_HZ, 100 per second on Linux.
    Run {
        rps,
        cpu: cpu * 10_000.0 / requests,
        user: user * 10_000.0 / requests,
    }
}

/// This process's user and system CPU time so far, in clock ticks (`/proc/self/stat`).
fn cpu_ticks() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the command name, which is in parentheses and may contain spaces.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    (
        fields[11].parse::<f64>().unwrap(),
        fields[12].parse::<f64>().unwrap(),
    )
}
