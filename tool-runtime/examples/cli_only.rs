//! A command-line application and nothing else (`default-features = false, features = ["cli"]`).
//!
//! `cargo run -p tool-runtime --example cli_only -- add 2 --b 3`
//! `cargo run -p tool-runtime --example cli_only -- -g Hi greet Ada`
//! `cargo run -p tool-runtime --example cli_only -- --help`

use std::process::ExitCode;

use tool_runtime::app::cli::clap::Arg;
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

/// How `greet` greets: the global `--greeting` (`-g`), made state by the app's `setup` hook.
struct Greeting(String);

/// Greet someone.
#[tool(annotations(read_only))]
async fn greet(
    greeting: State<Greeting>,
    /// Whom to greet
    #[arg(positional)]
    name: String,
) -> String {
    format!("{}, {name}!", greeting.0)
}

fn main() -> ExitCode {
    tool_runtime::app!()
        .global_arg(
            Arg::new("greeting")
                .long("greeting")
                .short('g')
                .default_value("Hello")
                .help("How `greet` greets"),
        )
        // Runs once, for a call (never for `--help` or `tools`), before the tool does.
        .setup(async |cx, registry| {
            let greeting = cx.matches().get_one::<String>("greeting").cloned();
            Ok(registry.state(Greeting(greeting.unwrap_or_default())))
        })
        .main()
}
