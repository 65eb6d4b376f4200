use tool_runtime::prelude::*;

/// Add.
#[tool(nmae = "add")]
async fn add(a: i64) -> i64 {
    a
}

fn main() {}
