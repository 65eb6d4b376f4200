//! The server as an OAuth 2.1 resource server: access tokens an authorization server issued
//! for it, checked as JWTs against the issuer's keys, or asked about by introspection
//! (RFC 7662) when they are opaque.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use jsonwebtoken::{Algorithm, AlgorithmFamily, Validation};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::fetch::{self, FetchError};
use super::keys::{Found, Keys, Source};
use crate::front::requester::Identity;

/// Verifies OAuth 2.1 access tokens for this server, a resource server
/// ([`ServerOptions::oauth`](crate::http::ServerOptions::oauth)), beside or instead of static
/// tokens: JWTs checked against the issuer's keys, opaque tokens by introspection.
///
#[doc = include_str!("../../../docs/oauth.md")]
#[derive(Clone)]
pub struct OAuth {
    inner: Arc<Inner>,
}

struct Inner {
    issuer: String,
    issuer_url: url::Url,
    /// The canonical MCP URL, and the server's base URL.
    resource: String,
    base: String,
    /// Every `aud` accepted: the two URLs above (the base with and without its final `/`).
    audiences: Vec<String>,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    principal_claim: String,
    roles_claim: Vec<String>,
    leeway: Duration,
    keys: Keys,
    introspection: Option<Introspection>,
    verified: Verified,
    metadata: tokio::sync::Mutex<Option<Metadata>>,
    client: reqwest::Client,
}

/// What the issuer's metadata says that the verifier uses.
#[derive(Clone)]
struct Metadata {
    jwks_uri: Option<url::Url>,
    introspection_endpoint: Option<url::Url>,
}

struct Introspection {
    endpoint: Option<url::Url>,
    client_id: String,
    client_secret: String,
}

/// Tokens found valid, by the SHA-256 of the token: who they are and until when that stands.
/// A client sends one token with many requests: the signature is checked (or the issuer asked)
/// once, not on every request.
struct Verified {
    kept: Mutex<HashMap<[u8; 32], (Identity, Instant)>>,
    /// The longest a verdict is kept (never past the token's `exp`); zero keeps none.
    lifetime: Duration,
}

/// How many verdicts are kept.
const VERIFIED_CACHE: usize = 10_000;

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("issuer", &self.inner.issuer)
            .field("resource", &self.inner.resource)
            .finish_non_exhaustive()
    }
}

/// Builds an [`OAuth`] verifier: [`OAuth::builder`].
#[derive(Debug)]
#[must_use]
pub struct OAuthBuilder {
    issuer: String,
    resource: String,
    jwks_url: Option<String>,
    pem: Option<Vec<u8>>,
    introspection: Option<(Option<String>, String, String)>,
    principal_claim: String,
    roles_claim: Option<String>,
    scopes_supported: Vec<String>,
    authorization_servers: Vec<String>,
    leeway: Duration,
    key_refresh_floor: Duration,
    verdict_lifetime: Duration,
}

impl OAuth {
    /// A verifier of tokens `issuer` issues for `resource`, this server's canonical MCP URL as
    /// its clients reach it (behind a proxy, the public URL: `https://tools.example/mcp`).
    /// JWTs are checked with the keys the issuer's metadata names (`jwks_uri`), unless
    /// [`jwks_url`](OAuthBuilder::jwks_url) or [`public_key_pem`](OAuthBuilder::public_key_pem)
    /// says otherwise.
    pub fn builder(issuer: impl Into<String>, resource: impl Into<String>) -> OAuthBuilder {
        OAuthBuilder {
            issuer: issuer.into(),
            resource: resource.into(),
            jwks_url: None,
            pem: None,
            introspection: None,
            principal_claim: "sub".into(),
            roles_claim: None,
            scopes_supported: Vec::new(),
            authorization_servers: Vec::new(),
            leeway: Duration::from_secs(30),
            key_refresh_floor: Duration::from_secs(30),
            verdict_lifetime: Duration::from_secs(60),
        }
    }

    /// The issuer.
    pub(crate) fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    /// The canonical MCP URL: the `resource` of the MCP endpoint's metadata.
    pub(crate) fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// The server's base URL: the `resource` of the base metadata.
    pub(crate) fn base(&self) -> &str {
        &self.inner.base
    }

    pub(crate) fn authorization_servers(&self) -> &[String] {
        &self.inner.authorization_servers
    }

    pub(crate) fn scopes_supported(&self) -> &[String] {
        &self.inner.scopes_supported
    }

