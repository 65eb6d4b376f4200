use tool_runtime::prelude::*;

struct Point {
    x: i64,
}

/// Move.
#[tool]
async fn move_to(
    /// Target
    target: Point,
) -> i64 {
    target.x
}

fn main() {}
