//! The accounts a gateway's users connect, for mounts that act as each user
//! ([`RemoteServer::per_user`](crate::mcp::RemoteServer::per_user)): each user's token per
//! mount, sealed in a shared [`TokenStore`]; the link a user without one is sent to; the
//! sign-ins under way, kept in the same store so they end on any replica.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use rmcp::transport::AuthError;
use rmcp::transport::auth::{
    AuthorizationManager, CredentialRefreshGuard, CredentialStore, OAuthClientConfig, StateStore,
    StoredAuthorizationState, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use super::client::SignIn;
use super::vault::TokenKeys;
use crate::tool::error::{ErrorKind, ToolError};
use crate::toolset::TokenStore;

/// How long a link to connect an account, and a sign-in begun from it, stay good.
pub(super) const LINK_LIFETIME: Duration = Duration::from_secs(600);

/// How long a refresh may hold its lock, should its holder die.
const REFRESH_LOCK: Duration = Duration::from_secs(30);

/// Where the authorization servers of mounted servers send a user back.
pub(super) const MOUNT_CALLBACK: &str = "/oauth/connect/done";

/// Where this server's own authorization server sends the browser that opened a link back.
pub(super) const LINK_CALLBACK: &str = "/oauth/connect/back";

/// The accounts a gateway's users connect to the servers it mounts per user: give it to each
/// such mount ([`RemoteServer::per_user`](crate::mcp::RemoteServer::per_user)) and to the
/// server ([`ServerOptions::connected_accounts`](crate::http::ServerOptions::connected_accounts)),
/// which serves its pages under `/oauth/connect/`.
///
/// A caller of such a mount without a token for it is answered with a link
/// (`authorization_required`; over MCP, `-32042` with a URL elicitation). The link's page
/// first signs the browser in at this server's own authorization server (the one its
/// [`OAuth`](crate::front::auth::oauth::OAuth) trusts) and goes on only if that is the caller
/// who was given the link: a link opened by anyone else stores nothing. It then sends the user
/// to the mounted server's authorization server (authorization code with PKCE and the resource
/// indicator) and keeps the token it gives, sealed with [`TokenKeys`], under the user and the
/// mount. The user's next call goes through with it; it is refreshed when it expires, one
/// refresh at a time across replicas.
#[derive(Clone)]
pub struct ConnectedAccounts {
    pub(in crate::mcp) inner: Arc<Inner>,
}

pub(in crate::mcp) struct Inner {
    /// This server's public URL, without a trailing `/`.
    pub(super) public_url: String,
    keys: TokenKeys,
    store: Arc<dyn TokenStore>,
    /// This server's own client at its own authorization server; by default it registers.
    pub(super) own_client: Option<(String, Option<crate::tool::secret::Secret<String>>)>,
    /// The mounts that act as each user, by name.
    mounts: Mutex<HashMap<String, Arc<UserMount>>>,
    /// How tokens of this server are checked: the server's own OAuth, set when it is served.
    pub(super) verifier: OnceLock<crate::front::auth::oauth::OAuth>,
}

/// A mount that acts as each user: its server and how its users sign in there.
pub(in crate::mcp) struct UserMount {
    pub(in crate::mcp) name: String,
    pub(in crate::mcp) url: String,
    pub(in crate::mcp) sign_in: SignIn,
}

/// A caller's connection to a mount that acts as each caller, and its calls in flight.
pub(in crate::mcp) type UserSession = (
    Arc<rmcp::service::RunningService<rmcp::RoleClient, crate::mcp::relay::Handler>>,
    Arc<crate::mcp::relay::InFlight>,
);

/// The open connection of each caller of a mount that acts as each.
pub(in crate::mcp) type Users = tokio::sync::Mutex<HashMap<String, UserSession>>;

/// A link given to a caller: whose, for which mount, and the scopes its sign-in asks for
/// beside the mount's own (those a server named in refusing a token).
#[derive(Serialize, Deserialize)]
pub(super) struct Link {
    pub(super) principal: String,
    pub(super) mount: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) scopes: Vec<String>,
}