    /// The identity of `token`: at once when the keys in hand (or a kept introspection answer)
    /// decide, else after fetching what is needed.
    pub(crate) fn verify(&self, token: &str) -> Verdict {
        let inner = &self.inner;
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(identity) = inner.verified.kept(&digest) {
            return Verdict::Known(identity);
        }
        if inner.introspection.is_some() && !looks_like_jwt(token) {
            let inner = Arc::clone(inner);
            let token = token.to_owned();
            return Verdict::Pending(Box::pin(
                async move { inner.introspect(&token, digest).await },
            ));
        }
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            return Verdict::Refused(Refusal::invalid(
                "the token is not a JWT this server can read",
            ));
        };
        if !matches!(
            header.alg.family(),
            AlgorithmFamily::Rsa | AlgorithmFamily::Ec | AlgorithmFamily::Ed
        ) {
            return Verdict::Refused(Refusal::invalid(
                "the token's signing algorithm is not accepted",
            ));
        }
        match inner.keys.find(header.kid.as_deref(), header.alg) {
            Found::Key(key) => Verdict::from(inner.check_jwt(token, digest, header.alg, &key)),
            Found::Missing if matches!(inner.keys.source, Source::Pem) => Verdict::Refused(
                Refusal::invalid("the token's signing algorithm does not fit the key"),
            ),
            Found::Missing => {
                let inner = Arc::clone(inner);
                let token = token.to_owned();
                Verdict::Pending(Box::pin(async move {
                    inner.refresh_keys().await?;
                    match inner.keys.find(header.kid.as_deref(), header.alg) {
                        Found::Key(key) => inner.check_jwt(&token, digest, header.alg, &key),
                        Found::Missing => Err(Refusal::invalid(
                            "the token is signed with a key the issuer does not publish",
                        )),
                    }
                }))
            }
        }
    }
}

impl OAuthBuilder {
    /// Fetch the issuer's keys from this JWKS URL instead of the one its metadata names.
    pub fn jwks_url(mut self, url: impl Into<String>) -> Self {
        self.jwks_url = Some(url.into());
        self
    }

