use tool_runtime::prelude::*;

/// Wait.
#[tool]
async fn wait(
    /// Seconds
    #[arg(default = Some(5))]
    seconds: Option<u32>,
) -> u32 {
    seconds.unwrap_or(0)
}

fn main() {}
