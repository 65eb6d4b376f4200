//! `[accounts]` and `[mcp_servers.oauth]`: other MCP servers behind OAuth, reached as the demo
//! itself, as each of its callers with the account they connect, or as the command line's user.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use tool_runtime::Secret;
use tool_runtime::mcp::{
    ClientCredentials, ConnectedAccounts, LoopbackBrowser, RemoteServer, SignIn, TokenKeys,
};
use tool_runtime::toolset::TokenStore;

/// `[accounts]`: the accounts `serve`'s callers connect for the servers mounted per user, and
/// the pages at `/oauth/connect/` where they do (which sign the browser in at `[auth]`'s
/// issuer first).
///
/// ```toml
/// [accounts]
/// public_url = "https://tools.example"     # this server as browsers reach it
/// keys_env = "DEMO_APP_TOKEN_KEYS"         # ID:KEY,... (32-byte keys, base64): the first seals
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountsConfig {
    /// This server's public URL: the links' and redirect addresses' base.
    pub public_url: String,
    /// The environment variable holding the keys the tokens are sealed with.
    #[serde(default = "default_keys_env")]
    pub keys_env: String,
    /// This server's own client at `[auth]`'s issuer (its redirect address
    /// `PUBLIC_URL/oauth/connect/back`); by default it registers itself.
    pub client_id: Option<String>,
    /// The environment variable holding that client's secret.
    pub client_secret_env: Option<String>,
}

fn default_keys_env() -> String {
    "DEMO_APP_TOKEN_KEYS".to_owned()
}

/// `[mcp_servers.oauth]`: how a mounted HTTP server behind OAuth is reached.
///
/// ```toml
/// [mcp_servers.oauth]
/// acts_as = "each_user"          # or "application", or "user"
/// client_id = "gateway"          # registered beforehand; each_user registers itself without
/// client_secret_env = "DOCS_SECRET"
/// scopes = ["docs:read"]
/// list_as = { client_id = "gateway-app", client_secret_env = "DOCS_APP_SECRET" }
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpOAuthConfig {
    /// Whose token calls go with.
    pub acts_as: ActsAs,
    /// The client registered at the server's authorization server.
    pub client_id: Option<String>,
    /// The environment variable holding its secret.
    pub client_secret_env: Option<String>,
    /// The scopes to ask for.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// `each_user`: list the tools as this application client (client credentials).
    pub list_as: Option<ClientConfig>,
    /// `user`: where the signed-in user's tokens are kept (default
    /// `$XDG_CONFIG_HOME/demo-app/tokens`, else `~/.config/demo-app/tokens`).
    pub token_dir: Option<PathBuf>,
}

/// A client with its secret, as the application.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientConfig {
    /// The client registered at the authorization server.
    pub client_id: String,
    /// The environment variable holding its secret.
    pub client_secret_env: String,
}

impl ClientConfig {
    fn credentials(&self, scopes: &[String]) -> Result<ClientCredentials, String> {
        let secret = std::env::var(&self.client_secret_env).map_err(|_| {
            format!(
                "the client secret variable {} is not set",
                self.client_secret_env
            )
        })?;
        Ok(ClientCredentials::secret(&self.client_id, Secret::new(secret)).scopes(scopes.to_vec()))
    }
}

/// Whose token a mounted server's calls go with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActsAs {
    /// The demo's own (client credentials): one token for every caller.
    Application,
    /// Each caller's, from the account they connected.
    EachUser,
    /// The command line's user's, signed in through the browser (`demo-app login NAME`).
    User,
}

impl McpOAuthConfig {
    /// What is wrong with the table, if anything.
    pub(super) fn mistake(&self) -> Option<String> {
        let credentials = self.client_id.is_some() && self.client_secret_env.is_some();
        match self.acts_as {
            ActsAs::Application if !credentials => {
                Some("acts_as = \"application\" needs `client_id` and `client_secret_env`".into())
            }
            ActsAs::Application | ActsAs::User if self.list_as.is_some() => {
                Some("`list_as` is for acts_as = \"each_user\"".into())
            }
            ActsAs::Application | ActsAs::EachUser if self.token_dir.is_some() => {
                Some("`token_dir` is for acts_as = \"user\"".into())
            }
            _ if self.client_secret_env.is_some() && self.client_id.is_none() => {
                Some("`client_secret_env` needs `client_id`".into())
            }
            _ => None,
        }
    }

    fn secret(&self) -> Result<Option<Secret<String>>, String> {
        self.client_secret_env
            .as_ref()
            .map(|var| {
                std::env::var(var)
                    .map(Secret::new)
                    .map_err(|_| format!("the client secret variable {var} is not set"))
            })
            .transpose()
    }

    fn credentials(&self) -> Result<ClientCredentials, String> {
        match (&self.client_id, &self.client_secret_env) {
            (Some(client_id), Some(env)) => ClientConfig {
                client_id: client_id.clone(),
                client_secret_env: env.clone(),
            }
            .credentials(&self.scopes),
            _ => Err("no client credentials".into()),
        }
    }

    /// `server` reached as this table says; `accounts`, those of a server that acts as each
    /// user; `browser`, the one a user signs in through.
    pub(super) fn apply(
        &self,
        server: RemoteServer,
        accounts: Option<&ConnectedAccounts>,
        browser: Option<&Arc<LoopbackBrowser>>,
    ) -> Result<RemoteServer, String> {
        match self.acts_as {
            ActsAs::User => {
                let browser = browser.ok_or("acts_as = \"user\" needs a browser")?;
                let mut sign_in =
                    SignIn::new(browser.redirect_uri(), "demo-app").scopes(self.scopes.clone());
                if let Some(id) = &self.client_id {
                    sign_in = sign_in.registered(id, self.secret()?);
                }
                let dir = match &self.token_dir {
                    Some(dir) => dir.clone(),
                    None => default_token_dir()?,
                };
                Ok(server
                    .signed_in(sign_in, Arc::clone(browser) as _)
                    .keep_tokens_in(dir))
            }
            ActsAs::Application => Ok(server.as_application(self.credentials()?)),
            ActsAs::EachUser => {
                let accounts = accounts.ok_or("acts_as = \"each_user\" needs [accounts]")?;
                let mut sign_in = SignIn::new("", "demo-app").scopes(self.scopes.clone());
                if let Some(id) = &self.client_id {
                    sign_in = sign_in.registered(id, self.secret()?);
                }
                let server = server.per_user(accounts, sign_in);
                Ok(match &self.list_as {
                    Some(lister) => server.lists_as(lister.credentials(&self.scopes)?),
                    None => server,
                })
            }
        }
    }
}

/// Where a signed-in user's tokens are kept by default.
fn default_token_dir() -> Result<PathBuf, String> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .ok_or("no configuration directory: set token_dir")?;
    Ok(config.join("demo-app").join("tokens"))
}

impl AccountsConfig {
    /// The accounts, their tokens sealed with the keys of `keys_env` in `store`.
    pub fn accounts(&self, store: impl TokenStore) -> Result<ConnectedAccounts, String> {
        let keys = TokenKeys::from_env(&self.keys_env)
            .map_err(|e| format!("[accounts]: {}", e.message()))?;
        let mut accounts = ConnectedAccounts::new(&self.public_url, keys, store);
        if let Some(id) = &self.client_id {
            let secret = match &self.client_secret_env {
                Some(var) => Some(Secret::new(
                    std::env::var(var).map_err(|_| format!("[accounts]: {var} is not set"))?,
                )),
                None => None,
            };
            accounts = accounts.own_client(id, secret);
        }
        Ok(accounts)
    }
}
