//! A mount that acts as each caller: one connection per caller, opened with the token of the
//! account they connected ([`ConnectedAccounts`]), at most [`MAX_USERS`] kept open at once.

use std::sync::Arc;

use super::client::RemoteServer;
use super::oauth::{
    ClientCredentials, ConnectedAccounts, Identity, Opening, SignIn, UserMount, UserSession,
    challenge_of, connect_with,
};
use super::relay::InFlight;
use crate::tool::context::CallContext;
use crate::tool::error::{ErrorKind, ToolError};

/// Callers' connections kept open at once; past it, one is closed for the next.
const MAX_USERS: usize = 1024;

impl RemoteServer {
    /// Reaches an HTTP server behind MCP authorization as each caller, with the token of the
    /// account they connected through `accounts` (see [`ConnectedAccounts`]): no caller's
    /// call ever goes with another's token, nor with their own token for this server. A caller
    /// who has not connected one is answered `authorization_required` with the link to do so
    /// (over MCP, a URL elicitation). `sign_in` says how users sign in at the server: its
    /// client and scopes (its redirect address is the accounts' own,
    /// `PUBLIC_URL/oauth/connect/done`). Its tools are listed without a token, or as the
    /// application with [`lists_as`](Self::lists_as).
    #[must_use]
    pub fn per_user(mut self, accounts: &ConnectedAccounts, sign_in: SignIn) -> Self {
        let url = self.url().unwrap_or_default().to_owned();
        let mount = accounts.add_mount(UserMount {
            name: self.name.clone(),
            url,
            sign_in: sign_in.redirected_to(accounts.mount_callback()),
        });
        self.identity = Some(Identity::PerUser {
            mount,
            accounts: accounts.clone(),
            lister: None,
        });
        self
    }

    /// Lists the tools of a [`per_user`](Self::per_user) mount as the application, with a
    /// token its authorization server gives `credentials`; calls still go as each caller.
    #[must_use]
    pub fn lists_as(mut self, credentials: ClientCredentials) -> Self {
        if let Some(Identity::PerUser { lister, .. }) = &mut self.identity {
            *lister = Some(credentials);
        }
        self
    }

    /// The caller's own connection, for a mount that acts as each caller (`None` for any
    /// other): the open one, or one opened with their token; `authorization_required` with
    /// their link when they have none, `unauthenticated` for a caller with no principal.
    pub(in crate::mcp) async fn user_session(
        &self,
        ctx: &CallContext,
    ) -> Result<Option<UserSession>, ToolError> {
        let Some(Identity::PerUser {
            mount, accounts, ..
        }) = &self.identity
        else {
            return Ok(None);
        };
        let Some(principal) = ctx.principal() else {
            return Err(ToolError::new(
                ErrorKind::UNAUTHENTICATED,
                format!(
                    "MCP server `{}` is reached with each caller's own account: sign in to call it",
                    self.name
                ),
            ));
        };
        if let Some(open) = self.open_session(principal).await {
            return Ok(Some(open));
        }
        // Connected without holding the map: one caller's sign-in or slow server does not hold
        // up the others'. Two first calls of one caller may both connect; the first kept wins.
        let accounts = &accounts.inner;
        let manager = match accounts.manager(mount, principal).await {
            Ok(Some(manager)) => manager,
            Ok(None) => return Err(accounts.ask(mount, principal, &[]).await),
            Err(why) => return Err(self.unavailable(&why)),
        };
        let calls = Arc::new(InFlight::default());
        let opening = Opening {
            handler: &|| self.handler_with(Arc::clone(&calls)),
            lifecycle: &|| self.lifecycle(),
        };
        let config = self.http_config().map_err(|why| self.unavailable(&why))?;
        match connect_with(opening, manager, &mount.url, config).await {
            Ok(service) => Ok(Some(
                self.keep_session(principal, (Arc::new(service), calls))
                    .await,
            )),
            Err((_, true)) => {
                accounts.forget(mount, principal).await;
                Err(accounts.ask(mount, principal, &[]).await)
            }
            Err((why, false)) => Err(self.unavailable(&why)),
        }
    }

    /// `principal`'s open connection, if there is one.
    async fn open_session(&self, principal: &str) -> Option<UserSession> {
        let mut users = self.users.lock().await;
        let (service, calls) = users.get(principal)?;
        if service.is_transport_closed() {
            users.remove(principal);
            return None;
        }
        Some((Arc::clone(service), Arc::clone(calls)))
    }

    /// Keeps `session` as `principal`'s connection, unless another opened meanwhile is kept
    /// (then that one); past [`MAX_USERS`], closed ones go, then any one.
    async fn keep_session(&self, principal: &str, session: UserSession) -> UserSession {
        let mut users = self.users.lock().await;
        if let Some((service, calls)) = users.get(principal)
            && !service.is_transport_closed()
        {
            return (Arc::clone(service), Arc::clone(calls));
        }
        if users.len() >= MAX_USERS {
            users.retain(|_, (service, _)| !service.is_transport_closed());
            if users.len() >= MAX_USERS
                && let Some(any) = users.keys().next().cloned()
            {
                users.remove(&any);
            }
        }
        users.insert(principal.to_owned(), session.clone());
        session
    }

    /// For a mount reached as a signed-in user: signs them in now through its browser, the
    /// token kept where [`keep_tokens_in`](Self::keep_tokens_in) says; the open connection is
    /// closed, so the next call uses it.
    pub(in crate::mcp) fn sign_in_now(
        &self,
    ) -> Option<futures_util::future::BoxFuture<'_, Result<String, ToolError>>> {
        let Some(Identity::User {
            sign_in,
            browser,
            tokens,
        }) = &self.identity
        else {
            return None;
        };
        let url = self.url()?.to_owned();
        Some(Box::pin(async move {
            let (_, path) = super::oauth::signed_in(
                &url,
                sign_in,
                Arc::clone(browser),
                None,
                tokens.as_deref(),
            )
            .await
            .map_err(|why| self.unavailable(&why))?;
            self.reconnect().await;
            Ok(match path {
                Some(path) => format!(
                    "Signed in to `{}`; the token is kept in {}",
                    self.name,
                    path.display()
                ),
                None => format!("Signed in to `{}` (the token is not kept)", self.name),
            })
        }))
    }

    /// For a mount that acts as each caller, when the server refused the caller's token (`e`):
    /// the token forgotten, their connection closed, and the link to connect again as the
    /// error, whose sign-in asks for the scopes the server named too (a step-up).
    pub(in crate::mcp) async fn user_refused(
        &self,
        ctx: &CallContext,
        e: &rmcp::ServiceError,
    ) -> Option<ToolError> {
        let Some(
            identity @ Identity::PerUser {
                mount, accounts, ..
            },
        ) = &self.identity
        else {
            return None;
        };
        let principal = ctx.principal()?;
        let challenge = challenge_of(identity, e)?;
        // A scope the server asks for (`insufficient_scope`) is asked for at the next sign-in,
        // beside the mount's own.
        let scopes: Vec<String> = url::Url::parse(&mount.url)
            .ok()
            .and_then(|base| {
                rmcp::transport::auth::WWWAuthenticateParams::parse(&challenge, &base).scope
            })
            .map(|scope| scope.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        self.users.lock().await.remove(principal);
        accounts.inner.forget(mount, principal).await;
        Some(accounts.inner.ask(mount, principal, &scopes).await)
    }
}
