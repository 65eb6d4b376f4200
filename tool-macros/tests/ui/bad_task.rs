use tool_runtime::tool;

/// Exports everything.
#[tool(task = "background")]
async fn export() -> String {
    String::new()
}

fn main() {}
