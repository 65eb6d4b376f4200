//! The rig of the chaos run: the backends behind their proxies, the replicas, nginx, and the
//! faults it inflicts, drawn from a seeded generator.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use tool_test_support::fault_proxy::{Fault, FaultProxy};
use tool_test_support::nginx::Nginx;
use tool_test_support::postgres::PostgresServer;
use tool_test_support::redis::RedisServer;
use tool_test_support::{Served, TempDir};

use super::{CONFIG, LEASE};
use crate::postgres::start;
use crate::replicas::{IDS, Replica, balancer};

/// A small seeded generator (xorshift64*): the same seed, the same schedule.
pub(super) struct Rng(pub(super) u64);

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

/// The rig: backends, their proxies, the replicas and nginx.
pub(super) struct Rig {
    postgres: PostgresServer,
    _redis: RedisServer,
    redis_proxy: FaultProxy,
    postgres_proxy: FaultProxy,
    pub(super) replicas: Vec<Replica>,
    pub(super) nginx: Nginx,
    _dir: TempDir,
}

impl Rig {
    pub(super) async fn start(env: &[(&str, &str)]) -> Self {
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

    pub(super) fn sql(&self, sql: &str) -> String {
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
    pub(super) async fn run_faults(
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
