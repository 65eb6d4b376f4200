//! `demo-app`: every demo tool as a subcommand (`demo-app --help`), over the SQLite database
//! named by `--db PATH` or `DEMO_APP_DB` (default `./demo-app.db`).

use std::path::PathBuf;
use std::process::ExitCode;

use tool_runtime::audit::JsonLinesAudit;
use tool_runtime::cli::clap::{Arg, value_parser};

fn main() -> ExitCode {
    tool_runtime::app!()
        .registry(demo_app::app_registry_builder())
        .global_arg(
            Arg::new("db")
                .long("db")
                .env("DEMO_APP_DB")
                .value_name("PATH")
                .value_parser(value_parser!(PathBuf))
                .default_value(demo_app::DEFAULT_DB)
                .help("The SQLite database; created and migrated on first use"),
        )
        .global_arg(
            Arg::new("audit-log")
                .long("audit-log")
                .env("DEMO_APP_AUDIT")
                .value_name("PATH")
                .value_parser(value_parser!(PathBuf))
                .help("Append one JSON line per call to this file (secrets redacted)"),
        )
        .global_arg(
            Arg::new("config")
                .long("config")
                .env("DEMO_APP_CONFIG")
                .value_name("PATH")
                .value_parser(value_parser!(PathBuf))
                .help(
                    "Limits, roles and policy (default: ./demo-app.toml if present, else built in)",
                ),
        )
        // Limits, roles and policy shape every command, listings included: a tool the policy
        // keeps from the command line is not in its help either.
        .configure(|matches, registry| {
            let config = demo_app::config::Config::load(
                matches.get_one::<PathBuf>("config").map(PathBuf::as_path),
            )?;
            // Roles are enforced where callers have them: a server with an auth file.
            let authenticated = matches.subcommand_matches("serve").is_some_and(|m| {
                m.contains_id("auth-file") && m.get_one::<PathBuf>("auth-file").is_some()
            });
            Ok(config.apply(registry, authenticated))
        })
        // The database and the audit log only when a tool runs or a server starts.
        .setup(|matches, registry| {
            let config = demo_app::config::Config::load(
                matches.get_one::<PathBuf>("config").map(PathBuf::as_path),
            )?;
            let path = matches.get_one::<PathBuf>("db").expect("has a default");
            let store = demo_app::Store::open(path)?;
            let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
            let registry = demo_app::assistant::install(registry, &config, &store, env)?;
            let registry = registry.state(store);
            Ok(match matches.get_one::<PathBuf>("audit-log") {
                Some(log) => registry.audit(JsonLinesAudit::open(log)?),
                None => registry,
            })
        })
        // Stores and other MCP servers, mounted for `serve`, `mcp` and the agent.
        .providers(|matches| {
            let config = demo_app::config::Config::load(
                matches.get_one::<PathBuf>("config").map(PathBuf::as_path),
            )?;
            let db = matches.get_one::<PathBuf>("db").expect("has a default");
            let store = demo_app::Store::open(db)?;
            Ok(config.providers(Some(&store))?)
        })
        .agent(|matches, flags, registry| {
            let config = demo_app::config::Config::load(
                matches.get_one::<PathBuf>("config").map(PathBuf::as_path),
            )?;
            let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
            Ok(config.agent(flags, registry, env)?)
        })
        // `serve` runs scheduled tasks as agent runs, delivered through the channels.
        .background(|matches, background| {
            let config = demo_app::config::Config::load(
                matches.get_one::<PathBuf>("config").map(PathBuf::as_path),
            )?;
            let db = matches.get_one::<PathBuf>("db").expect("has a default");
            let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
            Ok(demo_app::assistant::scheduler(
                &config, db, background, env,
            )?)
        })
        // A runtime that fits the command: one thread for a single call, where the store's
        // queries run inline; worker threads for `serve` and `mcp`.
        .main()
}
