//! An MCP server on stdio, for a model's host (Claude Desktop, an IDE) to start.
//!
//! `cargo run -p tool-runtime --example mcp_server`, then send JSON-RPC lines on stdin.
//! Logs go to stderr: stdout carries the protocol.

use std::sync::Arc;

use tool_runtime::mcp::McpServer;
use tool_runtime::prelude::*;

/// Look a word up in a small dictionary.
#[tool(annotations(read_only))]
async fn define(
    /// The word
    word: String,
) -> Result<String, ToolError> {
    match word.as_str() {
        "tool" => Ok("a thing a model can call".to_owned()),
        other => Err(ToolError::not_found(format!("no definition of `{other}`"))),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let registry = Arc::new(Registry::builder().build().expect("the registry builds"));
    McpServer::named(registry, "dictionary", "0.1.0")
        .serve_stdio()
        .await
}
