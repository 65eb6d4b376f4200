// A tool without a doc comment compiles with a warning; denied here to show it.
#![deny(deprecated)]

use tool_runtime::prelude::*;

#[tool]
async fn ping() -> bool {
    true
}

fn main() {}
