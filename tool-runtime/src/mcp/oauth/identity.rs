//! Who a mount is to an authorization server ([`Identity`]), and the connection each opens:
//! the application's token, a signed-in user's, or, for a mount that acts as each caller, none
//! of its own (the tools listed as the application or without a token).

use std::sync::Arc;

use rmcp::ClientServiceExt as _;
use rmcp::RoleClient;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::client::{
    Browser, ClientCredentials, Opening, SignIn, authorized, http_client, kept, signed_in,
};
use crate::mcp::relay::Handler;

/// Who a mount is to an authorization server.
pub(crate) enum Identity {
    /// The application, with its client credentials.
    Application(ClientCredentials),
    /// A user a browser signs in, their token kept in `tokens` (a directory) if given.
    User {
        sign_in: SignIn,
        browser: Arc<dyn Browser>,
        tokens: Option<std::path::PathBuf>,
    },
    /// An enterprise's user, by their identity provider's token (no browser).
    Enterprise(super::EnterpriseGrant),
    /// A workload, by the JWT its platform issued it.
    Workload(super::WorkloadIdentity),
    /// Each caller, with the account they connected; the tools listed as the application
    /// with `lister`, or without a token.
    PerUser {
        mount: Arc<super::accounts::UserMount>,
        accounts: super::ConnectedAccounts,
        lister: Option<ClientCredentials>,
    },
}

/// A connection at `url` with `config`, as `identity`; `challenge`, the server's refusal of
/// the last connection's token.
pub(in crate::mcp) async fn connect(
    opening: Opening<'_>,
    identity: &Identity,
    url: &str,
    config: StreamableHttpClientTransportConfig,
    challenge: Option<String>,
) -> Result<RunningService<RoleClient, Handler>, String> {
    let handshake = |e: rmcp::service::ClientInitializeError| {
        format!("the MCP handshake with {url} failed: {e}")
    };
    let http = http_client()?;
    let http = match identity {
        Identity::Application(credentials)
        | Identity::PerUser {
            lister: Some(credentials),
            ..
        } => authorized(url, credentials, http).await?,
        Identity::Enterprise(grant) => {
            let token = grant.token(url).await?;
            return open(opening, http, config.auth_header(token), url).await;
        }
        Identity::Workload(workload) => {
            let token = workload.token(url).await?;
            return open(opening, http, config.auth_header(token), url).await;
        }
        Identity::PerUser { lister: None, .. } => return open(opening, http, config, url).await,
        Identity::User {
            sign_in,
            browser,
            tokens,
        } => {
            // The token kept from an earlier sign-in, unless the server refused it.
            if challenge.is_none()
                && let Some(dir) = tokens
                && let Some(service) = kept(&opening, url, sign_in, dir, config.clone()).await
            {
                return Ok(service);
            }
            // The server's challenge, from a handshake without a token, unless it refused the
            // last connection's: a server that needs none is spoken to as it is.
            let challenge = if challenge.is_some() {
                challenge
            } else {
                let bare =
                    StreamableHttpClientTransport::with_client(http_client()?, config.clone());
                match (opening.handler)()
                    .serve_with_lifecycle(bare, (opening.lifecycle)())
                    .await
                {
                    Ok(service) => return Ok(service),
                    Err(e) => match e.auth_challenge() {
                        Some(challenge) => Some(challenge.to_owned()),
                        None => return Err(handshake(e)),
                    },
                }
            };
            let (manager, _) = signed_in(
                url,
                sign_in,
                Arc::clone(browser),
                challenge,
                tokens.as_deref(),
            )
            .await?;
            AuthClient::new(http, manager)
        }
    };
    open(opening, http, config, url).await
}

/// A connection at `url` with `config` over `http` (which may add the token itself).
async fn open(
    opening: Opening<'_>,
    http: impl rmcp::transport::streamable_http_client::StreamableHttpClient,
    config: StreamableHttpClientTransportConfig,
    url: &str,
) -> Result<RunningService<RoleClient, Handler>, String> {
    let transport = StreamableHttpClientTransport::with_client(http, config);
    (opening.handler)()
        .serve_with_lifecycle(transport, (opening.lifecycle)())
        .await
        .map_err(|e| format!("the MCP handshake with {url} failed: {e}"))
}

/// The server's challenge in `e`, when it refused the connection's token (`401`) or, to a user
/// who can be asked for more, its scope (`403` `insufficient_scope`): an application asks for
/// the scopes it was given, and a new token would have no more.
pub(in crate::mcp) fn challenge_of(identity: &Identity, e: &rmcp::ServiceError) -> Option<String> {
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
    // The SDK's send error does not name its transport error as its source.
    let rmcp::ServiceError::TransportSend(sent) = e else {
        return None;
    };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(sent.error.as_ref());
    while let Some(current) = source {
        if let Some(refused) = current.downcast_ref::<AuthRequiredError>() {
            return Some(refused.www_authenticate_header.clone());
        }
        if let Some(refused) = current.downcast_ref::<InsufficientScopeError>() {
            return matches!(identity, Identity::User { .. } | Identity::PerUser { .. })
                .then(|| refused.www_authenticate_header.clone());
        }
        source = current.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use futures_util::future::BoxFuture;

    use super::*;
    use crate::tool::error::ToolError;
    use crate::tool::secret::Secret;

    #[test]
    fn a_refused_token_is_replaced_and_a_refused_scope_only_for_a_user() {
        use rmcp::transport::DynamicTransportError;
        use rmcp::transport::streamable_http_client::{
            AuthRequiredError, InsufficientScopeError, StreamableHttpError,
        };
        let sent = |error: StreamableHttpError<std::io::Error>| {
            rmcp::ServiceError::TransportSend(DynamicTransportError::from_parts(
                "test",
                std::any::TypeId::of::<()>(),
                Box::new(error),
            ))
        };
        let expired = sent(StreamableHttpError::AuthRequired(AuthRequiredError::new(
            "Bearer error=\"invalid_token\"".into(),
        )));
        let narrow = sent(StreamableHttpError::InsufficientScope(
            InsufficientScopeError::new("Bearer scope=\"admin\"".into(), Some("admin".into())),
        ));
        let app = Identity::Application(ClientCredentials::secret("a", Secret::new("s".into())));
        let user = Identity::User {
            sign_in: SignIn::new("http://127.0.0.1:1/back", "g"),
            browser: Arc::new(Nobody),
            tokens: None,
        };
        for identity in [&app, &user] {
            assert!(
                challenge_of(identity, &expired)
                    .unwrap()
                    .contains("invalid_token")
            );
        }
        assert!(challenge_of(&app, &narrow).is_none());
        assert_eq!(
            challenge_of(&user, &narrow).as_deref(),
            Some("Bearer scope=\"admin\"")
        );
        assert!(challenge_of(&user, &rmcp::ServiceError::TransportClosed).is_none());
    }

    /// A browser no one uses.
    struct Nobody;

    impl Browser for Nobody {
        fn visit(&self, _: String) -> BoxFuture<'static, Result<String, ToolError>> {
            Box::pin(std::future::ready(Err(ToolError::internal("no browser"))))
        }
    }
}
