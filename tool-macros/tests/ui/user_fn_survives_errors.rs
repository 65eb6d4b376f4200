use tool_runtime::prelude::*;

/// Add.
#[tool(nmae = "add")]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

// Only the macro's error is reported: the fn itself is still there for its callers.
async fn caller() -> i64 {
    add(1, 2).await
}

fn main() {
    let _ = caller;
}
