//! Serving a router: connections, peer addresses, graceful shutdown.

use std::future::Future;
use std::time::Duration;

use axum::Router;

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting and lets calls in
/// flight finish for at most `grace`. Sets `TCP_NODELAY` on every connection, and gives every
/// request its peer address, so a router without authentication serves loopback callers only
/// ([`crate::safety`]).
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let (signalled_tx, signalled_rx) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        shutdown.await;
        tracing::info!(target: "tool_runtime::http", "shutting down: no new connections; finishing calls in flight");
        let _ = signalled_tx.send(());
    };
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    // Each request knows its peer, for the rule on unauthenticated remote callers.
    let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    let server = axum::serve(listener, app).with_graceful_shutdown(shutdown);
    let server = std::pin::pin!(server.into_future());
    let deadline = async move {
        if signalled_rx.await.is_ok() {
            tokio::time::sleep(grace).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        r = server => r,
        () = deadline => {
            tracing::warn!(target: "tool_runtime::http", ?grace, "grace period over; dropping calls still in flight");
            Ok(())
        }
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