/// A client registered at an authorization server.
#[derive(Serialize, Deserialize)]
struct Registered {
    client_id: String,
    client_secret: Option<String>,
}

impl ConnectedAccounts {
    /// Accounts of the server reached at `public_url` (as users' browsers reach it: its
    /// pages' addresses and its redirect addresses start with it), their tokens sealed with
    /// `keys` in `store`.
    pub fn new(public_url: impl Into<String>, keys: TokenKeys, store: impl TokenStore) -> Self {
        Self {
            inner: Arc::new(Inner {
                public_url: public_url.into().trim_end_matches('/').to_owned(),
                keys,
                store: Arc::new(store),
                own_client: None,
                mounts: Mutex::default(),
                verifier: OnceLock::new(),
            }),
        }
    }

    /// This server's own client at its own authorization server, registered beforehand with
    /// the redirect address `PUBLIC_URL/oauth/connect/back`; by default the server registers
    /// itself (dynamic registration). Call it before the accounts are shared.
    #[must_use]
    pub fn own_client(
        mut self,
        client_id: impl Into<String>,
        secret: Option<crate::tool::secret::Secret<String>>,
    ) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.own_client = Some((client_id.into(), secret));
        }
        self
    }

    pub(in crate::mcp) fn add_mount(&self, mount: UserMount) -> Arc<UserMount> {
        let mount = Arc::new(mount);
        self.inner
            .mounts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(mount.name.clone(), Arc::clone(&mount));
        mount
    }

    /// The redirect address of the mounted servers' sign-ins.
    pub(in crate::mcp) fn mount_callback(&self) -> String {
        format!("{}{MOUNT_CALLBACK}", self.inner.public_url)
    }
}

impl std::fmt::Debug for ConnectedAccounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectedAccounts")
            .field("public_url", &self.inner.public_url)
            .field("keys", &self.inner.keys)
            .finish_non_exhaustive()
    }
}

/// A digest of `part` for a record's name: names stay short, and hold nothing a caller wrote.
fn digest(part: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&sha2::Sha256::digest(part)[..18])
}

