//! The pages under `/oauth/connect/` through which a user connects an account: the link a
//! caller was given (`/oauth/connect/{id}`), signed in at this server's own authorization
//! server first (back at `/oauth/connect/back`), then at the mounted server's (back at
//! `/oauth/connect/done`, where its token is kept).

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::auth::AuthorizationManager;
use serde::{Deserialize, Serialize};

use super::accounts::{
    ConnectedAccounts, Inner, LINK_CALLBACK, LINK_LIFETIME, Link, MOUNT_CALLBACK, UserMount,
    link_name,
};
use super::client::off_thread;
use crate::front::auth::oauth::Verdict;

/// The pages of `accounts`, served without a token (the browser has none: each page signs it in
/// itself), their visitors signed in at the issuer of the server's own OAuth.
impl crate::front::server::PublicPages for ConnectedAccounts {
    fn routes(&self, options: &crate::front::server::ServerOptions) -> Router {
        if let Some(oauth) = &options.access.oauth {
            let _ = self.inner.verifier.set(oauth.clone());
        }
        Router::new()
            .route(LINK_CALLBACK, get(back))
            .route(MOUNT_CALLBACK, get(done))
            .route("/oauth/connect/{id}", get(start))
            .with_state(Arc::clone(&self.inner))
    }
}

impl crate::front::server::ServerOptions {
    /// Serves the pages of `accounts` under `/oauth/connect/`, where callers connect the
    /// accounts that mounts acting as each of them need
    /// ([`RemoteServer::per_user`](crate::mcp::RemoteServer::per_user)). The pages tell who
    /// opened a link by signing the browser in at the authorization server of
    /// [`oauth`](Self::oauth), which they need.
    #[must_use]
    pub fn connected_accounts(mut self, accounts: ConnectedAccounts) -> Self {
        self.pages.push(Arc::new(accounts));
        self
    }
}

/// What an authorization server sends the browser back with.
#[derive(Deserialize)]
struct Callback {
    code: Option<String>,
    state: Option<String>,
    iss: Option<String>,
    error: Option<String>,
}

/// A sign-in at a mounted server's authorization server under way: for whom, which link.
#[derive(Serialize, Deserialize)]
struct Flow {
    link: String,
    principal: String,
    mount: String,
}

fn login_name(state: &str) -> String {
    format!("mcp-oauth:login:{state}")
}

fn flow_name(state: &str) -> String {
    format!("mcp-oauth:flow:{state}")
}

/// A page with `text`, nothing else on it.
fn page(status: StatusCode, title: &str, text: &str) -> Response {
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let html = format!(
        "<!doctype html><meta charset=utf-8><title>{}</title><h1>{}</h1><p>{}",
        escape(title),
        escape(title),
        escape(text)
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, "default-src 'none'"),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        html,
    )
        .into_response()
}

fn redirect(url: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, url), (header::CACHE_CONTROL, "no-store")],
    )
        .into_response()
}

fn expired() -> Response {
    page(
        StatusCode::NOT_FOUND,
        "This link is no longer good",
        "It expired or was used. Call the tool again for a new one.",
    )
}

fn failed(why: &str) -> Response {
    tracing::warn!(target: "tool_runtime::mcp", error = %why, "connecting an account failed");
    page(
        StatusCode::BAD_GATEWAY,
        "The account could not be connected",
        "An authorization server did not answer as expected. Call the tool again to retry.",
    )
}

/// The `state` of an authorization URL.
fn state_of(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
}

/// This server as a mount of itself: its own resource, signed in at by its own client.
fn own(inner: &Inner, resource: &str) -> Arc<UserMount> {
    let mut sign_in = super::SignIn::new(
        format!("{}{LINK_CALLBACK}", inner.public_url),
        "MCP gateway",
    );
    if let Some((id, secret)) = &inner.own_client {
        sign_in = sign_in.registered(id.clone(), secret.clone());
    }
    Arc::new(UserMount {
        name: String::new(),
        url: resource.to_owned(),
        sign_in,
    })
}

/// `GET /oauth/connect/{id}`: signs the browser in at this server's authorization server.
async fn start(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    if inner
        .read::<Link>(&link_name(&id), false)
        .await
        .ok()
        .flatten()
        .is_none()
    {
        return expired();
    }
    let Some(verifier) = inner.verifier.get() else {
        return page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Accounts cannot be connected here",
            "This server does not sign its users in with OAuth, so it cannot tell who opened the link.",
        );
    };
    let mount = own(&inner, verifier.resource());
    send_to_sign_in(&inner, mount, Vec::new(), login_name, &id).await
}

/// The authorization URL of a sign-in at `mount`'s server, its client configured, asking for
/// its scopes (else those its metadata lists) and `more`.
async fn sign_in_url(
    inner: &Arc<Inner>,
    manager: &mut AuthorizationManager,
    mount: &UserMount,
    more: &[String],
) -> Result<String, String> {
    let client = inner.client(manager, mount).await?;
    let mut scopes = if client.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        client.scopes.clone()
    };
    for scope in more {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    manager
        .configure_client(client)
        .map_err(|e| format!("no client for {}: {e}", mount.url))?;
    let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
    manager
        .get_authorization_url(&scopes)
        .await
        .map_err(|e| format!("no sign-in at {}: {e}", mount.url))
}

