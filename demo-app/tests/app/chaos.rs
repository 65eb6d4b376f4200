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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use serde_json::{Value, json};
use tool_runtime::agent::Api;
use tool_test_support::fake_provider::{FakeProvider, Step};
use tool_test_support::fault_proxy::{Fault, FaultProxy};
use tool_test_support::nginx::Nginx;
use tool_test_support::postgres::PostgresServer;
use tool_test_support::redis::RedisServer;
use tool_test_support::{Served, TempDir};

use crate::postgres::{log, start};
use crate::replicas::{IDS, Replica, balancer, readyz};

/// The audit lease: a replica paused longer than this is presumed dead by the others.
const LEASE: Duration = Duration::from_secs(2);

/// The limit on `device_list` that every replica shares through Redis.
const LIST_BURST: usize = 60;

/// How long a 2025-11-25 client waits for a call's answer.
const SESSION_CALL_LIMIT: Duration = Duration::from_secs(15);

/// The MCP clients in sessions.
const SESSION_CLIENTS: usize = 2;

/// The scheduled tasks, made due one after another across the run.
const TASKS: usize = 24;

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

/// A small seeded generator (xorshift64*): the same seed, the same schedule.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Between `low` and `high` milliseconds.
    fn millis(&mut self, low: u64, high: u64) -> Duration {
        Duration::from_millis(low + self.below(high - low + 1))
    }
}

/// A backend behind its proxy.
#[derive(Debug, Clone, Copy)]
enum Backend {
    Redis,
    Postgres,
}

/// One fault of the schedule.
#[derive(Debug, Clone, Copy)]
enum Chaos {
    Kill(usize),
    Pause(usize, Duration),
    RollingRestart,
    Stop(Backend, Duration),
    Blackhole(Backend, Duration),
    Slow(Backend, Duration),
}

impl Chaos {
    fn draw(rng: &mut Rng) -> Self {
        let backend = |rng: &mut Rng| {
            if rng.below(2) == 0 {
                Backend::Redis
            } else {
                Backend::Postgres
            }
        };
        let replica = usize::try_from(rng.below(3)).unwrap();
        match rng.below(8) {
            0 | 1 => Chaos::Kill(replica),
            2 => Chaos::Pause(replica, LEASE + rng.millis(1000, 2000)),
            3 => Chaos::RollingRestart,
            4 => Chaos::Stop(backend(rng), rng.millis(1500, 4000)),
            5 | 6 => Chaos::Blackhole(backend(rng), rng.millis(1500, 4000)),
            _ => Chaos::Slow(backend(rng), rng.millis(2000, 4000)),
        }
    }
}

/// What a client saw of one call.
#[derive(Debug, Clone)]
struct Call {
    /// What the client did: `add`, `pair`, `ask`, `confirm`, `reuse`, `list`.
    kind: &'static str,
    /// Its `X-Request-Id`.
    id: String,
    /// The HTTP status (0: no answer at all).
    status: u16,
    /// The replica that answered (`None`: nginx did, or no one).
    replica: Option<String>,
    /// The error's message, when it was one.
    message: String,
    /// From sending to the end of the answer.
    took: Duration,
}

/// The calls every client made, and what the MCP clients saw.
#[derive(Default)]
struct Record {
    calls: Vec<Call>,
    /// A token redeemed a second time and the tool ran: never expected.
    reused: Vec<String>,
    /// MCP: (client, calls answered, elicitations accepted, errors, sessions opened).
    mcp: Vec<String>,
    /// Devices paired, that the confirmers revoke.
    devices: Vec<String>,
    /// MCP session calls that got no answer: when, and what the client said.
    lost: Vec<String>,
}

type Shared = Arc<Mutex<Record>>;

/// The rig: backends, their proxies, the replicas and nginx.
struct Rig {
    postgres: PostgresServer,
    _redis: RedisServer,
    redis_proxy: FaultProxy,
    postgres_proxy: FaultProxy,
    replicas: Vec<Replica>,
    nginx: Nginx,
    _dir: TempDir,
}

