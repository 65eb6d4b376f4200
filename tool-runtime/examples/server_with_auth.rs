//! An HTTP server whose every route but `/healthz` needs a bearer token; `/mcp` too.
//!
//! `cargo run -p tool-runtime --example server_with_auth`, then
//! `curl -H 'Authorization: Bearer alice-token' -d '{"text":"hi"}' http://127.0.0.1:PORT/tools/shout`;
//! the monitor's token reads the operator endpoints (`GET /toolsets`, `GET /audit`) only.

use std::sync::Arc;
use std::time::Duration;

use tool_runtime::http::{self, Auth, ServerOptions};
use tool_runtime::prelude::*;

/// Say it louder.
#[tool(annotations(read_only))]
async fn shout(
    /// What to say
    text: String,
) -> String {
    text.to_uppercase()
}

const TOKENS: &str = r#"
[[tokens]]
token = "alice-token"
principal = "alice"
roles = ["admin"]

[[tokens]]
token = "monitor-token"
principal = "monitor"
roles = ["ops"]
"#;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let registry = Arc::new(Registry::builder().build().expect("the registry builds"));
    let options = ServerOptions::default()
        .auth(Auth::from_toml(TOKENS).map_err(std::io::Error::other)?)
        .operator_role("ops")
        .grace(Duration::from_secs(5));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on http://{}", listener.local_addr()?);
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    http::serve(
        listener,
        http::router(registry, options.clone()),
        shutdown,
        &options,
    )
    .await
}
