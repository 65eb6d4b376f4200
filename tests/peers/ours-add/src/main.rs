//! `add(a, b)` on tool-runtime with its default features, the way a one-tool crate is written:
//! our side of `tests/benches/mcp.rs` against `tests/peers/rmcp-add`.
//!
//! ```text
//! ours-add serve --addr 127.0.0.1:0   streamable HTTP at /mcp (and the HTTP front end)
//! ours-add mcp                        stdio
//! ```
//!
//! With `OURS_ADD_EVENT_STORE=off`, `serve` keeps no events for resuming streams.

use tool_runtime::prelude::*;

/// Adds two integers. A sum past 64 bits is the tool's error.
#[tool(annotations(read_only, idempotent))]
async fn add(
    /// First term
    a: i64,
    /// Second term
    b: i64,
) -> Result<i64, ToolError> {
    a.checked_add(b)
        .ok_or_else(|| ToolError::new("overflow", format!("{a} + {b} does not fit in 64 bits")))
}

fn main() -> std::process::ExitCode {
    let app = tool_runtime::app!();
    // The bench's third server: the same crate with resumable streams turned off.
    if std::env::var_os("OURS_ADD_EVENT_STORE").is_some_and(|v| v == "off") {
        app.server_options(async |_, options| Ok(options.without_mcp_event_store()))
            .main()
    } else {
        app.main()
    }
}
