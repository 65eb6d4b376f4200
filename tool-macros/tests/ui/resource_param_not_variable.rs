use tool_runtime::resource;

/// A device's status.
#[resource("devices://{id}/status")]
async fn status(id: String, verbose: bool) -> String {
    format!("{id} {verbose}")
}

fn main() {}
