//! `demo-app.toml`: limits, roles and policy rules for the registry, the agent, the stores and
//! MCP servers mounted beside the demo's tools, and what the assistant's tools may reach.
//!
//! Read once, with serde, into typed values: rates and durations in the grammar `#[tool]`
//! attributes use, sources, names and programs checked as they are read, a misspelt key
//! refused. An error names the file, the line, the key and what to write instead.

mod accounts;
mod agent;
mod assistant;
mod auth;
mod de;
mod otel;
mod policy;
mod postgres;
mod redis;
mod tasks;
mod toolsets;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use toml::de::{DeTable, DeValue};
use tool_runtime::registry::RegistryBuilder;
use tool_runtime::toolset::Toolset;

pub use accounts::{AccountsConfig, ActsAs, McpOAuthConfig};
pub use agent::{AgentBudgets, AgentConfig, ModelRef};
pub use assistant::{BridgeConfig, ChannelsConfig, HostConfig, SchedulerConfig, WebConfig};
pub use auth::{AuthConfig, IntrospectionConfig};
pub use otel::{Inbound, OtelConfig};
pub use policy::{FilterConfig, Limits, PolicyRules, SourceName};
pub use postgres::PostgresConfig;
pub use redis::RedisConfig;
pub use tasks::TasksConfig;
pub use toolsets::{McpServerConfig, StoreConfig, StoreKind};

/// The configuration used when there is no file: the repository's `demo-app/demo-app.toml`,
/// which documents every key.
pub const DEFAULT: &str = include_str!("../../demo-app.toml");

/// The whole file. [`Default`] is an empty file's values; the demo's defaults are [`DEFAULT`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Per tool: `rate` and `concurrency`.
    pub limits: BTreeMap<String, Limits>,
    /// Per tool: the roles a caller needs (one of them).
    pub roles: BTreeMap<String, Vec<String>>,
    /// Per tool: the OAuth scopes a caller authenticated by a token needs (all of them).
    pub scopes: BTreeMap<String, Vec<String>>,
    /// `[auth]`: the authorization server whose access tokens `serve` accepts.
    pub auth: AuthConfig,
    /// Policy rules.
    pub policy: PolicyRules,
    /// The agent (`demo-app agent`, `chat`, `POST /agent`).
    pub agent: AgentConfig,
    /// `[[stores]]`: key-value stores mounted as `NAME-write`, `NAME-read`, ...
    pub stores: Vec<StoreConfig>,
    /// `[[mcp_servers]]`: other MCP servers whose tools are mounted as `NAME-TOOL`.
    pub mcp_servers: Vec<McpServerConfig>,
    /// `[accounts]`: the accounts callers connect for the servers mounted per user.
    pub accounts: Option<AccountsConfig>,
    /// `[web]`: what `web_fetch` and `web_search` may reach.
    pub web: WebConfig,
    /// `[host]`: the programs `host_execute` may run.
    pub host: HostConfig,
    /// `[channels]`: what channels may run to deliver a message.
    pub channels: ChannelsConfig,
    /// `[scheduler]`: whether `serve` runs scheduled tasks, and how often it looks.
    pub scheduler: SchedulerConfig,
    /// `[redis]`: the state several replicas share, when the command line does not name it.
    pub redis: RedisConfig,
    /// `[postgres]`: where the audit, the tasks and the data of several replicas live, when the
    /// command line does not name it.
    pub postgres: PostgresConfig,
    /// `[otel]`: traces and metrics through OpenTelemetry, when the `OTEL_*` variables do not
    /// say.
    pub otel: OtelConfig,
    /// `[tasks]`: how long calls run as tasks are kept, and the lease on a running one.
    pub tasks: TasksConfig,
}

impl Config {
    /// Parses a configuration, checking every value; an error starts with the line and the
    /// key it is at.
    pub fn parse(text: &str) -> Result<Self, String> {
        let root = DeTable::parse(text).map_err(|e| located(text, &e, None))?;
        // The tree is kept to name the key an error is at.
        let config = Self::deserialize(toml::de::Deserializer::from(root.clone()))
            .map_err(|e| located(text, &e, Some(root.get_ref())))?;
        config.check()?;
        Ok(config)
    }

