//! `demo-app.toml`: limits, roles per tool and policy rules, applied to the registry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use serde::Deserialize;
use tool_runtime::agent::{
    Agent, AgentBuilder, Api, Budgets, Model, ModelError, Tiers, default_model, detect_api,
    parse_reference,
};
use tool_runtime::app::AgentFlags;
use tool_runtime::limits::Rate;
use tool_runtime::policy::{AllowTools, DenyDestructive, RequireRoles, ToolFilter};
use tool_runtime::registry::RegistryBuilder;
use tool_runtime::{Registry, Source};

/// The agent's default system prompt.
pub const SYSTEM: &str = "You manage the paired devices of a small home network with the tools you are given. Act, then answer in one or two sentences.";

/// The embedded default configuration (the repository's `demo-app/demo-app.toml`). The binary
/// uses [`Config::embedded`], the same values built without parsing (a test keeps the two equal).
pub const DEFAULT: &str = include_str!("../demo-app.toml");

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Per tool: `rate` and `concurrency`.
    #[serde(default)]
    pub limits: BTreeMap<String, Limits>,
    /// Per tool: the roles a caller needs (one of them).
    #[serde(default)]
    pub roles: BTreeMap<String, Vec<String>>,
    /// Policy rules.
    #[serde(default)]
    pub policy: PolicyRules,
    /// The agent (`demo-app agent`, `chat`, `POST /agent`).
    #[serde(default)]
    pub agent: AgentConfig,
    /// `[[stores]]`: key-value stores mounted as `NAME-write`, `NAME-read`, ...
    #[serde(default)]
    pub stores: Vec<StoreConfig>,
    /// `[[mcp_servers]]`: other MCP servers whose tools are mounted as `NAME-TOOL`.
    #[serde(default)]
    pub mcp_servers: Vec<McpServerConfig>,
    /// `[web]`: what `web_fetch` and `web_search` may reach.
    #[serde(default)]
    pub web: WebConfig,
    /// `[host]`: the programs `host_execute` may run.
    #[serde(default)]
    pub host: HostConfig,
    /// `[channels]`: what channels may run to deliver a message.
    #[serde(default)]
    pub channels: ChannelsConfig,
    /// `[scheduler]`: whether `serve` runs scheduled tasks, and how often it looks.
    #[serde(default)]
    pub scheduler: SchedulerConfig,
}

/// `[web]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebConfig {
    /// Hosts exempt from the private-address rule (an intranet, a test server on loopback).
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// Hosts never requested, with their subdomains.
    #[serde(default)]
    pub deny_hosts: Vec<String>,
    /// How long a request may take (default "20s").
    pub timeout: Option<String>,
    /// The largest response read, in bytes (default 5 MiB).
    pub max_bytes: Option<usize>,
    /// The environment variable holding the Brave Search API key (default `BRAVE_API_KEY`).
    pub brave_api_key_env: Option<String>,
    /// Brave Search's endpoint.
    pub brave_url: Option<String>,
    /// DuckDuckGo's HTML results page, used without a Brave key.
    pub duckduckgo_url: Option<String>,
}

/// `[host]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// How long a command may run when the call gives no timeout (default "30s").
    pub default_timeout: Option<String>,
    /// `[host.bridges.NAME]`: where commands may run, each with its own programs.
    #[serde(default)]
    pub bridges: BTreeMap<String, BridgeConfig>,
}

/// `[host.bridges.NAME]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeConfig {
    /// The programs that may run, by name (looked up on `PATH`).
    pub allowed_commands: Vec<String>,
    /// The directory they run in (default: the system's temporary directory).
    pub working_dir: Option<PathBuf>,
}

/// `[channels]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelsConfig {
    /// The programs a channel's command may run (a webhook channel needs none).
    #[serde(default)]
    pub allowed_commands: Vec<String>,
}

/// `[scheduler]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerConfig {
    /// Whether `serve` runs due tasks (default `true`; runs need an agent).
    pub enabled: Option<bool>,
    /// How often it looks for due tasks (default "1s").
    pub tick: Option<String>,
}

/// The longest store or server name: its tools' names (`NAME-TOOL`) must fit in 64 characters.
pub const MAX_COMPONENT: usize = 32;

