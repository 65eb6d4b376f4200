use tool_runtime::prelude::*;

struct Report;

/// Report.
#[tool]
async fn report() -> Report {
    Report
}

fn main() {}
