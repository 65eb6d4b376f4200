//! A PostgreSQL cluster of a test's own: `initdb` into a temporary directory, `postgres` on a
//! free port of 127.0.0.1 with password authentication, durability off; TLS offered beside
//! plain text when a test gives it a certificate.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::TempDir;
use crate::tls::ServerCertificate;

/// The password of the `postgres` user of every cluster started here.
const PASSWORD: &str = "pg-test-secret";

/// A throwaway PostgreSQL cluster: created with `initdb`, run as the `postgres` user when
/// the tests run as root (PostgreSQL refuses to run as root), listening on a free loopback
/// port with `scram-sha-256` password authentication and `fsync = off` (in its
/// `postgresql.conf`, so `ALTER SYSTEM` may turn it on); stopped and started
/// again on the same port, data kept, for outage tests; stopped and removed when dropped.
#[derive(Debug)]
pub struct PostgresServer {
    child: Option<Child>,
    port: u16,
    bin: PathBuf,
    user: Option<(u32, u32)>,
    dir: TempDir,
}

impl PostgresServer {
    /// Creates a cluster and starts it, waiting until it accepts connections.
    ///
    /// # Panics
    ///
    /// When PostgreSQL is not installed (naming the Debian package `postgresql`), when run as
    /// root without a `postgres` user, or when the cluster does not start within 30 s.
    #[must_use]
    pub fn start() -> Self {
        Self::start_with(None)
    }

