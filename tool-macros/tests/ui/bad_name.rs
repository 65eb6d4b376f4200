use tool_runtime::prelude::*;

/// Add.
#[tool(name = "add numbers!")]
async fn add(a: i64) -> i64 {
    a
}

fn main() {}
