//! Per-request work of the HTTP front end, for instruction counts under callgrind (exact and
//! repeatable, where wall-clock runs on this shared machine are not): `tests/http_instructions.sh`
//! runs this with two request counts per path and prints the difference per request.
//!
//! `http_instructions <path> <requests>`, path: 0 the full router, 1 `tool_route`, 2 the
//! hand-written axum handler, 3 the pipeline alone (`Registry::call` and serialising the
//! envelope). The same requests as `benches/http_inprocess.rs`, through `oneshot` on one thread.
//! `http_instructions serve <path>` serves path 0 or 2 over a real connection instead.
use serde_json::json;
use tool_runtime::{Caller, Source};
use tower::ServiceExt;

#[path = "../benches/common/add.rs"]
mod add;

use add::request;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        return serve(std::env::args().nth(2).unwrap().parse().unwrap());
    }
    let which: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n: usize = std::env::args().nth(2).unwrap().parse().unwrap();
    let rt = add::runtime();
    let registry = add::registry();
    let apps = add::apps(&registry);
    rt.block_on(async {
        if which == 3 {
            for _ in 0..n {
                let e = registry
                    .call("add", json!({"a": 20, "b": 22}), Caller::new(Source::Http))
                    .await;
                std::hint::black_box(serde_json::to_vec(&e).unwrap());
            }
            return;
        }
        let app = apps[which].1.clone();
        // Counted work is only worth counting if it answers: one checked call first.
        let r = app.clone().oneshot(request()).await.unwrap();
        assert_eq!(r.status(), 200, "{}", apps[which].0);
        let body = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert!(
            body == json!(42) || body["result"] == json!(42) || body["sum"] == json!(42),
            "{}: {body}",
            apps[which].0
        );
        for _ in 0..n {
            let r = app.clone().oneshot(request()).await.unwrap();
            std::hint::black_box(axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap());
        }
    });
}

/// `http_instructions serve <path>`: path 0 or 2 served by `http::serve` on a free loopback
/// port (printed as `listening on URL`) on one tokio worker, as `benches/http.rs` serves it, until
/// killed: the same work over a real connection, hyper and the kernel included.
fn serve(which: usize) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let registry = add::registry();
    let app = add::apps(&registry)[which].1.clone();
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("listening on http://{}", listener.local_addr().unwrap());
        tool_runtime::http::serve(
            listener,
            app,
            std::future::pending(),
            &tool_runtime::http::ServerOptions::default().grace(std::time::Duration::from_secs(1)),
        )
        .await
        .unwrap();
    });
}
