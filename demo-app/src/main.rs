//! `demo-app`: every demo tool as a subcommand (`demo-app --help`), over the SQLite database
//! named by `--db PATH` or `DEMO_APP_DB` (default `./demo-app.db`); with `--redis URL`,
//! `DEMO_APP_REDIS` or `[redis]` in the configuration, the rate limits, confirmation tokens and
//! `serve`'s MCP sessions are shared through Redis by every replica on it; with `--postgres URL`,
//! `DEMO_APP_POSTGRES` or `[postgres]`, the audit, the scheduled tasks and the data live in
//! PostgreSQL (unless `--audit-log` or `--db` names a file for their part); with `[otel]` (or
//! the `OTEL_*` variables), traces and metrics go to an OpenTelemetry collector; with
//! `DEMO_APP_MCP_STATE_KEY`, every replica seals MCP request states with that key.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use demo_app::Stores;
use demo_app::config::Config;
use tool_runtime::app::cli::clap::parser::ValueSource;
use tool_runtime::app::cli::clap::{Arg, value_parser};
use tool_runtime::app::{AppContext, SetupError};
use tool_runtime::layers::audit::JsonLinesAudit;
use tool_runtime::mcp::{ConnectedAccounts, LoopbackBrowser, RequestStateKey};
use tool_runtime::postgres::{Postgres, PostgresAudit, PostgresTaskStore, PostgresTokenStore};
use tool_runtime::redis::Redis;
use tool_runtime::registry::RegistryBuilder;
use tool_runtime::toolset::{MemoryTokens, Toolset};

/// The variable that holds the key every replica seals MCP input-required request states with
/// (at least 32 bytes); unset, each `serve` process has a random key of its own.
const STATE_KEY: &str = "DEMO_APP_MCP_STATE_KEY";

/// The configuration `configure` read and left in `cx`: each later hook takes it here, once.
fn config(cx: &AppContext) -> Arc<Config> {
    Arc::clone(cx.get::<Arc<Config>>().expect("read by configure"))
}

/// An environment variable, unless it is unset or empty.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// With Redis named (`--redis`, `DEMO_APP_REDIS`, `[redis]`), the registry's rate limits and
/// tokens kept there, and the connection left in `cx` for `serve`'s options: every command that
/// calls (a one-shot call too) charges the shared limits. One named but unreachable stops the
/// command here.
async fn shared_through_redis(
    cx: &mut AppContext,
    config: &Config,
    registry: RegistryBuilder,
) -> Result<RegistryBuilder, SetupError> {
    let given = cx.matches().get_one::<String>("redis");
    let options = config.redis.options(given.map(String::as_str), env)?;
    let Some(options) = options else {
        return Ok(registry);
    };
    let redis = Redis::connect(options).await?;
    tracing::info!(
        target: "demo_app",
        "rate limits, confirmation tokens, tasks and MCP sessions shared through Redis at {}",
        redis.location()
    );
    let registry = registry.redis(&redis);
    cx.insert(redis);
    Ok(registry)
}

/// With PostgreSQL named (`--postgres`, `DEMO_APP_POSTGRES`, `[postgres]`), its pool, also left
/// in `cx` for `serve`'s options; `None` without. One named but unreachable stops the command
/// here, naming it (never its password).
async fn postgres(cx: &mut AppContext, config: &Config) -> Result<Option<Postgres>, SetupError> {
    let given = cx.matches().get_one::<String>("postgres");
    let options = config.postgres.options(given.map(String::as_str), env)?;
    let Some(options) = options else {
        return Ok(None);
    };
    let postgres = Postgres::connect(options).await?;
    cx.insert(postgres.clone());
    Ok(Some(postgres))
}

/// Whether the user named `id` (on the command line or in its environment variable), rather
/// than leaving it to its default.
fn named(cx: &AppContext, id: &str) -> bool {
    matches!(
        cx.matches().value_source(id),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    )
}

