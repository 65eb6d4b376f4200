//! The [`Browser`] of a program its user runs on their own machine (RFC 8252, native apps): the
//! authorization page opened in the system's browser, and the redirect back received on a
//! loopback port of this process, any free one.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::net::{TcpListener, TcpStream};

use super::client::Browser;
use crate::tool::error::{ErrorKind, ToolError};

/// How long a sign-in waits for the user.
const PATIENCE: Duration = Duration::from_secs(300);

/// The most a redirect's request head may be.
const HEAD_LIMIT: usize = 8 * 1024;

/// What the user's browser shows once it is redirected back.
const DONE: &str =
    "<!doctype html><title>Signed in</title><p>Signed in. You can close this window.";

/// Signs a user in through their browser: [`redirect_uri`](Self::redirect_uri) is
/// `http://127.0.0.1:PORT/callback` on a port this process listens on, and each visit opens the
/// authorization page (by default with the program `$BROWSER` names, else the system's browser,
/// the address also printed on
/// standard error) and waits, five minutes at most, for the redirect back to that address.
pub struct LoopbackBrowser {
    listener: Arc<TcpListener>,
    redirect_uri: String,
    open: Arc<dyn Fn(&str) + Send + Sync>,
}

impl LoopbackBrowser {
    /// A browser whose redirects come back to a free loopback port.
    ///
    /// # Errors
    ///
    /// `unavailable` when no loopback port can be listened on.
    pub async fn bind() -> Result<Self, ToolError> {
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|e| {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!("no loopback port for the sign-in: {e}"),
            )
        })?;
        let port = listener.local_addr().map_err(ToolError::internal)?.port();
        Ok(Self {
            listener: Arc::new(listener),
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
            open: Arc::new(open_in_system_browser),
        })
    }

    /// Where the authorization server sends the user back: give it to
    /// [`SignIn::new`](super::SignIn::new).
    #[must_use]
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Opens each authorization page with `open` instead of the system's browser (a test's
    /// headless client, a page shown in an application's own window).
    #[must_use]
    pub fn opening_with(mut self, open: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.open = Arc::new(open);
        self
    }
}

impl std::fmt::Debug for LoopbackBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackBrowser")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl Browser for LoopbackBrowser {
    fn visit(&self, url: String) -> BoxFuture<'static, Result<String, ToolError>> {
        let (listener, open) = (Arc::clone(&self.listener), Arc::clone(&self.open));
        let base = self.redirect_uri.trim_end_matches("/callback").to_owned();
        Box::pin(async move {
            open(&url);
            let back = tokio::time::timeout(PATIENCE, redirected(&listener)).await;
            let target = back.map_err(|_| {
                ToolError::new(ErrorKind::TIMEOUT, "no one signed in within five minutes")
            })??;
            Ok(format!("{base}{target}"))
        })
    }
}

/// The target of the first `GET /callback…` this listener receives; other requests (a
/// browser's `/favicon.ico`) are answered `404`.
async fn redirected(listener: &TcpListener) -> Result<String, ToolError> {
    loop {
        let (stream, _) = listener.accept().await.map_err(ToolError::internal)?;
        let Some(target) = request_target(&stream).await else {
            continue;
        };
        if target == "/callback" || target.starts_with("/callback?") {
            answer(&stream, "200 OK", DONE).await;
            return Ok(target);
        }
        answer(&stream, "404 Not Found", "").await;
    }
}

/// The target of a `GET` request on `stream`, from a head of at most [`HEAD_LIMIT`] bytes.
async fn request_target(stream: &TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() >= HEAD_LIMIT {
            return None;
        }
        stream.readable().await.ok()?;
        match stream.try_read(&mut chunk) {
            Ok(0) => return None,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return None,
        }
    }
    let line = head.split(|&b| b == b'\r').next()?;
    let mut words = std::str::from_utf8(line).ok()?.split(' ');
    match (words.next(), words.next()) {
        (Some("GET"), Some(target)) => Some(target.to_owned()),
        _ => None,
    }
}

/// Writes a whole answer with `status` and an HTML `body`, then leaves the connection.
async fn answer(stream: &TcpStream, status: &str, body: &str) {
    let text = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let mut rest = text.as_bytes();
    while !rest.is_empty() {
        if stream.writable().await.is_err() {
            return;
        }
        match stream.try_write(rest) {
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return,
        }
    }
}

/// Opens `url` with the command `$BROWSER` names (the convention Python's `webbrowser`, Git and
/// `xdg-open` follow: its words split on whitespace, the URL added last), else `xdg-open`
/// (`open` on macOS); prints it on standard error too.
fn open_in_system_browser(url: &str) {
    eprintln!("Sign in at: {url}");
    let named = std::env::var("BROWSER").unwrap_or_default();
    let mut words = named.split_whitespace();
    let (program, args): (&str, Vec<&str>) = match words.next() {
        Some(program) => (program, words.collect()),
        None if cfg!(target_os = "macos") => ("open", Vec::new()),
        None => ("xdg-open", Vec::new()),
    };
    let started = std::process::Command::new(program)
        .args(args)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    // Reaped when it ends; without a system browser, the printed address is the way.
    if let Ok(mut child) = started {
        std::thread::spawn(move || child.wait());
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    /// A request for `target` at `address`, as a browser makes it: the answer's text.
    fn get(address: &str, target: &str) -> String {
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        write!(stream, "GET {target} HTTP/1.1\r\nHost: {address}\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_redirect_back_to_the_loopback_port_ends_the_visit() {
        let user = Arc::new(std::sync::Mutex::new(None));
        let started = Arc::clone(&user);
        let browser = LoopbackBrowser::bind().await.unwrap();
        let address = browser
            .redirect_uri()
            .trim_start_matches("http://")
            .trim_end_matches("/callback")
            .to_owned();
        let browser = browser.opening_with(move |url| {
            let address = address.clone();
            assert_eq!(url, "https://issuer.example/authorize?x=1");
            *started.lock().unwrap() = Some(std::thread::spawn(move || {
                [
                    get(&address, "/favicon.ico"),
                    get(&address, "/callback?code=c&state=s&iss=i"),
                ]
            }));
        });
        let back = browser
            .visit("https://issuer.example/authorize?x=1".into())
            .await
            .unwrap();
        assert_eq!(
            back,
            format!("{}?code=c&state=s&iss=i", browser.redirect_uri())
        );
        let user = user.lock().unwrap().take().unwrap();
        let seen = tokio::task::spawn_blocking(move || user.join().unwrap())
            .await
            .unwrap();
        assert!(seen[0].starts_with("HTTP/1.1 404"), "{seen:?}");
        assert!(
            seen[1].starts_with("HTTP/1.1 200") && seen[1].contains("Signed in"),
            "{seen:?}"
        );
    }
}
