//! `cargo bench -p tool-tests --bench mcp` (needs the venv of `tests/run.sh`, for the Python
//! peer)
//!
//! `tools/call` of a small tool (`add`) over MCP streamable HTTP: our server against the same
//! tool served by two peers, all as separate processes on loopback with no request logging
//! (ours with `RUST_LOG=warn`: its default access log writes one line per request;
//! `MCP_BENCH_ACCESS_LOG=1` keeps it, to measure its cost), driven by the same client from this
//! process, alternately, round after round:
//!
//! - ours: `tests/peers/ours-add`, a one-tool crate on tool-runtime's default features, as a
//!   user writes one (`ours-add serve`; the workspace's own test binaries link the agent, the
//!   guards and the MCP client as well);
//! - the official Rust SDK alone, `rmcp` with its own macros (`tests/peers/rmcp-add`, with our
//!   server's transport settings: its module comment lists them), for what our server costs on
//!   top of the SDK it is built on;
//! - the official Python SDK's `MCPServer` (`tests/python/mcp_bench_server.py`, uvicorn), with
//!   its default transport settings (sessions, SSE responses).
//!
//! The two one-tool crates are packages of their own outside the workspace (rmcp's `macros`
//! feature is no dependency of ours), built here on first use with `cargo build --release
//! --manifest-path tests/peers/NAME/Cargo.toml --target-dir TARGET/peers`.
//!
//! Each server, each round:
//!
//! - sequential: one session, one call at a time; latency percentiles;
//! - concurrent: `SESSIONS` sessions calling in a loop for `SECONDS`; calls per second, and from
//!   `/proc/PID` the serving process's CPU time (user and system) during the phase divided by
//!   the calls made, and its resident memory: idle (`VmRSS` before any call), peak (`VmHWM`
//!   after the load, so the highest since the process started; sessions are never closed by the
//!   client, so it holds every session of the rounds before), and after the load its own
//!   memory (`RssAnon`: the heap, stacks) apart from the pages of its binary (`RssFile`).
//!
//! Against the rmcp peer, ours over its: throughput per round and the median of those ratios,
//! the median of the per-round ratios of CPU per call and of idle memory, and the ratio of the
//! highest peaks. Against the Python peer, the best throughput of the rounds over its best.
//!
//! `cargo bench -p tool-tests --bench mcp -- rmcp` measures our server and the rmcp peer only,
//! over 5 rounds (`RMCP_ROUNDS`) instead of 2; `-- rmcp-stdio` the same two over stdio
//! (`ours-add mcp`, `rmcp-add stdio`): the client starts the server, one session per phase,
//! the concurrent callers pipelined on it, and the figures of that session's process, idle
//! once initialized.
//!
//! `cargo bench -p tool-tests --bench mcp -- gateway` measures instead what our server costs as
//! a gateway: `echo` of the reference server `server-everything` (npm, `tests/node`; over
//! streamable HTTP) called directly, and through `mcp-fixture serve` mounting it
//! (`MCP_FIXTURE_MOUNT`, so as `remote-echo`), and through a pass-through written on rmcp alone
//! (`rmcp-add proxy URL`: the SDK's client forwarding each call, what any gateway on the SDK
//! pays for the extra hop), by the same client, alternately. `-- gateway-stdio` does the same
//! over stdio: the client starts `server-everything stdio`, or `mcp-fixture mcp` or `rmcp-add
//! proxy-stdio`, which start it; one session per run, the concurrent calls pipelined on it; and
//! `ours-add mcp`, for what our server alone costs per call. The process figures there are of
//! the process the client talks to (without the server a gateway mounts).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_test_support::sse_message as message;

const SEQUENTIAL: usize = 2000;
const SESSIONS: usize = 32;
const SECONDS: u64 = 5;
const ROUNDS: usize = 2;
/// Rounds of `-- rmcp` and `-- rmcp-stdio`, whose one ratio is the point.
const RMCP_ROUNDS: usize = 5;
const PROTOCOL: &str = "2025-11-25";

/// What a run measures, from the arguments after `--`.
#[derive(Clone, Copy)]
enum Mode {
    /// Ours, the rmcp peer and the Python peer, over streamable HTTP.
    Peers,
    /// Ours and the rmcp peer, over streamable HTTP.
    Rmcp,
    /// Ours and the rmcp peer, over stdio.
    RmcpStdio,
    /// `server-everything` directly and through our gateway, over streamable HTTP.
    Gateway,
    /// The same over stdio, and ours alone.
    GatewayStdio,
}

