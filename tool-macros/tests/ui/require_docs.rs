use tool_runtime::prelude::*;

/// Add.
#[tool(require_docs)]
async fn add(
    /// First
    a: i64,
    b: i64,
) -> i64 {
    a + b
}

fn main() {}
