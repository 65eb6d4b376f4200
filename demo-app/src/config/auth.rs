//! `[auth]` and `[scopes]`: OAuth 2.1 access tokens from an authorization server, and the
//! scopes each tool needs.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use tool_runtime::Secret;
use tool_runtime::http::OAuth;

use super::de;

/// `[auth]`: the authorization server whose access tokens `serve` accepts (beside the tokens of
/// `--auth-file`). Without `issuer`, `serve` knows its callers from `--auth-file` alone.
///
/// ```toml
/// [auth]
/// issuer = "https://idp.example/realms/tools"
/// audience = "https://tools.example/mcp"   # this server's MCP URL, as clients reach it
/// roles_claim = "realm_access.roles"
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    /// The issuer: tokens must carry it as `iss`; its metadata names its keys.
    pub issuer: Option<String>,
    /// This server's canonical MCP URL: tokens must be issued for it (or its base URL).
    pub audience: Option<String>,
    /// Where the roles are in a token: a dotted path of claims.
    pub roles_claim: Option<String>,
    /// The claim naming the caller after the issuer (default `sub`).
    pub principal_claim: Option<String>,
    /// The issuer's key set, when not the one its metadata names.
    pub jwks_url: Option<String>,
    /// A PEM public key file to check signatures with, instead of fetched keys.
    pub public_key: Option<std::path::PathBuf>,
    /// The scopes the metadata lists for clients to ask for.
    pub scopes_supported: Vec<String>,
    /// How far `exp` and `nbf` may be off (default 30 s).
    #[serde(deserialize_with = "de::some_duration")]
    pub leeway: Option<Duration>,
    /// The least time between two fetches of the issuer's keys (default 30 s).
    #[serde(deserialize_with = "de::some_duration")]
    pub key_refresh_floor: Option<Duration>,
    /// `[auth.introspection]`: opaque tokens, asked about at the issuer.
    pub introspection: Option<IntrospectionConfig>,
    /// Scopes that imply others: `"devices:admin" = ["devices:write"]`.
    pub scope_implies: BTreeMap<String, Vec<String>>,
}

/// `[auth.introspection]`: the client this server asks the introspection endpoint as.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntrospectionConfig {
    /// The endpoint, when not the one the issuer's metadata names.
    pub endpoint: Option<String>,
    /// The client id.
    pub client_id: String,
    /// The client secret; never shown.
    pub client_secret: Option<Secret<String>>,
    /// The environment variable that holds the secret, so the file need not.
    pub client_secret_env: Option<String>,
}

impl AuthConfig {
    /// What is wrong with the table as a whole.
    pub(super) fn mistake(&self) -> Option<String> {
        match (&self.issuer, &self.audience) {
            (Some(_), None) => {
                return Some("`issuer` needs `audience`, this server's MCP URL".into());
            }
            (None, Some(_)) => return Some("`audience` needs `issuer`".into()),
            _ => {}
        }
        if self.jwks_url.is_some() && self.public_key.is_some() {
            return Some("name `jwks_url` or `public_key`, not both".into());
        }
        if let Some(i) = &self.introspection
            && i.client_secret.is_some() == i.client_secret_env.is_some()
        {
            return Some(
                "[auth.introspection]: name `client_secret` or `client_secret_env` (one)".into(),
            );
        }
        None
    }

    /// The verifier `serve` accepts tokens with; `None` without an `issuer`.
    pub fn oauth(&self, env: impl Fn(&str) -> Option<String>) -> Result<Option<OAuth>, String> {
        let (Some(issuer), Some(audience)) = (&self.issuer, &self.audience) else {
            return Ok(None);
        };
        let mut builder = OAuth::builder(issuer, audience)
            .scopes_supported(self.scopes_supported.iter().cloned());
        if let Some(claim) = &self.roles_claim {
            builder = builder.roles_claim(claim);
        }
        if let Some(claim) = &self.principal_claim {
            builder = builder.principal_claim(claim);
        }
        if let Some(url) = &self.jwks_url {
            builder = builder.jwks_url(url);
        }
        if let Some(path) = &self.public_key {
            let pem = std::fs::read(path)
                .map_err(|e| format!("[auth] public_key {}: {e}", path.display()))?;
            builder = builder.public_key_pem(pem);
        }
        if let Some(leeway) = self.leeway {
            builder = builder.leeway(leeway);
        }
        if let Some(floor) = self.key_refresh_floor {
            builder = builder.key_refresh_floor(floor);
        }
        if let Some(i) = &self.introspection {
            let secret = match (&i.client_secret, &i.client_secret_env) {
                (Some(secret), _) => secret.expose().clone(),
                (None, Some(name)) => env(name).ok_or_else(|| {
                    format!("[auth.introspection] client_secret_env: the environment variable `{name}` is unset or empty")
                })?,
                (None, None) => String::new(),
            };
            builder = builder.introspection(i.endpoint.clone(), &i.client_id, secret);
        }
        builder
            .build()
            .map(Some)
            .map_err(|e| format!("[auth]: {e}"))
    }
}
