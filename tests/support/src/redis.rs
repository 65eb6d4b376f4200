//! A `redis-server` of a test's own, on a free port of 127.0.0.1, with nothing saved to disk;
//! over TLS alone when a test gives it a certificate.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::TempDir;
use crate::tls::ServerCertificate;

/// A `redis-server` process: started on a free loopback port, in a temporary directory, with
/// persistence off; stopped and restarted on the same port for outage tests; killed when
/// dropped.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    password: Option<String>,
    /// Serving TLS alone on `port`, with the certificate written in `dir`.
    tls: bool,
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

    /// Starts one that serves TLS alone (no plain-text port) with `certificate`, not asking
    /// clients for certificates of their own, and waits until it accepts connections.
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start); also when its files cannot be written.
    #[must_use]
    pub fn with_tls(certificate: &ServerCertificate) -> Self {
        Self::start_with_tls(None, Some(certificate))
    }

    fn start_with(password: Option<String>) -> Self {
        Self::start_with_tls(password, None)
    }

    fn start_with_tls(password: Option<String>, tls: Option<&ServerCertificate>) -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut server = Self {
            child: None,
            port,
            password,
            tls: tls.is_some(),
            dir: TempDir::new(&format!("redis-{port}")),
        };
        if let Some(tls) = tls {
            for (name, pem) in [
                ("server.crt", &tls.certificate),
                ("server.key", &tls.key),
                ("ca.crt", &tls.ca),
            ] {
                std::fs::write(server.dir.join(name), pem).expect("a TLS file of redis-server");
            }
        }
        server.run();
        server
    }

    /// `rediss://HOST:PORT/0`, for a server started [`with_tls`](Self::with_tls): `host` is
    /// the name the client checks the certificate against (it must resolve to 127.0.0.1).
    #[must_use]
    pub fn tls_url(&self, host: &str) -> String {
        format!("rediss://{host}:{}/0", self.port)
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

    /// Starts it again on the same port, empty, serving TLS with `certificate` in place of
    /// the one it had (a server started [`with_tls`](Self::with_tls)).
    ///
    /// # Panics
    ///
    /// As [`restart`](Self::restart); also when it was not serving TLS.
    pub fn restart_with_tls(&mut self, certificate: &ServerCertificate) {
        assert!(self.tls, "restart_with_tls: a server started with_tls");
        self.stop();
        for (name, pem) in [
            ("server.crt", &certificate.certificate),
            ("server.key", &certificate.key),
            ("ca.crt", &certificate.ca),
        ] {
            std::fs::write(self.dir.join(name), pem).expect("a TLS file of redis-server");
        }
        self.run();
    }

    fn run(&mut self) {
        let mut command = Command::new("redis-server");
        if let Some(password) = &self.password {
            command.args(["--requirepass", password]);
        }
        if self.tls {
            command
                .args(["--port", "0", "--tls-port", &self.port.to_string()])
                .arg("--tls-cert-file")
                .arg(self.dir.join("server.crt"))
                .arg("--tls-key-file")
                .arg(self.dir.join("server.key"))
                .arg("--tls-ca-cert-file")
                .arg(self.dir.join("ca.crt"))
                .args(["--tls-auth-clients", "no"]);
        } else {
            command.args(["--port", &self.port.to_string()]);
        }
        let child = command
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--dir"])
            .arg(self.dir.path())
            .arg("--logfile")
            .arg(self.dir.join("redis.log"))
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
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                let logged = std::fs::read_to_string(self.dir.join("redis.log"));
                panic!(
                    "redis-server on port {} exited at start: {status}\n{}",
                    self.port,
                    logged.unwrap_or_default()
                );
            }
            assert!(
                Instant::now() < deadline,
                "redis-server on port {} did not answer within 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn answers(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        if self.tls {
            // It listens once it is ready; a PING would need a TLS client.
            return true;
        }
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
