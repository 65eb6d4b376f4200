//! `demo-app [--db PATH] [TOOL [ARGS_JSON]]`: lists the tools, or calls one through the
//! pipeline and prints its envelope. (The full CLI with typed flags comes with the CLI front end.)

use std::path::PathBuf;
use std::process::ExitCode;

use tool_runtime::{Caller, Source};

const USAGE: &str = "usage: demo-app [--db PATH] [--yes] [TOOL [ARGS_JSON]]";

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();

    let mut db = None;
    let mut confirm = false;
    let mut rest = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--db" => {
                let Some(p) = args.next() else {
                    eprintln!("--db needs a path\n{USAGE}");
                    return ExitCode::from(2);
                };
                db = Some(PathBuf::from(p));
            }
            "--yes" => confirm = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ => rest.push(arg),
        }
    }

    let path = demo_app::db_path(db.as_deref());
    let store = match demo_app::Store::open(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot open database {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    let registry = match demo_app::registry(store) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };

    let Some(tool) = rest.first() else {
        println!("demo-app tools (database {}):", path.display());
        for t in registry.tools() {
            println!("  {:<14} {}", t.name(), t.meta().summary);
        }
        println!("\n{USAGE}\nexample: demo-app device_add '{{\"ttl_seconds\": 120}}'");
        return ExitCode::SUCCESS;
    };
    let args = match rest.get(1).map(|s| serde_json::from_str(s)) {
        None => serde_json::json!({}),
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            eprintln!("ARGS_JSON is not JSON: {e}");
            return ExitCode::from(2);
        }
    };
    let envelope = registry
        .call(tool, args, Caller::new(Source::Cli).confirm(confirm))
        .await;
    println!(
        "{}",
        serde_json::to_string_pretty(&envelope).unwrap_or_default()
    );
    match envelope.error().map(tool_runtime::ToolError::status) {
        None => ExitCode::SUCCESS,
        Some(400 | 404 | 422) => ExitCode::from(2),
        Some(403 | 409) => ExitCode::from(3),
        Some(_) => ExitCode::FAILURE,
    }
}
