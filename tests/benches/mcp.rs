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
//! `-- gateway-stdio` does the same over stdio: the client starts `server-everything stdio`, or
//! `mcp-fixture mcp` which starts it; one session per run, the concurrent calls pipelined on it;
//! and our server's own `add` on stdio, for what our server alone costs per call.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_test_support::sse_message as message;

const SEQUENTIAL: usize = 2000;
const SESSIONS: usize = 32;
const SECONDS: u64 = 5;
const ROUNDS: usize = 2;
const PROTOCOL: &str = "2025-11-25";

/// A server under test: how to reach it, its process if it runs apart from its sessions (killed
/// when dropped), and the name of the tool measured there.
struct Server {
    name: &'static str,
    transport: Transport,
    tool: &'static str,
    _process: Box<dyn std::any::Any>,
}

enum Transport {
    /// Its `/mcp` URL.
    Http(String),
    /// The command that starts it, with its environment: one process per session.
    Stdio(Vec<String>, Vec<(String, String)>),
}

impl Server {
    fn url(&self) -> &str {
        match &self.transport {
            Transport::Http(url) => url,
            Transport::Stdio(..) => unreachable!("a stdio server has no URL"),
        }
    }
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
        transport: Transport::Http(format!("{}/mcp", served.base)),
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
        transport: Transport::Http(format!("http://127.0.0.1:{port}/mcp")),
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

fn everything_script() -> String {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        script.exists(),
        "run `bash tests/run.sh` first (it installs tests/node)"
    );
    script.to_string_lossy().into_owned()
}

/// `server-everything` on stdio, called directly.
fn everything_stdio() -> Server {
    let command = vec!["node".to_owned(), everything_script(), "stdio".to_owned()];
    Server {
        name: "server-everything",
        transport: Transport::Stdio(command, Vec::new()),
        tool: "echo",
        _process: Box::new(()),
    }
}

/// `mcp-fixture mcp` on stdio, mounting `server-everything` on stdio: the same `echo`, through
/// the gateway.
fn gateway_stdio() -> Server {
    let command = vec![
        env!("CARGO_BIN_EXE_mcp-fixture").to_owned(),
        "mcp".to_owned(),
    ];
    let mount = format!("node {} stdio", everything_script());
    Server {
        name: "through our gateway",
        transport: Transport::Stdio(command, vec![("MCP_FIXTURE_MOUNT".to_owned(), mount)]),
        tool: "remote-echo",
        _process: Box::new(()),
    }
}

/// Our own server on stdio with its own `add`: what a call costs our server alone, beside the
/// gateway's figures.
fn ours_stdio() -> Server {
    let command = vec![
        env!("CARGO_BIN_EXE_mcp-fixture").to_owned(),
        "mcp".to_owned(),
    ];
    Server {
        name: "ours alone (add)",
        transport: Transport::Stdio(command, Vec::new()),
        tool: "add",
        _process: Box::new(()),
    }
}

/// `server-everything` over streamable HTTP, called directly.
fn everything() -> Server {
    let script = everything_script();
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
        transport: Transport::Http(format!("http://127.0.0.1:{port}/mcp")),
        tool: "echo",
        _process: Box::new(Killed(child)),
    }
}

/// Our server mounting `direct`'s server: the same `echo`, through the gateway.
fn gateway(direct: &Server) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-fixture"));
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("MCP_FIXTURE_MOUNT", direct.url())
        .env_remove("RUST_LOG")
        .stderr(Stdio::null());
    let served = tool_test_support::Served::spawn(command);
    Server {
        name: "through our gateway",
        transport: Transport::Http(format!("{}/mcp", served.base)),
        tool: "remote-echo",
        _process: Box::new(served),
    }
}

/// One MCP session over either transport.
enum Session {
    Http(HttpSession),
    Stdio(Box<StdioSession>),
}

impl Session {
    async fn open(server: &Server) -> Self {
        match &server.transport {
            Transport::Http(url) => Session::Http(HttpSession::open(url).await),
            Transport::Stdio(command, env) => {
                Session::Stdio(Box::new(StdioSession::open(command, env).await))
            }
        }
    }

