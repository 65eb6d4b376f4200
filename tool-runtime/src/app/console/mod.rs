//! The browser console at `/`: one page, its script and its style sheet, compiled into the
//! binary; and `GET /whoami`, what the page asks first. The page reads and calls only the
//! server's own routes (`/tools`, `/tools/{name}`, `/resources`, `/resources/read`, `/prompts`,
//! `/prompts/{name}`, `/complete`, `/audit`, `/agent`), under a
//! Content-Security-Policy that lets it load nothing from anywhere else.
//!
//! Plain HTML, CSS and a JavaScript module, with no build step and no dependency: what is served
//! is what is in the repository, and there is nothing to update but the page itself.

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::get;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::http::ServerOptions;
use crate::http::front::context_of;
use crate::http::response::json_response;
use crate::registry::Registry;

const INDEX: &str = include_str!("index.html");
const SCRIPT: &str = include_str!("console.js");
const STYLE: &str = include_str!("console.css");

/// Nothing from another origin, no inline script or style, no framing, no form posts: the page
/// talks to its own server with `fetch` only.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// What `GET /whoami` needs beyond the caller.
struct Console {
    registry: Arc<Registry>,
    http: ServerOptions,
    agent: bool,
}

/// The console's routes, to put behind the HTTP front layer.
pub(super) fn routes(registry: Arc<Registry>, http: &ServerOptions, agent: bool) -> Router {
    let console = Arc::new(Console {
        registry,
        http: http.clone(),
        agent,
    });
    Router::new()
        .route("/", get(|| async { asset(0) }))
        .route("/console.js", get(|| async { asset(1) }))
        .route("/console.css", get(|| async { asset(2) }))
        .route("/whoami", get(whoami).with_state(console))
}

/// The assets with their media types and entity tags (made once, from their bytes).
fn assets() -> &'static [(&'static str, &'static str, String); 3] {
    static ASSETS: OnceLock<[(&str, &str, String); 3]> = OnceLock::new();
    ASSETS.get_or_init(|| {
        [
            (INDEX, "text/html; charset=utf-8"),
            (SCRIPT, "text/javascript; charset=utf-8"),
            (STYLE, "text/css; charset=utf-8"),
        ]
        .map(|(body, media)| {
            let digest = Sha256::digest(body.as_bytes());
            (
                body,
                media,
                format!("\"{}\"", crate::tool::hex(&digest[..12])),
            )
        })
    })
}

/// One asset, revalidated on every load (`no-cache` with an entity tag): a new binary's page is
/// never mixed with an old script.
fn asset(which: usize) -> Response {
    let (body, media, tag) = &assets()[which];
    let mut response = Response::new(Body::from(*body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(tag) = HeaderValue::from_str(tag) {
        headers.insert(header::ETAG, tag);
    }
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// `GET /whoami`: the server's name and version, who calls (principal, roles and the scopes
/// its token grants, when the server authenticates), and what the console can offer them (the audit log, the agent).
async fn whoami(State(console): State<Arc<Console>>, mut request: Request) -> Response {
    let ctx = context_of(&mut request);
    let identity = ctx.identity.as_ref();
    json_response(
        StatusCode::OK,
        &json!({
            "name": console.http.info.title,
            "version": console.http.info.version,
            "auth_required": console.http.access.authenticates(),
            "principal": identity.map(|i| i.principal.as_str()),
            "roles": identity.map(|i| i.roles.as_slice()).unwrap_or_default(),
            "scopes": identity.map(|i| i.scopes.as_slice()).unwrap_or_default(),
            "audit": console.http.access.may_operate(identity) && console.registry.has_audit_log(),
            "agent": console.agent,
        }),
    )
}
