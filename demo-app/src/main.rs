//! `demo-app`: every demo tool as a subcommand (`demo-app --help`), over the SQLite database
//! named by `--db PATH` or `DEMO_APP_DB` (default `./demo-app.db`).

use std::path::PathBuf;
use std::process::ExitCode;

use tool_runtime::cli::clap::{Arg, value_parser};

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();

    tool_runtime::app!()
        .registry(demo_app::registry_builder())
        .global_arg(
            Arg::new("db")
                .long("db")
                .env("DEMO_APP_DB")
                .value_name("PATH")
                .value_parser(value_parser!(PathBuf))
                .default_value(demo_app::DEFAULT_DB)
                .help("The SQLite database; created and migrated on first use"),
        )
        .setup(|matches, registry| {
            let path = matches.get_one::<PathBuf>("db").expect("has a default");
            Ok(registry.state(demo_app::Store::open(path)?))
        })
        .run()
        .await
}
