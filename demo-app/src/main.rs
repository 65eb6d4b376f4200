//! `demo-app`: every demo tool as a subcommand (`demo-app --help`), over the SQLite database
//! named by `--db PATH` or `DEMO_APP_DB` (default `./demo-app.db`).

use std::path::PathBuf;
use std::process::ExitCode;

use demo_app::Store;
use demo_app::config::Config;
use tool_runtime::audit::JsonLinesAudit;
use tool_runtime::cli::clap::{Arg, value_parser};

/// An environment variable, unless it is unset or empty.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

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
        // The configuration, read once: limits and policy shape every command, listings
        // included (a tool the policy keeps from the command line is not in its help either);
        // the later hooks find it in the context.
        .configure(async |cx, registry| {
            let path = cx.matches().get_one::<PathBuf>("config");
            let config = Config::load(path.map(PathBuf::as_path))?;
            let registry = config.apply(registry);
            cx.insert(config);
            Ok(registry)
        })
        // The database (opened once, here, for every hook after) and the audit log only when a
        // tool runs or a server starts.
        .setup(async |cx, registry| {
            let matches = cx.matches();
            let config = cx.get::<Config>().expect("read by configure");
            // Roles are enforced where callers have them: a server with an auth file (an option
            // of `serve`, which `configure` does not see).
            let authenticated = matches.subcommand_matches("serve").is_some_and(|m| {
                m.contains_id("auth-file") && m.get_one::<PathBuf>("auth-file").is_some()
            });
            let registry = if authenticated {
                config.enforce_roles(registry)
            } else {
                registry
            };
            let store = Store::open(matches.get_one::<PathBuf>("db").expect("has a default"))?;
            let registry = demo_app::assistant::install(registry, config, &store, env);
            let registry = match matches.get_one::<PathBuf>("audit-log") {
                Some(log) => registry.audit(JsonLinesAudit::open(log)?),
                None => registry,
            };
            cx.insert(store.clone());
            Ok(registry.state(store))
        })
        // Stores and other MCP servers, mounted for `serve`, `mcp` and the agent.
        .toolsets(async |cx| {
            let config = cx.get::<Config>().expect("read by configure");
            Ok(config.toolsets(cx.get::<Store>())?)
        })
        .agent(async |cx, flags, registry| {
            let config = cx.get::<Config>().expect("read by configure");
            Ok(config.agent.builder(&flags, registry, env)?)
        })
        // `serve` runs scheduled tasks as agent runs, delivered through the channels.
        .background(async |cx, background| {
            let config = cx.get::<Config>().expect("read by configure");
            let store = cx.get::<Store>().expect("opened by setup");
            Ok(demo_app::assistant::scheduler(
                config, store, background, env,
            ))
        })
        // A runtime that fits the command: one thread for a single call, where the store's
        // queries run inline; worker threads for `serve` and `mcp`.
        .main()
}
