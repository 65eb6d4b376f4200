//! A mounted server behind MCP authorization, through the SDK's OAuth client (rmcp's `auth`):
//! reached as the application itself (the client credentials grant, proven by a secret or a
//! `private_key_jwt` assertion), or as a user signed in through a browser (the authorization
//! code grant with PKCE). Either finds the authorization server from the server's protected
//! resource metadata (RFC 9728, named by its `401`, then RFC 8414 or OpenID discovery), asks
//! for a token for this server (the resource indicator), and sends it on every request; a
//! connection whose token is refused is opened again with a new one.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use rmcp::ClientServiceExt as _;
use rmcp::RoleClient;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{
    AuthClient, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    ClientCredentialsConfig, JwtSigningAlgorithm, OAuthState,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::mcp::relay::Handler;
use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::secret::Secret;

/// How a mount proves it is the application, for
/// [`RemoteServer::as_application`](crate::mcp::RemoteServer::as_application): a client registered
/// at the server's authorization server, with a secret or a signing key.
#[derive(Clone)]
pub struct ClientCredentials {
    client_id: String,
    proof: Proof,
    scopes: Vec<String>,
}

#[derive(Clone)]
enum Proof {
    Secret(Secret<String>),
    PrivateKeyJwt {
        pem: Secret<String>,
        algorithm: JwtSigningAlgorithm,
    },
}

impl ClientCredentials {
    /// The client `client_id` with its `secret` (`client_secret_post`, or
    /// `client_secret_basic` where the authorization server takes only that).
    #[must_use]
    pub fn secret(client_id: impl Into<String>, secret: Secret<String>) -> Self {
        Self {
            client_id: client_id.into(),
            proof: Proof::Secret(secret),
            scopes: Vec::new(),
        }
    }

    /// The client `client_id` proving itself with a JWT signed by the PEM private key `pem`
    /// (`private_key_jwt`, RFC 7523), with `algorithm`: `RS256`, `RS384`, `RS512`, `ES256` or
    /// `ES384`.
    ///
    /// # Errors
    ///
    /// `invalid_request` naming the algorithm when it is none of those.
    pub fn private_key_jwt(
        client_id: impl Into<String>,
        pem: Secret<String>,
        algorithm: &str,
    ) -> Result<Self, ToolError> {
        let algorithm = match algorithm {
            "RS256" => JwtSigningAlgorithm::RS256,
            "RS384" => JwtSigningAlgorithm::RS384,
            "RS512" => JwtSigningAlgorithm::RS512,
            "ES256" => JwtSigningAlgorithm::ES256,
            "ES384" => JwtSigningAlgorithm::ES384,
            other => {
                return Err(ToolError::new(
                    ErrorKind::INVALID_REQUEST,
                    format!(
                        "`{other}` is no signing algorithm for private_key_jwt: write RS256, \
                         RS384, RS512, ES256 or ES384"
                    ),
                ));
            }
        };
        Ok(Self {
            client_id: client_id.into(),
            proof: Proof::PrivateKeyJwt { pem, algorithm },
            scopes: Vec::new(),
        })
    }

    /// The scopes to ask for (none by default: the authorization server's choice).
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The SDK's settings for a token for the server at `resource`.
    fn config(&self, resource: &str) -> ClientCredentialsConfig {
        let (client_id, scopes, resource) = (
            self.client_id.clone(),
            self.scopes.clone(),
            Some(resource.to_owned()),
        );
        match &self.proof {
            Proof::Secret(secret) => ClientCredentialsConfig::ClientSecret {
                client_id,
                client_secret: secret.expose().clone(),
                scopes,
                resource,
            },
            Proof::PrivateKeyJwt { pem, algorithm } => ClientCredentialsConfig::PrivateKeyJwt {
                client_id,
                signing_key: pem.expose().as_bytes().to_vec(),
                signing_algorithm: *algorithm,
                token_endpoint_audience: None,
                scopes,
                resource,
            },
        }
    }
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let proof = match self.proof {
            Proof::Secret(_) => "client_secret",
            Proof::PrivateKeyJwt { .. } => "private_key_jwt",
        };
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("proof", &proof)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// How a mount signs a user in, for [`RemoteServer::signed_in`](crate::mcp::RemoteServer::signed_in):
/// the authorization code grant with PKCE, redirected back to `redirect_uri`, the client known
/// to the authorization server by a client ID metadata document, a registration of its own
/// (dynamic registration), or credentials registered beforehand.
#[derive(Clone)]
pub struct SignIn {
    redirect_uri: String,
    client_name: String,
    metadata_document: Option<String>,
    registered: Option<(String, Option<Secret<String>>)>,
    scopes: Vec<String>,
}

impl SignIn {
    /// A sign-in redirected back to `redirect_uri`, the client registering itself as
    /// `client_name` where the authorization server allows it.
    #[must_use]
    pub fn new(redirect_uri: impl Into<String>, client_name: impl Into<String>) -> Self {
        Self {
            redirect_uri: redirect_uri.into(),
            client_name: client_name.into(),
            metadata_document: None,
            registered: None,
            scopes: Vec::new(),
        }
    }

    /// The client is the one its metadata document at `url` (an `https` URL) describes: its
    /// client id, where the authorization server supports such documents.
    #[must_use]
    pub fn metadata_document(mut self, url: impl Into<String>) -> Self {
        self.metadata_document = Some(url.into());
        self
    }

    /// The client was registered beforehand as `client_id`, with `secret` if it has one.
    #[must_use]
    pub fn registered(
        mut self,
        client_id: impl Into<String>,
        secret: Option<Secret<String>>,
    ) -> Self {
        self.registered = Some((client_id.into(), secret));
        self
    }

    /// The scopes to ask for; by default those the server's `401` names, else those its
    /// metadata lists.
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    pub(super) fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    pub(super) fn client_name(&self) -> &str {
        &self.client_name
    }

    pub(super) fn requested_scopes(&self) -> &[String] {
        &self.scopes
    }

    pub(super) fn metadata_url(&self) -> Option<&str> {
        self.metadata_document.as_deref()
    }

    pub(super) fn registered_client(&self) -> Option<(&str, Option<&Secret<String>>)> {
        self.registered
            .as_ref()
            .map(|(id, secret)| (id.as_str(), secret.as_ref()))
    }

    /// This sign-in redirected back to `redirect_uri` instead.
    pub(in crate::mcp) fn redirected_to(mut self, redirect_uri: String) -> Self {
        self.redirect_uri = redirect_uri;
        self
    }

    /// The SDK's request, with the server's challenge (its `WWW-Authenticate`) if it sent one.
    fn request(&self, challenge: Option<String>) -> AuthorizationRequest {
        let mut request = AuthorizationRequest::new(self.redirect_uri.clone())
            .with_client_name(self.client_name.clone());
        if self.scopes.is_empty() {
            request = request.with_initial_scope_selection();
        } else {
            request = request.with_scopes(self.scopes.clone());
        }
        if let Some(url) = &self.metadata_document {
            request = request.with_client_metadata_url(url.clone());
        }
        if let Some((id, secret)) = &self.registered {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = secret {
                request = request.with_client_secret(secret.expose().clone());
            }
        }
        if let Some(challenge) = challenge {
            request = request.with_challenge(challenge);
        }
        request
    }
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("metadata_document", &self.metadata_document)
            .field("registered", &self.registered.as_ref().map(|(id, _)| id))
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// The user's side of a [`SignIn`]: takes the user to the authorization server's page at a URL,
/// and answers with the URL it redirected the user back to (the sign-in's `redirect_uri`, with
/// its `code`, `state` and `iss`): a browser and a listener on that address, or, in a test, a
/// request that reads the redirect without following it.
pub trait Browser: Send + Sync + 'static {
    /// The URL the authorization server redirected back to from `url`.
    fn visit(&self, url: String) -> BoxFuture<'static, Result<String, ToolError>>;
}

/// What a connection is opened with: the client's handler and lifecycle, each made anew.
pub(in crate::mcp) struct Opening<'a> {
    pub(in crate::mcp) handler: &'a (dyn Fn() -> Handler + Sync),
    pub(in crate::mcp) lifecycle: &'a (dyn Fn() -> rmcp::ClientLifecycleMode + Sync),
}

/// A connection at `url` with `config`, sending the token `manager` holds (refreshed when it
/// expires); or why not, and whether the server refused the token.
pub(in crate::mcp) async fn connect_with(
    opening: Opening<'_>,
    manager: AuthorizationManager,
    url: &str,
    config: StreamableHttpClientTransportConfig,
) -> Result<RunningService<RoleClient, Handler>, (String, bool)> {
    let http = AuthClient::new(http_client().map_err(|e| (e, false))?, manager);
    // A token that expired and cannot be refreshed is the user's to renew.
    if let Err(e) = http.get_access_token().await {
        let refused = matches!(e, rmcp::transport::AuthError::AuthorizationRequired);
        return Err((format!("no token for {url}: {e}"), refused));
    }
    let transport = StreamableHttpClientTransport::with_client(http, config);
    (opening.handler)()
        .serve_with_lifecycle(transport, (opening.lifecycle)())
        .await
        .map_err(|e| {
            let refused = e.auth_challenge().is_some();
            (format!("the MCP handshake with {url} failed: {e}"), refused)
        })
}

/// The HTTP client of a mount behind authorization: never redirected (a token stays with the
/// server it was given for), its requests traced when telemetry is on.
pub(super) fn http_client()
-> Result<impl rmcp::transport::streamable_http_client::StreamableHttpClient, String> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("no HTTP client: {e}"))?;
    #[cfg(feature = "otel")]
    let client = crate::mcp::traced_http::TracedClient::new(client);
    Ok(client)
}

