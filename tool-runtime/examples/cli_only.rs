//! A command-line application and nothing else (`default-features = false, features = ["cli"]`).
//!
//! `cargo run -p tool-runtime --example cli_only -- add 2 --b 3`
//! `cargo run -p tool-runtime --example cli_only -- --help`

use std::process::ExitCode;

use tool_runtime::prelude::*;

/// Add two integers.
#[tool(annotations(read_only))]
async fn add(
    /// The first term
    #[arg(positional)]
    a: i64,
    /// The second term
    #[arg(default = 1)]
    b: i64,
) -> Result<i64, ToolError> {
    a.checked_add(b)
        .ok_or_else(|| ToolError::new("overflow", format!("{a} + {b} does not fit in 64 bits")))
}

/// Count the lines of a file.
#[tool(annotations(read_only))]
fn count_lines(
    /// The file
    path: std::path::PathBuf,
) -> Result<usize, std::io::Error> {
    Ok(std::fs::read_to_string(path)?.lines().count())
}

fn main() -> ExitCode {
    tool_runtime::app!().main()
}
