use tool_runtime::tool;

/// Rename a device.
#[tool]
async fn device_rename(dévice: String) -> String {
    dévice
}

fn main() {}
