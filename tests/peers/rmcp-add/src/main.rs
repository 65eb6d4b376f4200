//! `add(a, b)` served by the official Rust MCP SDK alone, with its own macros: the raw peer
//! `tests/benches/mcp.rs` measures our server against.
//!
//! ```text
//! rmcp-add            streamable HTTP at /mcp on 127.0.0.1, a free port; prints `listening on URL`
//! rmcp-add stdio      stdio
//! rmcp-add proxy URL                streamable HTTP, as above, passing every tool through to
//!                                   the MCP server at URL (streamable HTTP)
//! rmcp-add proxy-stdio COMMAND ...  stdio, passing every tool through to COMMAND on stdio
//! ```
//!
//! The pass-through is the gateway benchmark's peer: what forwarding `tools/list` and
//! `tools/call` costs on the SDK alone (its client, one connection shared by every session,
//! as our `RemoteServer` mount shares one), beside our gateway.
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
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{Peer, RequestContext, RoleClient, RoleServer};
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

/// A server whose tools are those of `upstream`, each list and call forwarded there.
#[derive(Clone)]
struct Proxy {
    upstream: Peer<RoleClient>,
}

fn forwarding_failed(e: rmcp::ServiceError) -> ErrorData {
    match e {
        rmcp::ServiceError::McpError(e) => e,
        e => ErrorData::internal_error(e.to_string(), None),
    }
}

impl ServerHandler for Proxy {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.upstream
            .list_tools(request)
            .await
            .map_err(forwarding_failed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.upstream
            .call_tool_once(request)
            .await
            .map_err(forwarding_failed)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The upstream's client is kept alive for the whole run: dropping it would close the
    // connection every session forwards through.
    let (upstream, _client) = match args.first().map(String::as_str) {
        Some("stdio") => {
            let (read, write) = rmcp::transport::io::stdio_pipes();
            adder().serve((read, write)).await?.waiting().await?;
            return Ok(());
        }
        Some("proxy-stdio") => {
            let mut command = tokio::process::Command::new(&args[1]);
            command.args(&args[2..]);
            let client = ().serve(rmcp::transport::TokioChildProcess::new(command)?).await?;
            let proxy = Proxy {
                upstream: client.peer().clone(),
            };
            let (read, write) = rmcp::transport::io::stdio_pipes();
            proxy.serve((read, write)).await?.waiting().await?;
            return Ok(());
        }
        Some("proxy") => {
            let transport =
                rmcp::transport::StreamableHttpClientTransport::from_uri(args[1].clone());
            let client = ().serve(transport).await?;
            (Some(client.peer().clone()), Some(client))
        }
        _ => (None, None),
    };
    let config = StreamableHttpServerConfig::default().with_max_request_body_bytes(BODY_LIMIT);
    let sessions = Arc::new(LocalSessionManager::default());
    let app = match upstream {
        Some(upstream) => axum::Router::new().route_service(
            "/mcp",
            StreamableHttpService::new(
                move || {
                    Ok(Proxy {
                        upstream: upstream.clone(),
                    })
                },
                sessions,
                config,
            ),
        ),
        None => axum::Router::new().route_service(
            "/mcp",
            StreamableHttpService::new(|| Ok(adder()), sessions, config),
        ),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on http://{}", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
}