    /// [`start`](Self::start), offering TLS with `certificate` (`ssl = on`; plain text is
    /// still accepted: the cluster's `pg_hba.conf` has `host` lines, not `hostssl`).
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start); also when the certificate's files cannot be written.
    #[must_use]
    pub fn with_tls(certificate: &ServerCertificate) -> Self {
        Self::start_with(Some(certificate))
    }

    fn start_with(tls: Option<&ServerCertificate>) -> Self {
        let bin = binaries();
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir = TempDir::new(&format!("postgres-{port}"));
        let user = if is_root() {
            let user = postgres_user();
            run(Command::new("chown")
                .arg(format!("{}:{}", user.0, user.1))
                .arg(dir.path()));
            Some(user)
        } else {
            None
        };
        let mut server = Self {
            child: None,
            port,
            bin,
            user,
            dir,
        };
        let password_file = server.dir.join("password");
        std::fs::write(&password_file, PASSWORD).expect("the password file");
        if let Some((uid, gid)) = server.user {
            run(Command::new("chown")
                .arg(format!("{uid}:{gid}"))
                .arg(&password_file));
        }
        let mut initdb = server.command("initdb");
        initdb
            .arg("--pgdata")
            .arg(server.data())
            .args(["--username=postgres", "--auth=scram-sha-256", "--no-sync"])
            .args(["--encoding=UTF8", "--locale=C"])
            .arg(format!("--pwfile={}", password_file.display()));
        run(&mut initdb);
        let _ = std::fs::remove_file(&password_file);
        // In the configuration file rather than on the command line, so that `ALTER SYSTEM`
        // can change them. Nothing is synced to disk (a test's data need not outlive the
        // machine), but every commit is written to the WAL before it returns, so that data
        // outlives `stop`.
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(server.data().join("postgresql.conf"))
            .expect("postgresql.conf");
        std::io::Write::write_all(
            &mut conf,
            b"\nfsync = off\nfull_page_writes = off\nmax_connections = 200\n",
        )
        .expect("postgresql.conf written");
        if let Some(tls) = tls {
            let (certificate, key) = (server.dir.join("server.crt"), server.dir.join("server.key"));
            std::fs::write(&certificate, &tls.certificate).expect("the server certificate");
            std::fs::write(&key, &tls.key).expect("the server key");
            // The key readable by its owner alone, the user the server runs as, or the server
            // refuses it.
            run(Command::new("chmod").arg("0600").arg(&key));
            if let Some((uid, gid)) = server.user {
                run(Command::new("chown")
                    .arg(format!("{uid}:{gid}"))
                    .arg(&certificate)
                    .arg(&key));
            }
            let settings = format!(
                "ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\n",
                certificate.display(),
                key.display()
            );
            std::io::Write::write_all(&mut conf, settings.as_bytes())
                .expect("postgresql.conf written");
        }
        // A port found free may be taken by another test before PostgreSQL binds it: then
        // another port, a few times.
        let mut tries = 1;
        while let Err(why) = server.try_run() {
            assert!(tries < 5 && why.contains("Address already in use"), "{why}");
            tries += 1;
            server.port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
        }
        server
    }

    /// `postgres://postgres:PASSWORD@127.0.0.1:PORT/postgres`.
    #[must_use]
    pub fn url(&self) -> String {
        self.url_of("postgres")
    }

    /// The URL of another database of this cluster.
    #[must_use]
    pub fn url_of(&self, database: &str) -> String {
        self.url_at("127.0.0.1", database)
    }

    /// `postgres://postgres:PASSWORD@HOST:PORT/DATABASE`: `host` is the name the client checks
    /// a TLS certificate against (it must resolve to 127.0.0.1).
    #[must_use]
    pub fn url_at(&self, host: &str, database: &str) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@{host}:{}/{database}",
            self.port
        )
    }

    /// The password in its URLs.
    #[must_use]
    pub fn password(&self) -> &'static str {
        PASSWORD
    }

    /// Its port.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Creates the database `name` (letters, digits and `_`) and returns its URL.
    ///
    /// # Panics
    ///
    /// When `psql` fails.
    #[must_use]
    pub fn create_database(&self, name: &str) -> String {
        assert!(
            name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
            "a plain database name: {name:?}"
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url_of(name)
    }

    /// Runs `sql` with `psql` on `database` and returns what it printed: tuples only,
    /// unaligned (`|` between columns, a line a row), trimmed.
    ///
    /// # Panics
    ///
    /// When the statement fails, with `psql`'s error.
    #[allow(clippy::must_use_candidate)] // Reason: run for its effect as often as for its output.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let output = Command::new(self.bin.join("psql"))
            .args([
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
            ])
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                database,
            ])
            .args(["-c", sql])
            .env("PGPASSWORD", PASSWORD)
            .env("PGCONNECT_TIMEOUT", "10")
            .stdin(Stdio::null())
            .output()
            .expect("psql runs");
        assert!(
            output.status.success(),
            "psql on {database} failed for {sql:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// Stops it at once (an immediate shutdown: every connection is cut, nothing waits), as a
    /// crash or an outage would. [`start_again`](Self::start_again) brings it back.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        // SIGQUIT is PostgreSQL's immediate shutdown: the postmaster ends its backends and
        // exits, leaving nothing behind that would stop a restart on the same directory.
        let _ = Command::new("kill")
            .args(["-QUIT", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Starts it again on the same port with the same data, and waits until it accepts
    /// connections.
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn start_again(&mut self) {
        self.stop();
        self.run();
    }

    /// Starts it again on the same port with the same data, serving TLS with `certificate` in
    /// place of the one it had (a server started [`with_tls`](Self::with_tls)).
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start); also when it was not serving TLS.
    pub fn restart_with_tls(&mut self, certificate: &ServerCertificate) {
        self.stop();
        let key = self.dir.join("server.key");
        assert!(key.exists(), "restart_with_tls: a server started with_tls");
        std::fs::write(self.dir.join("server.crt"), &certificate.certificate)
            .expect("the server certificate");
        std::fs::write(&key, &certificate.key).expect("the server key");
        self.run();
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn run(&mut self) {
        if let Err(why) = self.try_run() {
            panic!("{why}");
        }
    }

    /// Starts the server and waits until it accepts connections; if it exits first, says so
    /// with what it logged (`postgres.log` in its directory).
    fn try_run(&mut self) -> Result<(), String> {
        let log_path = self.dir.join("postgres.log");
        let log = std::fs::File::create(&log_path).expect("the server's log file");
        let child = self
            .command("postgres")
            .arg("-D")
            .arg(self.data())
            .args(["-p", &self.port.to_string()])
            .args(["-c", "listen_addresses=127.0.0.1"])
            .arg("-c")
            .arg(format!(
                "unix_socket_directories={}",
                self.dir.path().display()
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run postgres ({e})"));
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.ready() {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                let logged = std::fs::read_to_string(&log_path).unwrap_or_default();
                return Err(format!(
                    "postgres on port {} exited at start: {status}\n{logged}",
                    self.port
                ));
            }
            assert!(
                Instant::now() < deadline,
                "postgres on port {} did not accept connections within 30 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(25));
        }
        Ok(())
    }

    fn ready(&self) -> bool {
        Command::new(self.bin.join("pg_isready"))
            .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-d", "postgres", "-t", "1"])
            .stdin(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// One of PostgreSQL's programs, as the `postgres` user when running as root.
    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(self.bin.join(program));
        if let Some((uid, gid)) = self.user {
            command.uid(uid).gid(gid).env("HOME", self.dir.path());
        }
        command.current_dir(self.dir.path());
        command
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The newest `/usr/lib/postgresql/*/bin` (Debian's layout) that has `initdb`.
fn binaries() -> PathBuf {
    let root = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    let Some((_, bin)) = versions.pop() else {
        panic!(
            "PostgreSQL's programs are not in /usr/lib/postgresql/*/bin: install the Debian \
             package `postgresql` (tests/debian/packages.txt; tests/run.sh installs it)"
        )
    };
    bin
}

fn is_root() -> bool {
    id(&["-u"]) == 0
}

/// The uid and gid of the `postgres` user.
fn postgres_user() -> (u32, u32) {
    (id(&["-u", "postgres"]), id(&["-g", "postgres"]))
}

fn id(args: &[&str]) -> u32 {
    let output = Command::new("id").args(args).output().expect("`id` runs");
    assert!(
        output.status.success(),
        "`id {}` failed: running as root needs a `postgres` user (the Debian package \
         `postgresql` makes it)",
        args.join(" ")
    );
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .expect("a number from `id`")
}

fn run(command: &mut Command) -> Output {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
