use tool_runtime::prelude::*;

/// Ping.
#[tool(rate = "10 per minute")]
async fn ping() -> bool {
    true
}

fn main() {}