    /// Call `n` of the tool measured: `add(n, 1)` or `echo(n)`, its answer checked.
    async fn call(&self, tool: &str, n: i64) {
        let arguments = if tool == "add" {
            json!({"a": n, "b": 1})
        } else {
            json!({"message": n.to_string()})
        };
        let params = json!({"name": tool, "arguments": arguments});
        let answer = match self {
            Session::Http(s) => s.request(n, "tools/call", params).await,
            Session::Stdio(s) => s.request("tools/call", params).await,
        };
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

type Pending =
    std::sync::Mutex<std::collections::HashMap<i64, tokio::sync::oneshot::Sender<Value>>>;

/// One MCP session on a child's stdio: requests written as lines, answers matched by id, so
/// many calls can be in flight at once.
struct StdioSession {
    stdin: tokio::sync::Mutex<tokio::process::ChildStdin>,
    pending: Arc<Pending>,
    next: AtomicI64,
    _child: tokio::process::Child,
}

impl StdioSession {
    async fn open(command: &[String], env: &[(String, String)]) -> Self {
        use tokio::io::AsyncBufReadExt as _;
        let mut child = tokio::process::Command::new(&command[0])
            .args(&command[1..])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the stdio server starts");
        let stdout = child.stdout.take().unwrap();
        let pending: Arc<Pending> = Arc::default();
        let answers = pending.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if let Some(id) = message.get("id").and_then(Value::as_i64)
                    && let Some(tx) = answers.lock().unwrap().remove(&id)
                {
                    let _ = tx.send(message);
                }
            }
        });
        let session = Self {
            stdin: tokio::sync::Mutex::new(child.stdin.take().unwrap()),
            pending,
            next: AtomicI64::new(0),
            _child: child,
        };
        let init = tool_test_support::mcp_initialize(PROTOCOL);
        let answer = session.request("initialize", init["params"].clone()).await;
        assert_eq!(answer["result"]["protocolVersion"], PROTOCOL, "{answer}");
        session
            .write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        session
    }

    async fn write(&self, message: &Value) {
        use tokio::io::AsyncWriteExt as _;
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        let mut stdin = self.stdin.lock().await;
        stdin.write_all(&line).await.unwrap();
        stdin.flush().await.unwrap();
    }

    async fn request(&self, method: &str, params: Value) -> Value {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        rx.await.expect("the stdio server answers")
    }
}

/// One MCP session over streamable HTTP, as the official clients hold it: an id from
/// `initialize`, sent back on every request.
struct HttpSession {
    http: reqwest::Client,
    url: String,
    id: String,
}

impl HttpSession {
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

    async fn request(&self, id: i64, method: &str, params: Value) -> Value {
        let body = self
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        message(&body)
    }
}

struct Sequential {
    p50: Duration,
    p99: Duration,
    mean: Duration,
}

async fn sequential(server: &Server) -> Sequential {
    let s = Session::open(server).await;
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
    // Over HTTP a session per caller; on stdio one session (one process), calls pipelined.
    let mut sessions = Vec::new();
    for i in 0..SESSIONS {
        if i == 0 || matches!(server.transport, Transport::Http(_)) {
            sessions.push(Arc::new(Session::open(server).await));
        } else {
            sessions.push(sessions[0].clone());
        }
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
    let stdio = std::env::args().any(|a| a == "gateway-stdio");
    let gateway_mode = stdio || std::env::args().any(|a| a == "gateway");
    let servers = if stdio {
        vec![everything_stdio(), gateway_stdio(), ours_stdio()]
    } else if gateway_mode {
        let direct = everything();
        let through = gateway(&direct);
        vec![direct, through]
    } else {
        vec![ours(), python()]
    };
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); servers.len()];
    let mut p50s: Vec<Vec<Duration>> = vec![Vec::new(); servers.len()];
    println!(
        "MCP tools/call `{}` over {}; {SEQUENTIAL} sequential calls, {SESSIONS} {} x {SECONDS}s concurrent, {ROUNDS} rounds",
        servers[0].tool,
        if stdio { "stdio" } else { "streamable HTTP" },
        if stdio {
            "callers on one session"
        } else {
            "sessions"
        }
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
