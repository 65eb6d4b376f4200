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
//!
//! `cargo bench -p tool-tests --bench mcp -- gateway` measures instead what our server costs as
//! a gateway: `echo` of the reference server `server-everything` (npm, `tests/node`; over
//! streamable HTTP) called directly, and through `mcp-fixture serve` mounting it
//! (`MCP_FIXTURE_MOUNT`, so as `remote-echo`), by the same client, alternately.

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

/// A server under test: its process (killed when dropped), its `/mcp` URL, and the name of the
/// tool measured there.
struct Server {
    name: &'static str,
    url: String,
    tool: &'static str,
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
        tool: "add",
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
        tool: "add",
        _process: Box::new(Killed(child)),
    }
}

/// A free port on loopback, polled until a server listens on it.
fn wait_for(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `server-everything` over streamable HTTP, called directly.
fn everything() -> Server {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        script.exists(),
        "run `bash tests/run.sh` first (it installs tests/node)"
    );
    let port = free_port();
    let child = Command::new("node")
        .arg(script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("node runs");
    wait_for(port, "server-everything");
    Server {
        name: "server-everything",
        url: format!("http://127.0.0.1:{port}/mcp"),
        tool: "echo",
        _process: Box::new(Killed(child)),
    }
}

/// Our server mounting `direct`'s server: the same `echo`, through the gateway.
fn gateway(direct: &Server) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-fixture"));
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("MCP_FIXTURE_MOUNT", &direct.url)
        .env_remove("RUST_LOG")
        .stderr(Stdio::null());
    let served = tool_test_support::Served::spawn(command);
    Server {
        name: "through our gateway",
        url: format!("{}/mcp", served.base),
        tool: "remote-echo",
        _process: Box::new(served),
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

    /// Call `n` of the tool measured: `add(n, 1)` or `echo(n)`, its answer checked.
    async fn call(&self, tool: &str, n: i64) {
        let arguments = if tool == "add" {
            json!({"a": n, "b": 1})
        } else {
            json!({"message": n.to_string()})
        };
        let body = self
            .post(&json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                          "params": {"name": tool, "arguments": arguments}}))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let answer = message(&body);
        if tool == "add" {
            assert_eq!(
                answer["result"]["structuredContent"],
                json!({"result": n + 1}),
                "{answer}"
            );
        } else {
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert!(text.contains(&format!("Echo: {n}")), "{answer}");
        }
    }
}

struct Sequential {
    p50: Duration,
    p99: Duration,
    mean: Duration,
}

async fn sequential(server: &Server) -> Sequential {
    let s = Session::open(&server.url).await;
    for n in 0..200 {
        s.call(server.tool, n).await;
    }
    let mut took = Vec::with_capacity(SEQUENTIAL);
    for n in 0..SEQUENTIAL {
        let t = Instant::now();
        s.call(server.tool, i64::try_from(n).unwrap()).await;
        took.push(t.elapsed());
    }
    took.sort();
    Sequential {
        p50: took[took.len() / 2],
        p99: took[took.len() * 99 / 100],
        mean: took.iter().sum::<Duration>() / u32::try_from(took.len()).unwrap(),
    }
}

async fn concurrent(server: &Server) -> f64 {
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        sessions.push(Arc::new(Session::open(&server.url).await));
    }
    let tool = server.tool;
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
                    s.call(tool, n).await;
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
    let gateway_mode = std::env::args().any(|a| a == "gateway");
    let servers = if gateway_mode {
        let direct = everything();
        let through = gateway(&direct);
        vec![direct, through]
    } else {
        vec![ours(), python()]
    };
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); servers.len()];
    let mut p50s: Vec<Vec<Duration>> = vec![Vec::new(); servers.len()];
    println!(
        "MCP tools/call `{}` over streamable HTTP; {SEQUENTIAL} sequential calls, {SESSIONS} sessions x {SECONDS}s concurrent, {ROUNDS} rounds",
        servers[0].tool
    );
    for round in 1..=ROUNDS {
        for (i, server) in servers.iter().enumerate() {
            let seq = rt.block_on(sequential(server));
            let rate = rt.block_on(concurrent(server));
            p50s[i].push(seq.p50);
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
    if gateway_mode {
        let least = |v: &[Duration]| v.iter().copied().min().unwrap_or_default();
        let added = least(&p50s[1]).saturating_sub(least(&p50s[0]));
        println!(
            "the gateway adds {:.0} µs per sequential call (best p50s); throughput {:.2}x direct (best of {ROUNDS})",
            added.as_secs_f64() * 1e6,
            best(&rates[1]) / best(&rates[0])
        );
    } else {
        println!(
            "throughput ratio (best of {ROUNDS}): {:.1}x the Python SDK server",
            best(&rates[0]) / best(&rates[1])
        );
    }
}
