use tool_runtime::prelude::*;

/// Restores backups.
#[tool]
async fn backup_restore(
    #[arg(header = "Backup")] ids: Vec<String>,
    #[arg(header = "Region")] region: Option<String>,
) -> usize {
    ids.len() + region.map_or(0, |r| r.len())
}

fn main() {}