impl Mode {
    fn from_args() -> Self {
        let given = |name: &str| std::env::args().any(|a| a == name);
        if given("gateway-stdio") {
            Mode::GatewayStdio
        } else if given("gateway") {
            Mode::Gateway
        } else if given("rmcp-stdio") {
            Mode::RmcpStdio
        } else if given("rmcp") {
            Mode::Rmcp
        } else {
            Mode::Peers
        }
    }

    fn stdio(self) -> bool {
        matches!(self, Mode::RmcpStdio | Mode::GatewayStdio)
    }

    fn rounds(self) -> usize {
        match self {
            Mode::Rmcp | Mode::RmcpStdio => RMCP_ROUNDS,
            _ => ROUNDS,
        }
    }

    /// The servers, in the order each round runs them: for every mode but the gateways, ours
    /// first and the rmcp peer second.
    fn servers(self) -> Vec<Server> {
        match self {
            Mode::Peers => vec![ours(), rmcp(), python()],
            Mode::Rmcp => vec![ours(), rmcp(), ours_without_event_store()],
            Mode::RmcpStdio => vec![ours_stdio(), rmcp_stdio()],
            Mode::Gateway => {
                let direct = everything();
                let through = gateway(&direct);
                let passed = rmcp_proxy(&direct);
                vec![direct, through, passed]
            }
            Mode::GatewayStdio => vec![
                everything_stdio(),
                gateway_stdio(),
                rmcp_proxy_stdio(),
                ours_stdio(),
            ],
        }
    }
}

/// A server under test: how to reach it, the name of the tool measured there, and its process
/// if it runs apart from its sessions.
struct Server {
    name: &'static str,
    transport: Transport,
    tool: &'static str,
    /// The process serving every session (over HTTP), to read figures from.
    process: Option<Process>,
    /// What holds that process, killed when dropped.
    _owned: Box<dyn std::any::Any>,
}

enum Transport {
    /// Its `/mcp` URL.
    Http(String),
    /// The command that starts it, with its environment: one process per session.
    Stdio(Vec<String>, Vec<(String, String)>),
}

impl Server {
    /// A server on streamable HTTP in a process of its own, `pid`, idle so far.
    fn http(
        name: &'static str,
        url: String,
        tool: &'static str,
        pid: u32,
        owned: impl std::any::Any,
    ) -> Self {
        Server {
            name,
            transport: Transport::Http(url),
            tool,
            process: Some(Process::idle(pid)),
            _owned: Box::new(owned),
        }
    }

    /// A server on stdio: started by each session.
    fn stdio(
        name: &'static str,
        command: Vec<String>,
        env: Vec<(String, String)>,
        tool: &'static str,
    ) -> Self {
        Server {
            name,
            transport: Transport::Stdio(command, env),
            tool,
            process: None,
            _owned: Box::new(()),
        }
    }

    fn url(&self) -> &str {
        match &self.transport {
            Transport::Http(url) => url,
            Transport::Stdio(..) => unreachable!("a stdio server has no URL"),
        }
    }
}

/// A serving process, read from `/proc/PID`, and its resident memory when it was still idle.
#[derive(Clone, Copy)]
struct Process {
    pid: u32,
    idle_kib: u64,
}

impl Process {
    /// `pid`, which has answered no call yet.
    fn idle(pid: u32) -> Self {
        Process {
            pid,
            idle_kib: memory_kib(pid, "VmRSS"),
        }
    }

    /// The CPU time it has used, user and system (`utime` and `stime`).
    fn cpu(self) -> Duration {
        let path = format!("/proc/{}/stat", self.pid);
        let stat = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        // After the command name (in parentheses, which may hold spaces) the fields go on from
        // the third, `state`: `utime` is the 14th, `stime` the 15th.
        let fields: Vec<&str> = stat[stat.rfind(')').expect("a command name") + 2..]
            .split(' ')
            .collect();
        let ticks = |i: usize| fields[i].parse::<u64>().expect("clock ticks");
        Duration::from_nanos((ticks(11) + ticks(12)) * 1_000_000_000 / clock_ticks())
    }

    /// Its highest resident memory so far (`VmHWM`).
    fn peak_kib(self) -> u64 {
        memory_kib(self.pid, "VmHWM")
    }
}

/// The kernel's clock ticks per second, in which `/proc/PID/stat` counts CPU time.
fn clock_ticks() -> u64 {
    static TICKS: OnceLock<u64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        let out = Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .expect("getconf runs");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("getconf CLK_TCK prints a number")
    })
}

