use tool_runtime::resource;

/// A device's status.
#[resource("devices://{id}/status")]
async fn status() -> String {
    "online".into()
}

fn main() {}