    /// What one value cannot tell: a filter names one kind of caller, a server is reached one
    /// way, no two stores or servers share a name.
    fn check(&self) -> Result<(), String> {
        for (i, rule) in self.policy.filter.iter().enumerate() {
            let named = [
                rule.source.is_some(),
                rule.role.is_some(),
                rule.principal.is_some(),
            ];
            if named.into_iter().filter(|named| *named).count() > 1 {
                return Err(format!(
                    "policy.filter[{i}]: name at most one of `source`, `role` and `principal`"
                ));
            }
        }
        if let Some((server, mistake)) =
            (self.mcp_servers.iter()).find_map(|server| Some((server, server.mistake()?)))
        {
            return Err(format!(
                "[[mcp_servers]] name = \"{}\": {mistake}",
                server.name
            ));
        }
        if let Some(tier) = &self.agent.default_tier
            && !self.agent.tiers.contains_key(tier)
        {
            let tiers: Vec<&str> = self.agent.tiers.keys().map(String::as_str).collect();
            return Err(if tiers.is_empty() {
                format!(
                    "agent.default_tier: \"{tier}\" names no tier; add [agent.tiers] or remove it"
                )
            } else {
                format!(
                    "agent.default_tier: \"{tier}\" is not a tier; write one of {}",
                    tiers.join(", ")
                )
            });
        }
        if let Some(mistake) = self.auth.mistake() {
            return Err(format!("[auth]: {mistake}"));
        }
        if let Some(mistake) = self.redis.mistake() {
            return Err(format!("[redis]: {mistake}"));
        }
        if let Some(mistake) = self.postgres.mistake() {
            return Err(format!("[postgres]: {mistake}"));
        }
        let mut seen = BTreeSet::new();
        let stores = self.stores.iter().map(|s| ("stores", &s.name));
        let servers = self.mcp_servers.iter().map(|s| ("mcp_servers", &s.name));
        match stores.chain(servers).find(|(_, name)| !seen.insert(*name)) {
            Some((table, name)) => Err(format!(
                "[[{table}]] name = \"{name}\": two stores or servers have this name"
            )),
            None => Ok(()),
        }
    }

    /// The configuration to use: `path` if given (it must exist), else `./demo-app.toml` if it
    /// exists, else [`DEFAULT`].
    pub fn load(path: Option<&Path>) -> Result<Self, String> {
        let local = Path::new("demo-app.toml");
        let path = path.or_else(|| local.exists().then_some(local));
        let Some(path) = path else {
            return Self::parse(DEFAULT).map_err(|e| format!("configuration (built in): {e}"));
        };
        let shown = if path == local {
            "./demo-app.toml".into()
        } else {
            path.display().to_string()
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("configuration ({shown}): cannot read it: {e}"))?;
        Self::parse(&text).map_err(|e| format!("configuration ({shown}): {e}"))
    }

    /// Applies `[limits]`, `[policy]` and `[tasks]` to `builder`: what every command, listings included,
    /// is shaped by.
    #[must_use]
    pub fn apply(&self, builder: RegistryBuilder) -> RegistryBuilder {
        self.tasks
            .apply(policy::apply(builder, &self.limits, &self.policy))
    }

    /// Enforces `[roles]` (with `RequireRoles`): for a server that authenticates its callers,
    /// who then carry roles; the command line is the machine's own operator.
    #[must_use]
    pub fn enforce_roles(&self, builder: RegistryBuilder) -> RegistryBuilder {
        policy::require_roles(builder, &self.roles)
    }

    /// Applies `[scopes]` and `[auth.scope_implies]`: the scopes each tool needs, decided for
    /// callers authenticated by a token (the command line is never limited by scopes).
    #[must_use]
    pub fn require_scopes(&self, mut builder: RegistryBuilder) -> RegistryBuilder {
        for (tool, scopes) in &self.scopes {
            builder = builder.tool_scopes(tool.clone(), scopes.iter().cloned());
        }
        for (scope, implied) in &self.auth.scope_implies {
            builder = builder.scope_implies(scope.clone(), implied.iter().cloned());
        }
        builder
    }