/// A random name no one can guess: 128 bits.
pub(super) fn random_id() -> Result<String, ToolError> {
    let mut bytes = [0_u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| ToolError::internal(format!("no randomness: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

impl Inner {
    pub(super) fn mount(&self, name: &str) -> Option<Arc<UserMount>> {
        self.mounts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(name)
            .cloned()
    }

    /// The record `name`, opened, read as `T`; absent when it cannot be opened.
    pub(super) async fn read<T: serde::de::DeserializeOwned>(
        &self,
        name: &str,
        take: bool,
    ) -> Result<Option<T>, ToolError> {
        let sealed = if take {
            self.store.take(name).await?
        } else {
            self.store.get(name).await?
        };
        Ok(sealed
            .and_then(|sealed| self.keys.open(name, &sealed))
            .and_then(|plain| serde_json::from_slice(&plain).ok()))
    }

    /// Writes `value` sealed as the record `name`.
    pub(super) async fn write<T: Serialize>(
        &self,
        name: &str,
        value: &T,
        ttl: Option<Duration>,
    ) -> Result<(), ToolError> {
        let plain = serde_json::to_vec(value).map_err(ToolError::internal)?;
        let sealed = self.keys.seal(name, &plain)?;
        self.store.put(name, sealed, ttl).await
    }

    pub(super) async fn delete(&self, name: &str) -> Result<(), ToolError> {
        self.store.delete(name).await
    }

    /// The name of the token record of `principal` at the server at `url`.
    fn token_name(url: &str, principal: &str) -> String {
        format!("mcp-oauth:token:{}:{}", digest(url), digest(principal))
    }

    /// The link `principal` is sent to for `mount`, its sign-in asking for `scopes` too: the
    /// one given before while it is good and asks for them, else a new one, given from then on;
    /// as the error the call is answered with.
    pub(in crate::mcp) async fn ask(
        self: &Arc<Self>,
        mount: &UserMount,
        principal: &str,
        scopes: &[String],
    ) -> ToolError {
        match self.link(mount, principal, scopes).await {
            Ok((id, url)) => ToolError::new(
                ErrorKind::AUTHORIZATION_REQUIRED,
                format!(
                    "MCP server `{}` needs your account: open {url} to connect it, then call \
                     again",
                    mount.name
                ),
            )
            .with_details(serde_json::json!({
                "url": url,
                "elicitation_id": id,
                "server": mount.name,
            })),
            Err(e) => e,
        }
    }

    async fn link(
        &self,
        mount: &UserMount,
        principal: &str,
        scopes: &[String],
    ) -> Result<(String, String), ToolError> {
        let asked = format!(
            "mcp-oauth:asked:{}:{}",
            digest(&mount.name),
            digest(principal)
        );
        // The link given before serves while it is good and asks for every scope needed.
        let given = match self.read::<String>(&asked, false).await? {
            Some(id) => self
                .read::<Link>(&link_name(&id), false)
                .await?
                .filter(|link| scopes.iter().all(|s| link.scopes.contains(s)))
                .map(|_| id),
            None => None,
        };
        let id = if let Some(id) = given {
            id
        } else {
            let id = random_id()?;
            let link = Link {
                principal: principal.to_owned(),
                mount: mount.name.clone(),
                scopes: scopes.to_vec(),
            };
            self.write(&link_name(&id), &link, Some(LINK_LIFETIME))
                .await?;
            self.write(&asked, &id, Some(LINK_LIFETIME)).await?;
            id
        };
        let url = format!("{}/oauth/connect/{id}", self.public_url);
        Ok((id, url))
    }

    /// A manager for `principal`'s token at `mount`'s server: its metadata found, its client
    /// known, its token in the store. `None` when the user has no token there.
    pub(in crate::mcp) async fn manager(
        self: &Arc<Self>,
        mount: &UserMount,
        principal: &str,
    ) -> Result<Option<AuthorizationManager>, String> {
        let mut manager = self.bare_manager(mount).await?;
        manager.set_credential_store(self.tokens(mount, principal));
        match manager.initialize_from_store().await {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => return Err(format!("the token store failed: {e}")),
        }
        // The stored client id is configured without its secret: configured again with it.
        let client = self.client(&mut manager, mount).await?;
        manager
            .configure_client(client)
            .map_err(|e| format!("no client for {}: {e}", mount.url))?;
        Ok(Some(manager))
    }

    /// A manager for `mount`'s server with its metadata, sign-ins kept in the store.
    pub(super) async fn bare_manager(
        self: &Arc<Self>,
        mount: &UserMount,
    ) -> Result<AuthorizationManager, String> {
        let failed = |e: AuthError| format!("no authorization for {}: {e}", mount.url);
        let mut manager = AuthorizationManager::new(mount.url.as_str())
            .await
            .map_err(failed)?;
        let metadata = manager.resolve_metadata().await.map_err(failed)?;
        manager.set_metadata(metadata.metadata);
        manager.set_state_store(States {
            inner: Arc::clone(self),
        });
        Ok(manager)
    }

    /// `mount`'s client at its server's authorization server: registered beforehand, its
    /// metadata document, or registered by this server once (kept in the store, so every
    /// replica uses the one registration).
    pub(super) async fn client(
        &self,
        manager: &mut AuthorizationManager,
        mount: &UserMount,
    ) -> Result<OAuthClientConfig, String> {
        let redirect = mount.sign_in.redirect_uri().to_owned();
        let scopes = mount.sign_in.requested_scopes().to_vec();
        if let Some((id, secret)) = mount.sign_in.registered_client() {
            let mut config = OAuthClientConfig::new(id, redirect).with_scopes(scopes);
            if let Some(secret) = secret {
                config = config.with_client_secret(secret.expose().clone());
            }
            return Ok(config);
        }
        if let Some(document) = mount.sign_in.metadata_url() {
            return Ok(OAuthClientConfig::new(document, redirect).with_scopes(scopes));
        }
        let name = format!("mcp-oauth:client:{}", digest(&mount.url));
        // One registration for every replica: the first registers, the others wait and read it.
        let _registering = self
            .store
            .lock(&format!("{name}:registering"), REFRESH_LOCK)
            .await
            .map_err(|e| e.message().to_owned())?;
        let kept = self
            .read::<Registered>(&name, false)
            .await
            .map_err(|e| e.message().to_owned())?;
        let registered = if let Some(registered) = kept {
            registered
        } else {
            let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let config = manager
                .register_client(mount.sign_in.client_name(), &redirect, &scope_refs)
                .await
                .map_err(|e| format!("no registration at {}: {e}", mount.url))?;
            let registered = Registered {
                client_id: config.client_id,
                client_secret: config.client_secret,
            };
            self.write(&name, &registered, None)
                .await
                .map_err(|e| e.message().to_owned())?;
            registered
        };
        let mut config = OAuthClientConfig::new(registered.client_id, redirect).with_scopes(scopes);
        if let Some(secret) = registered.client_secret {
            config = config.with_client_secret(secret);
        }
        Ok(config)
    }

    /// Forgets `principal`'s token at `mount`'s server, which refused it.
    pub(in crate::mcp) async fn forget(&self, mount: &UserMount, principal: &str) {
        let _ = self.delete(&Self::token_name(&mount.url, principal)).await;
    }

    /// A credential store for `principal`'s token at `mount`'s server.
    pub(super) fn tokens(self: &Arc<Self>, mount: &UserMount, principal: &str) -> Tokens {
        Tokens {
            inner: Arc::clone(self),
            name: Self::token_name(&mount.url, principal),
        }
    }
}

pub(super) fn link_name(id: &str) -> String {
    format!("mcp-oauth:link:{id}")
}

fn store_error(e: &ToolError) -> AuthError {
    AuthError::CredentialStoreError(e.message().to_owned())
}

/// One user's token at one server, as the SDK's credential store.
pub(super) struct Tokens {
    inner: Arc<Inner>,
    name: String,
}

#[async_trait::async_trait]
impl CredentialStore for Tokens {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.inner
            .read(&self.name, false)
            .await
            .map_err(|e| store_error(&e))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.inner
            .write(&self.name, &credentials, None)
            .await
            .map_err(|e| store_error(&e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.inner
            .delete(&self.name)
            .await
            .map_err(|e| store_error(&e))
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let lock = self
            .inner
            .store
            .lock(&format!("{}:refresh", self.name), REFRESH_LOCK)
            .await
            .map_err(|e| store_error(&e))?;
        Ok(Some(CredentialRefreshGuard::new(lock)))
    }
}

/// Sign-ins under way (their PKCE verifiers), as the SDK's state store.
struct States {
    inner: Arc<Inner>,
}

fn state_name(csrf: &str) -> String {
    format!("mcp-oauth:state:{}", digest(csrf))
}

#[async_trait::async_trait]
impl StateStore for States {
    async fn save(&self, csrf: &str, state: StoredAuthorizationState) -> Result<(), AuthError> {
        self.inner
            .write(&state_name(csrf), &state, Some(LINK_LIFETIME))
            .await
            .map_err(|e| store_error(&e))
    }

    async fn load(&self, csrf: &str) -> Result<Option<StoredAuthorizationState>, AuthError> {
        self.inner
            .read(&state_name(csrf), false)
            .await
            .map_err(|e| store_error(&e))
    }

    async fn delete(&self, csrf: &str) -> Result<(), AuthError> {
        self.inner
            .delete(&state_name(csrf))
            .await
            .map_err(|e| store_error(&e))
    }
}
