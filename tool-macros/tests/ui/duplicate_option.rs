use tool_runtime::prelude::*;

/// Add.
#[tool(name = "add", name = "sum")]
async fn add(a: i64) -> i64 {
    a
}

fn main() {}