/// The data (devices, codes, channels, tasks) and the audit: in PostgreSQL when one is named and
/// no file is named for them (`--db`, `--audit-log`), else in the files. The stores are left in
/// `cx` for the later hooks.
async fn data_and_audit(
    cx: &mut AppContext,
    config: &Config,
    registry: RegistryBuilder,
) -> Result<RegistryBuilder, SetupError> {
    let postgres = postgres(cx, config).await?;
    let matches = cx.matches();
    let stores = match &postgres {
        Some(postgres) if !named(cx, "db") => Stores::postgres(postgres).await?,
        _ => Stores::sqlite(matches.get_one::<PathBuf>("db").expect("has a default"))?,
    };
    let registry = demo_app::assistant::install(registry, config, &stores, env);
    // Tasks in PostgreSQL when it is named, so that every replica on it answers for every task
    // (over Redis's, when both are named).
    let registry = match &postgres {
        Some(postgres) => registry.task_store(PostgresTaskStore::start(postgres).await?),
        None => registry,
    };
    let registry = match (matches.get_one::<PathBuf>("audit-log"), &postgres) {
        (Some(log), _) => registry.audit(JsonLinesAudit::open(log)?),
        (None, Some(postgres)) => {
            registry.audit(PostgresAudit::start(postgres, config.postgres.audit()).await?)
        }
        (None, None) => registry,
    };
    if let Some(postgres) = &postgres {
        tracing::info!(
            target: "demo_app",
            "the audit, tasks, scheduled tasks and data kept in PostgreSQL at {}, where no file is named for them",
            postgres.location()
        );
    }
    cx.insert(stores);
    Ok(registry)
}

/// `memory` stores are not shared: each replica on one Redis keeps its own copy.
/// The stores and other MCP servers, with the accounts of those mounted per user (kept in the
/// context for `serve`'s pages).
async fn mounted(cx: &mut AppContext) -> Result<Vec<Arc<dyn Toolset>>, SetupError> {
    let config = config(cx);
    if cx.get::<Redis>().is_some() {
        warn_of_memory_stores(&config);
    }
    let accounts = connected_accounts(cx, &config).await?;
    let browser = if config.signs_a_user_in() {
        Some(Arc::new(LoopbackBrowser::bind().await?))
    } else {
        None
    };
    let toolsets = config.toolsets(cx.get::<Stores>(), accounts.as_ref(), browser.as_ref())?;
    if let Some(accounts) = accounts {
        cx.insert(accounts);
    }
    Ok(toolsets)
}

/// With `[accounts]`, the accounts callers connect for the servers mounted per user, their
/// tokens kept where the replicas share state: PostgreSQL, else Redis, else this process.
async fn connected_accounts(
    cx: &AppContext,
    config: &Config,
) -> Result<Option<ConnectedAccounts>, SetupError> {
    let Some(settings) = &config.accounts else {
        return Ok(None);
    };
    let accounts = if let Some(postgres) = cx.get::<Postgres>() {
        settings.accounts(PostgresTokenStore::start(postgres).await?)
    } else if let Some(redis) = cx.get::<Redis>() {
        settings.accounts(redis.token_store())
    } else {
        settings.accounts(MemoryTokens::default())
    };
    Ok(Some(accounts?))
}

fn warn_of_memory_stores(config: &Config) {
    let memory = config.memory_stores();
    if !memory.is_empty() {
        tracing::warn!(
            target: "demo_app",
            "the memory stores {} are not shared through Redis: each replica keeps its own copy (use kind = \"postgres\" with --postgres)",
            memory.join(", ")
        );
    }
}

