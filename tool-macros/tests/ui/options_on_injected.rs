use tool_runtime::prelude::*;

struct Store;

/// Count.
#[tool]
async fn count(
    #[arg(default = 1)]
    store: State<Store>,
) -> u32 {
    let _ = store;
    1
}

fn main() {}
