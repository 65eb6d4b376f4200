use tool_runtime::prelude::*;

/// Wait.
#[tool]
async fn wait(
    /// Seconds
    #[arg(default = "five")]
    seconds: u32,
) -> u32 {
    seconds
}

fn main() {}
