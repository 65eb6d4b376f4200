//! `cargo bench -p tool-tests --bench mcp` (needs the venv of `tests/run.sh`, for the peer)
//!
//! `tools/call` of a small tool (`add`) over MCP streamable HTTP: our server
//! (`mcp-fixture serve`, a release build) against the same tool served by the official Python
//! SDK's `MCPServer` (`tests/python/mcp_bench_server.py`, uvicorn), both as separate processes
//! on loopback with their default transport settings (sessions, SSE responses) and no request
//! logging, driven by the same client from this process, alternately, in one run:
//!
//! - sequential: one session, one call at a time; latency percentiles;
//! - concurrent: `SESSIONS` sessions calling in a loop for `SECONDS`; calls per second.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_test_support::sse_message as message;

const SEQUENTIAL: usize = 2000;
const SESSIONS: usize = 32;
const SECONDS: u64 = 5;
const ROUNDS: usize = 2;
const PROTOCOL: &str = "2025-11-25";

/// A server under test: its process (killed when dropped) and its `/mcp` URL.
struct Server {
    name: &'static str,
    url: String,
    _process: Box<dyn std::any::Any>,
}

fn ours() -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-fixture"));
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env_remove("RUST_LOG")
        .stderr(Stdio::null());
    let served = tool_test_support::Served::spawn(command);
    Server {
        name: "tool-runtime (rmcp)",
        url: format!("{}/mcp", served.base),
        _process: Box::new(served),
    }
}

/// The Python server prints no `listening on` line: it is polled until it accepts.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python() -> Server {
    let python = tool_test_support::python_with("mcp");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python/mcp_bench_server.py");
    let child = Command::new(python)
        .arg(script)
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the Python MCPServer");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the Python server did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    Server {
        name: "Python SDK MCPServer",
        url: format!("http://127.0.0.1:{port}/mcp"),
        _process: Box::new(Killed(child)),
    }
}

/// One MCP session, as the official clients hold it: an id from `initialize`, sent back on
/// every request.
struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
}

impl Session {
    async fn open(url: &str) -> Self {
        let http = reqwest::Client::builder()
            .tcp_nodelay(true)
            .build()
            .unwrap();
        let response = http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .json(&tool_test_support::mcp_initialize(PROTOCOL))
            .send()
            .await
            .unwrap();
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let init = message(&response.text().await.unwrap());
        assert_eq!(init["result"]["protocolVersion"], PROTOCOL, "{init}");
        let session = Self {
            http,
            url: url.to_owned(),
            id,
        };
        let done = session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .unwrap();
        assert!(done.status().is_success(), "{}", done.status());
        session
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", PROTOCOL)
            .json(body)
    }

    /// `add(n, 1)`, checked.
    async fn add(&self, n: i64) {
        let body = self
            .post(&json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                          "params": {"name": "add", "arguments": {"a": n, "b": 1}}}))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let answer = message(&body);
        assert_eq!(
            answer["result"]["structuredContent"],
            json!({"result": n + 1}),
            "{answer}"
        );
    }
}

struct Sequential {
    p50: Duration,
    p99: Duration,
    mean: Duration,
}

async fn sequential(url: &str) -> Sequential {
    let s = Session::open(url).await;
    for n in 0..200 {
        s.add(n).await;
    }
    let mut took = Vec::with_capacity(SEQUENTIAL);
    for n in 0..SEQUENTIAL {
        let t = Instant::now();
        s.add(i64::try_from(n).unwrap()).await;
        took.push(t.elapsed());
    }
    took.sort();
    Sequential {
        p50: took[took.len() / 2],
        p99: took[took.len() * 99 / 100],
        mean: took.iter().sum::<Duration>() / u32::try_from(took.len()).unwrap(),
    }
}

async fn concurrent(url: &str) -> f64 {
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        sessions.push(Arc::new(Session::open(url).await));
    }
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + Duration::from_secs(SECONDS);
    let tasks: Vec<_> = sessions
        .into_iter()
        .map(|s| {
            let done = done.clone();
            tokio::spawn(async move {
                let mut n = 0;
                while Instant::now() < deadline {
                    s.add(n).await;
                    n += 1;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    #[allow(clippy::cast_precision_loss)]
    let calls = done.load(Ordering::Relaxed) as f64;
    calls / started.elapsed().as_secs_f64()
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too, briefly: skip then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let servers = [ours(), python()];
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); servers.len()];
    println!(
        "MCP tools/call `add` over streamable HTTP; {SEQUENTIAL} sequential calls, {SESSIONS} sessions x {SECONDS}s concurrent, {ROUNDS} rounds"
    );
    for round in 1..=ROUNDS {
        for (i, server) in servers.iter().enumerate() {
            let seq = rt.block_on(sequential(&server.url));
            let rate = rt.block_on(concurrent(&server.url));
            rates[i].push(rate);
            println!(
                "round {round} {:<22} sequential p50 {:>8.3} ms  p99 {:>8.3} ms  mean {:>8.3} ms | concurrent {:>9.0} calls/s",
                server.name,
                seq.p50.as_secs_f64() * 1e3,
                seq.p99.as_secs_f64() * 1e3,
                seq.mean.as_secs_f64() * 1e3,
                rate
            );
        }
    }
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    println!(
        "throughput ratio (best of {ROUNDS}): {:.1}x the Python SDK server",
        best(&rates[0]) / best(&rates[1])
    );
}