impl Rig {
    async fn start(env: &[(&str, &str)]) -> Self {
        let dir = TempDir::new("chaos");
        let postgres = tokio::task::block_in_place(PostgresServer::start);
        let url = postgres.create_database("demo");
        let redis = tokio::task::block_in_place(RedisServer::start);
        let redis_proxy = FaultProxy::start(redis.port()).await;
        let postgres_proxy = FaultProxy::start(postgres.port()).await;
        let url = url.replace(
            &format!(":{}/", postgres.port()),
            &format!(":{}/", postgres_proxy.port()),
        );
        let redis_url = redis.url().replace(
            &format!(":{}/", redis.port()),
            &format!(":{}/", redis_proxy.port()),
        );
        let mut replicas: Vec<Replica> = IDS
            .iter()
            .map(|id| {
                let mut replica = Replica::new(id, dir.path());
                std::fs::write(replica.dir.join("demo-app.toml"), CONFIG).unwrap();
                replica.redis = Some(redis_url.clone());
                replica.postgres = Some(url.clone());
                replica
            })
            .collect();
        tokio::task::block_in_place(|| {
            std::thread::scope(|s| {
                for replica in &mut replicas {
                    s.spawn(|| start(replica, env));
                }
            });
        });
        let nginx = balancer("chaos", &replicas);
        Rig {
            postgres,
            _redis: redis,
            redis_proxy,
            postgres_proxy,
            replicas,
            nginx,
            _dir: dir,
        }
    }

    fn sql(&self, sql: &str) -> String {
        self.postgres.psql("demo", sql)
    }

    fn proxy(&self, backend: Backend) -> &FaultProxy {
        match backend {
            Backend::Redis => &self.redis_proxy,
            Backend::Postgres => &self.postgres_proxy,
        }
    }

    /// Sends `signal` to replica `i`.
    fn signal(&self, i: usize, signal: &str) {
        let pid = self.replicas[i].served.as_ref().unwrap().child.id();
        let sent = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill {signal} {pid}");
    }

    /// Replica `i` killed with SIGKILL, then started again.
    fn kill(&mut self, i: usize, env: &[(&str, &str)]) {
        let mut served: Served = self.replicas[i].served.take().unwrap();
        served.child.kill().unwrap();
        served.child.wait().unwrap();
        drop(served);
        start(&mut self.replicas[i], env);
    }

    /// Each replica in turn stopped with SIGTERM (its drain and grace period), then started
    /// again.
    fn rolling_restart(&mut self, env: &[(&str, &str)]) {
        for i in 0..self.replicas.len() {
            self.signal(i, "-TERM");
            let mut served = self.replicas[i].served.take().unwrap();
            let status = served.child.wait().unwrap();
            assert!(status.success(), "{}: {status}", self.replicas[i].id);
            drop(served);
            start(&mut self.replicas[i], env);
        }
    }

    /// Runs one fault to its end.
    async fn inflict(&mut self, chaos: Chaos, env: &[(&str, &str)]) {
        match chaos {
            Chaos::Kill(i) => tokio::task::block_in_place(|| self.kill(i, env)),
            Chaos::Pause(i, long) => {
                self.signal(i, "-STOP");
                tokio::time::sleep(long).await;
                self.signal(i, "-CONT");
            }
            Chaos::RollingRestart => tokio::task::block_in_place(|| self.rolling_restart(env)),
            Chaos::Stop(Backend::Postgres, long) => {
                tokio::task::block_in_place(|| self.postgres.stop());
                tokio::time::sleep(long).await;
                tokio::task::block_in_place(|| self.postgres.start_again());
            }
            Chaos::Stop(backend, long) => self.for_a_while(backend, Fault::Refuse, long).await,
            Chaos::Blackhole(backend, long) => {
                self.for_a_while(backend, Fault::Blackhole, long).await;
            }
            Chaos::Slow(backend, long) => {
                let fault = Fault::Slow(Duration::from_millis(150));
                self.for_a_while(backend, fault, long).await;
            }
        }
    }