    /// The stores and enabled MCP servers as toolsets to mount; `db`'s database holds the
    /// `sqlite` stores' data; `accounts`, those of the servers mounted per user; `browser`, the
    /// one the command line's user signs in through.
    pub fn toolsets(
        &self,
        db: Option<&crate::Stores>,
        accounts: Option<&tool_runtime::mcp::ConnectedAccounts>,
        browser: Option<&Arc<tool_runtime::mcp::LoopbackBrowser>>,
    ) -> Result<Vec<Arc<dyn Toolset>>, String> {
        toolsets::toolsets(&self.stores, &self.mcp_servers, db, accounts, browser)
    }

    /// Whether a mounted server is reached as the command line's user, who signs in through
    /// the browser.
    #[must_use]
    pub fn signs_a_user_in(&self) -> bool {
        self.mcp_servers.iter().any(|server| {
            server.enabled != Some(false)
                && server
                    .oauth
                    .as_ref()
                    .is_some_and(|oauth| oauth.acts_as == ActsAs::User)
        })
    }

    /// The names of the `memory` stores: with Redis, each replica still keeps its own copy.
    #[must_use]
    pub fn memory_stores(&self) -> Vec<&str> {
        (self.stores.iter())
            .filter(|s| s.kind == StoreKind::Memory)
            .map(|s| s.name.as_str())
            .collect()
    }
}

/// A TOML or serde error in `text` as `line N, KEY: MESSAGE`, the key found in `root`.
fn located(text: &str, error: &toml::de::Error, root: Option<&DeTable<'_>>) -> String {
    let message = error.message().trim_end();
    let Some(start) = error.span().map(|span| span.start.min(text.len())) else {
        return message.to_owned();
    };
    let line = text[..start].matches('\n').count() + 1;
    match root.and_then(|root| key_in_table(root, start)) {
        Some(key) => format!("line {line}, {key}: {message}"),
        None => format!("line {line}: {message}"),
    }
}

/// The innermost key whose name or value spans byte `at`: `policy.filter[0].source`.
fn key_in_table(table: &DeTable<'_>, at: usize) -> Option<String> {
    table.iter().find_map(|(key, value)| {
        let here = key.span().contains(&at) || value.span().contains(&at);
        match key_in_value(value.get_ref(), at) {
            Some(rest) => Some(format!("{}{rest}", key.get_ref())),
            None => here.then(|| key.get_ref().to_string()),
        }
    })
}

