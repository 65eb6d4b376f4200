use tool_runtime::prelude::*;

/// Echo.
#[tool]
async fn echo<T: serde::de::DeserializeOwned>(value: T) -> bool {
    let _ = value;
    true
}

fn main() {}
