//! `[web]`, `[host]`, `[channels]` and `[scheduler]`: what the assistant's tools may reach.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::de;

/// `[web]`: what `web_fetch` and `web_search` may reach.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebConfig {
    /// Hosts exempt from the private-address rule (an intranet, a test server on loopback).
    pub allow_hosts: Vec<String>,
    /// Hosts never requested, with their subdomains.
    pub deny_hosts: Vec<String>,
    /// How long a request may take (default 20 seconds).
    #[serde(deserialize_with = "de::duration")]
    pub timeout: Duration,
    /// The largest response read, in bytes (default 5 MiB).
    pub max_bytes: usize,
    /// The environment variable holding the Brave Search API key (default `BRAVE_API_KEY`).
    pub brave_api_key_env: String,
    /// Brave Search's endpoint.
    pub brave_url: String,
    /// DuckDuckGo's HTML results page, used without a Brave key.
    pub duckduckgo_url: String,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            allow_hosts: Vec::new(),
            deny_hosts: Vec::new(),
            timeout: Duration::from_secs(20),
            max_bytes: 5 * 1024 * 1024,
            brave_api_key_env: "BRAVE_API_KEY".to_owned(),
            brave_url: "https://api.search.brave.com/res/v1/web/search".to_owned(),
            duckduckgo_url: "https://html.duckduckgo.com/html/".to_owned(),
        }
    }
}

/// `[host]`: the programs `host_execute` may run.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// How long a command may run when the call gives no timeout (default 30 seconds).
    #[serde(deserialize_with = "de::duration")]
    pub default_timeout: Duration,
    /// `[host.bridges.NAME]`: where commands may run, each with its own programs.
    #[serde(deserialize_with = "de::named")]
    pub bridges: BTreeMap<String, BridgeConfig>,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            default_timeout: Duration::from_secs(30),
            bridges: BTreeMap::new(),
        }
    }
}

/// `[host.bridges.NAME]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeConfig {
    /// The programs that may run, by name, looked up on `PATH`.
    #[serde(deserialize_with = "de::programs")]
    pub allowed_commands: Vec<String>,
    /// The directory they run in (default: the system's temporary directory).
    pub working_dir: Option<PathBuf>,
}

/// `[channels]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChannelsConfig {
    /// The programs a channel's command may run (a webhook channel needs none).
    #[serde(deserialize_with = "de::programs")]
    pub allowed_commands: Vec<String>,
}

/// `[scheduler]`: whether `serve` runs scheduled tasks, and how often it looks.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerConfig {
    /// Whether `serve` runs due tasks (default `true`; runs need an agent).
    pub enabled: bool,
    /// How often it looks for due tasks (default every second).
    #[serde(deserialize_with = "de::duration")]
    pub tick: Duration,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            tick: Duration::from_secs(1),
        }
    }
}
