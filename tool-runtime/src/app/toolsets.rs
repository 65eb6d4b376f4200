//! The built-ins of an application that mounts toolsets: `toolsets` (how each is doing) and
//! `call TOOL --params-json JSON` (any tool by name, the mounted ones included).

use std::io::Write;
use std::sync::Arc;

use clap::ArgMatches;

use super::{App, AppContext};
use crate::app::cli::command;
use crate::app::cli::fail;
use crate::app::cli::flags::PARAMS_JSON;
use crate::app::cli::params_json;

impl App {
    /// `toolsets`: mounts each toolset on its own and shows how it went: its tool count,
    /// whether it is available, its last error (or why it could not be mounted). Exit 1 if
    /// any could not be mounted or is unavailable.
    pub(super) async fn show_toolsets(
        mut self,
        cx: &mut AppContext,
        json: bool,
        out: &mut dyn Write,
    ) -> u8 {
        let make = self.toolsets.take().expect("offered only with toolsets");
        let registry = match self.build_registry(cx).await {
            Ok(r) => Arc::new(r),
            Err(e) => return fail(e, 1),
        };
        let toolsets = match make(cx).await {
            Ok(p) => p,
            Err(e) => return fail(e, 1),
        };
        let mut failed = Vec::new();
        for toolset in toolsets {
            let name = toolset.name().to_owned();
            if let Err(e) = registry.mount(toolset).await {
                failed.push((name, e.to_string()));
            }
        }
        let statuses = registry.toolset_status().await;
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

    /// `call TOOL --params-json JSON`: any tool by name, mounted ones included (the toolsets
    /// are mounted first), through the pipeline as a command-line call.
    pub(super) async fn call_by_name(
        mut self,
        cx: &mut AppContext,
        m: &ArgMatches,
        json: bool,
        out: &mut dyn Write,
    ) -> u8 {
        let typed = m.get_one::<String>("tool").expect("required");
        let text = m.get_one::<String>(PARAMS_JSON);
        let args = match params_json(text.map(String::as_str), &mut std::io::stdin().lock()) {
            Ok(a) => serde_json::Value::Object(a),
            Err(e) => return fail(&e.0, 2),
        };
        let registry = match self.mounted_registry(cx).await {
            Ok(r) => r,
            Err(e) => return fail(e, 1),
        };
        // A name no tool has goes to the pipeline as typed, which answers `unknown_tool` with
        // its suggestions.
        let name = command::find_tool(&registry, typed, None)
            .map_or_else(|| typed.clone(), |t| t.name().to_owned());
        crate::app::cli::call::call(&registry, &name, args, m, json, out).await
    }
}

impl App {
    /// `login NAME`: signs the user in now for the toolset `NAME` (a mounted server reached as
    /// them), which keeps the token for the commands after.
    pub(super) async fn log_in(
        mut self,
        cx: &mut AppContext,
        m: &ArgMatches,
        out: &mut dyn Write,
    ) -> u8 {
        let name = m.get_one::<String>("toolset").expect("required");
        let make = self.toolsets.take().expect("offered only with toolsets");
        if let Err(e) = self.build_registry(cx).await {
            return fail(e, 1);
        }
        let toolsets = match make(cx).await {
            Ok(t) => t,
            Err(e) => return fail(e, 1),
        };
        let Some(toolset) = toolsets.iter().find(|t| t.name() == name) else {
            let names: Vec<&str> = toolsets.iter().map(|t| t.name()).collect();
            return if names.is_empty() {
                fail(format_args!("no toolset `{name}`: none is configured"), 2)
            } else {
                fail(
                    format_args!("no toolset `{name}`: write one of {}", names.join(", ")),
                    2,
                )
            };
        };
        let Some(signing_in) = toolset.sign_in() else {
            return fail(
                format_args!(
                    "toolset `{name}` signs no user in: only a server reached as its user does"
                ),
                2,
            );
        };
        match signing_in.await {
            Ok(said) => {
                let _ = writeln!(out, "{said}");
                0
            }
            Err(e) => fail(e.message(), 1),
        }
    }
}

/// `login NAME`: a user's sign-in for a mounted server reached as them.
pub(super) fn login_command() -> clap::Command {
    use clap::Arg;
    clap::Command::new("login")
        .about("Sign in through the browser for a mounted server reached as you; the token is kept for the next commands")
        .display_order(command::BUILTIN_ORDER)
        .arg(
            Arg::new("toolset")
                .required(true)
                .help("The mounted server's name"),
        )
}

/// `call`: a tool by name with JSON arguments, for tools that have no subcommand of their own
/// (those of mounted toolsets).
pub(super) fn call_command() -> clap::Command {
    use clap::{Arg, ArgAction};
    clap::Command::new("call")
        .about("Call any tool by name with JSON arguments, the mounted toolsets' included")
        .display_order(command::BUILTIN_ORDER)
        .arg(
            Arg::new("tool")
                .required(true)
                .help("The tool's name (`everything-echo`)"),
        )
        .arg(
            Arg::new(PARAMS_JSON)
                .long("params-json")
                .value_name("JSON")
                .help("The arguments, a JSON object (`-`: read from stdin); default {}"),
        )
        .arg(
            Arg::new(command::YES)
                .long("yes")
                .short('y')
                .action(ArgAction::SetTrue)
                .help("Confirm a destructive call"),
        )
        .arg(
            Arg::new(command::DRY_RUN)
                .long("dry-run")
                .action(ArgAction::SetTrue)
                .help("Preview without side effects, where the tool supports it"),
        )
}