    /// Check signatures with this public key (PEM: RSA, EC or Ed25519) instead of fetched keys.
    pub fn public_key_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.pem = Some(pem.into());
        self
    }

    /// Accept opaque tokens (those that are not JWTs) by asking the issuer's introspection
    /// endpoint (RFC 7662) as the client `client_id`: at `endpoint`, or where the issuer's
    /// metadata says (`introspection_endpoint`) when `None`. An active token's answer is kept
    /// as any verdict is ([`verdict_lifetime`](Self::verdict_lifetime)).
    pub fn introspection(
        mut self,
        endpoint: Option<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.introspection = Some((endpoint, client_id.into(), client_secret.into()));
        self
    }

    /// The claim whose value, after the issuer, names the caller: `sub` by default (a token
    /// without it, from the client credentials grant, names its `client_id`).
    pub fn principal_claim(mut self, claim: impl Into<String>) -> Self {
        self.principal_claim = claim.into();
        self
    }

    /// Where the token's roles are, as a dotted path of claims: `realm_access.roles`
    /// (Keycloak), `roles` (Entra), `groups`. An array of strings, or one string. None by default.
    pub fn roles_claim(mut self, path: impl Into<String>) -> Self {
        self.roles_claim = Some(path.into());
        self
    }

    /// The scopes the metadata lists (`scopes_supported`), for clients to ask for.
    pub fn scopes_supported<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        scopes: I,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The authorization servers the metadata names; the issuer alone by default.
    pub fn authorization_servers<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        servers: I,
    ) -> Self {
        self.authorization_servers = servers.into_iter().map(Into::into).collect();
        self
    }

    /// How far `exp` and `nbf` may be off, for clocks that disagree: 30 seconds by default.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The least time between two fetches of the issuer's keys: a token signed with a key not
    /// in hand (a rotation) fetches the keys again, at most this often. 30 seconds by default.
    pub fn key_refresh_floor(mut self, floor: Duration) -> Self {
        self.key_refresh_floor = floor;
        self
    }

    /// How long a token found valid is taken as valid without checking it again: 60 seconds by
    /// default, never past its `exp`, for up to 10,000 tokens. A client sends one token with
    /// many requests, and the signature (or the issuer's introspection endpoint) is asked once.
    /// A token revoked at the issuer, or signed with a key it withdrew, is refused once its
    /// verdict lapses; zero checks every request (with introspection, a revoked token is then
    /// refused at once).
    pub fn verdict_lifetime(mut self, lifetime: Duration) -> Self {
        self.verdict_lifetime = lifetime;
        self
    }

    /// Checks the URLs and the key: `https` (plain `http` on loopback only), a JWKS URL on
    /// the issuer's origin or given here, a key that parses.
    pub fn build(self) -> Result<OAuth, String> {
        let issuer_url = fetch::parse(&self.issuer, "the issuer")?;
        let resource_url = url::Url::parse(&self.resource)
            .map_err(|e| format!("the resource `{}`: {e}", self.resource))?;
        if !matches!(resource_url.scheme(), "https" | "http") {
            return Err(format!(
                "the resource `{}` must be an http(s) URL",
                self.resource
            ));
        }
        if resource_url.fragment().is_some() {
            return Err(format!(
                "the resource `{}` may not have a fragment",
                self.resource
            ));
        }
        let resource = self.resource.trim_end_matches('/').to_owned();
        let base = resource_url.origin().ascii_serialization();
        let keys = match (self.pem, self.jwks_url) {
            (Some(_), Some(_)) => {
                return Err("give a JWKS URL or a public key, not both".into());
            }
            (Some(pem), None) => Keys::pem(&pem)?,
            (None, Some(url)) => Keys::fetched(
                Source::Jwks(fetch::parse(&url, "the JWKS URL")?),
                self.key_refresh_floor,
            ),
            (None, None) => Keys::fetched(Source::Discover, self.key_refresh_floor),
        };
        let introspection = match self.introspection {
            None => None,
            Some((endpoint, client_id, client_secret)) => Some(Introspection {
                endpoint: endpoint
                    .map(|e| fetch::parse(&e, "the introspection endpoint"))
                    .transpose()?,
                client_id,
                client_secret,
            }),
        };
        let authorization_servers = if self.authorization_servers.is_empty() {
            vec![self.issuer.clone()]
        } else {
            self.authorization_servers
        };
        Ok(OAuth {
            inner: Arc::new(Inner {
                audiences: vec![resource.clone(), base.clone(), format!("{base}/")],
                issuer: self.issuer,
                issuer_url,
                resource,
                base,
                authorization_servers,
                scopes_supported: self.scopes_supported,
                principal_claim: self.principal_claim,
                roles_claim: self
                    .roles_claim
                    .map(|p| p.split('.').map(str::to_owned).collect())
                    .unwrap_or_default(),
                leeway: self.leeway,
                keys,
                introspection,
                verified: Verified {
                    kept: Mutex::new(HashMap::new()),
                    lifetime: self.verdict_lifetime,
                },
                metadata: tokio::sync::Mutex::new(None),
                client: fetch::client(),
            }),
        })
    }
}

/// What a token was found to be.
pub(crate) enum Verdict {
    Known(Identity),
    Refused(Refusal),
    /// Keys or an introspection answer must be fetched first.
    Pending(BoxFuture<'static, Result<Identity, Refusal>>),
}

impl From<Result<Identity, Refusal>> for Verdict {
    fn from(result: Result<Identity, Refusal>) -> Self {
        match result {
            Ok(identity) => Verdict::Known(identity),
            Err(refusal) => Verdict::Refused(refusal),
        }
    }
}

/// Why a token was not accepted: what the caller is told (`error_description`), and whether
/// it is this server that could not decide (the authorization server unreachable: 503, and
/// the cause only in the log).
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    pub(crate) reason: &'static str,
    pub(crate) unavailable: bool,
}

impl Refusal {
    fn invalid(reason: &'static str) -> Self {
        Self {
            reason,
            unavailable: false,
        }
    }

    fn unavailable(cause: &FetchError) -> Self {
        tracing::warn!(target: "tool_runtime::auth", error = %cause, "the authorization server could not be asked");
        Self {
            reason: "the authorization server cannot be reached to check the token",
            unavailable: true,
        }
    }
}

/// Whether `token` has a JWT's shape: three base64url parts.
fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

