use tool_runtime::prompt;

/// Count.
#[prompt]
async fn count(n: u32) -> u32 {
    n
}

fn main() {}
