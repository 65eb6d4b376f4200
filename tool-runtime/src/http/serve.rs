//! Serving a router: connections, their deadlines and cap, peer addresses, graceful shutdown.
//!
//! One accept loop over hyper's HTTP/1 connections:
//! - **a cap on connections** ([`ServerOptions::max_connections`]): at the cap the loop stops
//!   accepting, so further clients wait in the kernel's backlog, not in our memory;
//! - **a header deadline** ([`ServerOptions::header_timeout`]): a request's head must arrive
//!   within it, and a kept-alive connection waiting for its next request is closed after it
//!   (slow headers and idle connections hold no slot for long);
//! - **a body deadline** ([`ServerOptions::body_timeout`]): a body still arriving after it ends
//!   the request with `408 request_timeout`;
//! - **an answer that leaves its body unread** (a refusal given before the body arrived) says
//!   `Connection: close`, since hyper closes that connection rather than wait for the rest;
//! - **draining** ([`ServerOptions::drain`]): when shutdown begins, `GET /readyz` turns `503`
//!   and every answer carries `Connection: close` for the drain period, while requests are
//!   still served; then the loop serves the connections already waiting in the kernel's
//!   backlog and stops accepting; a connection accepted while draining is answered once
//!   before it closes, never closed with its request unread;
//! - accept errors (such as an exhausted descriptor table) are logged, and the loop backs off;
//! - the answers hyper makes itself for requests it cannot parse (400, 414, 431) carry an error
//!   envelope like every other answer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::{Bytes, Frame, Incoming};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

use super::ServerOptions;
use crate::front::server::ConnectionLimits;

/// Serves `app` on `listener` until `shutdown` completes, then drains for the
/// [`drain`](ServerOptions::drain) period (still serving, but not ready: `GET /readyz` answers
/// `503` and every answer carries `Connection: close`), then stops accepting, cancels the
/// [`shutdown`](ServerOptions::shutdown) token of `options` (ending `/mcp`'s sessions when the
/// router was given the same options) and lets calls in flight finish for at most the
/// [`grace`](ServerOptions::grace) period. The connection limits are those of `options`. Sets
/// `TCP_NODELAY` on every connection, and gives every request its peer address, so a router
/// without authentication serves loopback callers only.
///
/// The future it returns borrows nothing from `options`: spawn it as it is.
pub fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    options: &ServerOptions,
) -> impl Future<Output = std::io::Result<()>> + Send + 'static {
    let draining = options.readiness.draining.clone();
    let drain = options.connections.drain;
    let flag = draining.clone();
    let shutdown = async move {
        shutdown.await;
        flag.store(true, Ordering::Relaxed);
        if !drain.is_zero() {
            tracing::info!(target: "tool_runtime::http", ?drain, "draining: not ready, still serving");
            tokio::time::sleep(drain).await;
        }
    };
    accept_loop(
        listener,
        app,
        shutdown,
        options.shutdown.clone(),
        options.connections.clone(),
        draining,
    )
}

