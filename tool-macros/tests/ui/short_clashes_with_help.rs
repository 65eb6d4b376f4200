use tool_runtime::prelude::*;

/// Greet.
#[tool]
async fn greet(
    /// Who to greet
    #[arg(short = 'h')]
    name: String,
) -> String {
    name
}

fn main() {}