    /// Faults from `rng`, one after another, each after a quiet gap, until `end`: the schedule
    /// as printed, and how many of each kind.
    async fn run_faults(
        &mut self,
        rng: &mut Rng,
        end: Instant,
        env: &[(&str, &str)],
    ) -> (String, BTreeMap<&'static str, usize>) {
        let mut schedule = String::new();
        let mut faults = BTreeMap::<&'static str, usize>::new();
        let started = Instant::now();
        loop {
            let gap = rng.millis(1000, 3000);
            tokio::time::sleep(gap).await;
            if Instant::now() + Duration::from_secs(5) > end {
                break;
            }
            let chaos = Chaos::draw(rng);
            let line = format!("{:6.1} s  {chaos:?}", started.elapsed().as_secs_f64());
            eprintln!("chaos: {line}");
            let _ = writeln!(schedule, "{line}");
            let name = match chaos {
                Chaos::Kill(_) => "replica killed",
                Chaos::Pause(..) => "replica paused past its lease",
                Chaos::RollingRestart => "rolling restart",
                Chaos::Stop(..) => "backend stopped",
                Chaos::Blackhole(..) => "backend blackholed",
                Chaos::Slow(..) => "backend slowed",
            };
            *faults.entry(name).or_default() += 1;
            self.inflict(chaos, env).await;
        }
        (schedule, faults)
    }

    async fn for_a_while(&self, backend: Backend, fault: Fault, long: Duration) {
        self.proxy(backend).set(fault);
        tokio::time::sleep(long).await;
        self.proxy(backend).set(Fault::Pass);
    }
}

/// A `POST /tools/{tool}` through `base`, recorded.
async fn call(
    http: &reqwest::Client,
    base: &str,
    kind: &'static str,
    id: String,
    tool: &str,
    body: &Value,
    token: Option<&str>,
) -> (Call, Value) {
    let sent = Instant::now();
    let mut request = http
        .post(format!("{base}/tools/{tool}"))
        .header("x-request-id", &id)
        .timeout(Duration::from_secs(60))
        .json(body);
    if let Some(token) = token {
        request = request.header("x-confirmation", token);
    }
    let (status, replica, answer) = match request.send().await {
        Ok(response) => {
            let replica =
                (response.headers().get("x-replica")).map(|v| v.to_str().unwrap().to_owned());
            let status = response.status().as_u16();
            let answer = response.json::<Value>().await.unwrap_or(Value::Null);
            (status, replica, answer)
        }
        Err(_) => (0, None, Value::Null),
    };
    let message = answer["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let call = Call {
        kind,
        id,
        status,
        replica,
        message,
        took: sent.elapsed(),
    };
    (call, answer)
}

/// Adds a device code and pairs it, again and again.
async fn adder(c: usize, base: String, stop: Arc<AtomicBool>, record: Shared) {
    let http = reqwest::Client::new();
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let id = format!("add-{c}-{i}");
        let body = json!({"workspace": id});
        let (added, answer) = call(&http, &base, "add", id, "device_add", &body, None).await;
        let ok = added.status == 200;
        record.lock().unwrap().calls.push(added);
        if !ok {
            continue;
        }
        let code = answer["result"]["code"].as_str().unwrap();
        let body = json!({"code": code, "device_name": format!("sensor {c}-{i}")});
        let id = format!("pair-{c}-{i}");
        let (paired, answer) = call(&http, &base, "pair", id, "device_pair", &body, None).await;
        let mut record = record.lock().unwrap();
        if paired.status == 200 {
            let device = answer["result"]["device_id"].as_str().unwrap().to_owned();
            record.devices.push(device);
        }
        record.calls.push(paired);
    }
}

