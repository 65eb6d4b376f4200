//! Three `demo-app serve` replicas (each its own directory and database, tags r1 r2 r3) behind
//! nginx with the shipped configuration (`demo-app/deploy/nginx.conf`, its ports replaced):
//! round robin for plain requests, an MCP session kept on its replica (the official Python
//! client through the balancer), a rolling restart under steady streams of calls from several
//! clients at once in which no call fails and none runs twice, and, sharing Redis (`--redis`), rate limits and confirmation
//! tokens that hold across replicas and a Redis outage the replicas ride out, and the official
//! Python client keeping its MCP session when the replica that held it is killed, and redeeming
//! on one replica the confirmation another asked for (protocol 2026-07-28, no session); and
//! OAuth tokens verified by each replica alone, through a rotation of the issuer's signing key.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_test_support::nginx::{Nginx, free_port};
use tool_test_support::redis::RedisServer;
use tool_test_support::{Served, TempDir};

pub(crate) const IDS: [&str; 3] = ["r1", "r2", "r3"];

/// One `demo-app serve` replica of a rig: its tag, port, directory, database and shared stores.
pub(crate) struct Replica {
    pub(crate) id: &'static str,
    pub(crate) port: u16,
    pub(crate) dir: PathBuf,
    pub(crate) db: PathBuf,
    pub(crate) redis: Option<String>,
    pub(crate) postgres: Option<String>,
    pub(crate) served: Option<Served>,
}

impl Replica {
    /// A replica tagged `id` in a directory of its own under `dir`, on a free port, its own
    /// database there.
    pub(crate) fn new(id: &'static str, dir: &Path) -> Self {
        let dir = dir.join(id);
        std::fs::create_dir_all(&dir).unwrap();
        Replica {
            id,
            port: free_port(),
            db: dir.join("d.db"),
            dir,
            redis: None,
            postgres: None,
            served: None,
        }
    }

    fn start(&mut self) {
        self.served = Some(Served::spawn(self.command()));
    }

    /// Its `serve` command: tagged, on its port, with its shared stores and its database (its
    /// SQLite file, or PostgreSQL when given one), a short drain and grace period.
    pub(crate) fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_demo-app"));
        command.current_dir(&self.dir);
        if self.postgres.is_none() {
            command.arg("--db").arg(&self.db);
        }
        command
            .args(["serve", "--addr", &format!("127.0.0.1:{}", self.port)])
            .args([
                "--replica-id",
                self.id,
                "--drain-period",
                "2",
                "--grace-period",
                "5",
            ])
            .env_remove("RUST_LOG")
            .env_remove("DEMO_APP_DB")
            .env_remove("DEMO_APP_AUDIT")
            .env_remove("DEMO_APP_REDIS")
            .env_remove("DEMO_APP_POSTGRES")
            // One key for every replica: any of them opens the request state another sealed.
            .env(
                "DEMO_APP_MCP_STATE_KEY",
                "replicas-share-this-request-state-key",
            );
        if let Some(url) = &self.redis {
            command.args(["--redis", url]);
        }
        if let Some(url) = &self.postgres {
            command.args(["--postgres", url]);
        }
        command
    }

    pub(crate) fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// Three replicas started in `dir` (each in a directory of its own, with `config` as its
/// `demo-app.toml` when given), and nginx in front of them on the shipped configuration.
/// With `shared_db`, they share one database (as replicas of a real deployment would share
/// theirs), else each has its own; with `redis`, they share the rate limits, confirmation
/// tokens and MCP sessions through the Redis at that URL.
fn rig(
    name: &str,
    dir: &TempDir,
    config: Option<&str>,
    shared_db: bool,
    redis: Option<&str>,
) -> (Vec<Replica>, Nginx) {
    let mut replicas: Vec<Replica> = IDS
        .iter()
        .map(|id| {
            let mut replica = Replica::new(id, dir.path());
            if let Some(config) = config {
                std::fs::write(replica.dir.join("demo-app.toml"), config).unwrap();
            }
            if shared_db {
                replica.db = replica.dir.join("../shared.db");
            }
            replica.redis = redis.map(str::to_owned);
            replica
        })
        .collect();
    for r in &mut replicas {
        r.start();
    }
    let nginx = balancer(name, &replicas);
    (replicas, nginx)
}

