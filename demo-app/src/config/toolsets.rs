//! `[[stores]]` and `[[mcp_servers]]`: the sources of tools mounted beside the demo's own, each
//! tool named `NAME-TOOL`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tool_runtime::mcp::{ConnectedAccounts, LoopbackBrowser, RemoteServer};
use tool_runtime::toolset::{MemoryStore, Store, Toolset};

use super::de;
use crate::store::{Database, PostgresKv, SqliteKv, Stores};

/// A `[[stores]]` entry: a key-value store mounted as `NAME-write`, `NAME-read`, `NAME-list`
/// and `NAME-delete`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// The store's name, the prefix of its tools.
    #[serde(deserialize_with = "de::name")]
    pub name: String,
    /// Where its keys and values live.
    pub kind: StoreKind,
}

/// Where a store keeps its keys and values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    /// In memory, gone when the process ends.
    Memory,
    /// In the demo's SQLite database, kept across restarts.
    Sqlite,
    /// In the demo's PostgreSQL database, kept across restarts and shared by the replicas on it.
    Postgres,
}

/// A `[[mcp_servers]]` entry: another MCP server, run by `command` (stdio) or reached at `url`
/// (streamable HTTP); the file is refused unless it gives exactly one of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The server's name, the prefix of its tools.
    #[serde(deserialize_with = "de::name")]
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
    /// How long connecting may take (default 30 seconds).
    #[serde(default, deserialize_with = "de::some_duration")]
    pub timeout: Option<Duration>,
    /// `false` leaves the server out (default `true`).
    pub enabled: Option<bool>,
    /// `true` mounts its tools only, not its resources and prompts (default `false`).
    #[serde(default)]
    pub tools_only: bool,
    /// `[mcp_servers.oauth]`: an HTTP server behind OAuth, reached as the demo or each user.
    pub oauth: Option<super::accounts::McpOAuthConfig>,
}

impl McpServerConfig {
    /// What is wrong with this entry, if anything: `command` or `url`, an `http(s)://` URL.
    pub(super) fn mistake(&self) -> Option<String> {
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => Some("give `command` (stdio) or `url` (HTTP), not both".into()),
            (None, None) => Some("give `command` (stdio) or `url` (HTTP)".into()),
            (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                Some(format!("url = \"{url}\" is not an http:// or https:// URL"))
            }
            (Some(_), None) if self.oauth.is_some() => {
                Some("[mcp_servers.oauth] is for a server reached at `url`".into())
            }
            _ => self
                .oauth
                .as_ref()
                .and_then(super::accounts::McpOAuthConfig::mistake),
        }
    }

    /// The client that mounts this server; `accounts`, those of the servers mounted per user;
    /// `browser`, the one users sign in through.
    fn client(
        &self,
        accounts: Option<&ConnectedAccounts>,
        browser: Option<&Arc<LoopbackBrowser>>,
    ) -> Result<RemoteServer, String> {
        let at = || format!("[[mcp_servers]] name = \"{}\"", self.name);
        let mut server = match (&self.command, &self.url) {
            (Some(command), _) => {
                let server = RemoteServer::stdio(&self.name, command).args(self.args.clone());
                let server = self
                    .env
                    .iter()
                    .fold(server, |server, (k, v)| server.env(k, v));
                match &self.cwd {
                    Some(dir) => server.cwd(dir),
                    None => server,
                }
            }
            (None, Some(url)) => {
                let server = RemoteServer::http(&self.name, url);
                let server = self.headers.iter().fold(server, |s, (k, v)| s.header(k, v));
                match &self.bearer_token_env {
                    Some(var) => server
                        .bearer_env(var)
                        .map_err(|e| format!("{}: {e}", at()))?,
                    None => server,
                }
            }
            (None, None) => return Err(format!("{}: give `command` or `url`", at())),
        };
        if let Some(timeout) = self.timeout {
            server = server.connect_timeout(timeout);
        }
        if self.tools_only {
            server = server.tools_only();
        }
        match &self.oauth {
            Some(oauth) => oauth
                .apply(server, accounts, browser)
                .map_err(|e| format!("{}: {e}", at())),
            None => Ok(server),
        }
    }
}

/// The stores and enabled MCP servers as toolsets to mount; `db`'s database holds the
/// `sqlite` or `postgres` stores' data, whichever it is.
pub(super) fn toolsets(
    stores: &[StoreConfig],
    servers: &[McpServerConfig],
    db: Option<&Stores>,
    accounts: Option<&ConnectedAccounts>,
    browser: Option<&Arc<LoopbackBrowser>>,
) -> Result<Vec<Arc<dyn Toolset>>, String> {
    let mut out: Vec<Arc<dyn Toolset>> = Vec::new();
    for s in stores {
        out.push(match (s.kind, db.map(Stores::database)) {
            (StoreKind::Memory, _) => Arc::new(Store::new(&s.name, MemoryStore::default())),
            (StoreKind::Sqlite, Some(Database::Sqlite(db))) => {
                Arc::new(Store::new(&s.name, SqliteKv::new(db.clone(), &s.name)))
            }
            (StoreKind::Postgres, Some(Database::Postgres(db))) => {
                Arc::new(Store::new(&s.name, PostgresKv::new(db.clone(), &s.name)))
            }
            (StoreKind::Sqlite, Some(Database::Postgres(_))) => {
                return Err(format!(
                    "[[stores]] name = \"{}\": a sqlite store needs the SQLite database, and the demo's data is in PostgreSQL: write kind = \"postgres\"",
                    s.name
                ));
            }
            (StoreKind::Postgres, Some(Database::Sqlite(_))) => {
                return Err(format!(
                    "[[stores]] name = \"{}\": a postgres store needs the demo's data in PostgreSQL (--postgres URL): write kind = \"sqlite\" to keep it in the SQLite database",
                    s.name
                ));
            }
            (StoreKind::Sqlite | StoreKind::Postgres, None) => {
                return Err(format!(
                    "[[stores]] name = \"{}\": a {} store needs the database",
                    s.name,
                    if s.kind == StoreKind::Sqlite { "sqlite" } else { "postgres" }
                ));
            }
        });
    }
    for server in servers.iter().filter(|m| m.enabled != Some(false)) {
        out.push(Arc::new(server.client(accounts, browser)?));
    }
    Ok(out)
}
