use tool_runtime::prelude::*;

/// Greet.
#[tool]
async fn greet(name: &str) -> usize {
    name.len()
}

fn main() {}
