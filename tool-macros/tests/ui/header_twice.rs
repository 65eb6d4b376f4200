use tool_runtime::prelude::*;

/// Restores a backup.
#[tool]
async fn backup_restore(
    #[arg(header = "Backup")] id: String,
    #[arg(header = "backup")] region: String,
) -> String {
    format!("{id} {region}")
}

fn main() {}