/// nginx in front of `replicas` on the shipped configuration, its ports replaced.
pub(crate) fn balancer(name: &str, replicas: &[Replica]) -> Nginx {
    balancer_on(name, replicas, free_port())
}

/// nginx on `port` in front of `replicas` on the shipped configuration.
fn balancer_on(name: &str, replicas: &[Replica], port: u16) -> Nginx {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/nginx.conf");
    let mut site = std::fs::read_to_string(shipped).unwrap();
    for (shipped_port, r) in [8081, 8082, 8083].iter().zip(replicas) {
        site = site.replace(
            &format!("127.0.0.1:{shipped_port}"),
            &format!("127.0.0.1:{}", r.port),
        );
    }
    let listen = "listen 127.0.0.1:8080;";
    assert!(site.contains(listen), "the shipped file listens on 8080");
    site = site.replace(listen, &format!("listen 127.0.0.1:{port};"));
    Nginx::start(name, &site, port)
}

/// Each replica verifies OAuth tokens alone (nothing shared): when the authorization server
/// (oidc-provider) rotates its signing key, every replica behind nginx takes the new tokens
/// without a restart, fetching the new key set when a token names a key it lacks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_replica_accepts_tokens_signed_by_a_rotated_key_without_a_restart() {
    let dir = TempDir::new("replicas-oauth");
    let port = free_port();
    // The audience is the public URL, the balancer's, not a replica's.
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let mut servers = tool_test_support::oauth::AuthServers::start(&resource, "devices:read");
    let config = format!(
        "[auth]\nissuer = \"{}\"\naudience = \"{resource}\"\nkey_refresh_floor = \"500ms\"\n\
         [scopes]\ndevice_list = [\"devices:read\"]\n",
        servers.oidc
    );
    let mut replicas: Vec<Replica> = IDS.iter().map(|id| Replica::new(id, dir.path())).collect();
    for r in &mut replicas {
        std::fs::write(r.dir.join("demo-app.toml"), &config).unwrap();
        r.start();
    }
    let nginx = balancer_on("replicas-oauth", &replicas, port);
    let http = reqwest::Client::new();
    // Round robin: one call per replica, each answered 200 by whichever replica took it.
    let every_replica_accepts = |token: String| {
        let (http, base) = (http.clone(), nginx.base.clone());
        async move {
            let bearer = format!("Bearer {token}");
            let mut accepted = BTreeSet::new();
            for _ in 0..IDS.len() * 2 {
                let headers = [("authorization", bearer.as_str())];
                let (status, replica, _, body) =
                    post(&http, &base, "device_list", &json!({}), &headers).await;
                assert_eq!(status, 200, "{replica}: {body}");
                accepted.insert(replica);
            }
            assert_eq!(accepted, IDS.iter().map(|id| (*id).to_owned()).collect());
        }
    };
    let (status, _, _, _) = post(&http, &nginx.base, "device_list", &json!({}), &[]).await;
    assert_eq!(status, 401);
    let before = servers
        .client_credentials("jwt-client", &resource, "devices:read")
        .await;
    every_replica_accepts(before.clone()).await;
    servers.rotate();
    // Past the floor between two fetches of the key set.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let after = servers
        .client_credentials("jwt-client", &resource, "devices:read")
        .await;
    assert_ne!(
        tool_test_support::oauth::kid(&before),
        tool_test_support::oauth::kid(&after),
        "the signing key changed"
    );
    every_replica_accepts(after).await;
}

