#!/usr/bin/env bash
# Build cost of a one-tool crate: clean debug build, rebuild after editing the tool, and release
# binary size, for tool-runtime with its default features and with each front end alone, beside
# the same tool served by clap alone and by rmcp alone. Each crate is made in a scratch folder
# with its own target directory, and takes the workspace's Cargo.lock, so every crate builds the
# same versions. Run on an idle machine: the crates build one after another.
#
#   bash tests/build_cost.sh [crate ...]     (default: every crate)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${BUILD_COST_DIR:-$(mktemp -d)}"
export CARGO_TERM_COLOR=never CARGO_INCREMENTAL=1

runtime() { # features...
  if [ "$1" = default ]; then
    echo "tool-runtime = { path = \"$root/tool-runtime\" }"
  else
    local list
    list=$(printf '"%s", ' "$@")
    echo "tool-runtime = { path = \"$root/tool-runtime\", default-features = false, features = [${list%, }] }"
  fi
}

ours_tool='
use tool_runtime::prelude::*;

/// Add two integers.
#[tool(annotations(read_only))]
async fn add(
    /// The first term
    a: i64,
    /// The second term
    b: i64,
) -> i64 {
    a + b // EDIT
}
'

make() { # name, dependencies, main.rs
  mkdir -p "$work/$1/src"
  cat >"$work/$1/Cargo.toml" <<EOF
[package]
name = "$1"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
$2

[workspace]
EOF
  printf '%s\n' "$3" >"$work/$1/src/main.rs"
  cp "$root/Cargo.lock" "$work/$1/Cargo.lock"
}

make ours-default "$(runtime default)" "$ours_tool
fn main() -> std::process::ExitCode {
    tool_runtime::app!().main()
}"

make ours-cli "$(runtime cli)" "$ours_tool
fn main() -> std::process::ExitCode {
    tool_runtime::app!().main()
}"

make ours-mcp "$(runtime mcp)
tokio = { version = \"1\", features = [\"rt\", \"macros\"] }" "$ours_tool
#[tokio::main(flavor = \"current_thread\")]
async fn main() -> std::io::Result<()> {
    let registry = std::sync::Arc::new(Registry::builder().build().expect(\"registry\"));
    tool_runtime::mcp::McpServer::new(registry).serve_stdio().await
}"

make ours-http "$(runtime http)
tokio = { version = \"1\", features = [\"rt\", \"macros\", \"net\"] }" "$ours_tool
#[tokio::main(flavor = \"current_thread\")]
async fn main() -> std::io::Result<()> {
    let registry = std::sync::Arc::new(Registry::builder().build().expect(\"registry\"));
    let options = tool_runtime::http::ServerOptions::default().grace(std::time::Duration::from_secs(1));
    let app = tool_runtime::http::router(registry, options.clone());
    let listener = tokio::net::TcpListener::bind(\"127.0.0.1:0\").await?;
    tool_runtime::http::serve(listener, app, std::future::pending(), &options).await
}"

make clap-alone 'clap = { version = "4", features = ["derive"] }
serde_json = "1"' '
use clap::{Parser, Subcommand};

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Add two integers.
    Add {
        /// The first term
        #[arg(long)]
        a: i64,
        /// The second term
        #[arg(long)]
        b: i64,
    },
}

fn main() {
    match Cli::parse().command {
        Command::Add { a, b } => println!("{}", serde_json::json!(a + b)), // EDIT
    }
}'

make rmcp-alone 'rmcp = { version = "3", features = ["server", "macros", "transport-io"] }
schemars = "1"
serde = { version = "1", features = ["derive"] }
tokio = { version = "1", features = ["rt", "macros", "io-std"] }' '
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServiceExt, tool, tool_handler, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first term
    a: i64,
    /// The second term
    b: i64,
}

#[derive(Clone)]
#[allow(dead_code)] // read by the code #[tool_handler] generates
struct Adder {
    tool_router: rmcp::handler::server::router::tool::ToolRouter<Self>,
}

#[tool_router]
impl Adder {
    /// Add two integers.
    #[tool]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string() // EDIT
    }
}

#[tool_handler]
impl rmcp::ServerHandler for Adder {}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let adder = Adder { tool_router: Adder::tool_router() };
    adder.serve(rmcp::transport::stdio()).await?.waiting().await?;
    Ok(())
}'

crates=("$@")
[ ${#crates[@]} -gt 0 ] || crates=(clap-alone ours-cli rmcp-alone ours-mcp ours-default ours-http)
printf '%-14s %10s %12s %12s %12s\n' crate "clean (s)" "rebuild (s)" "debug (MiB)" "release (MiB)"
for c in "${crates[@]}"; do
  cd "$work/$c"
  cargo fetch -q
  rm -rf target
  start=$(date +%s.%N); cargo build -q; clean=$(echo "$(date +%s.%N) - $start" | bc)
  sed -i 's|// EDIT|// EDITED|' src/main.rs
  start=$(date +%s.%N); cargo build -q; rebuild=$(echo "$(date +%s.%N) - $start" | bc)
  cargo build -q --release
  debug=$(stat -c %s "target/debug/$c"); release=$(stat -c %s "target/release/$c")
  printf '%-14s %10.0f %12.1f %12.1f %12.1f\n' "$c" "$clean" "$rebuild" \
    "$(echo "$debug / 1048576" | bc -l)" "$(echo "$release / 1048576" | bc -l)"
done
