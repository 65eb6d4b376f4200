use tool_runtime::prelude::*;

/// Revoke a device.
#[tool(scopes("devices:admin", "devices admin"))]
async fn device_revoke(id: u32) -> u32 {
    id
}

fn main() {}
