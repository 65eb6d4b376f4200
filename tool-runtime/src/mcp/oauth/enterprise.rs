//! A mount reached as an enterprise's user without a browser (enterprise-managed authorization,
//! the MCP extension `io.modelcontextprotocol/enterprise-managed-authorization`): the user's ID
//! token from the enterprise's identity provider is exchanged there for an identity assertion
//! grant (an ID-JAG, RFC 8693 token exchange), which the server's authorization server takes as
//! a JWT bearer grant (RFC 7523) for an access token. Through the SDK's exchange
//! (`rmcp::transport::auth::enterprise`).

use rmcp::transport::auth::default_oauth_http_client;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};

use super::client::{authorization_server, off_thread};
use crate::tool::secret::Secret;

/// How a mount reaches a server as an enterprise's user, for
/// [`RemoteServer::as_enterprise_user`](crate::mcp::RemoteServer::as_enterprise_user): the
/// identity provider (its issuer and token endpoint, and this client there), the user's ID token
/// from it, and this client at the server's authorization server, which trusts that provider.
#[derive(Clone)]
pub struct EnterpriseGrant {
    idp_issuer: String,
    idp_token_endpoint: String,
    idp_client: (String, Option<Secret<String>>),
    id_token: Secret<String>,
    client: (String, Option<Secret<String>>),
    scopes: Vec<String>,
}

impl EnterpriseGrant {
    /// The user's `id_token` from the identity provider `idp_issuer` (token endpoint
    /// `idp_token_endpoint`, where this client is `idp_client_id`), exchanged for a token of the
    /// server's authorization server, where this client is `client_id`. Both clients are public
    /// until given a secret.
    #[must_use]
    pub fn new(
        idp_issuer: impl Into<String>,
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        id_token: Secret<String>,
        client_id: impl Into<String>,
    ) -> Self {
        Self {
            idp_issuer: idp_issuer.into(),
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client: (idp_client_id.into(), None),
            id_token,
            client: (client_id.into(), None),
            scopes: Vec::new(),
        }
    }

    /// This client's secret at the identity provider (`client_secret_basic`).
    #[must_use]
    pub fn idp_client_secret(mut self, secret: Secret<String>) -> Self {
        self.idp_client.1 = Some(secret);
        self
    }

    /// This client's secret at the server's authorization server (`client_secret_basic`).
    #[must_use]
    pub fn client_secret(mut self, secret: Secret<String>) -> Self {
        self.client.1 = Some(secret);
        self
    }

    /// The scopes to ask for (none by default: the servers' choice).
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// An access token for the server at `url`: its authorization server found from its
    /// metadata, the ID token exchanged at the identity provider, the grant redeemed there.
    pub(super) async fn token(&self, url: &str) -> Result<String, String> {
        let metadata = authorization_server(url).await?;
        let issuer = metadata.issuer.clone().ok_or_else(|| {
            format!("no token for {url}: its authorization server names no issuer")
        })?;
        let (grant, url) = (self.clone(), url.to_owned());
        off_thread(move || async move {
            let failed = |e: &dyn std::fmt::Display| format!("no token for {url}: {e}");
            let server =
                |issuer: &str, endpoint: &str, (id, secret): &(String, Option<Secret<String>>)| {
                    let server = EmaAuthorizationServer::new(issuer, endpoint, id.as_str());
                    match secret {
                        Some(secret) => server.with_client_authentication(
                            EmaClientAuthentication::ClientSecretBasic(oauth2::ClientSecret::new(
                                secret.expose().clone(),
                            )),
                        ),
                        None => server,
                    }
                };
            let idp = server(
                &grant.idp_issuer,
                &grant.idp_token_endpoint,
                &grant.idp_client,
            );
            let resource_as = server(&issuer, &metadata.token_endpoint, &grant.client);
            let http = default_oauth_http_client().map_err(|e| failed(&e))?;
            let mut request = EmaExchangeRequest::new_with_id_token(
                idp,
                resource_as,
                &url,
                grant.id_token.expose(),
            );
            if !grant.scopes.is_empty() {
                request = request.with_scopes(grant.scopes.clone());
            }
            let token = request
                .exchange(&http, &http)
                .await
                .map_err(|e| failed(&e))?;
            Ok(token.access_token.secret().clone())
        })
        .await
    }
}

impl std::fmt::Debug for EnterpriseGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterpriseGrant")
            .field("idp_issuer", &self.idp_issuer)
            .field("idp_client_id", &self.idp_client.0)
            .field("client_id", &self.client.0)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_enterprise_grant_never_shows_its_token_or_secrets() {
        let grant = EnterpriseGrant::new(
            "https://idp.example",
            "https://idp.example/token",
            "idp-client",
            Secret::new("id.token.value".into()),
            "mcp-client",
        )
        .idp_client_secret(Secret::new("idp-s3cret".into()))
        .client_secret(Secret::new("as-s3cret".into()))
        .scopes(["files.read"]);
        let shown = format!("{grant:?}");
        for hidden in ["id.token.value", "idp-s3cret", "as-s3cret"] {
            assert!(!shown.contains(hidden), "{shown}");
        }
        assert!(
            shown.contains("idp-client") && shown.contains("files.read"),
            "{shown}"
        );
    }
}
