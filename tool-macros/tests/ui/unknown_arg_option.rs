use tool_runtime::prelude::*;

/// Add.
#[tool]
async fn add(
    /// First
    #[arg(minimum = 1)]
    a: i64,
) -> i64 {
    a
}

fn main() {}
