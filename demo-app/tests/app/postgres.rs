//! Three `demo-app serve` replicas behind nginx (as in `replicas.rs`), each in its own
//! directory, on one PostgreSQL (a throwaway cluster, `--postgres`: the demo's data, the audit,
//! the scheduler's tasks) and one Redis. Started at the same instant on an empty database, they
//! migrate it once; a code issued by one is paired on another and listed by a one-shot command;
//! PostgreSQL stopped is answered 503 naming it and ridden out; and a replica killed (SIGKILL)
//! under load leaves only the calls it had in flight reported `unknown`, each once, after its
//! lease (`RIG_CALLS` and `RIG_CLIENTS` set the load: 2,000 calls from 20 clients); and 200
//! tasks due at once run once each, shared between the replicas' schedulers.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_runtime::agent::Api;
use tool_test_support::fake_provider::{FakeProvider, Step};
use tool_test_support::nginx::Nginx;
use tool_test_support::postgres::PostgresServer;
use tool_test_support::redis::RedisServer;
use tool_test_support::{Served, TempDir};

use crate::replicas::{IDS, Replica, balancer, post, readyz};

/// What the replicas log: warnings, errors, PostgreSQL's migrations as they are applied, and
/// each scheduled task's run.
const LOG_FILTER: &str = "warn,tool_runtime::postgres=info,demo_app::scheduler=info";

/// The rig's database.
const DATABASE: &str = "demo";

/// The replicas, nginx in front, and the PostgreSQL and Redis they share.
struct Rig {
    postgres: PostgresServer,
    url: String,
    replicas: Vec<Replica>,
    nginx: Nginx,
    _redis: RedisServer,
    _dir: TempDir,
}

impl Rig {
    /// Three replicas with `config` as their `demo-app.toml` and `env` in their environment,
    /// started at the same instant on an empty database, and nginx in front of them.
    fn start(name: &str, config: &str, env: &[(&str, &str)]) -> Self {
        let dir = TempDir::new(name);
        let postgres = PostgresServer::start();
        let url = postgres.create_database(DATABASE);
        let redis = RedisServer::start();
        let mut replicas: Vec<Replica> = IDS
            .iter()
            .map(|id| {
                let mut replica = Replica::new(id, dir.path());
                std::fs::write(replica.dir.join("demo-app.toml"), config).unwrap();
                replica.redis = Some(redis.url());
                replica.postgres = Some(url.clone());
                replica
            })
            .collect();
        std::thread::scope(|s| {
            for replica in &mut replicas {
                s.spawn(|| start(replica, env));
            }
        });
        let nginx = balancer(name, &replicas);
        Rig {
            postgres,
            url,
            replicas,
            nginx,
            _redis: redis,
            _dir: dir,
        }
    }

    /// `psql` on the rig's database: a line a row, `|` between columns.
    fn sql(&self, sql: &str) -> String {
        self.postgres.psql(DATABASE, sql)
    }

    /// The first column of the first row, as a number.
    fn number(&self, sql: &str) -> i64 {
        let out = self.sql(sql);
        out.parse()
            .unwrap_or_else(|_| panic!("{sql}: not a number: {out}"))
    }
}