/// [`serve`], with what it reads of its options.
async fn accept_loop(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    cancel: tokio_util::sync::CancellationToken,
    options: ConnectionLimits,
    draining: Arc<AtomicBool>,
) -> std::io::Result<()> {
    let mut shutdown = std::pin::pin!(shutdown);
    let slots = Arc::new(tokio::sync::Semaphore::new(options.max_connections));
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let (grace, max_connections) = (options.grace, options.max_connections);
    let mut connections = Connections {
        set: tokio::task::JoinSet::new(),
        app,
        options,
        draining,
        stopping,
    };
    loop {
        // Finished connections are reaped as we go.
        while connections.set.try_join_next().is_some() {}
        let permit = if let Ok(permit) = Arc::clone(&slots).try_acquire_owned() {
            permit
        } else {
            tracing::warn!(target: "tool_runtime::http", max = max_connections, "at the connection cap: new connections wait until one closes");
            tokio::select! {
                permit = Arc::clone(&slots).acquire_owned() => permit.expect("the semaphore is never closed"),
                () = &mut shutdown => break,
            }
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors or memory: say so, and give connections time to close.
                    tracing::error!(target: "tool_runtime::http", error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        connections.spawn(stream, peer, Some(permit));
    }
    // The connections the kernel has already completed, which a balancer may have sent a
    // request on, are served (past the cap: the backlog bounds them) rather than reset by
    // closing the listener under them; a client that connects after it closes is refused, and
    // a balancer tries another replica. They are taken by the system call itself until the
    // backlog is empty: the runtime learns of connections that arrived since it last looked
    // only when it next polls, too late here.
    match listener.into_std() {
        Ok(listener) => {
            while let Ok((stream, peer)) = listener.accept() {
                let stream = stream
                    .set_nonblocking(true)
                    .and_then(|()| TcpStream::from_std(stream));
                match stream {
                    Ok(stream) => {
                        connections.spawn(
                            stream,
                            peer,
                            Arc::clone(&slots).try_acquire_owned().ok(),
                        );
                    }
                    Err(e) => {
                        tracing::warn!(target: "tool_runtime::http", error = %e, "a connection waiting at shutdown could not be served");
                    }
                }
            }
        }
        Err(e) => {
            tracing::warn!(target: "tool_runtime::http", error = %e, "the connections waiting at shutdown could not be taken");
        }
    }
    tracing::info!(target: "tool_runtime::http", "shutting down: no new connections; finishing calls in flight");
    cancel.cancel();
    let _ = stop.send(true);
    let mut set = connections.set;
    let drained = async { while set.join_next().await.is_some() {} };
    if tokio::time::timeout(grace, drained).await.is_err() {
        tracing::warn!(target: "tool_runtime::http", ?grace, "grace period over; dropping calls still in flight");
        set.abort_all();
    }
    Ok(())
}

/// The connections being served, and what each is served with.
struct Connections {
    set: tokio::task::JoinSet<()>,
    app: Router,
    options: ConnectionLimits,
    draining: Arc<AtomicBool>,
    /// Turns `true` when the server stops accepting.
    stopping: tokio::sync::watch::Receiver<bool>,
}

impl Connections {
    /// Serves `stream` from `peer` on a task of its own, holding `permit` (its slot under the
    /// cap) until it closes.
    fn spawn(
        &mut self,
        stream: TcpStream,
        peer: std::net::SocketAddr,
        permit: Option<tokio::sync::OwnedSemaphorePermit>,
    ) {
        let _ = stream.set_nodelay(true);
        let service = connection_service(
            self.app.clone(),
            peer,
            self.options.body_timeout,
            self.draining.clone(),
        );
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(self.options.header_timeout)
            // One buffer per write, so that hyper's own error answers are seen whole.
            .writev(false)
            .serve_connection(TokioIo::new(Enveloped::new(stream)), service)
            .with_upgrades();
        // A connection accepted while draining closes after its one answer (`Connection:
        // close`); told to stop before its request was read, it would be closed with the
        // request unread, and a balancer that had sent it gets a reset, not an answer.
        let close_when_stopping = !self.draining.load(Ordering::Relaxed);
        let mut stopping = self.stopping.clone();
        self.set.spawn(async move {
            let _permit = permit;
            let mut conn = std::pin::pin!(conn);
            let ended = tokio::select! {
                ended = conn.as_mut() => ended,
                () = async { let _ = stopping.wait_for(|stop| *stop).await; }, if close_when_stopping => {
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!(target: "tool_runtime::http", %peer, error = %e, "connection ended");
            }
        });
    }
}

/// The service of one connection: `app`, with each request knowing its peer and its body under
/// a deadline, and `Connection: close` on each answer that leaves its request's body unread or
/// is given while the server drains.
///
/// An answer given before its body has all arrived (a refusal for a missing token, a body too
/// large) ends the connection: hyper closes it rather than wait for the rest. Said in the
/// answer, a kept-alive client opens a new connection for its next request instead of sending
/// it on the one being closed, where it would be lost unanswered.
fn connection_service(
    app: Router,
    peer: std::net::SocketAddr,
    body_timeout: Duration,
    draining: Arc<AtomicBool>,
) -> hyper_util::service::TowerToHyperService<
    impl tower::Service<
        hyper::Request<Incoming>,
        Response = axum::response::Response,
        Error = std::convert::Infallible,
        Future = impl Send,
    > + Clone,
> {
    let service = tower::service_fn(move |request: hyper::Request<Incoming>| {
        let read = (!hyper::body::Body::is_end_stream(request.body()))
            .then(|| Arc::new(AtomicBool::new(false)));
        let mut request =
            request.map(|body| Body::new(Deadline::new(body, body_timeout, read.clone())));
        request.extensions_mut().insert(ConnectInfo(peer));
        let answer = app.clone().oneshot(request);
        let draining = draining.clone();
        async move {
            let Ok(mut response) = answer.await;
            let unread = read.is_some_and(|read| !read.load(Ordering::Acquire));
            // While draining, a kept-alive client reconnects, through its balancer, to a
            // replica that stays.
            if unread || draining.load(Ordering::Relaxed) {
                response.headers_mut().insert(
                    axum::http::header::CONNECTION,
                    axum::http::HeaderValue::from_static("close"),
                );
            }
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    hyper_util::service::TowerToHyperService::new(service)
}

pin_project_lite::pin_project! {
    /// A request body that fails with [`BodyTimeout`] once its deadline passes, and marks `read`
    /// once it has been read to its end.
    struct Deadline {
        #[pin]
        body: Incoming,
        #[pin]
        sleep: tokio::time::Sleep,
        after: Duration,
        read: Option<Arc<AtomicBool>>,
    }
}

impl Deadline {
    fn new(body: Incoming, after: Duration, read: Option<Arc<AtomicBool>>) -> Self {
        Self {
            body,
            sleep: tokio::time::sleep(after),
            after,
            read,
        }
    }
}

/// A request body did not arrive within the body deadline.
#[derive(Debug)]
pub(crate) struct BodyTimeout(pub(crate) Duration);

impl std::fmt::Display for BodyTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the body did not arrive within {:?}", self.0)
    }
}

impl std::error::Error for BodyTimeout {}

impl hyper::body::Body for Deadline {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let mut this = self.project();
        match this.body.as_mut().poll_frame(cx) {
            Poll::Ready(frame) => {
                let ended = match &frame {
                    None => true,
                    Some(Ok(_)) => this.body.is_end_stream(),
                    Some(Err(_)) => false,
                };
                if ended && let Some(read) = this.read {
                    read.store(true, Ordering::Release);
                }
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => match this.sleep.poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimeout(*this.after))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// A connection's stream that gives hyper's own error answers (an empty 400, 414 or 431, sent
/// when a request cannot be parsed, just before the connection closes) an error envelope.
struct Enveloped {
    stream: TcpStream,
    /// The answer being written in place of hyper's, and how much of it is written.
    replacing: Option<(Vec<u8>, usize)>,
}

impl Enveloped {
    fn new(stream: TcpStream) -> Self {
        Self {
            stream,
            replacing: None,
        }
    }
}

/// The envelope answer for hyper's empty `head`, if it is one of its error answers.
fn envelope_for(head: &[u8]) -> Option<Vec<u8>> {
    let (status, kind, message) = if head.starts_with(b"HTTP/1.1 400 Bad Request\r\n") {
        (
            "400 Bad Request",
            "invalid_request",
            "the request is not valid HTTP",
        )
    } else if head.starts_with(b"HTTP/1.1 414 URI Too Long\r\n") {
        ("414 URI Too Long", "uri_too_long", "the URI is too long")
    } else if head.starts_with(b"HTTP/1.1 431 Request Header Fields Too Large\r\n") {
        (
            "431 Request Header Fields Too Large",
            "headers_too_large",
            "the request's headers are too large",
        )
    } else {
        return None;
    };
    let empty = head.ends_with(b"\r\n\r\n")
        && head
            .windows(b"\r\ncontent-length: 0\r\n".len())
            .any(|w| w == b"\r\ncontent-length: 0\r\n");
    if !empty {
        return None;
    }
    let body = serde_json::json!({
        "tool": null,
        "status": "error",
        "error": {"type": kind, "message": message, "retryable": false},
        "meta": {"request_id": crate::tool::caller::next_request_id()},
    })
    .to_string();
    Some(
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

impl AsyncRead for Enveloped {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Enveloped {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        if this.replacing.is_none()
            && buf.first() == Some(&b'H')
            && let Some(answer) = envelope_for(buf)
        {
            this.replacing = Some((answer, 0));
        }
        let Some((answer, written)) = &mut this.replacing else {
            return Pin::new(&mut this.stream).poll_write(cx, buf);
        };
        // Hyper offers the same bytes again until told they are written: write ours meanwhile.
        while *written < answer.len() {
            match Pin::new(&mut this.stream).poll_write(cx, &answer[*written..]) {
                Poll::Ready(Ok(n)) => *written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
