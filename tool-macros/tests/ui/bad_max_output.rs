use tool_runtime::prelude::*;

/// Say hello.
#[tool(max_output = "64 kilobytes")]
async fn hello() -> String {
    "hello".into()
}

fn main() {}
