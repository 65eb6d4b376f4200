//! nginx for tests: a site configuration (an http-context file such as
//! `demo-app/deploy/nginx.conf`) served by an nginx of the test's own, in a temporary
//! directory, in the foreground, stopped when dropped.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::TempDir;

/// An nginx process serving one site configuration; killed when dropped.
#[derive(Debug)]
pub struct Nginx {
    child: Child,
    /// `http://127.0.0.1:PORT`, where it listens.
    pub base: String,
    dir: TempDir,
}

impl Nginx {
    /// Starts nginx on `site` (an http-context configuration that listens on `port` of
    /// 127.0.0.1) in a directory of its own under the system's temporary one (`name` names
    /// it), with its logs, pid file and temporary files there, and waits until it answers.
    ///
    /// # Panics
    ///
    /// When nginx is not installed (saying which Debian package to install), when the
    /// configuration is refused, or when it does not answer within 10 s.
    #[must_use]
    pub fn start(name: &str, site: &str, port: u16) -> Self {
        let dir = TempDir::new(&format!("nginx-{name}"));
        std::fs::write(dir.join("site.conf"), site).expect("write site.conf");
        let d = dir.path().display();
        let main = format!(
            "error_log {d}/error.log info;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n\
             access_log {d}/access.log;\n\
             client_body_temp_path {d}/body;\n\
             proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\n\
             uwsgi_temp_path {d}/uwsgi;\n\
             scgi_temp_path {d}/scgi;\n\
             include {d}/site.conf;\n\
             }}\n"
        );
        std::fs::write(dir.join("nginx.conf"), main).expect("write nginx.conf");
        // Debian puts it in /usr/sbin, which a user's PATH may not hold.
        let binary = if Path::new("/usr/sbin/nginx").exists() {
            "/usr/sbin/nginx"
        } else {
            "nginx"
        };
        let child = Command::new(binary)
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-g")
            .arg(format!("daemon off; master_process on; pid {d}/nginx.pid;"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run `nginx` ({e}): install the Debian package `nginx` (apt-get install nginx), as tests/run.sh does")
            });
        let mut nginx = Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
            dir,
        };
        nginx.wait_until_listening(port);
        nginx
    }

    fn wait_until_listening(&mut self, port: u16) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let mut stderr = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
                }
                panic!("nginx exited ({status}): {stderr}\n{}", self.error_log());
            }
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "nginx did not listen on port {port} within 10 s:\n{}",
                self.error_log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Its error log so far.
    #[must_use]
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }

    /// Its directory (logs, configuration).
    #[must_use]
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGKILL to the master leaves its workers: they exit when they see it gone, but
        // SIGTERM (a fast shutdown) takes them with it.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port of 127.0.0.1 free now (bound and released: another process could take it before
/// the caller binds it, which tests on loopback accept).
///
/// # Panics
///
/// If no port can be bound.
#[must_use]
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}
