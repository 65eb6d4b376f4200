//! A mounted server behind MCP authorization, reached as the application itself: the OAuth
//! client credentials grant, proven by a secret or a `private_key_jwt` assertion, through the
//! SDK's OAuth client (rmcp's `auth`). It finds the authorization server from the server's
//! protected resource metadata (RFC 9728, then RFC 8414 or OpenID discovery), asks its token
//! endpoint for a token for this server (the resource indicator), and sends it on every
//! request; a session whose token is refused is opened again with a new one.

use rmcp::transport::auth::{AuthClient, ClientCredentialsConfig, JwtSigningAlgorithm, OAuthState};

use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::secret::Secret;

/// How a mount proves it is the application, for
/// [`RemoteServer::as_application`](super::RemoteServer::as_application): a client registered
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

/// `http`, sending a token the authorization server of the server at `url` gave `credentials`.
pub(super) async fn authorized<C>(
    url: &str,
    credentials: &ClientCredentials,
    http: C,
) -> Result<AuthClient<C>, String> {
    let (resource, config) = (url.to_owned(), credentials.config(url));
    let failed = move |e: rmcp::transport::AuthError| format!("no token for {resource}: {e}");
    // The SDK's client credentials future is not `Send` (it keeps a form serializer across an
    // await), so it runs to its end on a blocking thread, on this runtime.
    let runtime = tokio::runtime::Handle::current();
    let url = url.to_owned();
    let manager = tokio::task::spawn_blocking(move || {
        runtime.block_on(async move {
            let mut state = OAuthState::new(url.as_str(), None).await.map_err(&failed)?;
            state
                .authenticate_client_credentials(config)
                .await
                .map_err(&failed)?;
            state
                .into_authorization_manager()
                .ok_or_else(|| format!("no token for {url}: the authorization did not end"))
        })
    })
    .await
    .map_err(|e| format!("the authorization stopped: {e}"))??;
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
}
