use tool_runtime::resource;

/// A file.
#[resource("files://{path")]
async fn file(path: String) -> String {
    path
}

fn main() {}
