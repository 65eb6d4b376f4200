use tool_runtime::prelude::*;

/// Toggle.
#[tool]
async fn toggle(
    /// On or off
    #[arg(positional)]
    on: bool,
) -> bool {
    on
}

fn main() {}