/// A `[[stores]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// The store's name, the prefix of its tools.
    pub name: String,
    /// `memory` (gone when the process ends) or `sqlite` (in the demo's database).
    pub kind: String,
}

/// A `[[mcp_servers]]` entry: `command` (stdio) or `url` (streamable HTTP).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The server's name, the prefix of its tools.
    pub name: String,
    /// A stdio server's command.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Its environment, besides this process's.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Its working directory.
    pub cwd: Option<PathBuf>,
    /// An HTTP server's URL (`http://` or `https://`).
    pub url: Option<String>,
    /// Headers sent to an HTTP server.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The environment variable holding an HTTP server's bearer token.
    pub bearer_token_env: Option<String>,
    /// How long connecting may take (default "30s").
    pub timeout: Option<String>,
    /// `false` leaves the server out (default `true`).
    pub enabled: Option<bool>,
}

/// `[agent]`: which model, how runs are bounded. Keys and base URLs come from the environment
/// variables the providers' SDKs read (`tool_runtime::agent::Api::key_vars` and
/// `base_url_var`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// `openai`, `openai-responses`, `anthropic`, `gemini` or `openai-compatible`; default: the
    /// first provider with a key in the environment.
    pub provider: Option<String>,
    /// The model; default: the provider's current general model.
    pub model: Option<String>,
    /// Overrides the base URL from the environment.
    pub base_url: Option<String>,
    /// The environment variable holding the key, if not the provider's usual one.
    pub api_key_env: Option<String>,
    /// The system prompt.
    pub system: Option<String>,
    /// Stream replies (Chat Completions and OpenAI-compatible servers).
    pub stream: Option<bool>,
    /// Tool calls of one reply run at once.
    pub parallel: Option<usize>,
    /// Named tiers, `name = "provider:model"`; with two or more the model may switch.
    #[serde(default)]
    pub tiers: BTreeMap<String, String>,
    /// The tier runs start on (default: the first).
    pub default_tier: Option<String>,
    /// Where no one can be asked (no terminal, the server), run destructive calls the policy
    /// lets through without asking. Off by default: they are not run, and the model is told
    /// they need a confirmation no one can give (`confirmation_required`).
    pub auto_confirm: Option<bool>,
    /// Budgets of every run.
    #[serde(default)]
    pub budgets: AgentBudgets,
}

/// `[agent.budgets]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentBudgets {
    /// Model turns per run.
    pub max_turns: Option<u32>,
    /// Tool calls per run.
    pub max_tool_calls: Option<u32>,
    /// Tokens per run.
    pub max_tokens: Option<u64>,
    /// Wall-clock time per run: `"2m"`, `"90s"`.
    pub deadline: Option<String>,
}

/// One tool's limits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// `"30/min"`.
    pub rate: Option<String>,
    /// Calls at once.
    pub concurrency: Option<u32>,
}

/// `[policy]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyRules {
    /// Sources refused every destructive tool.
    #[serde(default)]
    pub deny_destructive_for: Vec<String>,
    /// Per source, the only tools it may call.
    #[serde(default)]
    pub allow: BTreeMap<String, Vec<String>>,
    /// `[[policy.filter]]`: which tools a caller sees, by name, glob or toolset.
    #[serde(default)]
    pub filter: Vec<FilterConfig>,
}

/// A `[[policy.filter]]` rule: for everyone, or for callers of one `source`, `role` or
/// `principal`; `allow` and `deny` are tool names, globs (`docs-*`) or `toolset:NAME`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilterConfig {
    /// `cli`, `http`, `mcp` or `agent`.
    pub source: Option<String>,
    /// A role callers have.
    pub role: Option<String>,
    /// A principal (a token's holder, an agent run as its own principal).
    pub principal: Option<String>,
    /// The only tools these callers may see and call (none: no restriction).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Tools these callers may not see or call.
    #[serde(default)]
    pub deny: Vec<String>,
}

