use tool_runtime::prelude::*;

struct Calculator;

impl Calculator {
    /// Add.
    #[tool]
    async fn add(&self, a: i64) -> i64 {
        a
    }
}

fn main() {}