impl Inner {
    fn check_jwt(
        &self,
        token: &str,
        digest: [u8; 32],
        alg: Algorithm,
        key: &jsonwebtoken::DecodingKey,
    ) -> Result<Identity, Refusal> {
        use jsonwebtoken::errors::ErrorKind as E;
        let mut validation = Validation::new(alg);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&self.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data =
            jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation).map_err(|e| {
                Refusal::invalid(match e.kind() {
                    E::ExpiredSignature => "the token has expired",
                    E::ImmatureSignature => "the token is not valid yet",
                    E::InvalidAudience => "the token was issued for another audience",
                    E::InvalidIssuer => "the token was issued by another issuer",
                    E::InvalidSignature => "the token's signature is not valid",
                    E::MissingRequiredClaim(_) => {
                        "the token lacks a claim it needs (exp, iss or aud)"
                    }
                    _ => "the token is not a valid JWT",
                })
            })?;
        let identity = self.identity(&data.claims)?;
        let exp = data.claims.get("exp").and_then(Value::as_u64);
        self.verified.keep(digest, identity.clone(), exp);
        Ok(identity)
    }

    /// The caller the claims of a valid token name.
    fn identity(&self, claims: &Map<String, Value>) -> Result<Identity, Refusal> {
        let subject = claims
            .get(&self.principal_claim)
            .or_else(|| {
                (self.principal_claim == "sub")
                    .then(|| claims.get("client_id"))
                    .flatten()
            })
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Refusal::invalid("the token does not say whom it is for"))?;
        // Walked by reference, claim by claim; no path, no roles.
        let mut path = self.roles_claim.iter();
        let roles = strings(
            path.next()
                .and_then(|first| path.try_fold(claims.get(first)?, |at, step| at.get(step))),
        );
        let scopes = match claims.get("scope").or_else(|| claims.get("scp")) {
            Some(Value::String(s)) => s
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            other => strings(other),
        };
        Ok(Identity {
            principal: format!("{}#{subject}", self.issuer),
            roles,
            scopes,
        })
    }

    /// The issuer's metadata: fetched once, again after a failure.
    async fn metadata(&self) -> Result<Metadata, FetchError> {
        let mut kept = self.metadata.lock().await;
        if let Some(metadata) = &*kept {
            return Ok(metadata.clone());
        }
        let fetched = self.fetch_metadata().await?;
        *kept = Some(fetched.clone());
        Ok(fetched)
    }

    /// OpenID Connect discovery, then RFC 8414's authorization server metadata, whose `issuer`
    /// must be the issuer configured; the URLs it names must be on the issuer's origin.
    async fn fetch_metadata(&self) -> Result<Metadata, FetchError> {
        let issuer = self.issuer.trim_end_matches('/');
        let path = self.issuer_url.path().trim_end_matches('/');
        let origin = self.issuer_url.origin().ascii_serialization();
        let candidates = [
            format!("{issuer}/.well-known/openid-configuration"),
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
        ];
        let mut failures = Vec::new();
        for candidate in candidates {
            let Ok(url) = url::Url::parse(&candidate) else {
                continue;
            };
            match fetch::get_json(&self.client, &url).await {
                Ok(document) => {
                    if document.get("issuer").and_then(Value::as_str) != Some(self.issuer.as_str())
                    {
                        return Err(format!("{url}: its issuer is not `{}`", self.issuer));
                    }
                    let url_of = |key: &str| -> Result<Option<url::Url>, FetchError> {
                        let Some(text) = document.get(key).and_then(Value::as_str) else {
                            return Ok(None);
                        };
                        let parsed = fetch::parse(text, key)?;
                        if !fetch::same_origin(&parsed, &self.issuer_url) {
                            return Err(format!("{url}: its {key} is not on the issuer's origin"));
                        }
                        Ok(Some(parsed))
                    };
                    return Ok(Metadata {
                        jwks_uri: url_of("jwks_uri")?,
                        introspection_endpoint: url_of("introspection_endpoint")?,
                    });
                }
                Err(e) => failures.push(e),
            }
        }
        Err(failures.join("; "))
    }

    async fn refresh_keys(&self) -> Result<bool, Refusal> {
        self.keys
            .refresh(&self.client, async || {
                self.metadata()
                    .await?
                    .jwks_uri
                    .ok_or_else(|| format!("the metadata of {} names no jwks_uri", self.issuer))
            })
            .await
            .map_err(|e| Refusal::unavailable(&e))
    }

    async fn introspect(&self, token: &str, digest: [u8; 32]) -> Result<Identity, Refusal> {
        let Some(introspection) = &self.introspection else {
            return Err(Refusal::invalid(
                "the token is not a JWT this server can read",
            ));
        };
        let endpoint = match &introspection.endpoint {
            Some(endpoint) => endpoint.clone(),
            None => self
                .metadata()
                .await
                .and_then(|m| {
                    m.introspection_endpoint.ok_or_else(|| {
                        format!(
                            "the metadata of {} names no introspection_endpoint",
                            self.issuer
                        )
                    })
                })
                .map_err(|e| Refusal::unavailable(&e))?,
        };
        let answer = fetch::post_form(
            &self.client,
            &endpoint,
            (&introspection.client_id, &introspection.client_secret),
            &[("token", token), ("token_type_hint", "access_token")],
        )
        .await
        .map_err(|e| Refusal::unavailable(&e))?;
        let Value::Object(claims) = answer else {
            return Err(Refusal::invalid("the token is not active"));
        };
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(Refusal::invalid("the token is not active"));
        }
        if let Some(iss) = claims.get("iss")
            && iss.as_str() != Some(self.issuer.as_str())
        {
            return Err(Refusal::invalid("the token was issued by another issuer"));
        }
        let audiences = strings(claims.get("aud"));
        if !audiences.iter().any(|a| self.audiences.contains(a)) {
            return Err(Refusal::invalid(
                "the token was issued for another audience",
            ));
        }
        let now = jsonwebtoken::get_current_timestamp();
        let exp = claims.get("exp").and_then(Value::as_u64);
        if exp.is_some_and(|exp| exp + self.leeway.as_secs() < now) {
            return Err(Refusal::invalid("the token has expired"));
        }
        let identity = self.identity(&claims)?;
        self.verified.keep(digest, identity.clone(), exp);
        Ok(identity)
    }
}

