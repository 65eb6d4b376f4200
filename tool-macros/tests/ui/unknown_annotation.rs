use tool_runtime::prelude::*;

/// Wipe.
#[tool(annotations(dangerous))]
async fn wipe() -> bool {
    true
}

fn main() {}
