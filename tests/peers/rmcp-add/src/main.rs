//! `add(a, b)` served by the official Rust MCP SDK alone, with its own macros: the raw peer
//! `tests/benches/mcp.rs` measures our server against.
//!
//! ```text
//! rmcp-add            streamable HTTP at /mcp on 127.0.0.1, a free port; prints `listening on URL`
//! rmcp-add stdio      stdio
//! ```
//!
//! Configured as `ours-add serve` and `ours-add mcp` (`tests/peers/ours-add`, tool-runtime's
//! `App`) configure theirs, so that the comparison measures what our server does on top of the
//! SDK:
//!
//! - the tokio runtime: `#[tokio::main]`, multi-threaded, one worker per core;
//! - `StreamableHttpServerConfig`: the SDK's defaults (MCP sessions, SSE answers rather than
//!   JSON, SSE keep-alive pings every 15 s, the SSE retry of 3 s, `Host` allowed for loopback
//!   names only), with the request body capped at 1 MiB as `serve --body-limit`'s default;
//! - the session manager: the SDK's `LocalSessionManager`, its sessions closed after 5 min
//!   idle (ours wraps it in a cap of 256 sessions and a handshake deadline, neither reached
//!   here);
//! - the connections: HTTP/1 only, `TCP_NODELAY` on every accepted socket, kept alive;
//! - stdio: the SDK's non-blocking pipes (`stdio_pipes`), as ours reads them;
//! - the tool: two `i64`, their sum as `{"result": sum}` in `structuredContent`, a sum past
//!   64 bits a tool error; annotated read-only and idempotent; no logging.
//!
//! Not mirrored, being our server's own and not the SDK's: its accept loop's connection cap and
//! header and body deadlines (`http::serve`, which also writes each answer as one buffer);
//! what its `/mcp` route adds around the SDK's service (the session cap's 503, JSON-RPC errors
//! for unreadable bodies, 204 for `DELETE`); its own line codec on stdio; and all a call goes
//! through on our side (argument validation, the pipeline).

use std::sync::Arc;

use axum::serve::ListenerExt as _;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt as _, tool, tool_handler, tool_router};

/// `serve --body-limit`'s default.
const BODY_LIMIT: usize = 1024 * 1024;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// First term
    a: i64,
    /// Second term
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    result: i64,
}

/// The server of one MCP session. It keeps its router: `#[tool_handler]` alone would build one
/// (`Self::tool_router()`) on every call.
#[derive(Clone)]
struct Adder {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Adder {
    /// Adds two integers. A sum past 64 bits is the tool's error.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    async fn add(
        &self,
        Parameters(AddArgs { a, b }): Parameters<AddArgs>,
    ) -> Result<Json<Sum>, String> {
        a.checked_add(b)
            .map(|result| Json(Sum { result }))
            .ok_or_else(|| format!("{a} + {b} does not fit in 64 bits"))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Adder {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn adder() -> Adder {
    Adder {
        tool_router: Adder::tool_router(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("stdio") {
        let (read, write) = rmcp::transport::io::stdio_pipes();
        adder().serve((read, write)).await?.waiting().await?;
        return Ok(());
    }
    let config = StreamableHttpServerConfig::default().with_max_request_body_bytes(BODY_LIMIT);
    let service = StreamableHttpService::new(
        || Ok(adder()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on http://{}", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
}
