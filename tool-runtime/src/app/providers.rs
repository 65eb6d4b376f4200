//! The built-ins of an application that mounts providers: `providers` (how each is doing) and
//! `call TOOL --params-json JSON` (any tool by name, the mounted ones included).

use std::io::Write;
use std::sync::Arc;

use clap::ArgMatches;

use super::App;
use crate::cli::call::fail;
use crate::cli::command;

impl App {
    /// `providers`: mounts each provider on its own and shows how it went: its tool count,
    /// whether it is available, its last error (or why it could not be mounted). Exit 1 if
    /// any could not be mounted or is unavailable.
    pub(super) async fn show_providers(
        mut self,
        matches: &ArgMatches,
        json: bool,
        out: &mut dyn Write,
    ) -> u8 {
        let make = self.providers.take().expect("offered only with providers");
        let registry = match self.build_registry(matches) {
            Ok(r) => Arc::new(r),
            Err(e) => return fail(e, 1),
        };
        let providers = match make(matches) {
            Ok(p) => p,
            Err(e) => return fail(e, 1),
        };
        let mut failed = Vec::new();
        for provider in providers {
            let name = provider.name().to_owned();
            if let Err(e) = registry.mount_arc(provider).await {
                failed.push((name, e.to_string()));
            }
        }
        let statuses = registry.provider_status().await;
        let mut rows: Vec<serde_json::Value> = statuses
            .iter()
            .map(|s| serde_json::to_value(s).unwrap_or_default())
            .collect();
        rows.extend(failed.iter().map(|(name, e)| {
            serde_json::json!({"name": name, "tools": 0, "available": false, "last_error": e})
        }));
        if json {
            let _ = writeln!(out, "{}", serde_json::Value::Array(rows.clone()));
        } else {
            for row in &rows {
                let state = if row["available"] == true {
                    "available"
                } else {
                    "unavailable"
                };
                let _ = write!(
                    out,
                    "{:<24} {:<11} {:>4} tools",
                    row["name"].as_str().unwrap_or(""),
                    state,
                    row["tools"]
                );
                if let Some(e) = row["last_error"].as_str() {
                    let _ = write!(out, "  {e}");
                }
                let _ = writeln!(out);
            }
        }
        u8::from(rows.iter().any(|r| r["available"] != true))
    }

    /// `call TOOL --params-json JSON`: any tool by name, mounted ones included (the providers
    /// are mounted first), through the pipeline as a command-line call.
    pub(super) async fn call_by_name(
        self,
        matches: &ArgMatches,
        m: &ArgMatches,
        json: bool,
        out: &mut dyn Write,
    ) -> u8 {
        let name = m.get_one::<String>("tool").expect("required").clone();
        let text = m
            .get_one::<String>("params-json")
            .map_or("{}", String::as_str);
        let text = if text == "-" {
            let mut read = String::new();
            if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut read) {
                return fail(format_args!("cannot read the arguments from stdin: {e}"), 2);
            }
            read
        } else {
            text.to_owned()
        };
        let args: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v @ serde_json::Value::Object(_)) => v,
            Ok(_) => return fail("--params-json must be a JSON object", 2),
            Err(e) => return fail(format_args!("--params-json is not JSON: {e}"), 2),
        };
        let registry = match self.mounted_registry(matches).await {
            Ok(r) => r,
            Err(e) => return fail(e, 1),
        };
        let caller = crate::tool::context::Caller::new(crate::tool::context::Source::Cli)
            .confirm(m.get_flag("yes"))
            .dry_run(m.get_flag("dry-run"))
            .peer(std::sync::Arc::new(crate::cli::form::TerminalPeer));
        let finished = registry
            .call_with_tool(&name, args, caller, &crate::cli::call::Terminal)
            .await;
        crate::cli::call::report(&finished.envelope, finished.tool.as_deref(), json, out)
    }
}

/// `call`: a tool by name with JSON arguments, for tools that have no subcommand of their own
/// (those of mounted providers).
pub(super) fn call_command() -> clap::Command {
    use clap::{Arg, ArgAction};
    clap::Command::new("call")
        .about("Call any tool by name with JSON arguments, the mounted providers' included")
        .display_order(command::BUILTIN_ORDER)
        .arg(
            Arg::new("tool")
                .required(true)
                .help("The tool's name (`everything-echo`)"),
        )
        .arg(
            Arg::new("params-json")
                .long("params-json")
                .value_name("JSON")
                .help("The arguments, a JSON object (`-`: read from stdin); default {}"),
        )
        .arg(
            Arg::new("yes")
                .long("yes")
                .short('y')
                .action(ArgAction::SetTrue)
                .help("Confirm a destructive call"),
        )
        .arg(
            Arg::new("dry-run")
                .long("dry-run")
                .action(ArgAction::SetTrue)
                .help("Preview without side effects, where the tool supports it"),
        )
}