/// Revokes paired devices over HTTP: asked on one replica, confirmed with the token on
/// whichever nginx picks, then the same token tried again.
async fn confirmer(c: usize, base: String, stop: Arc<AtomicBool>, record: Shared) {
    let http = reqwest::Client::new();
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let device = record.lock().unwrap().devices.pop();
        let Some(device) = device else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let body = json!({"device_id": device});
        let id = format!("ask-{c}-{i}");
        let (asked, answer) = call(&http, &base, "ask", id, "device_revoke", &body, None).await;
        let token = answer["error"]["details"]["token"]
            .as_str()
            .map(str::to_owned);
        record.lock().unwrap().calls.push(asked);
        let Some(token) = token else { continue };
        let id = format!("confirm-{c}-{i}");
        let (confirmed, _) = call(
            &http,
            &base,
            "confirm",
            id,
            "device_revoke",
            &body,
            Some(&token),
        )
        .await;
        record.lock().unwrap().calls.push(confirmed);
        let id = format!("reuse-{c}-{i}");
        let (reused, _) = call(
            &http,
            &base,
            "reuse",
            id,
            "device_revoke",
            &body,
            Some(&token),
        )
        .await;
        let mut record = record.lock().unwrap();
        // A token that ran the tool again: the tool's own answer (a result, or its not-found).
        if reused.replica.is_some() && matches!(reused.status, 200 | 404) {
            record.reused.push(reused.id.clone());
        }
        record.calls.push(reused);
    }
}

/// Lists devices as fast as the shared limit lets anyone.
async fn lister(c: usize, base: String, stop: Arc<AtomicBool>, record: Shared) {
    let http = reqwest::Client::new();
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let id = format!("list-{c}-{i}");
        let (listed, _) = call(&http, &base, "list", id, "device_list", &json!({}), None).await;
        record.lock().unwrap().calls.push(listed);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An MCP client of protocol 2026-07-28 (no session): a revocation asked through an
/// input-required result, accepted on whichever replica nginx picks, then the same accepted
/// state sent again, which must not run the tool again.
async fn sessionless(c: usize, base: String, stop: Arc<AtomicBool>, record: Shared) {
    let http = reqwest::Client::new();
    let (mut answered, mut accepted, mut errors) = (0, 0, 0);
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let args = json!({"device_id": format!("dev_{:016x}", 0xc000_0000 + c * 100_000 + i)});
        let Some(asked) = mcp_revoke(&http, &base, &args, &json!({})).await else {
            errors += 1;
            continue;
        };
        if asked["resultType"] != "input_required" {
            errors += 1;
            continue;
        }
        let state = asked["requestState"].as_str().unwrap().to_owned();
        let accept = json!({"inputResponses": {"confirm": {"action": "accept", "content": {}}},
                            "requestState": state});
        let Some(ran) = mcp_revoke(&http, &base, &args, &accept).await else {
            errors += 1;
            continue;
        };
        let text = ran["content"][0]["text"].as_str().unwrap_or_default();
        if text.starts_with("not_found:") {
            accepted += 1;
        } else {
            errors += 1;
            continue;
        }
        answered += 1;
        if let Some(again) = mcp_revoke(&http, &base, &args, &accept).await {
            let text = again["content"][0]["text"].as_str().unwrap_or_default();
            if text.starts_with("not_found:") {
                record.lock().unwrap().reused.push(format!("mcp-{c}-{i}"));
            }
        }
    }
    record.lock().unwrap().mcp.push(format!(
        "2026-07-28 client {c}: {answered} revocations confirmed, {accepted} accepted, \
         {errors} refused or unanswered"
    ));
}

/// A `tools/call` of `device_revoke` in protocol 2026-07-28, standing alone, its `retry`
/// fields added: the result, if one came.
async fn mcp_revoke(
    http: &reqwest::Client,
    base: &str,
    args: &Value,
    retry: &Value,
) -> Option<Value> {
    let mut params = json!({"name": "device_revoke", "arguments": args, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "chaos", "version": "1"}}});
    for (k, v) in retry.as_object().unwrap() {
        params[k] = v.clone();
    }
    let response = http
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "device_revoke")
        .timeout(Duration::from_secs(60))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body = response.text().await.ok()?;
    let message = std::panic::catch_unwind(|| tool_test_support::sse_message(&body)).ok()?;
    let result = message.get("result")?.clone();
    Some(result)
}

/// What a 2025-11-25 client answers when asked: always accept.
#[derive(Clone)]
struct Accepting(Arc<std::sync::atomic::AtomicUsize>);

impl rmcp::ClientHandler for Accepting {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        let mut elicitation = rmcp::model::ElicitationCapability::new();
        elicitation.form = Some(rmcp::model::FormElicitationCapability::default());
        capabilities.elicitation = Some(elicitation);
        let mut config = rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("chaos", "1"),
        );
        config.protocol_version = rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE;
        config
    }

    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(json!({})),
        )
    }
}