/// Sends the browser to sign in at `mount`'s authorization server, for `scopes` besides its
/// own, `record` kept for the callback under the sign-in's state (the record's name `name`
/// gives).
async fn send_to_sign_in<T: Serialize>(
    inner: &Arc<Inner>,
    mount: Arc<UserMount>,
    scopes: Vec<String>,
    name: fn(&str) -> String,
    record: &T,
) -> Response {
    let flow = Arc::clone(inner);
    let url = off_thread(move || async move {
        let mut manager = flow.bare_manager(&mount).await?;
        sign_in_url(&flow, &mut manager, &mount, &scopes).await
    })
    .await;
    let url = match url {
        Ok(url) => url,
        Err(e) => return failed(&e),
    };
    let Some(state) = state_of(&url) else {
        return failed("the authorization URL has no state");
    };
    if let Err(e) = inner
        .write(&name(&state), record, Some(LINK_LIFETIME))
        .await
    {
        return failed(e.message());
    }
    redirect(&url)
}

/// The token `mount`'s authorization server gives for the `code` of the sign-in `state`
/// (whose `iss` was `issuer`), kept in `tokens` when given.
async fn exchange(
    inner: &Arc<Inner>,
    mount: Arc<UserMount>,
    (code, state, issuer): (String, String, Option<String>),
    tokens: Option<super::accounts::Tokens>,
) -> Result<String, String> {
    let flow = Arc::clone(inner);
    off_thread(move || async move {
        let mut manager = flow.bare_manager(&mount).await?;
        let client = flow.client(&mut manager, &mount).await?;
        manager
            .configure_client(client)
            .map_err(|e| format!("no client for {}: {e}", mount.url))?;
        if let Some(tokens) = tokens {
            manager.set_credential_store(tokens);
        }
        let token = manager
            .exchange_code_for_token_with_issuer(&code, &state, issuer.as_deref())
            .await
            .map_err(|e| format!("no token from {}: {e}", mount.url))?;
        serde_json::to_value(&token)
            .ok()
            .and_then(|token| token["access_token"].as_str().map(str::to_owned))
            .ok_or_else(|| "the token response has no access token".to_owned())
    })
    .await
}

/// The code and state of a callback, or the page that refuses it.
fn code_of(callback: &Callback) -> Result<(String, String), Box<Response>> {
    if let Some(error) = &callback.error {
        return Err(Box::new(page(
            StatusCode::FORBIDDEN,
            "The sign-in was refused",
            &format!("The authorization server answered `{error}`. Call the tool again to retry."),
        )));
    }
    match (&callback.code, &callback.state) {
        (Some(code), Some(state)) => Ok((code.clone(), state.clone())),
        _ => Err(Box::new(page(
            StatusCode::BAD_REQUEST,
            "This is no sign-in",
            "The address has no code and state.",
        ))),
    }
}

/// `GET /oauth/connect/back`: the browser is signed in at this server's authorization server;
/// if it is the user the link was given to, it is sent on to the mounted server's.
async fn back(State(inner): State<Arc<Inner>>, Query(callback): Query<Callback>) -> Response {
    let (code, state) = match code_of(&callback) {
        Ok(pair) => pair,
        Err(refused) => return *refused,
    };
    let Ok(Some(id)) = inner.read::<String>(&login_name(&state), true).await else {
        return expired();
    };
    let Ok(Some(link)) = inner.read::<Link>(&link_name(&id), false).await else {
        return expired();
    };
    let Some(verifier) = inner.verifier.get().cloned() else {
        return expired();
    };
    let mount = own(&inner, verifier.resource());
    let token = exchange(&inner, mount, (code, state, callback.iss.clone()), None).await;
    let token = match token {
        Ok(token) => token,
        Err(e) => return failed(&e),
    };
    let identity = match verifier.verify(&token) {
        Verdict::Known(identity) => Ok(identity),
        Verdict::Refused(_) => Err(()),
        Verdict::Pending(later) => later.await.map_err(|_| ()),
    };
    match identity {
        Ok(identity) if identity.principal == link.principal => {}
        _ => {
            tracing::warn!(target: "tool_runtime::mcp", "a link to connect an account was opened by another user; nothing was stored");
            return page(
                StatusCode::FORBIDDEN,
                "This link is not yours",
                "It was given to another account. Nothing was stored.",
            );
        }
    }
    let Some(mount) = inner.mount(&link.mount) else {
        return expired();
    };
    let flow = Flow {
        link: id,
        principal: link.principal,
        mount: link.mount,
    };
    send_to_sign_in(&inner, mount, link.scopes, flow_name, &flow).await
}

/// `GET /oauth/connect/done`: the user signed in at the mounted server's authorization server;
/// the token it gives is kept for them.
async fn done(State(inner): State<Arc<Inner>>, Query(callback): Query<Callback>) -> Response {
    let (code, state) = match code_of(&callback) {
        Ok(pair) => pair,
        Err(refused) => return *refused,
    };
    let Ok(Some(flow)) = inner.read::<Flow>(&flow_name(&state), true).await else {
        return expired();
    };
    let Some(mount) = inner.mount(&flow.mount) else {
        return expired();
    };
    let name = mount.name.clone();
    let tokens = inner.tokens(&mount, &flow.principal);
    let kept = exchange(
        &inner,
        mount,
        (code, state, callback.iss.clone()),
        Some(tokens),
    )
    .await;
    if let Err(e) = kept {
        return failed(&e);
    }
    let _ = inner.delete(&link_name(&flow.link)).await;
    tracing::info!(target: "tool_runtime::mcp", server = %name, "an account was connected");
    page(
        StatusCode::OK,
        "Connected",
        &format!("Your account at `{name}` is connected. Go back and call again."),
    )
}