/// A manager for the server at `url` with its metadata, its tokens kept in `dir` (the file of
/// its authorization server) when given: with that file's path.
async fn manager_for(
    url: &str,
    dir: Option<&std::path::Path>,
) -> Result<(AuthorizationManager, Option<std::path::PathBuf>), String> {
    let (resource, dir) = (url.to_owned(), dir.map(std::path::Path::to_path_buf));
    off_thread(move || async move {
        let failed =
            |e: rmcp::transport::AuthError| format!("no authorization for {resource}: {e}");
        let mut manager = AuthorizationManager::new(resource.as_str())
            .await
            .map_err(failed)?;
        let Some(dir) = dir else {
            return Ok((manager, None));
        };
        let metadata = manager.resolve_metadata().await.map_err(failed)?.metadata;
        let issuer = metadata.issuer.clone().unwrap_or_else(|| resource.clone());
        manager.set_metadata(metadata);
        let path = super::token_file::file_for(&dir, &issuer);
        manager.set_credential_store(super::token_file::TokenFile { path: path.clone() });
        Ok((manager, Some(path)))
    })
    .await
}

/// A connection with the token kept in `dir` for the server at `url`, if there is one and the
/// server takes it (refreshed when it expired); a refused one is forgotten.
pub(super) async fn kept(
    opening: &Opening<'_>,
    url: &str,
    sign_in: &SignIn,
    dir: &std::path::Path,
    config: StreamableHttpClientTransportConfig,
) -> Option<RunningService<RoleClient, Handler>> {
    let (mut manager, path) = manager_for(url, Some(dir)).await.ok()?;
    if !manager.initialize_from_store().await.ok()? {
        return None;
    }
    if let Some((id, Some(secret))) = &sign_in.registered {
        let config =
            rmcp::transport::auth::OAuthClientConfig::new(id.clone(), sign_in.redirect_uri.clone())
                .with_client_secret(secret.expose().clone());
        manager.configure_client(config).ok()?;
    }
    let again = Opening {
        handler: opening.handler,
        lifecycle: opening.lifecycle,
    };
    match connect_with(again, manager, url, config).await {
        Ok(service) => Some(service),
        Err((_, refused)) => {
            if refused && let Some(path) = path {
                let _ = std::fs::remove_file(path);
            }
            None
        }
    }
}

