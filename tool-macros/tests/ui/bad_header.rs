use tool_runtime::prelude::*;

/// Restores a backup.
#[tool]
async fn backup_restore(#[arg(header = "Backup Id")] id: String) -> String {
    id
}

fn main() {}