fn key_in_value(value: &DeValue<'_>, at: usize) -> Option<String> {
    match value {
        DeValue::Table(table) => key_in_table(table, at).map(|key| format!(".{key}")),
        DeValue::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| match key_in_value(item.get_ref(), at) {
                Some(rest) => Some(format!("[{i}]{rest}")),
                None => item.span().contains(&at).then(|| format!("[{i}]")),
            }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tool_runtime::tool::Rate;

    use super::*;

    #[test]
    fn the_embedded_file_holds_the_demos_defaults() {
        let c = Config::parse(DEFAULT).unwrap();
        assert_eq!(c.limits["device_add"].rate, Rate::parse("30/min"));
        assert_eq!(c.roles["device_revoke"], ["admin"]);
        assert_eq!(c.policy.deny_destructive_for, [SourceName::Agent]);
        assert!(c.agent.system.starts_with("You manage the paired devices"));
        let b = &c.agent.budgets;
        assert_eq!(
            (b.max_turns, b.max_tool_calls, b.max_tokens),
            (Some(12), Some(24), None)
        );
        assert_eq!(b.deadline, Some(Duration::from_secs(120)));
        assert_eq!(c.host.default_timeout, Duration::from_secs(30));
        assert_eq!(c.web.timeout, Duration::from_secs(20));
        assert_eq!(
            (c.scheduler.enabled, c.scheduler.tick),
            (true, Duration::from_secs(1))
        );
        assert!(c.stores.is_empty() && c.mcp_servers.is_empty());
        // Telemetry is left to the OTEL_* variables.
        assert!(c.otel.enabled.is_none() && c.otel.endpoint.is_none());
    }

    #[test]
    fn the_authorization_server_and_scopes_are_read() {
        // The example commented out in the embedded file, as an operator uncomments it.
        let example: String = DEFAULT
            .lines()
            .skip_while(|l| !l.starts_with("# [scopes]"))
            .take_while(|l| !l.starts_with("[policy]"))
            .filter_map(|l| l.strip_prefix("# "))
            .filter(|l| l.starts_with('[') || l.contains('='))
            .fold(String::new(), |mut example, l| {
                example.push_str(l);
                example.push('\n');
                example
            });
        let c = Config::parse(&example.replace("client_secret_env", "client_secret"))
            .unwrap_or_else(|e| panic!("{e}:\n{example}"));
        assert_eq!(c.scopes["device_revoke"], ["devices:admin"]);
        assert_eq!(c.auth.scope_implies["devices:admin"], ["devices:read"]);
        let oauth = c.auth.oauth(|_| None).unwrap().expect("an issuer");
        assert!(format!("{oauth:?}").contains("https://tools.example/mcp"));
        // Plain http is for an issuer on loopback only.
        let c = Config::parse(
            "[auth]\nissuer = \"http://idp.example\"\naudience = \"http://127.0.0.1:8080/mcp\"\n",
        )
        .unwrap();
        assert!(
            c.auth
                .oauth(|_| None)
                .unwrap_err()
                .contains("plain http is allowed for a loopback address only")
        );
        assert!(
            Config::parse("[auth]\nissuer = \"https://idp.example\"\n")
                .unwrap_err()
                .contains("`issuer` needs `audience`")
        );
    }

    /// Each mistake is named by its line and key, with what to write instead.
    #[test]
    fn mistakes_are_named_by_line_and_key() {
        let mistakes = [
            (
                "[limits.device_add]\nrate = \"lots\"",
                "line 2, limits.device_add.rate: \"lots\" is not a rate",
            ),
            (
                "[policy]\ndeny_destructive_for = [\"robots\"]",
                "line 2, policy.deny_destructive_for[0]: unknown variant `robots`",
            ),
            ("\n[limit]", "line 2, limit: unknown field `limit`"),
            (
                "[web]\ntimeout = \"soon\"",
                "line 2, web.timeout: \"soon\" is not a duration",
            ),
            // Durations are written as `#[tool(timeout = ...)]` writes them.
            (
                "[web]\ntimeout = \"2 minutes\"",
                "line 2, web.timeout: \"2 minutes\" is not a duration",
            ),
            (
                "[scheduler]\ntick = \"0s\"",
                "line 2, scheduler.tick: \"0s\" is not a duration; write one above zero",
            ),
            (
                "[agent]\nprovider = \"openia\"",
                "line 2, agent.provider: \"openia\" is not a provider; write one of openai,",
            ),
            ("[agent.tiers]\nfast = \"gpt\"", "agent.tiers: fast: "),
            (
                "[agent]\ndefault_tier = \"fats\"\n[agent.tiers]\nfast = \"openai:gpt-4.1-mini\"\nexpert = \"openai:gpt-4.1\"",
                "agent.default_tier: \"fats\" is not a tier; write one of expert, fast",
            ),
            (
                "[agent]\ndefault_tier = \"fast\"",
                "agent.default_tier: \"fast\" names no tier; add [agent.tiers] or remove it",
            ),
            (
                "[host.bridges.local]\nallowed_commands = [\"/bin/ls\"]",
                "line 2, host.bridges.local.allowed_commands: `/bin/ls` is not a program name",
            ),
            (
                "[channels]\nallowed_commands = [\"rm -rf\"]",
                "line 2, channels.allowed_commands: `rm -rf` is not a program name",
            ),
            (
                "[host.bridges.local]",
                "line 1, host.bridges.local: missing field `allowed_commands`",
            ),
            (
                "[host.bridges.\"a b\"]\nallowed_commands = []",
                "line 1, host.bridges.a b: \"a b\" is not a name",
            ),
            (
                "[[stores]]\nname = \"s\"\nkind = \"redis\"",
                "line 3, stores[0].kind: unknown variant `redis`, expected one of `memory`, `sqlite`, `postgres`",
            ),
            (
                "[[policy.filter]]\nsource = \"robots\"",
                "line 2, policy.filter[0].source: unknown variant `robots`",
            ),
            (
                "[[policy.filter]]\n[[policy.filter]]\nrole = \"a\"\nprincipal = \"b\"",
                "policy.filter[1]: name at most one of",
            ),
        ];
        for (text, names) in mistakes {
            let e = Config::parse(text).unwrap_err();
            assert!(e.contains(names), "{text}: {e}");
        }
    }
}