/// The manager of the token of a user `browser` signed in as `sign_in` says, for the server at
/// `url`, which answered `challenge` without one (or no challenge: its resource metadata); the
/// token kept in `dir` when given, at the path returned.
pub(in crate::mcp) async fn signed_in(
    url: &str,
    sign_in: &SignIn,
    browser: Arc<dyn Browser>,
    challenge: Option<String>,
    dir: Option<&std::path::Path>,
) -> Result<(AuthorizationManager, Option<std::path::PathBuf>), String> {
    let (manager, path) = manager_for(url, dir).await?;
    let (resource, request) = (url.to_owned(), sign_in.request(challenge));
    let failed = move |e: rmcp::transport::AuthError| format!("no sign-in at {resource}: {e}");
    let url = url.to_owned();
    let manager = off_thread(move || async move {
        let mut state = OAuthState::Unauthorized(manager);
        state.start_authorization(request).await.map_err(&failed)?;
        let page = state.get_authorization_url().await.map_err(&failed)?;
        let back = browser
            .visit(page)
            .await
            .map_err(|e| format!("no sign-in at {url}: {}", e.message()))?;
        let callback = AuthorizationCallback::from_redirect_url(&back).map_err(&failed)?;
        state
            .handle_callback_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(&failed)?;
        state
            .into_authorization_manager()
            .ok_or_else(|| format!("no sign-in at {url}: the authorization did not end"))
    })
    .await?;
    Ok((manager, path))
}