/// An MCP client of protocol 2025-11-25 in a session through nginx (the official Rust SDK):
/// revocations confirmed through elicitation; a session lost to a fault is opened again.
async fn in_session(c: usize, base: String, stop: Arc<AtomicBool>, record: Shared) {
    let elicited = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (mut answered, mut errors, mut sessions) = (0, 0, 0);
    let mut lost = Vec::new();
    let started = Instant::now();
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let transport =
            rmcp::transport::StreamableHttpClientTransport::from_uri(format!("{base}/mcp"));
        let connect = Accepting(elicited.clone()).serve(transport);
        let Ok(Ok(client)) = tokio::time::timeout(Duration::from_secs(30), connect).await else {
            errors += 1;
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        sessions += 1;
        while !stop.load(Ordering::Relaxed) {
            i += 1;
            let args = json!({"device_id": format!("dev_{:016x}", 0xd000_0000 + c * 100_000 + i)});
            let params = rmcp::model::CallToolRequestParams::new("device_revoke")
                .with_arguments(args.as_object().unwrap().clone());
            let sent = Instant::now();
            // The client's own time limit: the SDK resumes a cut stream for as long as it waits.
            let outcome = tokio::time::timeout(SESSION_CALL_LIMIT, client.call_tool(params));
            match outcome.await {
                Ok(Ok(result)) => {
                    let text = serde_json::to_value(&result).unwrap()["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    if text.starts_with("not_found:") {
                        answered += 1;
                    } else {
                        errors += 1;
                    }
                }
                Ok(Err(e)) => {
                    lost.push(format!(
                        "{:.1} s: {e} after {:.1} s",
                        started.elapsed().as_secs_f64(),
                        sent.elapsed().as_secs_f64()
                    ));
                    break;
                }
                Err(_) => {
                    lost.push(format!(
                        "{:.1} s: no answer in 60 s",
                        started.elapsed().as_secs_f64()
                    ));
                    break;
                }
            }
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
    }
    let mut record = record.lock().unwrap();
    record.mcp.push(format!(
        "2025-11-25 client {c}: {answered} revocations confirmed through {} elicitations, \
         {errors} refused, {sessions} sessions, {} lost",
        elicited.load(Ordering::Relaxed),
        lost.len()
    ));
    record.lost.extend(lost);
}

/// The clients, each calling until `stop`: four add and pair devices, two revoke them with
/// tokens, two list against the shared limit, two confirm through input-required results, and
/// the MCP clients in sessions.
fn spawn_traffic(
    base: &str,
    stop: &Arc<AtomicBool>,
    record: &Shared,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut traffic = Vec::new();
    let (b, s, r) = (|| base.to_owned(), || stop.clone(), || record.clone());
    for c in 0..4 {
        traffic.push(tokio::spawn(adder(c, b(), s(), r())));
    }
    for c in 0..2 {
        traffic.push(tokio::spawn(confirmer(c, b(), s(), r())));
        traffic.push(tokio::spawn(lister(c, b(), s(), r())));
        traffic.push(tokio::spawn(sessionless(c, b(), s(), r())));
    }
    for c in 0..SESSION_CLIENTS {
        traffic.push(tokio::spawn(in_session(c, b(), s(), r())));
    }
    traffic
}

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
    // fault (a pause, a drain, a backend) answers it.
    let kills = faults.get("replica killed").copied().unwrap_or_default();
    assert!(
        record.lost.len() <= kills * SESSION_CLIENTS,
        "MCP session calls lost beyond the {kills} kills: {:?}\n{schedule}",
        record.lost
    );
    eprintln!(
        "chaos: seed {seed}, {:.0} s of traffic, faults: {faults:?}\n{}\n{}",
        ran_for.as_secs_f64(),
        report.lines.join("\n"),
        record.mcp.join("\n")
    );
}

/// The checks' figures, printed at the end.
#[derive(Default)]
struct Report {
    lines: Vec<String>,
}

