use tool_runtime::prelude::*;

/// Sum.
#[tool]
async fn sum((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
