use tool_runtime::prelude::*;

fn loose_guard(_args: &serde_json::Value) -> bool {
    true
}

/// Add.
#[tool(guard = loose_guard)]
async fn add(
    /// First
    a: i64,
) -> i64 {
    a
}

fn main() {}