impl Report {
    /// Every call answered, by a replica or by nginx for one that died, within the limits.
    fn check_answers(&mut self, record: &Record, schedule: &str) {
        let mut by = BTreeMap::<(&str, u16), usize>::new();
        for c in &record.calls {
            *by.entry((c.kind, c.status)).or_default() += 1;
        }
        let unanswered: Vec<&Call> = record.calls.iter().filter(|c| c.status == 0).collect();
        assert!(
            unanswered.is_empty(),
            "calls with no answer: {unanswered:?}\n{schedule}"
        );
        // A backend found unreachable is said so, by kind, never where it is.
        for c in record
            .calls
            .iter()
            .filter(|c| c.status == 503 && c.replica.is_some())
        {
            assert!(
                c.message.contains("Redis is unavailable")
                    || c.message.contains("PostgreSQL is unavailable"),
                "{c:?}"
            );
            assert!(!c.message.contains("127.0.0.1"), "{c:?}");
        }
        let slowest_refusal = (record.calls.iter())
            .filter(|c| c.status == 503)
            .map(|c| c.took)
            .max()
            .unwrap_or_default();
        let slowest = record
            .calls
            .iter()
            .map(|c| c.took)
            .max()
            .unwrap_or_default();
        // A refusal comes within the configured waits, plus a pause a replica may be in.
        assert!(
            slowest_refusal < Duration::from_secs(10),
            "a 503 after {slowest_refusal:?}\n{schedule}"
        );
        assert!(
            slowest < Duration::from_secs(35),
            "a call answered after {slowest:?}\n{schedule}"
        );
        self.lines.push(format!(
            "{} HTTP calls by kind and status: {by:?}; slowest answer {:.1} s, slowest 503 {:.1} s",
            record.calls.len(),
            slowest.as_secs_f64(),
            slowest_refusal.as_secs_f64()
        ));
    }

    /// The audit against the calls: one intent per call that ran, one real outcome per call
    /// answered with a result or a tool error, `unknown` only once and only beside an intent
    /// (a call whose replica died or stalled), no intent for a call refused for PostgreSQL,
    /// and no request that ran twice.
    fn check_audit(&mut self, rig: &Rig, record: &Record, schedule: &str) {
        // Recovery of any instance killed at the end: wait for its lease.
        std::thread::sleep(LEASE * 2);
        // Per call of the pipeline: its request, whether its intent was written, its outcomes.
        let mut calls = BTreeMap::<String, (String, usize, Vec<String>)>::new();
        for row in rig
            .sql(
                "SELECT call, request_id, event, coalesce(outcome, '') FROM tool_audit_records \
                 WHERE NOT dry_run AND request_id IS NOT NULL",
            )
            .lines()
        {
            let [call, id, event, outcome] = row.split('|').collect::<Vec<_>>()[..] else {
                panic!("{row}")
            };
            let entry = calls.entry(call.to_owned()).or_default();
            id.clone_into(&mut entry.0);
            if event == "intent" {
                entry.1 += 1;
            } else {
                entry.2.push(outcome.to_owned());
            }
        }
        // Per request: the calls that ran (an intent), with their outcomes.
        let mut ran = BTreeMap::<&str, Vec<&Vec<String>>>::new();
        let (mut unknown, mut late) = (0, 0);
        for (call, (id, intents, outcomes)) in &calls {
            let unknowns = outcomes.iter().filter(|o| *o == "unknown").count();
            let real = outcomes.len() - unknowns;
            if *intents == 0 {
                assert!(
                    unknowns == 0 && real == 1,
                    "{id} {call}: refused, outcomes {outcomes:?}\n{schedule}"
                );
                continue;
            }
            assert!(
                *intents == 1 && unknowns <= 1 && real <= 1 && !outcomes.is_empty(),
                "{id} {call}: {intents} intents, outcomes {outcomes:?}\n{schedule}"
            );
            unknown += unknowns;
            late += usize::from(unknowns == 1 && real == 1);
            ran.entry(id).or_default().push(outcomes);
        }
        let twice: Vec<_> = ran.iter().filter(|(_, calls)| calls.len() > 1).collect();
        assert!(
            twice.is_empty(),
            "requests run twice: {twice:?}\n{schedule}"
        );
        let (mut checked, mut refused) = (0, 0);
        for c in record.calls.iter().filter(|c| c.replica.is_some()) {
            // Answered by a replica: if it ran, its one real outcome is there (a tool that
            // failed for a backend lost mid-call included); a result or the tool's own error
            // means it ran.
            let outcomes = ran.get(c.id.as_str()).map(|f| f[0]);
            let real = outcomes.map_or(0, |o| o.iter().filter(|o| *o != "unknown").count());
            if outcomes.is_some() || matches!(c.status, 200 | 404) {
                assert!(
                    real == 1,
                    "{c:?}: answered, its outcomes {outcomes:?}\n{schedule}"
                );
                checked += 1;
            }
            // Refused before it ran, for PostgreSQL: its intent could not be written.
            if c.status == 503 && c.message.contains("not run") {
                assert!(outcomes.is_none(), "{c:?}: refused, yet it ran\n{schedule}");
                refused += 1;
            }
        }
        self.lines.push(format!(
            "audit: {checked} calls that ran and were answered, each with one intent and one \
             outcome; {unknown} reported unknown ({late} of them later finished by a replica that \
             resumed); {refused} refused before running, none run; {} calls of {} requests audited, none run twice",
            calls.len(),
            calls.values().map(|c| &c.0).collect::<BTreeSet<_>>().len()
        ));
    }