/// Scopes, decided for callers whose token carries them (never the command line); and roles,
/// enforced where callers have them: a server with an auth file (an option of `serve`, which
/// `configure` does not see) or an authorization server.
fn who_may_call(
    config: &Config,
    matches: &tool_runtime::app::cli::clap::ArgMatches,
    registry: tool_runtime::registry::RegistryBuilder,
) -> tool_runtime::registry::RegistryBuilder {
    let authenticated = matches.subcommand_matches("serve").is_some_and(|m| {
        config.auth.issuer.is_some()
            || (m.contains_id("auth-file") && m.get_one::<PathBuf>("auth-file").is_some())
    });
    let registry = config.require_scopes(registry);
    if authenticated {
        config.enforce_roles(registry)
    } else {
        registry
    }
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
        .global_arg(
            Arg::new("redis")
                .long("redis")
                .env("DEMO_APP_REDIS")
                // The URL may hold a password: --help never shows the variable's value.
                .hide_env_values(true)
                .value_name("URL")
                .help("Share rate limits, confirmation tokens and MCP sessions through the Redis at this URL (redis://[:password@]host[:port][/db]); default [redis] in the configuration, else none"),
        )
        .global_arg(
            Arg::new("postgres")
                .long("postgres")
                .env("DEMO_APP_POSTGRES")
                // The URL may hold a password: --help never shows the variable's value.
                .hide_env_values(true)
                .value_name("URL")
                .help("Keep the audit, scheduled tasks and data in the PostgreSQL at this URL (postgres://user[:password]@host[:port]/db[?sslmode=require]), shared by every replica on it; --audit-log and --db keep their part in a file instead; default [postgres] in the configuration, else none"),
        )
        // The configuration, read once: limits and policy shape every command, listings
        // included (a tool the policy keeps from the command line is not in its help either);
        // the later hooks take it from the context with `config(cx)`.
        .configure(async |cx, registry| {
            let path = cx.matches().get_one::<PathBuf>("config");
            let config = Config::load(path.map(PathBuf::as_path))?;
            let registry = config.apply(registry);
            // `[otel]`, which the log's set-up (after this step) installs telemetry with.
            cx.insert(config.otel.options());
            cx.insert(Arc::new(config));
            Ok(registry)
        })
        // The database (opened once, here, for every hook after) and the audit log only when a
        // tool runs or a server starts.
        .setup(async |cx, registry| {
            let config = config(cx);
            let registry = shared_through_redis(cx, &config, registry).await?;
            let registry = who_may_call(&config, cx.matches(), registry);
            let registry = data_and_audit(cx, &config, registry).await?;
            let stores = cx.get::<Stores>().expect("opened just now").clone();
            Ok(registry.state(stores.devices))
        })
        // Stores and other MCP servers, mounted for `serve`, `mcp` and the agent.
        .toolsets(async |cx| mounted(cx).await)
        // `serve` with Redis: MCP sessions kept there, /readyz checking it; and PostgreSQL.
        // With DEMO_APP_MCP_STATE_KEY, the key every replica seals MCP request states with.
        .server_options(async |cx, options| {
            let options = match config(cx).auth.oauth(env)? {
                Some(oauth) => options.oauth(oauth),
                None => options,
            };
            let options = match env(STATE_KEY) {
                Some(key) => options.mcp_request_state_key(
                    RequestStateKey::new(key).map_err(|e| format!("{STATE_KEY}: {e}"))?,
                ),
                None => options,
            };
            let options = match cx.get::<Redis>() {
                Some(redis) => options.redis(redis),
                None => options,
            };
            let options = match cx.get::<ConnectedAccounts>() {
                Some(accounts) => options.connected_accounts(accounts.clone()),
                None => options,
            };
            Ok(match cx.get::<Postgres>() {
                Some(postgres) => options.postgres(postgres),
                None => options,
            })
        })
        .agent(async |cx, flags, registry| {
            let config = config(cx);
            Ok(config.agent.builder(&flags, registry, env)?)
        })
        // `serve` runs scheduled tasks as agent runs, delivered through the channels.
        .background(async |cx, background| {
            let config = config(cx);
            let stores = cx.get::<Stores>().expect("opened by setup");
            Ok(demo_app::assistant::scheduler(
                &config, stores, background, env,
            ))
        })
        // A runtime that fits the command: one thread for a single call, where the store's
        // queries run inline; worker threads for `serve` and `mcp`.
        .main()
}
