use tool_runtime::prelude::*;

/// Add.
#[tool(timeout = "5 seconds")]
async fn add(a: i64) -> i64 {
    a
}

fn main() {}