fn source(name: &str) -> Result<Source, String> {
    match name {
        "cli" => Ok(Source::Cli),
        "http" => Ok(Source::Http),
        "mcp" => Ok(Source::Mcp),
        "agent" => Ok(Source::Agent),
        other => Err(format!(
            "unknown source `{other}`; the sources are cli, http, mcp, agent"
        )),
    }
}

impl Config {
    /// Parses a configuration, checking every value.
    pub fn parse(text: &str) -> Result<Self, String> {
        let config: Config = toml::from_str(text).map_err(|e| e.to_string())?;
        for (tool, limits) in &config.limits {
            if let Some(rate) = &limits.rate
                && Rate::parse(rate).is_none()
            {
                return Err(format!(
                    "limits.{tool}.rate = \"{rate}\": write calls per period, such as \"30/min\""
                ));
            }
        }
        if let Some(p) = &config.agent.provider
            && Api::from_name(p).is_none()
        {
            return Err(format!(
                "agent.provider = \"{p}\": write one of {}",
                Api::ALL.map(Api::name).join(", ")
            ));
        }
        for (name, reference) in &config.agent.tiers {
            parse_reference(reference).map_err(|e| format!("agent.tiers.{name}: {e}"))?;
        }
        if let Some(d) = &config.agent.budgets.deadline {
            humantime::parse_duration(d).map_err(|e| {
                format!("agent.budgets.deadline = \"{d}\": {e}; write a duration such as \"2m\"")
            })?;
        }
        for name in config
            .policy
            .deny_destructive_for
            .iter()
            .chain(config.policy.allow.keys())
        {
            source(name)?;
        }
        for (i, rule) in config.policy.filter.iter().enumerate() {
            let named = [&rule.source, &rule.role, &rule.principal]
                .iter()
                .filter(|w| w.is_some())
                .count();
            if named > 1 {
                return Err(format!(
                    "policy.filter[{i}]: name at most one of `source`, `role` and `principal`"
                ));
            }
            if let Some(s) = &rule.source {
                source(s).map_err(|e| format!("policy.filter[{i}].source: {e}"))?;
            }
        }
        config.check_components()?;
        config.check_assistant()?;
        Ok(config)
    }

