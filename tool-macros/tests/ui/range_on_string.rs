use tool_runtime::prelude::*;

/// Greet.
#[tool]
async fn greet(
    /// Who to greet
    #[arg(range(min = 1, max = 10))]
    name: String,
) -> String {
    name
}

fn main() {}