impl Verified {
    fn kept(&self, digest: &[u8; 32]) -> Option<Identity> {
        let cache = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cache
            .get(digest)
            .filter(|(_, until)| Instant::now() < *until)
            .map(|(identity, _)| identity.clone())
    }

    /// Keeps a valid token's identity for up to the verdicts' lifetime, never past `exp`.
    fn keep(&self, digest: [u8; 32], identity: Identity, exp: Option<u64>) {
        if self.lifetime.is_zero() {
            return;
        }
        let now = jsonwebtoken::get_current_timestamp();
        let lifetime = exp.map_or(self.lifetime, |exp| {
            Duration::from_secs(exp.saturating_sub(now)).min(self.lifetime)
        });
        let mut cache = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() >= VERIFIED_CACHE {
            let now = Instant::now();
            cache.retain(|_, (_, until)| now < *until);
            if cache.len() >= VERIFIED_CACHE {
                // Full of live verdicts: start again rather than grow; tokens are checked again.
                cache.clear();
            }
        }
        cache.insert(digest, (identity, Instant::now() + lifetime));
    }
}

/// An array of strings, or one string, as a list.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("claims are an object, not {other}"),
        }
    }

    #[test]
    fn the_caller_is_the_issuer_and_subject_with_roles_at_a_path_and_the_tokens_scopes() {
        let keycloak = OAuth::builder("https://sso.example/realms/t", "https://tools.example/mcp")
            .roles_claim("realm_access.roles")
            .build()
            .unwrap();
        let who = keycloak
            .inner
            .identity(&claims(json!({
                "sub": "ada", "realm_access": {"roles": ["admin", "ops"]}, "scope": "a b"
            })))
            .unwrap();
        assert_eq!(who.principal, "https://sso.example/realms/t#ada");
        assert_eq!(who.roles, ["admin", "ops"]);
        assert_eq!(who.scopes, ["a", "b"]);
        // The path missing, or not a list: no roles. Entra's `scp`; a client's `client_id`.
        let who = keycloak
            .inner
            .identity(&claims(
                json!({"client_id": "app", "realm_access": 3, "scp": ["c"]}),
            ))
            .unwrap();
        assert_eq!(
            (who.principal.as_str(), who.roles.len()),
            ("https://sso.example/realms/t#app", 0)
        );
        assert_eq!(who.scopes, ["c"]);
        // Without a roles claim configured, a `roles` claim is not read.
        let plain = OAuth::builder("https://sso.example", "https://tools.example/mcp")
            .build()
            .unwrap();
        let who = plain
            .inner
            .identity(&claims(json!({"sub": "b", "roles": ["x"]})))
            .unwrap();
        assert!(who.roles.is_empty());
        assert!(
            plain
                .inner
                .identity(&claims(json!({"roles": ["x"]})))
                .is_err()
        );
    }
}