    /// Checks `[[stores]]` and `[[mcp_servers]]`: each name a valid tool-name prefix short
    /// enough to leave room for its tools' names, no name twice, a known store kind, exactly one
    /// of `command` and `url`, an `http(s)://` URL, a duration for `timeout`.
    fn check_components(&self) -> Result<(), String> {
        let mut seen = std::collections::BTreeSet::new();
        let stores = self.stores.iter().map(|s| ("stores", &s.name));
        let servers = self.mcp_servers.iter().map(|s| ("mcp_servers", &s.name));
        for (table, name) in stores.chain(servers) {
            let at = format!("[[{table}]] name = \"{name}\"");
            if !tool_runtime::registry::is_valid_name(name) || name.len() > MAX_COMPONENT {
                return Err(format!(
                    "{at}: a name is letters, digits, `_` and `-`, starting with a letter or `_`, at most {MAX_COMPONENT} characters (its tools are named `{name}-TOOL`, within 64)"
                ));
            }
            if !seen.insert(name.as_str()) {
                return Err(format!("{at}: two stores or servers have this name"));
            }
        }
        for store in &self.stores {
            if !matches!(store.kind.as_str(), "memory" | "sqlite") {
                return Err(format!(
                    "[[stores]] name = \"{}\": kind = \"{}\"; write \"memory\" or \"sqlite\"",
                    store.name, store.kind
                ));
            }
        }
        for server in &self.mcp_servers {
            let at = format!("[[mcp_servers]] name = \"{}\"", server.name);
            match (&server.command, &server.url) {
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "{at}: give `command` (stdio) or `url` (HTTP), not both"
                    ));
                }
                (None, None) => {
                    return Err(format!("{at}: give `command` (stdio) or `url` (HTTP)"));
                }
                (None, Some(url))
                    if !(url.starts_with("http://") || url.starts_with("https://")) =>
                {
                    return Err(format!(
                        "{at}: url = \"{url}\" is not an http:// or https:// URL"
                    ));
                }
                _ => {}
            }
            if let Some(t) = &server.timeout {
                humantime::parse_duration(t).map_err(|e| {
                    format!("{at}: timeout = \"{t}\": {e}; write a duration such as \"30s\"")
                })?;
            }
        }
        Ok(())
    }

    /// Checks `[web]`, `[host]` and `[scheduler]`: durations, and names a tool can be given.
    fn check_assistant(&self) -> Result<(), String> {
        let durations = [
            ("web.timeout", &self.web.timeout),
            ("host.default_timeout", &self.host.default_timeout),
            ("scheduler.tick", &self.scheduler.tick),
        ];
        for (key, value) in durations {
            if let Some(d) = value {
                let parsed = humantime::parse_duration(d).map_err(|e| {
                    format!("{key} = \"{d}\": {e}; write a duration such as \"30s\"")
                })?;
                if parsed.is_zero() {
                    return Err(format!("{key} = \"{d}\": write a duration above zero"));
                }
            }
        }
        for name in self.host.bridges.keys() {
            if !tool_runtime::registry::is_valid_name(name) {
                return Err(format!(
                    "[host.bridges.{name}]: a bridge name is letters, digits, `_` and `-`"
                ));
            }
        }
        let programs = self
            .host
            .bridges
            .iter()
            .flat_map(|(name, b)| {
                b.allowed_commands
                    .iter()
                    .map(move |p| (format!("host.bridges.{name}"), p))
            })
            .chain(
                self.channels
                    .allowed_commands
                    .iter()
                    .map(|p| ("channels".to_owned(), p)),
            );
        for (table, program) in programs {
            if program.is_empty() || program.contains(['/', ' ']) {
                return Err(format!(
                    "[{table}] allowed_commands: `{program}` is not a program name; write names such as \"ls\", looked up on PATH"
                ));
            }
        }
        Ok(())
    }

    /// The stores and enabled MCP servers as toolsets to mount; `store` holds the `sqlite`
    /// stores' data.
    pub fn toolsets(
        &self,
        store: Option<&crate::Store>,
    ) -> Result<Vec<std::sync::Arc<dyn tool_runtime::toolset::Toolset>>, String> {
        use std::sync::Arc;
        use tool_runtime::mcp::RemoteServer;
        use tool_runtime::toolset::{MemoryStore, Store, Toolset};
        let mut out: Vec<Arc<dyn Toolset>> = Vec::new();
        for s in &self.stores {
            out.push(match (s.kind.as_str(), store) {
                ("memory", _) => Arc::new(Store::new(&s.name, MemoryStore::default())),
                (_, Some(db)) => Arc::new(Store::new(
                    &s.name,
                    crate::store::SqliteKv::new(db.clone(), &s.name),
                )),
                (_, None) => {
                    return Err(format!(
                        "[[stores]] name = \"{}\": a sqlite store needs the database",
                        s.name
                    ));
                }
            });
        }
        for m in self.mcp_servers.iter().filter(|m| m.enabled != Some(false)) {
            let mut server = match (&m.command, &m.url) {
                (Some(command), _) => {
                    let mut server = RemoteServer::stdio(&m.name, command).args(m.args.clone());
                    for (k, v) in &m.env {
                        server = server.env(k, v);
                    }
                    if let Some(dir) = &m.cwd {
                        server = server.cwd(dir);
                    }
                    server
                }
                (None, Some(url)) => {
                    let mut server = RemoteServer::http(&m.name, url);
                    for (k, v) in &m.headers {
                        server = server.header(k, v);
                    }
                    if let Some(var) = &m.bearer_token_env {
                        server = server
                            .bearer_env(var)
                            .map_err(|e| format!("[[mcp_servers]] name = \"{}\": {e}", m.name))?;
                    }
                    server
                }
                (None, None) => unreachable!("checked when parsed"),
            };
            if let Some(t) = &m.timeout {
                server = server
                    .connect_timeout(humantime::parse_duration(t).map_err(|e| e.to_string())?);
            }
            out.push(Arc::new(server));
        }
        Ok(out)
    }

    /// The configuration to use: `path` if given (it must exist), else `./demo-app.toml` if it
    /// exists, else the embedded default.
    pub fn load(path: Option<&Path>) -> Result<Self, String> {
        let (text, from) = match path {
            Some(p) => (
                std::fs::read_to_string(p)
                    .map_err(|e| format!("cannot read {}: {e}", p.display()))?,
                p.display().to_string(),
            ),
            None => match std::fs::read_to_string("demo-app.toml") {
                Ok(text) => (text, "./demo-app.toml".to_owned()),
                // Built, not parsed: a command-line call starts faster without the TOML parser.
                Err(_) => return Ok(Self::embedded()),
            },
        };
        Self::parse(&text).map_err(|e| format!("configuration ({from}): {e}"))
    }

    /// [`DEFAULT`]'s values.
    #[must_use]
    pub fn embedded() -> Self {
        Self {
            limits: BTreeMap::from([(
                "device_add".to_owned(),
                Limits {
                    rate: Some("30/min".to_owned()),
                    concurrency: None,
                },
            )]),
            roles: BTreeMap::from([("device_revoke".to_owned(), vec!["admin".to_owned()])]),
            policy: PolicyRules {
                deny_destructive_for: vec!["agent".to_owned()],
                allow: BTreeMap::new(),
                filter: Vec::new(),
            },
            agent: AgentConfig {
                system: Some(SYSTEM.to_owned()),
                budgets: AgentBudgets {
                    max_turns: Some(12),
                    max_tool_calls: Some(24),
                    max_tokens: None,
                    deadline: Some("2m".to_owned()),
                },
                ..AgentConfig::default()
            },
            stores: Vec::new(),
            mcp_servers: Vec::new(),
            web: WebConfig::default(),
            host: HostConfig {
                default_timeout: Some("30s".to_owned()),
                bridges: BTreeMap::new(),
            },
            channels: ChannelsConfig::default(),
            scheduler: SchedulerConfig {
                enabled: Some(true),
                tick: Some("1s".to_owned()),
            },
        }
    }

    /// The agent these settings describe over `registry`, with `flags` (`--provider`,
    /// `--model`) over the file, and keys and base URLs read through `env`.
    pub fn agent(
        &self,
        flags: &AgentFlags,
        registry: Arc<Registry>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<AgentBuilder, ModelError> {
        let a = &self.agent;
        let api = match (
            flags.provider,
            a.provider.as_deref().and_then(Api::from_name),
        ) {
            (Some(api), _) | (None, Some(api)) => api,
            (None, None) => detect_api(&env)?,
        };
        let name = match (&flags.model, &a.model) {
            (Some(m), _) => m.clone(),
            // The configured model belongs to the configured provider.
            (None, Some(m)) if flags.provider.is_none() => m.clone(),
            _ => default_model(api)?.to_owned(),
        };
        let mut main = Model::from_lookup(api, &name, a.api_key_env.as_deref(), &env)?
            .with_stream(a.stream.unwrap_or(false));
        if let Some(url) = &a.base_url {
            main = main.with_base_url(url.clone());
        }
        let tiers = if a.tiers.is_empty() {
            Tiers::new("default", main)
        } else {
            let first = a
                .default_tier
                .clone()
                .unwrap_or_else(|| a.tiers.keys().next().cloned().unwrap_or_default());
            let mut tiers = Tiers::new(first.clone(), main);
            for (tier, reference) in &a.tiers {
                if *tier == first && (flags.provider.is_some() || flags.model.is_some()) {
                    continue;
                }
                let (api, model) = parse_reference(reference)?;
                tiers = tiers.tier(tier.clone(), Model::from_lookup(api, model, None, &env)?);
            }
            tiers.default_tier(&first)
        };
        let b = &a.budgets;
        let mut budgets = Budgets::default();
        if let Some(n) = b.max_turns {
            budgets = budgets.max_turns(n);
        }
        if let Some(n) = b.max_tool_calls {
            budgets = budgets.max_tool_calls(n);
        }
        budgets = budgets.max_tokens(b.max_tokens).deadline(
            b.deadline
                .as_deref()
                .and_then(|d| humantime::parse_duration(d).ok()),
        );
        let mut builder = Agent::builder(registry, tiers)
            .budgets(budgets)
            .system(a.system.clone().unwrap_or_default());
        if let Some(n) = a.parallel {
            builder = builder.parallel(n);
        }
        if a.auto_confirm == Some(true) {
            builder = builder.confirm(|_| async { true });
        }
        Ok(builder)
    }

    /// Applies limits and policy rules; roles (with `RequireRoles`) only when `enforce_roles`
    /// (the server authenticates callers).
    #[must_use]
    pub fn apply(&self, mut builder: RegistryBuilder, enforce_roles: bool) -> RegistryBuilder {
        for (tool, limits) in &self.limits {
            if let Some(rate) = limits.rate.as_deref().and_then(Rate::parse) {
                builder = builder.rate_limit(tool.clone(), Some(rate));
            }
            if let Some(n) = limits.concurrency {
                builder = builder.concurrency_limit(tool.clone(), Some(n));
            }
        }
        let deny: Vec<Source> = self
            .policy
            .deny_destructive_for
            .iter()
            .filter_map(|s| source(s).ok())
            .collect();
        if !deny.is_empty() {
            builder = builder.policy(DenyDestructive::for_sources(deny));
        }
        if !self.policy.allow.is_empty() {
            let mut allow = AllowTools::new();
            for (name, tools) in &self.policy.allow {
                if let Ok(s) = source(name) {
                    allow = allow.allow(s, tools.iter().cloned());
                }
            }
            builder = builder.policy(allow);
        }
        if !self.policy.filter.is_empty() {
            let mut filter = ToolFilter::new();
            for rule in &self.policy.filter {
                let (allow, deny) = (rule.allow.clone(), rule.deny.clone());
                filter = match (&rule.source, &rule.role, &rule.principal) {
                    (Some(s), _, _) => match source(s) {
                        Ok(s) => filter.for_source(s, allow, deny),
                        Err(_) => filter,
                    },
                    (_, Some(role), _) => filter.for_role(role.clone(), allow, deny),
                    (_, _, Some(p)) => filter.for_principal(p.clone(), allow, deny),
                    _ => filter.for_everyone(allow, deny),
                };
            }
            builder = builder.policy(filter);
        }
        if enforce_roles {
            builder = self.enforce_roles(builder);
        }
        builder
    }

    /// Enforces `[roles]` (with `RequireRoles`): for a server that authenticates its callers,
    /// who then carry roles.
    #[must_use]
    pub fn enforce_roles(&self, mut builder: RegistryBuilder) -> RegistryBuilder {
        for (tool, roles) in &self.roles {
            builder = builder.tool_roles(tool.clone(), roles.iter().cloned());
        }
        builder.policy(RequireRoles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_default_parses_to_what_the_binary_builds() {
        let c = Config::parse(DEFAULT).unwrap();
        assert_eq!(c, Config::embedded());
        assert_eq!(c.limits["device_add"].rate.as_deref(), Some("30/min"));
        assert_eq!(c.roles["device_revoke"], ["admin"]);
        assert_eq!(c.policy.deny_destructive_for, ["agent"]);
    }

    #[test]
    fn mistakes_are_named() {
        assert!(
            Config::parse("[limits.device_add]\nrate = \"lots\"\n")
                .unwrap_err()
                .contains("limits.device_add.rate")
        );
        assert!(
            Config::parse("[policy]\ndeny_destructive_for = [\"robots\"]\n")
                .unwrap_err()
                .contains("unknown source")
        );
        assert!(Config::parse("[limit]\n").is_err());
        let mistakes = [
            ("[web]\ntimeout = \"soon\"\n", "web.timeout"),
            ("[scheduler]\ntick = \"0s\"\n", "scheduler.tick"),
            ("[host]\ndefault_timeout = \"x\"\n", "host.default_timeout"),
            (
                "[host.bridges.local]\nallowed_commands = [\"/bin/ls\"]\n",
                "[host.bridges.local]",
            ),
            (
                "[channels]\nallowed_commands = [\"rm -rf\"]\n",
                "[channels]",
            ),
            ("[host.bridges.local]\n", "allowed_commands"),
        ];
        for (text, names) in mistakes {
            let e = Config::parse(text).unwrap_err();
            assert!(e.contains(names), "{text}: {e}");
        }
    }
}