/// Starts `replica`, `env` added to its environment, with its log (standard error) appended
/// to `stderr.log` in its directory.
///
/// A replica that ends before it listens (its backends too slow to answer at start, on a loaded
/// machine) is started again, as an orchestrator would, up to three times; then the test fails
/// with what it logged.
pub(crate) fn start(replica: &mut Replica, env: &[(&str, &str)]) {
    for _ in 0..3 {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(replica.dir.join("stderr.log"))
            .unwrap();
        let mut command = replica.command();
        command
            .env("RUST_LOG", LOG_FILTER)
            .envs(env.iter().copied())
            .stderr(log);
        if let Ok(served) = Served::try_spawn(command) {
            replica.served = Some(served);
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let log = log(replica);
    let tail: Vec<&str> = log.lines().rev().take(20).collect();
    panic!(
        "{} did not start in three attempts; its log ends:\n{}",
        replica.id,
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
}

/// What `replica` logged so far.
pub(crate) fn log(replica: &Replica) -> String {
    std::fs::read_to_string(replica.dir.join("stderr.log")).unwrap_or_default()
}

/// Started at once on an empty database, the replicas applied each migration once (one log
/// line for each row of `tool_schema_migrations`, in whichever replica applied it) and logged
/// no error; a code one issues, another pairs, and a one-shot command lists the device; while
/// PostgreSQL is stopped every call that needs it answers 503 naming it, and /readyz says so,
/// until it is back and every replica, never restarted, serves again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_on_one_postgres_migrate_once_share_devices_and_ride_out_its_outage() {
    let mut rig = Rig::start("pg-rig", "[limits.device_add]\nrate = \"1000/min\"\n", &[]);
    migrated_once(&rig);
    let http = reqwest::Client::new();
    pairs_a_code_across_replicas(&rig, &http).await;
    rides_out_an_outage(&mut rig, &http).await;
    for r in &mut rig.replicas {
        let exited = r.served.as_mut().unwrap().child.try_wait().unwrap();
        assert!(exited.is_none(), "{} exited: {exited:?}", r.id);
    }
}

/// a. Each migration applied once, by one replica, and no error logged.
fn migrated_once(rig: &Rig) {
    let applied = rig.sql("SELECT component, version FROM tool_schema_migrations ORDER BY 1, 2");
    let applied: Vec<(&str, &str)> = applied
        .lines()
        .map(|l| l.split_once('|').unwrap())
        .collect();
    for component in ["demo-app", "demo-app/scheduler", "tool-runtime/audit"] {
        assert!(
            applied.iter().any(|(c, _)| *c == component),
            "no migration of {component}: {applied:?}"
        );
    }
    let logs: Vec<String> = rig.replicas.iter().map(log).collect();
    for (component, version) in &applied {
        let lines: Vec<&str> = logs
            .iter()
            .flat_map(|l| l.lines())
            .filter(|l| {
                l.contains("migration applied")
                    && l.contains(&format!("component=\"{component}\""))
                    && l.contains(&format!("version={version}"))
            })
            .collect();
        assert_eq!(
            lines.len(),
            1,
            "{component} {version} applied {} times:\n{}",
            lines.len(),
            logs.join("\n")
        );
    }
    for (r, log) in rig.replicas.iter().zip(&logs) {
        assert!(!log.contains("ERROR"), "{} logged an error:\n{log}", r.id);
    }
}

/// b. Issued through r1, paired on r2, listed by a one-shot command on the same database.
async fn pairs_a_code_across_replicas(rig: &Rig, http: &reqwest::Client) {
    let [r1, r2, _] = &rig.replicas[..] else {
        unreachable!()
    };
    let body = json!({"workspace": "garden"});
    let (status, replica, _, issued) = post(http, &r1.base(), "device_add", &body, &[]).await;
    assert_eq!((status, replica.as_str()), (200, "r1"), "{issued}");
    let code = issued["result"]["code"].as_str().unwrap();
    let body = json!({"code": code, "device_name": "greenhouse sensor"});
    let (status, replica, _, paired) = post(http, &r2.base(), "device_pair", &body, &[]).await;
    assert_eq!((status, replica.as_str()), (200, "r2"), "{paired}");
    let device = paired["result"]["device_id"].as_str().unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .current_dir(&r1.dir)
        .args(["--postgres", &rig.url, "--json", "device-list"])
        .env_remove("DEMO_APP_DB")
        .env_remove("DEMO_APP_AUDIT")
        .env_remove("DEMO_APP_POSTGRES")
        .env_remove("DEMO_APP_REDIS")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let devices = listed["result"]["devices"].as_array().unwrap();
    assert!(
        devices
            .iter()
            .any(|d| d["device_id"] == device && d["workspace"] == "garden"),
        "{listed}"
    );
}

/// c. PostgreSQL stopped: 503 naming it from every replica, /readyz 503; back: served again.
async fn rides_out_an_outage(rig: &mut Rig, http: &reqwest::Client) {
    rig.postgres.stop();
    let named = format!("127.0.0.1:{}/{DATABASE}", rig.postgres.port());
    for r in &rig.replicas {
        let base = r.base();
        for (tool, body) in [
            ("device_add", json!({"workspace": "x"})),
            ("device_list", json!({})),
        ] {
            let (status, replica, _, answer) = post(http, &base, tool, &body, &[]).await;
            assert_eq!((status, replica.as_str()), (503, r.id), "{tool}: {answer}");
            // Which engine is down, never where it is nor its login.
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("PostgreSQL is unavailable"),
                "{}: {tool}: {message}",
                r.id
            );
            assert!(!answer.to_string().contains(&named), "{answer}");
            assert!(!message.contains(rig.postgres.password()), "{message}");
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        while readyz(http, &base).await != Some(503) {
            assert!(Instant::now() < deadline, "{}: still ready", r.id);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let ready = http.get(format!("{base}/readyz")).send().await.unwrap();
        let ready = ready.text().await.unwrap();
        assert!(
            ready.contains("postgres") && !ready.contains(&named),
            "{}: {ready}",
            r.id
        );
    }
    rig.postgres.start_again();
    for r in &rig.replicas {
        let base = r.base();
        let deadline = Instant::now() + Duration::from_secs(15);
        while readyz(http, &base).await != Some(200) {
            assert!(Instant::now() < deadline, "{}: not ready again", r.id);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let workspace = format!("after-{}", r.id);
        for (tool, body) in [
            ("device_add", json!({"workspace": workspace})),
            ("device_list", json!({})),
        ] {
            let (status, _, _, answer) = post(http, &base, tool, &body, &[]).await;
            assert_eq!(status, 200, "{}: {tool}: {answer}", r.id);
        }
    }
    // What each replica wrote after the outage is in the database, once: a 200 meant a write.
    assert_eq!(
        rig.sql(
            "SELECT workspace FROM pairing_codes WHERE workspace LIKE 'after-%' ORDER BY workspace"
        ),
        rig.replicas
            .iter()
            .map(|r| format!("after-{}", r.id))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A count from the environment, else `default`.
fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One call of the load: its request id, the replica that answered (`None`: no replica did,
/// the answer is nginx's own), and the HTTP status (0: no answer at all).
type Call = (String, Option<String>, u16);

/// Whether `call` was answered with its result.
fn has_result(call: &Call) -> bool {
    call.2 == 200
}

/// `count` calls of `device_add`, one after another, through `base`, each with the request id
/// `load-{client}-{i}`; `answered` counts the results.
async fn client(
    base: String,
    client: usize,
    count: usize,
    answered: Arc<AtomicUsize>,
) -> Vec<Call> {
    let http = reqwest::Client::new();
    let mut calls = Vec::with_capacity(count);
    for i in 0..count {
        let id = format!("load-{client}-{i}");
        let response = http
            .post(format!("{base}/tools/device_add"))
            .header("x-request-id", &id)
            .json(&json!({"workspace": format!("c{client}")}))
            .send()
            .await;
        let (replica, status) = response.map_or((None, 0), |r| {
            let replica = (r.headers().get("x-replica")).map(|v| v.to_str().unwrap().to_owned());
            (replica, r.status().as_u16())
        });
        if status == 200 {
            answered.fetch_add(1, Ordering::Relaxed);
        }
        calls.push((id, replica, status));
    }
    calls
}

/// 2,000 calls from 20 clients through nginx (`RIG_CALLS`, `RIG_CLIENTS`) while r2 is killed
/// with SIGKILL, three slow calls in flight on it, and started again: every answered call has
/// its outcome in the audit table, and after the dead instance's lease the calls it had in
/// flight, and only those, are reported `unknown`, each once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_under_load_leaves_only_its_calls_in_flight_unknown() {
    let calls = env_count("RIG_CALLS", 2000);
    let clients = env_count("RIG_CLIENTS", 20).clamp(1, calls);
    // A lease short enough to wait out, long enough that a live replica whose renewals a loaded
    // machine delays (the chaos run may share it) keeps its lease: a live replica's stall would
    // rightly have its calls reported too. The dead replica's calls are reported six seconds
    // after its last renewal.
    let config = "[limits.device_add]\nrate = \"1000000/min\"\n\
                  [host.bridges.local]\nallowed_commands = [\"sleep\"]\n\
                  [postgres]\naudit_lease = \"6s\"\naudit_renew = \"500ms\"\n";
    let mut rig = Rig::start("pg-kill", config, &[]);
    let answered = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let load: Vec<_> = (0..clients)
        .map(|c| {
            let count = calls / clients + usize::from(c < calls % clients);
            tokio::spawn(client(rig.nginx.base.clone(), c, count, answered.clone()))
        })
        .collect();
    while answered.load(Ordering::Relaxed) < calls / 4 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // Calls certainly in flight on r2 when it dies: their intents written, the tool running.
    let r2 = rig.replicas[1].base();
    let slow: Vec<_> = (0..3)
        .map(|i| {
            let request = reqwest::Client::new()
                .post(format!("{r2}/tools/host_execute"))
                .header("x-request-id", format!("slow-{i}"))
                .json(&json!({"bridge": "local", "command": "sleep 20"}));
            tokio::spawn(request.send())
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while rig.number(
        "SELECT count(*) FROM tool_audit_records WHERE event = 'intent' AND request_id LIKE 'slow-%'",
    ) < 3
    {
        assert!(Instant::now() < deadline, "the slow calls' intents");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let dead =
        rig.sql("SELECT DISTINCT instance FROM tool_audit_records WHERE request_id LIKE 'slow-%'");
    assert!(
        !dead.is_empty() && !dead.contains('\n'),
        "one instance: {dead}"
    );
    let mut served = rig.replicas[1].served.take().unwrap();
    served.child.kill().unwrap();
    served.child.wait().unwrap();
    drop(served);
    let replica = &mut rig.replicas[1];
    tokio::task::block_in_place(|| start(replica, &[]));
    for call in slow {
        assert!(call.await.unwrap().is_err(), "a slow call was answered");
    }

    let mut done: Vec<Call> = Vec::new();
    for client in load {
        done.extend(client.await.unwrap());
    }
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(done.len(), calls);
    // Every call has an answer: its result from a replica, or nginx's 502 for one the killed
    // replica had taken; a call whose connection it refused went to another replica.
    let failed: Vec<&Call> = done.iter().filter(|c| !has_result(c)).collect();
    assert!(
        failed.iter().all(|c| c.2 == 502 && c.1.is_none()),
        "answers other than a result or nginx's 502: {failed:?}"
    );
    let cut = cut_off(&rig.nginx.error_log());
    let r2_port = rig.replicas[1].port;
    assert!(
        cut.len() == failed.len() && cut.iter().all(|&port| port == r2_port),
        "each 502 should be a call the killed replica (port {r2_port}) took and never \
         answered; calls answered 502: {failed:?}; cut off by the replicas on ports {cut:?}"
    );
    assert!(
        done.iter().filter(|c| has_result(c)).all(|c| c.1.is_some()),
        "a result without the replica that answered"
    );

    // Recovery, once the dead instance's lease has run out.
    let deadline = Instant::now() + Duration::from_secs(60);
    while rig.number(&format!(
        "SELECT count(*) FROM tool_audit_instances WHERE id = '{dead}' AND resolved_at IS NOT NULL"
    )) == 0
    {
        assert!(Instant::now() < deadline, "{dead} never resolved");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let unknown = audited_as_expected(&rig, &done, &dead);
    let answered = done.iter().filter(|c| has_result(c)).count();
    eprintln!(
        "postgres rig: {calls} calls from {clients} clients in {seconds:.1} s ({:.0}/s), \
         a replica killed and restarted: {answered} answered, {} not, {unknown} reported unknown",
        f64::from(u32::try_from(calls).unwrap()) / seconds,
        calls - answered,
    );
}

/// The upstream ports of the calls nginx sent to a replica that closed the connection without
/// an answer, one a call, from its error log. Connections refused are not among them: nginx
/// sends those calls to another replica. A killed process closes its descriptors one by one,
/// so a client whose call was cut off may have its next call taken into the dying replica's
/// listening queue before that closes too: the calls cut off are not bounded by the clients.
fn cut_off(error_log: &str) -> Vec<u16> {
    error_log
        .lines()
        .filter(|l| l.contains("[error]") && !l.contains("while connecting to upstream"))
        .map(|l| {
            let upstream = l.split("upstream: \"http://127.0.0.1:").nth(1);
            let port = upstream.and_then(|u| u.split('/').next()?.parse().ok());
            port.unwrap_or_else(|| panic!("nginx's error names no replica: {l}"))
        })
        .collect()
}

/// Checks the audit table against the calls made: every answered call has its outcome; the
/// `unknown` outcomes are each the one outcome of an intent of the `dead` instance, written
/// after its lease ran out, for a call no replica answered (the slow ones among them); no
/// intent is left without an outcome. Returns how many were reported unknown.
fn audited_as_expected(rig: &Rig, calls: &[Call], dead: &str) -> usize {
    let mut outcomes = BTreeMap::<String, Vec<String>>::new();
    for row in rig
        .sql("SELECT request_id, outcome FROM tool_audit_records WHERE event = 'outcome'")
        .lines()
    {
        let (id, outcome) = row.split_once('|').unwrap();
        outcomes
            .entry(id.to_owned())
            .or_default()
            .push(outcome.to_owned());
    }
    for call in calls {
        let id = &call.0;
        if has_result(call) {
            let found = outcomes.get(id).map(Vec::as_slice).unwrap_or_default();
            assert!(
                found.len() == 1 && found[0] != "unknown",
                "answered call {id}: outcomes {found:?}"
            );
        }
    }
    assert_eq!(
        rig.number(
            "SELECT count(*) FROM tool_audit_records i WHERE event = 'intent' AND NOT dry_run \
             AND NOT EXISTS (SELECT 1 FROM tool_audit_records o \
                             WHERE o.event = 'outcome' AND o.call = i.call)"
        ),
        0,
        "intents left without an outcome"
    );
    // Each unknown outcome with its intent's instance and whether it came after the lease.
    let unknown = rig.sql(
        "SELECT o.request_id, i.instance, o.recorded_at >= n.lease_until \
         FROM tool_audit_records o \
         JOIN tool_audit_records i ON i.call = o.call AND i.event = 'intent' \
         JOIN tool_audit_instances n ON n.id = i.instance \
         WHERE o.event = 'outcome' AND o.outcome = 'unknown'",
    );
    let answered: BTreeSet<&str> = calls
        .iter()
        .filter(|c| has_result(c))
        .map(|c| c.0.as_str())
        .collect();
    let mut reported = BTreeSet::new();
    for row in unknown.lines() {
        let [id, instance, after_lease] = row.split('|').collect::<Vec<_>>()[..] else {
            panic!("{row}")
        };
        assert_eq!(
            instance, dead,
            "{id}: a live instance's call reported unknown"
        );
        assert_eq!(after_lease, "t", "{id}: reported before the lease ran out");
        assert!(
            !answered.contains(id),
            "{id} was answered, yet reported unknown"
        );
        assert!(reported.insert(id.to_owned()), "{id} reported twice");
        assert_eq!(outcomes[id].len(), 1, "{id}: {:?}", outcomes[id]);
    }
    for i in 0..3 {
        assert!(
            reported.contains(&format!("slow-{i}")),
            "slow-{i} in flight on the dead replica, not reported: {reported:?}"
        );
    }
    reported.len()
}

/// 200 one-time tasks scheduled through nginx for the same second, three replicas' schedulers
/// polling one database: each task runs once (one `task_runs` row, its answer delivered, one
/// model request with its prompt), the runs shared between the replicas.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_run_each_scheduled_task_once() {
    const TASKS: usize = 200;
    const KEY: &str = "sk-demo-test-key-0042";
    let script = (0..TASKS)
        .map(|i| Step::text(&format!("done {i}")))
        .collect();
    let fake = FakeProvider::start(Api::OpenAiChat, KEY, script).await;
    let config = "[limits.schedule_task]\nrate = \"100000/min\"\n\
                  [scheduler]\nenabled = true\ntick = \"200ms\"\n\
                  [agent]\nprovider = \"openai\"\nmodel = \"gpt-test\"\n";
    let env = [("OPENAI_API_KEY", KEY), ("OPENAI_BASE_URL", &fake.base_url)];
    let rig = tokio::task::block_in_place(|| Rig::start("pg-tasks", config, &env));

    // Scheduled an hour ahead, however long scheduling takes; then all made due at one second
    // by one statement, so the schedulers race for them.
    let at = rig.number("SELECT floor(extract(epoch FROM now()))::bigint + 3600");
    let at = chrono::DateTime::from_timestamp(at, 0)
        .unwrap()
        .to_rfc3339();
    let http = reqwest::Client::new();
    for i in 0..TASKS {
        let body = json!({"prompt": format!("Prompt number {i}."), "schedule_type": "once",
                          "schedule_value": at});
        let (status, _, _, task) = post(&http, &rig.nginx.base, "schedule_task", &body, &[]).await;
        assert_eq!(status, 200, "{task}");
    }
    assert_eq!(
        rig.number("SELECT count(*) FROM tasks WHERE next_run > extract(epoch FROM now())"),
        200
    );
    rig.sql(
        "UPDATE tasks SET next_run = floor(extract(epoch FROM now()))::bigint + 1 \
         WHERE status = 'active'",
    );

    // A slow machine may take a while for 200 runs; a stall, not the total, fails the test.
    let (mut done, mut moved) = (0, Instant::now());
    while done < 200 {
        let now = rig.number("SELECT count(*) FROM task_runs WHERE outcome IS NOT NULL");
        if now > done {
            (done, moved) = (now, Instant::now());
        }
        assert!(
            moved.elapsed() < Duration::from_secs(60),
            "no run finished for 60 s: {done} of 200 done{}",
            unfinished(&rig)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        rig.sql(
            "SELECT count(*), count(DISTINCT task_id), count(*) FILTER (WHERE outcome = 'delivered') \
             FROM task_runs"
        ),
        "200|200|200"
    );
    let mut prompts = BTreeMap::<String, usize>::new();
    for request in fake.requests() {
        let text = request["messages"].to_string();
        let prompt = (0..TASKS)
            .map(|i| format!("Prompt number {i}."))
            .find(|p| text.contains(p.as_str()))
            .unwrap_or_else(|| panic!("no task's prompt in {request}"));
        *prompts.entry(prompt).or_default() += 1;
    }
    assert_eq!(prompts.len(), TASKS);
    assert!(prompts.values().all(|n| *n == 1), "a prompt sent twice");
    let ran: Vec<usize> = rig
        .replicas
        .iter()
        .map(|r| log(r).matches("task ran").count())
        .collect();
    assert_eq!(ran.iter().sum::<usize>(), TASKS, "{ran:?}");
    assert!(
        ran.iter().filter(|n| **n > 0).count() > 1,
        "one replica ran every task, so nothing raced: {ran:?}"
    );
    fake.assert_clean();
}

/// The runs left without an outcome, and what the replicas warned of: why a wait stalled.
fn unfinished(rig: &Rig) -> String {
    use std::fmt::Write as _;
    let mut found = format!(
        "\nruns without an outcome:\n{}",
        rig.sql("SELECT task_id, due, started_at FROM task_runs WHERE outcome IS NULL")
    );
    for r in &rig.replicas {
        let log = log(r);
        let warned: Vec<&str> = (log.lines())
            .filter(|l| l.contains("WARN") || l.contains("ERROR"))
            .collect();
        let _ = write!(found, "\n{} warned:\n{}", r.id, warned.join("\n"));
    }
    found
}

/// `demo-app ARGS` in `dir`, with no database, configuration or PostgreSQL from the
/// environment unless `env` gives one.
fn run(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .current_dir(dir)
        .args(args)
        .env_remove("DEMO_APP_DB")
        .env_remove("DEMO_APP_AUDIT")
        .env_remove("DEMO_APP_CONFIG")
        .env_remove("DEMO_APP_REDIS")
        .env_remove("DEMO_APP_POSTGRES")
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// A PostgreSQL named but unreachable stops every command that would use it, naming it without
/// its password; `--help` never shows the variable's value.
#[test]
fn an_unreachable_postgres_stops_the_command_naming_it_without_its_password() {
    let dir = TempDir::new("postgres-unreachable");
    let port = tool_test_support::nginx::free_port();
    let url = format!("postgres://demo:hunter2@127.0.0.1:{port}/demo");
    let named = format!("cannot connect to PostgreSQL at demo@127.0.0.1:{port}/demo");
    for (args, env) in [
        (vec!["--postgres", url.as_str(), "device-list"], vec![]),
        (
            vec!["device-list"],
            vec![("DEMO_APP_POSTGRES", url.as_str())],
        ),
        (
            vec!["--postgres", url.as_str(), "serve", "--addr", "127.0.0.1:0"],
            vec![],
        ),
    ] {
        let out = run(dir.path(), &args, &env);
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains(&named), "{args:?}: {e}");
        assert!(!e.contains("hunter2"), "{e}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing served");
    }
    let out = run(
        dir.path(),
        &["--help"],
        &[("DEMO_APP_POSTGRES", url.as_str())],
    );
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--postgres <URL>") && !help.contains("hunter2"),
        "{help}"
    );
}

/// With PostgreSQL named, `--db` keeps the data in its SQLite file and `--audit-log` the audit
/// in its file; what no file is named for goes to PostgreSQL.
#[test]
fn a_named_file_keeps_its_part_out_of_postgres() {
    let postgres = PostgresServer::start();
    let url = postgres.create_database(DATABASE);
    let dir = TempDir::new("postgres-files");
    let db = dir.join("d.db");
    let db = db.to_str().unwrap();
    let audit_rows = || postgres.psql(DATABASE, "SELECT count(*) FROM tool_audit_records");
    let devices = || {
        postgres.psql(
            DATABASE,
            "SELECT count(*) FROM pairing_codes WHERE workspace = 'files'",
        )
    };
    let out = run(
        dir.path(),
        &["--postgres", &url, "--db", db, "device-add", "-w", "files"],
        &[],
    );
    assert!(out.status.success(), "{out:?}");
    // The code is in the file, the audit in PostgreSQL.
    let listed = run(dir.path(), &["--db", db, "--json", "device-list"], &[]);
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed["result"]["pending_codes"][0]["workspace"], "files");
    let demo_tables =
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'pairing_codes'";
    assert_eq!(
        postgres.psql(DATABASE, demo_tables).trim(),
        "0",
        "not even migrated"
    );
    assert_eq!(audit_rows().trim(), "2", "the intent and the outcome");

    let log = dir.join("audit.jsonl");
    let out = run(
        dir.path(),
        &[
            "--audit-log",
            log.to_str().unwrap(),
            "device-add",
            "-w",
            "files",
        ],
        &[("DEMO_APP_POSTGRES", url.as_str())],
    );
    assert!(out.status.success(), "{out:?}");
    // The code is in PostgreSQL, the audit in the file.
    assert_eq!(devices().trim(), "1");
    assert_eq!(audit_rows().trim(), "2", "unchanged");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2);
}