#[tokio::test]
async fn plain_requests_are_balanced_over_every_replica_with_the_request_id_passed() {
    let dir = TempDir::new("replicas-rr");
    let (_replicas, nginx) = rig("replicas-rr", &dir, None, false, None);
    let http = reqwest::Client::new();
    let mut seen = BTreeMap::new();
    for i in 0..9 {
        let response = http
            .get(format!("{}/healthz", nginx.base))
            .header("x-request-id", format!("rr-{i}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["x-request-id"],
            format!("rr-{i}").as_str()
        );
        let replica = response.headers()["x-replica"].to_str().unwrap().to_owned();
        *seen.entry(replica).or_insert(0) += 1;
    }
    assert_eq!(
        seen,
        BTreeMap::from([("r1".into(), 3), ("r2".into(), 3), ("r3".into(), 3)])
    );
    // Without one, nginx makes the request id the replica uses.
    let response = http
        .get(format!("{}/healthz", nginx.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-request-id"].len(), 32);
}

#[test]
fn an_mcp_session_stays_on_its_replica_through_the_balancer() {
    let dir = TempDir::new("replicas-mcp");
    // One database: the checks revoke, in a second MCP session (balanced anywhere), the device
    // the first one paired.
    let (_replicas, nginx) = rig("replicas-mcp", &dir, None, true, None);
    let python = tool_test_support::python_with("mcp, jsonschema");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/python/mcp_check.py");
    // Each session's `tools/list` and `tools/call`s, and the answers to the elicitations the
    // server sends mid-call, only work when every request of the session reaches the replica
    // that made it (another answers 404, or never hears the answer it waits for).
    let out = Command::new(python)
        .arg(script)
        .args([
            "demo",
            "--mode",
            "legacy",
            "--url",
            &format!("{}/mcp", nginx.base),
        ])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    tool_test_support::expect_checks(
        &out,
        &[
            "connect 2025-11-25",
            "list",
            "device_add",
            "device_pair",
            "elicitation_accepted",
        ],
    );
}

/// How many clients call at once during the rolling restart.
const CLIENTS: usize = 4;

/// Client `client` POSTing `device_add` for workspace `w{client}-{i}`, one after another,
/// until `stop`: each call's workspace and outcome (the status, or the error).
async fn steady_calls(
    base: String,
    client: usize,
    stop: Arc<AtomicBool>,
) -> Vec<(String, Result<u16, String>)> {
    let http = reqwest::Client::new();
    let mut outcomes = Vec::new();
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let workspace = format!("w{client}-{i}");
        let outcome = http
            .post(format!("{base}/tools/device_add"))
            .json(&json!({"workspace": workspace}))
            .send()
            .await
            .map(|r| r.status().as_u16())
            .map_err(|e| e.to_string());
        outcomes.push((workspace, outcome));
        i += 1;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    outcomes
}

/// The status of `GET /readyz`, or `None` when nothing answers.
pub(crate) async fn readyz(http: &reqwest::Client, base: &str) -> Option<u16> {
    http.get(format!("{base}/readyz"))
        .send()
        .await
        .ok()
        .map(|r| r.status().as_u16())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_fails_no_call_and_runs_none_twice() {
    let dir = TempDir::new("replicas-rolling");
    // The steady loop calls faster than the demo's default limit on device_add allows.
    let config = "[limits.device_add]\nrate = \"100000/min\"\n";
    // With Redis on, as a deployment of several replicas runs: every call is charged there.
    let redis = RedisServer::start();
    let url = redis.url();
    let (mut replicas, nginx) = rig("replicas-rolling", &dir, Some(config), false, Some(&url));
    let stop = Arc::new(AtomicBool::new(false));
    let calls: Vec<_> = (0..CLIENTS)
        .map(|c| tokio::spawn(steady_calls(nginx.base.clone(), c, stop.clone())))
        .collect();
    let http = reqwest::Client::new();
    for r in &mut replicas {
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(readyz(&http, &r.base()).await, Some(200));
        let mut served = r.served.take().unwrap();
        let pid = served.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        // Draining: not ready, still answering.
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut draining = false;
        while Instant::now() < deadline && !draining {
            draining = readyz(&http, &r.base()).await == Some(503);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            draining,
            "{}: /readyz did not turn 503 while draining",
            r.id
        );
        let status = tokio::task::spawn_blocking(move || {
            let status = served.child.wait().unwrap();
            drop(served);
            status
        })
        .await
        .unwrap();
        assert!(status.success(), "{}: {status}", r.id);
        r.start();
        assert_eq!(readyz(&http, &r.base()).await, Some(200));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    let mut outcomes = Vec::new();
    for client in calls {
        outcomes.extend(client.await.unwrap());
    }
    assert!(
        outcomes.len() > 50 * CLIENTS,
        "too few calls to tell: {}",
        outcomes.len()
    );
    let failed: Vec<_> = outcomes.iter().filter(|(_, o)| *o != Ok(200)).collect();
    assert!(
        failed.is_empty(),
        "calls failed during the restart: {failed:?}\n{}",
        nginx.error_log()
    );

    // Every call ran once: its pending code is in exactly one replica's database.
    let mut ran = Vec::new();
    for r in &replicas {
        let listed: Value = http
            .post(format!("{}/tools/device_list", r.base()))
            .json(&json!({}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        ran.extend(
            listed["result"]["pending_codes"]
                .as_array()
                .unwrap_or_else(|| panic!("{listed}"))
                .iter()
                .map(|c| c["workspace"].as_str().unwrap().to_owned()),
        );
    }
    let expected: BTreeSet<String> = outcomes.iter().map(|(w, _)| w.clone()).collect();
    let once: BTreeSet<String> = ran.iter().cloned().collect();
    assert_eq!(ran.len(), once.len(), "a call ran twice");
    assert_eq!(once, expected);
}

/// A `POST /tools/{tool}` with `headers`: status, `X-Replica`, `Retry-After` and body.
pub(crate) async fn post(
    http: &reqwest::Client,
    base: &str,
    tool: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> (u16, String, Option<String>, Value) {
    let mut request = http.post(format!("{base}/tools/{tool}")).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let (replica, retry_after) = (
        header("x-replica").unwrap_or_default(),
        header("retry-after"),
    );
    let status = response.status().as_u16();
    (status, replica, retry_after, response.json().await.unwrap())
}

/// A `tools/call` of `device_revoke` in protocol 2026-07-28, standing alone (no session), from
/// a client that can ask its user: `retry` adds the answer and the state it echoes.
pub(crate) fn revoke_request(
    http: &reqwest::Client,
    base: &str,
    arguments: &Value,
    retry: &Value,
) -> reqwest::RequestBuilder {
    let mut params = json!({"name": "device_revoke", "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}});
    for (k, v) in retry.as_object().unwrap() {
        params[k] = v.clone();
    }
    http.post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "device_revoke")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
}

/// [`revoke_request`] sent: the result and `X-Replica`.
async fn mcp_call(
    http: &reqwest::Client,
    base: &str,
    arguments: &Value,
    retry: &Value,
) -> (Value, String) {
    let response = revoke_request(http, base, arguments, retry)
        .send()
        .await
        .unwrap();
    let replica = response.headers()["x-replica"].to_str().unwrap().to_owned();
    let body = response.text().await.unwrap();
    let message = tool_test_support::sse_message(&body);
    (message["result"].clone(), replica)
}

/// The text of an MCP error result.
fn mcp_error(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap()
}

/// Three replicas, each with its own database, sharing only Redis: a limit holds across them,
/// a token one issues another redeems once (over HTTP and MCP), and while Redis is away the
/// calls that need it answer 503 naming it, /readyz too, until it is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_and_tokens_hold_across_replicas_through_redis() {
    let dir = TempDir::new("replicas-redis");
    let mut redis = RedisServer::start();
    let url = redis.url();
    let config = "[limits.device_add]\nrate = \"30/h\"\n\
                  [redis]\ncommand_timeout = \"500ms\"\npool_wait = \"500ms\"\n";
    let (replicas, nginx) = rig("replicas-redis", &dir, Some(config), false, Some(&url));
    let http = reqwest::Client::new();
    holds_the_limit_of_30_an_hour(&http, &nginx.base).await;
    redeems_a_token_on_another_replica_once(&http, &nginx.base, &replicas).await;
    rides_out_a_redis_outage(&http, &replicas, &mut redis).await;
}

/// a. 30 an hour, whichever replica answers.
async fn holds_the_limit_of_30_an_hour(http: &reqwest::Client, base: &str) {
    let mut ok = BTreeMap::<String, usize>::new();
    let mut limited = 0;
    for i in 0..40 {
        let (status, replica, retry_after, body) = post(
            http,
            base,
            "device_add",
            &json!({"workspace": format!("w{i}")}),
            &[],
        )
        .await;
        match status {
            200 => *ok.entry(replica).or_default() += 1,
            429 => {
                assert_eq!(body["error"]["type"], "rate_limited", "{body}");
                let after: u64 = retry_after.expect("Retry-After").parse().unwrap();
                assert!(after > 0, "{after}");
                limited += 1;
            }
            other => panic!("{other}: {body}"),
        }
    }
    assert_eq!((ok.values().sum::<usize>(), limited), (30, 10), "{ok:?}");
    assert_eq!(ok.len(), 3, "every replica served some: {ok:?}");
}

/// b. A token issued by one replica is redeemed by another, then by none: over HTTP and MCP.
async fn redeems_a_token_on_another_replica_once(
    http: &reqwest::Client,
    base: &str,
    replicas: &[Replica],
) {
    // b. Over HTTP: a token issued by one replica, redeemed by another, then by none.
    let other_than = |id: &str| replicas.iter().find(|r| r.id != id).unwrap().base();
    let device = json!({"device_id": "dev_00000000000000aa"});
    let (status, issuer, _, asked) = post(http, base, "device_revoke", &device, &[]).await;
    assert_eq!(status, 409, "{asked}");
    let token = asked["error"]["details"]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let confirmed = [("x-confirmation", token.as_str())];
    let (status, redeemer, _, ran) = post(
        http,
        &other_than(&issuer),
        "device_revoke",
        &device,
        &confirmed,
    )
    .await;
    assert_ne!(redeemer, issuer);
    // The tool ran there (its database has no such device): the token confirmed it.
    assert_eq!(
        (status, &ran["error"]["type"]),
        (404, &json!("not_found")),
        "{ran}"
    );
    for r in replicas {
        let (status, _, _, again) =
            post(http, &r.base(), "device_revoke", &device, &confirmed).await;
        assert_eq!(status, 409, "{}: a token redeemed twice: {again}", r.id);
    }
    // Over MCP: the question on one replica, the accept with its state on another.
    let device = json!({"device_id": "dev_00000000000000bb"});
    let (asked, issuer) = mcp_call(http, base, &device, &json!({})).await;
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let accept = json!({"inputResponses": {"confirm": {"action": "accept", "content": {}}},
                        "requestState": state});
    let (ran, redeemer) = mcp_call(http, &other_than(&issuer), &device, &accept).await;
    assert_ne!(redeemer, issuer);
    assert!(mcp_error(&ran).starts_with("not_found:"), "{ran}");
    for r in replicas {
        let (again, _) = mcp_call(http, &r.base(), &device, &accept).await;
        let text = mcp_error(&again);
        assert!(
            text.starts_with("confirmation_required:"),
            "{}: {text}",
            r.id
        );
    }
}

/// d. Redis away: what needs it answers 503 naming it, the rest is served; back, all is.
async fn rides_out_a_redis_outage(
    http: &reqwest::Client,
    replicas: &[Replica],
    redis: &mut RedisServer,
) {
    let device = json!({"device_id": "dev_00000000000000cc"});
    redis.stop();
    // A caller learns which engine is down, never where it is.
    let address = format!("127.0.0.1:{}", redis.port());
    for r in replicas {
        let base = r.base();
        for (tool, args) in [
            ("device_add", json!({"workspace": "x"})),
            ("device_revoke", device.clone()),
        ] {
            let (status, _, _, body) = post(http, &base, tool, &args, &[]).await;
            assert_eq!(status, 503, "{}: {tool}: {body}", r.id);
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.starts_with("Redis is unavailable"), "{body}");
            assert!(!body.to_string().contains(&address), "{body}");
        }
        let (status, _, _, body) = post(http, &base, "device_list", &json!({}), &[]).await;
        assert_eq!(status, 200, "{}: {body}", r.id);
        let deadline = Instant::now() + Duration::from_secs(10);
        while readyz(http, &base).await != Some(503) {
            assert!(Instant::now() < deadline, "{}: still ready", r.id);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let ready = http.get(format!("{base}/readyz")).send().await.unwrap();
        let ready = ready.text().await.unwrap();
        assert!(
            ready.contains("redis") && !ready.contains(&address),
            "{}: {ready}",
            r.id
        );
    }
    redis.restart();
    for r in replicas {
        let base = r.base();
        let deadline = Instant::now() + Duration::from_secs(10);
        while readyz(http, &base).await != Some(200) {
            assert!(Instant::now() < deadline, "{}: not ready again", r.id);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let (status, _, _, body) =
            post(http, &base, "device_add", &json!({"workspace": "y"}), &[]).await;
        assert_eq!(status, 200, "{}: {body}", r.id);
        let (status, _, _, body) = post(http, &base, "device_revoke", &device, &[]).await;
        assert_eq!(status, 409, "{}: {body}", r.id);
        assert!(body["error"]["details"]["token"].is_string(), "{body}");
    }
}

/// `tests/python/mcp_failover.py SUITE --url URL` (the official MCP Python client), started
/// with its stdin and stdout piped.
fn failover_checker(suite: &str, base: &str) -> std::process::Child {
    let python = tool_test_support::python_with("mcp");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/python/mcp_failover.py");
    Command::new(python)
        .arg(script)
        .args([suite, "--url", &format!("{base}/mcp")])
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The checker's output, one JSON line at a time, until its `done`; its stderr in the panic
/// message when it stops before.
struct Events {
    child: std::process::Child,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    seen: Vec<String>,
}

impl Events {
    fn new(mut child: std::process::Child) -> Self {
        use std::io::BufRead;
        let stdout = child.stdout.take().unwrap();
        Self {
            child,
            lines: std::io::BufReader::new(stdout).lines(),
            seen: Vec::new(),
        }
    }

    fn failed(&mut self, what: &str) -> ! {
        use std::io::Read;
        let _ = self.child.kill();
        let mut stderr = String::new();
        let _ = self
            .child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr);
        panic!(
            "{what}; the checker printed:\n{}\n{stderr}",
            self.seen.join("\n")
        );
    }

    /// The next event, which must be `name`.
    fn next(&mut self, name: &str) -> Value {
        let Some(Ok(line)) = self.lines.next() else {
            self.failed(&format!("no `{name}` event"))
        };
        self.seen.push(line.clone());
        match serde_json::from_str::<Value>(&line) {
            Ok(event) if event["event"] == name => event,
            _ => self.failed(&format!("expected the `{name}` event")),
        }
    }

    /// Writes `line` to the checker's stdin.
    fn answer(&mut self, line: &str) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Its last line is `done` and it exited 0.
    fn done(&mut self) {
        let last = self.lines.next();
        if !matches!(&last, Some(Ok(l)) if l == "done") {
            self.failed(&format!("expected `done`, got {last:?}"));
        }
        let status = self.child.wait().unwrap();
        if !status.success() {
            self.failed(&format!("the checker exited {status}"));
        }
    }
}

/// The recorded exchanges of an event (see `mcp_failover.py`).
fn exchanges(event: &Value) -> &Vec<Value> {
    event["exchanges"].as_array().unwrap()
}

/// The official Python client in a session (protocol 2025-11-25) through the balancer, the
/// replicas sharing one database and Redis: a revocation confirmed through elicitation on the
/// session's replica; that replica killed (SIGKILL, nothing saved on the way out); the next
/// calls of the same session, a revocation confirmed through elicitation among them, answered
/// by another replica that restored the session from Redis.
#[test]
fn an_mcp_session_outlives_the_replica_that_held_it_through_redis() {
    let dir = TempDir::new("replicas-failover");
    let redis = RedisServer::start();
    let (mut replicas, nginx) = rig("replicas-failover", &dir, None, true, Some(&redis.url()));
    let mut events = Events::new(failover_checker("session", &nginx.base));

    let connected = events.next("connected");
    assert_eq!(connected["protocol"], "2025-11-25", "{connected}");
    let session = connected["session"].as_str().unwrap().to_owned();
    let (holder, _) = session.split_once('.').unwrap();
    assert!(IDS.contains(&holder), "{session}");

    // Before: every request of the session, the answer to the server's question among them,
    // reached the replica that made it.
    let confirmed = events.next("confirmed");
    let before = exchanges(&confirmed);
    assert!(
        before.iter().any(|e| e["method"] == "response"),
        "the elicitation was not answered: {confirmed}"
    );
    for e in before.iter().filter(|e| e["session"] == session.as_str()) {
        assert_eq!(e["replica"], holder, "{e}");
    }

    let kill = events.next("kill");
    assert_eq!(kill["replica"], holder);
    let replica = replicas.iter_mut().find(|r| r.id == holder).unwrap();
    let mut served = replica.served.take().unwrap();
    served.child.kill().unwrap();
    let status = served.child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    events.answer("killed");

    // After: the same session, every request answered, by the others only; its second
    // revocation confirmed through elicitation there.
    let after = events.next("after");
    assert!(after["revoked_at"].is_string(), "{after}");
    let after = exchanges(&after).clone();
    let calls: Vec<&Value> = after
        .iter()
        .filter(|e| e["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 4, "device_list, add, pair, revoke: {after:?}");
    assert!(after.iter().any(|e| e["method"] == "response"), "{after:?}");
    let mut answered_by = BTreeSet::new();
    for e in &after {
        assert_eq!(e["session"], session.as_str(), "{e}");
        assert!(e["status"].as_u64().unwrap() < 300, "{e}");
        answered_by.insert(e["replica"].as_str().unwrap().to_owned());
    }
    assert!(!answered_by.contains(holder), "{answered_by:?}");
    events.done();
}

/// The official Python client on the newest protocol it speaks (2026-07-28, no session): a
/// revocation's question (`input_required`, its state carrying the confirmation token) comes
/// from one replica, and the accepted retry the client sends is redeemed by another.
#[test]
fn a_sessionless_confirmation_asked_on_one_replica_is_redeemed_on_another() {
    let dir = TempDir::new("replicas-sessionless");
    let redis = RedisServer::start();
    let (_replicas, nginx) = rig("replicas-sessionless", &dir, None, true, Some(&redis.url()));
    let mut events = Events::new(failover_checker("sessionless", &nginx.base));

    let connected = events.next("connected");
    assert_eq!(connected["protocol"], "2026-07-28", "{connected}");
    assert_eq!(connected["latest"], "2026-07-28", "{connected}");
    let revoked = events.next("revoked");
    assert!(revoked["revoked_at"].is_string(), "{revoked}");
    assert_eq!(revoked["sessions"], json!([]), "{revoked}");
    let calls: Vec<&Value> = exchanges(&revoked)
        .iter()
        .filter(|e| e["tool"] == "device_revoke")
        .collect();
    assert_eq!(
        calls.len(),
        2,
        "the question, then the accepted retry: {revoked}"
    );
    let (asked, accepted) = (calls[0], calls[1]);
    assert_eq!(
        (&asked["answers"], &accepted["answers"]),
        (&json!(false), &json!(true)),
        "{revoked}"
    );
    assert_ne!(asked["replica"], accepted["replica"], "{revoked}");
    events.done();
}