/// The metadata of the authorization server of the server at `url`: its protected resource
/// metadata's, then RFC 8414 or OpenID discovery, with the 2025-03-26 fall-backs.
pub(super) async fn authorization_server(
    url: &str,
) -> Result<rmcp::transport::auth::AuthorizationMetadata, String> {
    let resource = url.to_owned();
    off_thread(move || async move {
        let manager = AuthorizationManager::new(resource.as_str())
            .await
            .map_err(|e| e.to_string())?;
        let resolved = manager
            .resolve_metadata()
            .await
            .map_err(|e| e.to_string())?;
        Ok(resolved.metadata)
    })
    .await
    .map_err(|e| format!("no authorization server for {url}: {e}"))
}

/// Runs `flow`, one of the SDK's OAuth flows, whose futures are not `Send` (they keep a form
/// serializer across an await), to its end on a blocking thread, on this runtime.
pub(super) async fn off_thread<T, F, Flow>(flow: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> Flow + Send + 'static,
    Flow: Future<Output = Result<T, String>>,
{
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || runtime.block_on(flow()))
        .await
        .map_err(|e| format!("the authorization stopped: {e}"))?
}

/// `http`, sending a token the authorization server of the server at `url` gave `credentials`.
pub(super) async fn authorized<C>(
    url: &str,
    credentials: &ClientCredentials,
    http: C,
) -> Result<AuthClient<C>, String> {
    let (resource, config) = (url.to_owned(), credentials.config(url));
    let failed = move |e: rmcp::transport::AuthError| format!("no token for {resource}: {e}");
    let url = url.to_owned();
    let manager = off_thread(move || async move {
        let mut state = OAuthState::new(url.as_str(), None).await.map_err(&failed)?;
        state
            .authenticate_client_credentials(config)
            .await
            .map_err(&failed)?;
        state
            .into_authorization_manager()
            .ok_or_else(|| format!("no token for {url}: the authorization did not end"))
    })
    .await?;
    Ok(AuthClient::new(http, manager))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_name_their_algorithm_and_never_show_their_secret() {
        let refused = ClientCredentials::private_key_jwt("app", Secret::new("pem".into()), "HS256")
            .unwrap_err();
        assert!(refused.message().contains("`HS256`"), "{refused:?}");
        let signed =
            ClientCredentials::private_key_jwt("app", Secret::new("pem".into()), "ES256").unwrap();
        let shown = format!("{signed:?}");
        assert!(
            shown.contains("private_key_jwt") && !shown.contains("pem\""),
            "{shown}"
        );
        let secret = ClientCredentials::secret("app", Secret::new("hunter2".into())).scopes(["a"]);
        let shown = format!("{secret:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        match secret.config("http://127.0.0.1:1/mcp") {
            ClientCredentialsConfig::ClientSecret {
                client_secret,
                scopes,
                resource,
                ..
            } => {
                assert_eq!(client_secret, "hunter2");
                assert_eq!(scopes, ["a"]);
                assert_eq!(resource.as_deref(), Some("http://127.0.0.1:1/mcp"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_sign_in_asks_for_its_client_and_scopes_with_the_servers_challenge() {
        let plain = SignIn::new("http://127.0.0.1:1/back", "gateway")
            .metadata_document("https://gateway.example/client.json")
            .request(Some("Bearer resource_metadata=\"x\"".into()));
        assert!(plain.use_initial_scopes && plain.scopes.is_empty());
        assert_eq!(plain.client_name.as_deref(), Some("gateway"));
        assert_eq!(
            plain.client_metadata_url.as_deref(),
            Some("https://gateway.example/client.json")
        );
        assert!(plain.challenge.is_some() && plain.client_id.is_none());
        let registered = SignIn::new("http://127.0.0.1:1/back", "gateway")
            .registered("app", Some(Secret::new("s".into())))
            .scopes(["docs:read"])
            .request(None);
        assert!(!registered.use_initial_scopes);
        assert_eq!(registered.scopes, ["docs:read"]);
        assert_eq!(registered.client_id.as_deref(), Some("app"));
        assert_eq!(registered.client_secret.as_deref(), Some("s"));
        let shown = format!(
            "{:?}",
            SignIn::new("x", "y").registered("app", Some(Secret::new("s3cret".into())))
        );
        assert!(!shown.contains("s3cret"), "{shown}");
    }
}
