use tool_runtime::prelude::*;

/// Wait.
#[tool]
async fn wait(
    /// Retries
    #[arg(default = 300)]
    retries: u8,
) -> u8 {
    retries
}

fn main() {}
