//! `demo-app.toml`: limits, roles per tool and policy rules, applied to the registry.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use tool_runtime::limits::Rate;
use tool_runtime::policy::{AllowTools, DenyDestructive, RequireRoles};
use tool_runtime::{RegistryBuilder, Source};

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
        for name in config
            .policy
            .deny_destructive_for
            .iter()
            .chain(config.policy.allow.keys())
        {
            source(name)?;
        }
        Ok(config)
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
            },
        }
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
        if enforce_roles {
            for (tool, roles) in &self.roles {
                builder = builder.tool_roles(tool.clone(), roles.iter().cloned());
            }
            builder = builder.policy(RequireRoles);
        }
        builder
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
    }
}
