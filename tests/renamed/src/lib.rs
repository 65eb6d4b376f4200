//! A crate where `tool_runtime` is not a name at all: the dependency is renamed to `rt`, and
//! `#[tool(crate = "rt")]` tells the generated code where to find it.

use rt::prelude::*;

/// Multiply two integers.
#[tool(crate = "rt", annotations(read_only))]
pub async fn multiply(
    /// Left factor
    a: i64,
    /// Right factor
    #[arg(default = 2)]
    b: i64,
) -> i64 {
    a * b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_tool_is_registered_and_callable() {
        let registry = Registry::builder().build().unwrap();
        let env = registry
            .call(
                "multiply",
                serde_json::json!({"a": 21}),
                Caller::new(Source::Internal),
            )
            .await;
        assert_eq!(env.result(), Some(&serde_json::json!(42)));
    }
}
