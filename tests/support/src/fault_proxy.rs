//! A TCP proxy of a test's own, in front of a backend (Redis, PostgreSQL) on loopback, that can
//! be told to fail the way real networks do: pass bytes through, hold them (a backend that
//! accepts connections and never answers), delay every chunk (a slow link), or cut every
//! connection and refuse new ones (a backend gone from the network, its data kept).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the proxy does with the bytes it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Every byte through, at once.
    Pass,
    /// Connections accepted, nothing through either way until this ends: held bytes are then
    /// delivered, as TCP does after a partition heals.
    Blackhole,
    /// Every chunk, either way, delivered this much later.
    Slow(Duration),
    /// Open connections cut, new ones closed as soon as they are accepted.
    Refuse,
}

/// A proxy on a free port of 127.0.0.1 to `upstream`, serving until dropped.
#[derive(Debug)]
pub struct FaultProxy {
    port: u16,
    fault: Arc<watch::Sender<Fault>>,
    accept: tokio::task::JoinHandle<()>,
}

impl FaultProxy {
    /// Starts one to `127.0.0.1:upstream` on the current Tokio runtime, passing bytes through.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound, or outside a Tokio runtime.
    pub async fn start(upstream: u16) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let port = listener.local_addr().unwrap().port();
        let fault = Arc::new(watch::Sender::new(Fault::Pass));
        let accept = tokio::spawn(accept(listener, upstream, fault.clone()));
        Self {
            port,
            fault,
            accept,
        }
    }

    /// The port it listens on.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// From now on, `fault`, for the connections open and those to come.
    pub fn set(&self, fault: Fault) {
        self.fault.send_replace(fault);
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn accept(listener: TcpListener, upstream: u16, fault: Arc<watch::Sender<Fault>>) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        if *fault.borrow() == Fault::Refuse {
            drop(client);
            continue;
        }
        let fault = fault.clone();
        tokio::spawn(async move {
            // A backend that is down is refused here too: the client's connection is closed.
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            // When either way ends, the connection ends.
            tokio::select! {
                () = pump(client_read, server_write, fault.subscribe()) => {}
                () = pump(server_read, client_write, fault.subscribe()) => {}
            }
        });
    }
}

/// Copies `from` to `to`, each chunk held or delayed as the fault of the moment says, until
/// either end closes or the proxy refuses.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut fault: watch::Receiver<Fault>,
) {
    let mut buf = vec![0; 16 * 1024];
    loop {
        let n = tokio::select! {
            read = from.read(&mut buf) => match read {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            },
            changed = fault.changed() => {
                if changed.is_err() || *fault.borrow_and_update() == Fault::Refuse {
                    return;
                }
                continue;
            }
        };
        loop {
            let now = *fault.borrow_and_update();
            match now {
                Fault::Pass => break,
                Fault::Refuse => return,
                Fault::Slow(delay) => {
                    tokio::time::sleep(delay).await;
                    break;
                }
                Fault::Blackhole => {
                    if fault.changed().await.is_err() {
                        return;
                    }
                }
            }
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
