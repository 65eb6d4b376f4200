use tool_runtime::prelude::*;

/// Add.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
