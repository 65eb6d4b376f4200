//! Tools that exercise the edges of the front ends (progress, panics, time-outs, cancellation,
//! non-object outputs, a destructive tool, nested input for forms), served by the stock `App`: `mcp-fixture mcp` is
//! what `tests/tests/mcp.rs` points the official MCP client at, and `mcp-fixture serve` what
//! `benches/mcp.rs` measures. With `MCP_FIXTURE_MOUNT=URL` (or a command line, for a server on
//! stdio), its servers also mount that MCP server as `remote` (the gateway `benches/mcp.rs`
//! measures). The tools of the official
//! conformance suite are in [`conformance`] (those that ask through input-required results in
//! [`rounds`], the stateless scenario's in [`stateless`]), its resources and prompts in
//! [`items`], and `mcp-fixture conformance-client URL` is the client its client scenarios run.

mod conformance;
mod items;
mod rounds;
mod stateless;
mod tasks;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde::Serialize;
use tool_runtime::{CallContext, ToolError, tool};

static HANG_STARTED: AtomicU32 = AtomicU32::new(0);
static HANG_DROPPED: AtomicU32 = AtomicU32::new(0);

#[derive(Serialize, schemars::JsonSchema)]
struct Counted {
    counted: u32,
}

/// Adds two integers: the small tool of the MCP benchmark (`benches/mcp.rs`). A sum past 64
/// bits is the tool's `overflow` error.
#[tool(annotations(read_only, idempotent))]
async fn add(
    /// First term
    a: i64,
    /// Second term
    b: i64,
) -> Result<i64, tool_runtime::ToolError> {
    a.checked_add(b).ok_or_else(|| {
        tool_runtime::ToolError::new("overflow", format!("{a} + {b} does not fit in 64 bits"))
    })
}

/// Counts to `steps`, reporting progress after each step.
#[tool(annotations(read_only))]
async fn count(ctx: &CallContext, #[arg(range(min = 1, max = 100))] steps: u32) -> Counted {
    for i in 1..=steps {
        tokio::time::sleep(Duration::from_millis(10)).await;
        ctx.progress(
            f64::from(i),
            Some(f64::from(steps)),
            Some(&format!("step {i}")),
        );
    }
    Counted { counted: steps }
}

/// The numbers below `n`: a list, which MCP sees wrapped as `{"result": [...]}`.
#[tool(annotations(read_only))]
async fn numbers(#[arg(range(max = 1000))] n: u32) -> Vec<u32> {
    (0..n).collect()
}

/// Panics.
#[tool(annotations(read_only))]
async fn boom() -> Counted {
    panic!("boom")
}

/// Sleeps past its time limit.
#[tool(annotations(read_only), timeout = "200ms")]
async fn slow() -> Counted {
    tokio::time::sleep(Duration::from_secs(30)).await;
    Counted { counted: 0 }
}

struct Dropped;

impl Drop for Dropped {
    fn drop(&mut self) {
        HANG_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

/// Never finishes on its own: cancel it.
#[tool(annotations(read_only), timeout = "1h")]
async fn hang() -> Counted {
    HANG_STARTED.fetch_add(1, Ordering::SeqCst);
    let _guard = Dropped;
    std::future::pending::<()>().await;
    Counted { counted: 0 }
}

#[derive(Serialize, schemars::JsonSchema)]
struct HangStatus {
    started: u32,
    dropped: u32,
}

/// How many `hang` calls started, and how many of their futures were dropped.
#[tool(annotations(read_only))]
async fn hang_status() -> HangStatus {
    HangStatus {
        started: HANG_STARTED.load(Ordering::SeqCst),
        dropped: HANG_DROPPED.load(Ordering::SeqCst),
    }
}

/// Wipes the target (it does not really): a task when the client can follow one, confirmed
/// before the task exists.
#[tool(annotations(destructive), task = "optional")]
async fn wipe(#[arg(length(max = 64))] target: String) -> Result<Counted, ToolError> {
    let _ = target;
    Ok(Counted { counted: 1 })
}

/// How a trip is travelled.
#[derive(serde::Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Mode {
    /// By rail
    Train,
    /// By road
    Bus,
}

/// One stop of a trip.
#[derive(serde::Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Stop {
    /// The city
    #[schemars(length(min = 1, max = 40))]
    city: String,
    /// Nights spent there
    #[schemars(range(min = 1, max = 30))]
    nights: u8,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Trip {
    stops: Vec<Stop>,
    mode: Mode,
    rail_pass: bool,
    total_nights: u32,
}

/// Plans a trip: the stops back, with the nights added up. Its input has what a form must
/// handle beyond flat fields: an array of objects, an enum and a boolean.
#[tool(annotations(read_only, idempotent))]
async fn itinerary(
    /// The stops, in order
    #[arg(length(min = 1, max = 10))]
    stops: Vec<Stop>,
    /// How to travel
    mode: Mode,
    /// Whether a rail pass is held
    #[arg(default = false)]
    rail_pass: bool,
) -> Trip {
    let total_nights = stops.iter().map(|s| u32::from(s.nights)).sum();
    Trip {
        stops,
        mode,
        rail_pass,
        total_nights,
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // Run by the conformance suite as the client under test, the server's URL last.
    let args: Vec<String> = std::env::args().collect();
    if let [_, mode, url] = args.as_slice()
        && mode == "conformance-client"
    {
        return conformance::client(url).await;
    }
    tool_runtime::app!()
        .configure(async |_, registry| {
            // The resources and prompts of `items` are found through inventory.
            Ok(registry.tool(conformance::JsonSchemaTool))
        })
        .toolsets(async |_| {
            let mounted: Vec<std::sync::Arc<dyn tool_runtime::toolset::Toolset>> =
                match std::env::var("MCP_FIXTURE_MOUNT") {
                    Ok(url) if url.starts_with("http") => vec![std::sync::Arc::new(
                        tool_runtime::mcp::RemoteServer::http("remote", url).tools_only(),
                    )],
                    Ok(command) => {
                        let mut words = command.split_whitespace().map(str::to_owned);
                        let program = words.next().unwrap_or_default();
                        vec![std::sync::Arc::new(
                            tool_runtime::mcp::RemoteServer::stdio("remote", program)
                                .args(words)
                                .tools_only(),
                        )]
                    }
                    Err(_) => Vec::new(),
                };
            Ok(mounted)
        })
        // The registry `serve` serves, for the hooks that change its lists.
        .background(async |_, served| {
            let _ = stateless::SERVED.set(std::sync::Arc::downgrade(&served.registry));
            Ok(None)
        })
        .run()
        .await
}
