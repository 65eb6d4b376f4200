//! A `redis-server` of a test's own, on a free port of 127.0.0.1, with nothing saved to disk.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::TempDir;

/// A `redis-server` process: started on a free loopback port, in a temporary directory, with
/// persistence off; stopped and restarted on the same port for outage tests; killed when
/// dropped.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    password: Option<String>,
    dir: TempDir,
}

impl RedisServer {
    /// Starts one and waits until it answers `PING`.
    ///
    /// # Panics
    ///
    /// When `redis-server` is not installed (naming the Debian package) or does not answer
    /// within 10 s.
    #[must_use]
    pub fn start() -> Self {
        Self::start_with(None)
    }

    /// Starts one that asks clients for `password` (`requirepass`).
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    #[must_use]
    pub fn with_password(password: &str) -> Self {
        Self::start_with(Some(password.to_owned()))
    }

    fn start_with(password: Option<String>) -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut server = Self {
            child: None,
            port,
            password,
            dir: TempDir::new(&format!("redis-{port}")),
        };
        server.run();
        server
    }

    /// `redis://127.0.0.1:PORT/0`, with `:PASSWORD@` when it has one.
    #[must_use]
    pub fn url(&self) -> String {
        match &self.password {
            Some(p) => format!("redis://:{p}@127.0.0.1:{}/0", self.port),
            None => format!("redis://127.0.0.1:{}/0", self.port),
        }
    }

    /// Its port.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills it (and everything it held); [`restart`](Self::restart) brings it back.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, empty, and waits until it answers.
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    fn run(&mut self) {
        let mut command = Command::new("redis-server");
        if let Some(password) = &self.password {
            command.args(["--requirepass", password]);
        }
        let child = command
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--dir"])
            .arg(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run `redis-server` ({e}): install the Debian package `redis-server` \
                     (tests/debian/packages.txt; tests/run.sh installs it)"
                )
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.answers() {
            assert!(
                Instant::now() < deadline,
                "redis-server on port {} did not answer PING within 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn answers(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        // Without the password a server that asks for one answers `-NOAUTH ...`: it is up.
        let mut reply = [0u8; 1];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut reply).is_ok()
            && matches!(&reply, b"+" | b"-")
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}
