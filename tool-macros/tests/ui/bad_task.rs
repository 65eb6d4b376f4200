use tool_runtime::tool;

/// Exports everything.
#[tool(task = "background")]
async fn export() -> String {
    String::new()
}

/// Imports everything.
#[tool(task = "required", detach = "later")]
async fn import() -> String {
    String::new()
}

/// Counts everything.
#[tool(detach = "explicit")]
async fn count() -> String {
    String::new()
}

fn main() {}
