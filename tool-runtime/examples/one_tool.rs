//! One tool, called from Rust through the pipeline.
//!
//! `cargo run -p tool-runtime --example one_tool`

use tool_runtime::prelude::*;

/// Greet someone by name.
#[tool(annotations(read_only))]
async fn greet(
    /// Who to greet
    #[arg(length(min = 1, max = 40))]
    name: String,
) -> String {
    format!("Hello, {name}!")
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = Registry::builder().build().expect("the registry builds");
    for args in [
        serde_json::json!({"name": "Ada"}),
        serde_json::json!({"name": ""}),
    ] {
        let envelope = registry
            .call("greet", args, Caller::new(Source::Internal))
            .await;
        println!("{}", envelope.to_json());
    }
}