/// A memory figure of `/proc/PID/status` (`VmRSS`, `VmHWM`, `RssAnon`, `RssFile`), in KiB.
fn memory_kib(pid: u32, field: &str) -> u64 {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    status
        .lines()
        .find_map(|line| {
            line.strip_prefix(field)?
                .strip_prefix(':')?
                .trim()
                .strip_suffix(" kB")?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no {field} in {path}"))
}

fn mib(kib: u64) -> f64 {
    f64::from(u32::try_from(kib).expect("under 4 TiB")) / 1024.0
}

/// `RUST_LOG` for our HTTP server: its default writes one access-log line per request, which
/// the peers do not; `MCP_BENCH_ACCESS_LOG=1` keeps it, to measure what it costs.
fn our_log_filter() -> &'static str {
    if std::env::var("MCP_BENCH_ACCESS_LOG").is_ok_and(|v| v == "1") {
        tool_runtime::app::cli::logging::DEFAULT_FILTER
    } else {
        "warn"
    }
}

/// A server started by `command` (which prints `listening on URL`), serving MCP at `/mcp`.
fn spawned(name: &'static str, command: Command, tool: &'static str) -> Server {
    let served = tool_test_support::Served::spawn(command);
    Server::http(
        name,
        format!("{}/mcp", served.base),
        tool,
        served.child.id(),
        served,
    )
}

/// Our `add` (`tests/peers/ours-add`, a one-tool crate on tool-runtime's default features)
/// over streamable HTTP: `ours-add serve`.
fn ours() -> Server {
    ours_serving("ours (tool-runtime)", "on")
}

/// The same, with resumable streams turned off (`ServerOptions::without_mcp_event_store`):
/// what the event store, on by default, costs.
fn ours_without_event_store() -> Server {
    ours_serving("ours, no event store", "off")
}

/// `ours-add serve`, its event store `on` or `off` (`OURS_ADD_EVENT_STORE`).
fn ours_serving(name: &'static str, event_store: &str) -> Server {
    let mut command = Command::new(peer_binary("ours-add"));
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("RUST_LOG", our_log_filter())
        .env("OURS_ADD_EVENT_STORE", event_store)
        .stderr(Stdio::null());
    spawned(name, command, "add")
}

/// The binary of the one-tool server `tests/peers/NAME` (`rmcp-add`, `ours-add`), built now if
/// it is not up to date, in `peers/` under the workspace's target directory.
fn peer_binary(name: &str) -> PathBuf {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = tests.parent().expect("tests/ is in the workspace");
    // A relative `CARGO_TARGET_DIR` is taken from the workspace's root.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.join("target"), |dir| workspace.join(dir))
        .join("peers");
    let manifest = tests.join(format!("peers/{name}/Cargo.toml"));
    let mut build = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    build
        .args(["build", "--release", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target);
    println!("building {name}: {build:?}");
    let status = build
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build {name} ({build:?}): {e}"));
    assert!(
        status.success(),
        "building tests/peers/{name} failed ({status}); cargo's errors are above. The command: {build:?}"
    );
    target.join("release").join(name)
}

/// The same `add` on rmcp alone, over streamable HTTP.
fn rmcp() -> Server {
    let mut command = Command::new(peer_binary("rmcp-add"));
    command.env_remove("RUST_LOG").stderr(Stdio::null());
    spawned("rmcp alone (macros)", command, "add")
}

/// The same `add` on rmcp alone, over stdio.
fn rmcp_stdio() -> Server {
    let command = vec![
        peer_binary("rmcp-add").to_string_lossy().into_owned(),
        "stdio".to_owned(),
    ];
    Server::stdio("rmcp alone (macros)", command, Vec::new(), "add")
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
    let port = free_port();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python/mcp_bench_server.py");
    let child = Command::new(python)
        .arg(script)
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the Python MCPServer");
    wait_for(port, "the Python server");
    Server::http(
        "Python SDK MCPServer",
        format!("http://127.0.0.1:{port}/mcp"),
        "add",
        child.id(),
        Killed(child),
    )
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
    Server::stdio("server-everything", command, Vec::new(), "echo")
}

/// `mcp-fixture mcp` on stdio, mounting `server-everything` on stdio: the same `echo`, through
/// the gateway.
fn gateway_stdio() -> Server {
    let command = vec![
        env!("CARGO_BIN_EXE_mcp-fixture").to_owned(),
        "mcp".to_owned(),
    ];
    let mount = format!("node {} stdio", everything_script());
    Server::stdio(
        "through our gateway",
        command,
        vec![("MCP_FIXTURE_MOUNT".to_owned(), mount)],
        "remote-echo",
    )
}

/// Our own server on stdio with its own `add` (`ours-add mcp`): what a call costs our server
/// alone, beside rmcp's and the gateway's figures.
fn ours_stdio() -> Server {
    let command = vec![
        peer_binary("ours-add").to_string_lossy().into_owned(),
        "mcp".to_owned(),
    ];
    Server::stdio("ours alone (add)", command, Vec::new(), "add")
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
    Server::http(
        "server-everything",
        format!("http://127.0.0.1:{port}/mcp"),
        "echo",
        child.id(),
        Killed(child),
    )
}

/// Our server mounting `direct`'s server: the same `echo`, through the gateway.
fn gateway(direct: &Server) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-fixture"));
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("MCP_FIXTURE_MOUNT", direct.url())
        .env("RUST_LOG", our_log_filter())
        .stderr(Stdio::null());
    spawned("through our gateway", command, "remote-echo")
}

/// A pass-through written on rmcp alone (`rmcp-add proxy URL`) forwarding to `direct`'s
/// server: what any gateway on the SDK pays for the extra hop.
fn rmcp_proxy(direct: &Server) -> Server {
    let mut command = Command::new(peer_binary("rmcp-add"));
    command
        .args(["proxy", direct.url()])
        .env_remove("RUST_LOG")
        .stderr(Stdio::null());
    spawned("rmcp pass-through", command, "echo")
}

/// The same pass-through on stdio (`rmcp-add proxy-stdio node ... stdio`).
fn rmcp_proxy_stdio() -> Server {
    let command = vec![
        peer_binary("rmcp-add").to_string_lossy().into_owned(),
        "proxy-stdio".to_owned(),
        "node".to_owned(),
        everything_script(),
        "stdio".to_owned(),
    ];
    Server::stdio("rmcp pass-through", command, Vec::new(), "echo")
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

    /// The process that serves this client and no other: a stdio server's (`None` over HTTP).
    fn own_process(&self) -> Option<u32> {
        match self {
            Session::Http(_) => None,
            Session::Stdio(s) => s.child.id(),
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
    child: tokio::process::Child,
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
            child,
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

/// What the concurrent phase measured: calls per second, and the serving process's CPU time
/// per call, its resident memory before any call and its peak after the load, and what is
/// resident after the load: the heap and the rest of its own memory (`RssAnon`), and the
/// pages of its binary and libraries (`RssFile`, which a larger binary makes larger).
struct Load {
    rate: f64,
    cpu_per_call: Duration,
    idle_kib: u64,
    peak_kib: u64,
    anon_kib: u64,
    file_kib: u64,
}

async fn concurrent(server: &Server) -> Load {
    // Over HTTP a session per caller; on stdio one session (one process), calls pipelined.
    let mut sessions = Vec::new();
    for i in 0..SESSIONS {
        if i == 0 || matches!(server.transport, Transport::Http(_)) {
            sessions.push(Arc::new(Session::open(server).await));
        } else {
            sessions.push(sessions[0].clone());
        }
    }
    // A stdio server's process is the session's, initialized and idle until now.
    let process = server.process.unwrap_or_else(|| {
        Process::idle(
            sessions[0]
                .own_process()
                .expect("a stdio session's process"),
        )
    });
    // Kept until the process is read: dropping the last handle to it kills a stdio server.
    let _kept = sessions[0].clone();
    let tool = server.tool;
    let done = Arc::new(AtomicU64::new(0));
    let cpu = process.cpu();
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
    let elapsed = started.elapsed();
    let cpu = process.cpu().saturating_sub(cpu);
    let calls = done.load(Ordering::Relaxed);
    #[allow(clippy::cast_precision_loss)]
    let rate = calls as f64 / elapsed.as_secs_f64();
    Load {
        rate,
        cpu_per_call: cpu / u32::try_from(calls.max(1)).expect("fewer than 4 billion calls"),
        idle_kib: process.idle_kib,
        peak_kib: process.peak_kib(),
        anon_kib: memory_kib(process.pid, "RssAnon"),
        file_kib: memory_kib(process.pid, "RssFile"),
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        f64::midpoint(values[mid - 1], values[mid])
    } else {
        values[mid]
    }
}

/// Ours (the first server) over the rmcp peer (the second), and, when there is a third (ours
/// without the event store), it over the peer and ours over it: throughput per round and its
/// median, the medians of CPU per call and idle memory, and the highest peaks.
fn against_rmcp(loads: &[Vec<Load>]) {
    compare("ours / rmcp alone", &loads[0], &loads[1]);
    if let Some(without) = loads.get(2) {
        compare("ours without event store / rmcp alone", without, &loads[1]);
        compare("ours / ours without event store", &loads[0], without);
    }
}

/// Ratios of `ours` to `rmcp`, round by round.
fn compare(title: &str, ours: &[Load], rmcp: &[Load]) {
    let ratios = |of: fn(&Load) -> f64| -> Vec<f64> {
        ours.iter().zip(rmcp).map(|(o, r)| of(o) / of(r)).collect()
    };
    let throughput = ratios(|l| l.rate);
    let listed: Vec<String> = throughput.iter().map(|r| format!("{r:.2}")).collect();
    println!(
        "{title}: throughput {}x per round, median {:.2}x",
        listed.join(" "),
        median(throughput)
    );
    let peak = |loads: &[Load]| loads.iter().map(|l| l.peak_kib).max().unwrap_or_default();
    println!(
        "{title}: server CPU per call {:.2}x, idle memory {:.2}x (medians of rounds); peak memory {:.2}x ({:.1} vs {:.1} MiB)",
        median(ratios(|l| l.cpu_per_call.as_secs_f64())),
        median(ratios(|l| mib(l.idle_kib))),
        mib(peak(ours)) / mib(peak(rmcp)),
        mib(peak(ours)),
        mib(peak(rmcp))
    );
    let last = |loads: &[Load], of: fn(&Load) -> u64| loads.last().map_or(0.0, |l| mib(of(l)));
    println!(
        "{title}, resident after the last round: anon {:.2}x ({:.1} vs {:.1} MiB), file {:.2}x ({:.1} vs {:.1} MiB)",
        last(ours, |l| l.anon_kib) / last(rmcp, |l| l.anon_kib),
        last(ours, |l| l.anon_kib),
        last(rmcp, |l| l.anon_kib),
        last(ours, |l| l.file_kib) / last(rmcp, |l| l.file_kib),
        last(ours, |l| l.file_kib),
        last(rmcp, |l| l.file_kib)
    );
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
    let mode = Mode::from_args();
    let (stdio, rounds) = (mode.stdio(), mode.rounds());
    let servers = mode.servers();
    let mut loads: Vec<Vec<Load>> = servers.iter().map(|_| Vec::new()).collect();
    let mut p50s: Vec<Vec<Duration>> = vec![Vec::new(); servers.len()];
    println!(
        "MCP tools/call `{}` over {}; {SEQUENTIAL} sequential calls, {SESSIONS} {} x {SECONDS}s concurrent, {rounds} rounds",
        servers[0].tool,
        if stdio { "stdio" } else { "streamable HTTP" },
        if stdio {
            "callers on one session"
        } else {
            "sessions"
        }
    );
    for round in 1..=rounds {
        for (i, server) in servers.iter().enumerate() {
            let seq = rt.block_on(sequential(server));
            let load = rt.block_on(concurrent(server));
            println!(
                "round {round} {:<22} sequential p50 {:>8.3} ms  p99 {:>8.3} ms  mean {:>8.3} ms | concurrent {:>9.0} calls/s | server CPU {:>6.1} µs/call, memory idle {:>6.1} MiB, peak {:>6.1} MiB (after: anon {:>5.1}, file {:>5.1})",
                server.name,
                seq.p50.as_secs_f64() * 1e3,
                seq.p99.as_secs_f64() * 1e3,
                seq.mean.as_secs_f64() * 1e3,
                load.rate,
                load.cpu_per_call.as_secs_f64() * 1e6,
                mib(load.idle_kib),
                mib(load.peak_kib),
                mib(load.anon_kib),
                mib(load.file_kib)
            );
            p50s[i].push(seq.p50);
            loads[i].push(load);
        }
    }
    let best = |l: &[Load]| l.iter().map(|l| l.rate).fold(0.0, f64::max);
    match mode {
        Mode::Gateway | Mode::GatewayStdio => {
            let least = |v: &[Duration]| v.iter().copied().min().unwrap_or_default();
            let added = |i: usize| least(&p50s[i]).saturating_sub(least(&p50s[0]));
            println!(
                "the gateway adds {:.0} µs per sequential call (best p50s), the rmcp pass-through {:.0} µs; throughput {:.2}x direct, the pass-through's {:.2}x (best of {rounds})",
                added(1).as_secs_f64() * 1e6,
                added(2).as_secs_f64() * 1e6,
                best(&loads[1]) / best(&loads[0]),
                best(&loads[2]) / best(&loads[0])
            );
        }
        Mode::Rmcp | Mode::RmcpStdio => against_rmcp(&loads),
        Mode::Peers => {
            against_rmcp(&loads);
            println!(
                "throughput ratio (best of {rounds}): {:.1}x the Python SDK server",
                best(&loads[0]) / best(&loads[2])
            );
        }
    }
}