    /// No code issued twice for one call; every code answered is in the database.
    fn check_devices(&mut self, rig: &Rig, record: &Record) {
        let mut codes = BTreeMap::<String, usize>::new();
        for workspace in rig
            .sql("SELECT workspace FROM pairing_codes WHERE workspace LIKE 'add-%'")
            .lines()
        {
            *codes.entry(workspace.to_owned()).or_default() += 1;
        }
        let twice: Vec<_> = codes.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "codes issued twice for one call: {twice:?}"
        );
        let added: BTreeSet<&str> = (record.calls.iter())
            .filter(|c| c.kind == "add" && c.status == 200)
            .map(|c| c.id.as_str())
            .collect();
        for id in &added {
            assert!(
                codes.contains_key(*id),
                "{id}: answered, no code in the database"
            );
        }
        self.lines.push(format!(
            "devices: {} codes answered, {} in the database, none twice",
            added.len(),
            codes.len()
        ));
    }

    /// The shared limit on `device_list` held across replicas: at most its burst plus one a
    /// second over the run.
    fn check_rate(&mut self, record: &Record, ran_for: Duration) {
        let served = (record.calls.iter())
            .filter(|c| c.kind == "list" && c.status == 200)
            .count();
        let bound = LIST_BURST + usize::try_from(ran_for.as_secs()).unwrap() + 1;
        assert!(
            served <= bound,
            "device_list served {served} times, above the limit's {bound}"
        );
        let limited = (record.calls.iter())
            .filter(|c| c.kind == "list" && c.status == 429)
            .count();
        self.lines.push(format!(
            "rate: device_list served {served} times (bound {bound}), {limited} refused 429"
        ));
    }

    /// Each scheduled task ran once: one run row, at most one model request for its prompt.
    async fn check_tasks(&mut self, rig: &Rig, fake: &FakeProvider, schedule: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let runs: usize = rig.sql("SELECT count(*) FROM task_runs").parse().unwrap();
            if runs == TASKS {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{runs} of {TASKS} tasks ran:\n{}\n{schedule}",
                rig.sql("SELECT task_id, next_run, status FROM tasks")
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let mut prompts = BTreeMap::<usize, usize>::new();
        for request in fake.requests() {
            let text = request.to_string();
            if let Some(i) = (0..TASKS).find(|i| text.contains(&format!("Chaos task {i}."))) {
                *prompts.entry(i).or_default() += 1;
            }
        }
        let twice: Vec<_> = prompts.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "tasks run twice: {twice:?}\n{schedule}");
        let finished: usize = rig
            .sql("SELECT count(*) FROM task_runs WHERE outcome IS NOT NULL")
            .parse()
            .unwrap();
        self.lines.push(format!(
            "tasks: {TASKS} due across the run, each run once ({finished} finished, {} asked \
             the model)",
            prompts.len()
        ));
    }
}
