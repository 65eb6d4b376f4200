//! MCP over streamable HTTP: rmcp's transport as a tower service and as an axum route, with
//! what the official clients expect around it (JSON-RPC errors for unreadable bodies, `204` for
//! a session's `DELETE`, sessions ended at shutdown only once the answers in flight are out),
//! and each session served to the caller that opened it alone.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::MethodRouter;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::binding::Owner;
use super::sessions::{BoundedSessions, Presented};
use super::{McpServer, drain};
use crate::front::auth::challenge::ScopeChallenge;
use crate::front::safety::AllowedHosts;
use crate::front::server::ServerOptions;
use crate::registry::{Registry, ScopedItem};

/// The header naming a request's MCP session.
const SESSION_ID: &str = "mcp-session-id";

/// Ends the event stream answering a `POST` (put in the request's extensions, where the SDK
/// hands them to the request's handler): what [`CallContext::close_stream`](crate::CallContext::close_stream)
/// cancels. Only with an event store, which keeps what the stream would have carried.
#[derive(Clone)]
pub(crate) struct CloseStream(pub(crate) CancellationToken);

impl McpServer {
    /// The SDK's streamable-HTTP transport as a tower service, which
    /// [`http_route`](Self::http_route) wraps. Sessions live in memory, in `sessions`. Of
    /// `options` it takes the body limit, the `Host` names against DNS rebinding
    /// ([`ServerOptions::allowed_hosts`]) and the session store
    /// ([`ServerOptions::mcp_session_store`]). Cancelling `cancel` ends every session and its open
    /// event streams at once; `http_route` does, once the [`shutdown`](ServerOptions::shutdown)
    /// token of its options is cancelled and the `POST` answers in flight are out.
    fn http_service(
        self,
        options: &ServerOptions,
        sessions: BoundedSessions,
        cancel: CancellationToken,
    ) -> rmcp::transport::StreamableHttpService<McpServer, BoundedSessions> {
        use rmcp::transport::StreamableHttpServerConfig;
        // Questions to clients stop with the server's accepting (a server mounted twice keeps
        // the first token).
        let _ = self.inner.stopping.set(options.shutdown.clone());
        let mut config = StreamableHttpServerConfig::default()
            .with_max_request_body_bytes(options.requests.body_limit)
            .with_cancellation_token(cancel);
        config = match &options.access.allowed_hosts {
            // The SDK's default: `localhost`, `127.0.0.1`, `::1`.
            AllowedHosts::Loopback => config,
            AllowedHosts::Any => config.disable_allowed_hosts(),
            // The SDK accepts every host for an empty list; a blank entry matches no host.
            AllowedHosts::Only(hosts) if hosts.is_empty() => config.with_allowed_hosts([" "]),
            AllowedHosts::Only(hosts) => config.with_allowed_hosts(hosts.clone()),
        };
        config.session_store = super::session_stores::bound(&sessions);
        rmcp::transport::StreamableHttpService::new(
            // One server per session, sharing everything but the session's own part.
            move || Ok(self.new_session()),
            Arc::new(sessions),
            config,
        )
    }

    /// This server with the settings of `options` that are its own.
    fn configured(self, options: &ServerOptions) -> Self {
        let server = match options.sessions.max_subscriptions {
            Some(max) => self.max_subscriptions(max),
            None => self,
        };
        match &options.request_state_key {
            Some(key) => server.request_state_key(key),
            None => server,
        }
    }

    /// The streamable-HTTP endpoint as an axum route, to mount at a path of your own
    /// (`app::router` mounts it at `/mcp`): the SDK's transport, with what the official clients expect of it around
    /// it, within the body limit, `Host` allowlist and session limits of `options`, its streams'
    /// events kept for clients that resume them in the event store of `options`
    /// ([`ServerOptions::mcp_event_store`]). At shutdown
    /// (the [`shutdown`](ServerOptions::shutdown) token of `options` cancelled, as
    /// [`http::serve`](crate::http::serve) does) its sessions end, closing idle clients' event
    /// streams that graceful shutdown would otherwise wait out, but only once every `POST` answer in
    /// flight has been delivered; a request in a session after that gets 404, as for a session
    /// that does not exist. A question a call asks its client (elicitation, sampling) that
    /// is still unanswered when the server stops accepting fails at once, the call answered
    /// "the server is shutting down … call again": the answer would come in a request of its
    /// own, which could no longer reach this server. Unreadable bodies get JSON-RPC errors; a session's `DELETE`, 204;
    /// an `initialize` while [`max_sessions`](ServerOptions::max_sessions) are open, 503 with a
    /// JSON-RPC error. The resource URIs a session follows are capped by
    /// [`max_subscriptions`](ServerOptions::max_subscriptions) of `options` when they set it,
    /// and input-required states sealed with their
    /// [`mcp_request_state_key`](ServerOptions::mcp_request_state_key).
    ///
    /// A session answers only the caller that opened it: the principal that
    /// [authentication](ServerOptions::auth) found (with any of its tokens: a refreshed token
    /// keeps the session), or every caller where none is authenticated. To anyone else a
    /// session is one that does not exist, on every replica, restored sessions included: its
    /// requests, its event stream and its `DELETE` get 404, and it is left as it is. A
    /// `Last-Event-ID` resumes only within the session whose stream sent that event.
    pub fn http_route<S: Clone + Send + Sync + 'static>(
        self,
        options: &ServerOptions,
    ) -> MethodRouter<S> {
        let server = self.configured(options);
        let shutdown = options.shutdown.clone();
        let body_limit = options.requests.body_limit;
        let runtime = tokio::runtime::Handle::try_current().ok();
        // Built outside a runtime, nothing can wait for the answers: sessions end with shutdown.
        let sessions = if runtime.is_some() {
            tokio_util::sync::CancellationToken::new()
        } else {
            shutdown.child_token()
        };
        let posts = Arc::new(drain::Posts::default());
        let registry = Arc::clone(&server.inner.registry);
        let open = BoundedSessions::new(options);
        let resumable = open.resumable();
        // Shared, and called through `handle`: the SDK's `Service::call` copies the service
        // (its configuration's host lists with it) on every request.
        let service = Arc::new(server.http_service(options, open.clone(), sessions.clone()));
        let ended = sessions.clone();
        if let Some(runtime) = runtime {
            let posts = posts.clone();
            runtime.spawn(async move {
                shutdown.cancelled().await;
                posts.idle().await;
                sessions.cancel();
            });
        }
        axum::routing::any_service(tower::service_fn(move |mut request: Request| {
            let method = request.method().clone();
            let owner = Owner::of(&request);
            let caller = caller_of(&request);
            let guard = (method == axum::http::Method::POST).then(|| posts.enter());
            let close = (resumable && method == axum::http::Method::POST).then(|| {
                let close = CancellationToken::new();
                request.extensions_mut().insert(CloseStream(close.clone()));
                close
            });
            let json = declares_json(request.headers());
            let service = service.clone();
            let open = open.clone();
            let registry = registry.clone();
            let ended = ended.is_cancelled();
            async move {
                // Its sessions ended at shutdown, none is served here any more (the SDK would
                // answer 500 as it failed to restore one): a client told its session is gone
                // opens another, which the balancer gives another replica.
                if ended && request.headers().contains_key(SESSION_ID) {
                    return Ok(session_not_found());
                }
                let theirs = in_whose_session(&open, &owner, &mut request).await;
                // A post without a session may open one. At the cap, an `initialize` is refused
                // with an answer a client can act on (the SDK's own is a bare 500): here when the
                // cap is already reached, or after the SDK if another took the last place first.
                let initialize = match admit_post(&registry, &mut request, body_limit).await {
                    Ok(initialize) => initialize,
                    Err(refused) => return Ok(refused),
                };
                let max = open.max_sessions();
                if let Some(id) = &initialize
                    && open.is_full()
                {
                    return Ok(no_room(id, max));
                }
                // Boxed as the SDK's own `call` boxes it: the future is large.
                let (response, refusal) =
                    super::sessions::serve(owner, caller, Box::pin(service.handle(request))).await;
                if let Some(id) = refusal.unasked {
                    return Ok(unasked(&id));
                }
                if refusal.full {
                    // An `initialize`, or a request in a session another replica made that
                    // would be restored here (its id not read: the error's is null).
                    return Ok(no_room(
                        initialize.as_ref().unwrap_or(&serde_json::Value::Null),
                        max,
                    ));
                }
                if json && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
                    return Ok(parse_error(response).await);
                }
                if method == axum::http::Method::DELETE && response.status() == StatusCode::ACCEPTED
                {
                    // The SDK answers a DELETE with 202, whether or not there was a session to
                    // close. The official clients expect 200 or 204 (and log a failure
                    // otherwise); a session that does not exist, or is another's, is 404 as
                    // anywhere else.
                    return Ok(if theirs {
                        axum::response::IntoResponse::into_response(StatusCode::NO_CONTENT)
                    } else {
                        session_not_found()
                    });
                }
                let events = response
                    .headers()
                    .get(header::CONTENT_TYPE)
                    .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
                let response = match close {
                    // A call's stream ends when the call closes it; its events are kept.
                    Some(close) if events => response.map(|body| {
                        Body::from_stream(futures_util::StreamExt::take_until(
                            Body::new(body).into_data_stream(),
                            close.cancelled_owned(),
                        ))
                    }),
                    _ => response.map(Body::new),
                };
                Ok::<_, std::convert::Infallible>(match guard {
                    // The guard lives as long as the body: until the answer is sent (or dropped).
                    Some(guard) => response.map(|body| {
                        Body::new(http_body_util::BodyExt::map_frame(body, move |frame| {
                            let _held = &guard;
                            frame
                        }))
                    }),
                    None => response,
                })
            }
        }))
    }
}

/// Whether `request` names a session `owner` opened. A request in a session another caller
/// opened is handed to the SDK under an id no session has, so that whatever it is, it is
/// answered as for a session that does not exist.
async fn in_whose_session(open: &BoundedSessions, owner: &Owner, request: &mut Request) -> bool {
    let Some(id) = request
        .headers()
        .get(SESSION_ID)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    match open.presented(id, owner).await {
        Presented::Theirs => true,
        Presented::Unknown => false,
        Presented::NotTheirs => {
            let unknown =
                HeaderValue::from_str(&super::random_id()).expect("hex digits are a header value");
            request.headers_mut().insert(SESSION_ID, unknown);
            false
        }
    }
}

/// What a post asks, read before the SDK serves it: its id, its method, and the tool or
/// prompt (`name`), resource (`uri`) or task (`task`) it names.
struct Post {
    id: serde_json::Value,
    method: String,
    name: Option<String>,
    uri: Option<String>,
    task: Option<String>,
}

/// A post, read (and rebuilt from the bytes read, for the SDK): `None` for a body that is not
/// one JSON-RPC request, which the SDK answers. A body over `body_limit` is answered 413 here,
/// as the SDK would.
async fn read_post(
    request: Request,
    body_limit: usize,
) -> Result<(Request, Option<Post>), Response> {
    use std::borrow::Cow;
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(default)]
        id: serde_json::Value,
        #[serde(borrow)]
        method: Cow<'a, str>,
        #[serde(borrow, default)]
        params: Option<Params<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow, default)]
        name: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        uri: Option<Cow<'a, str>>,
        #[serde(borrow, default, rename = "taskId")]
        task_id: Option<Cow<'a, str>>,
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, body_limit).await else {
        let mut response = Response::new(Body::from(format!(
            "Payload Too Large: request body exceeds {body_limit} bytes"
        )));
        *response.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
        return Err(response);
    };
    let post = serde_json::from_slice::<Message>(&bytes).ok().map(|m| {
        let params = m.params;
        let (name, uri, task) = params.map_or((None, None, None), |p| {
            (
                p.name.map(Cow::into_owned),
                p.uri.map(Cow::into_owned),
                p.task_id.map(Cow::into_owned),
            )
        });
        Post {
            id: m.id,
            method: m.method.into_owned(),
            name,
            uri,
            task,
        }
    });
    Ok((Request::from_parts(parts, Body::from(bytes)), post))
}

/// A `POST`, read first when it may open a session (then the id of an `initialize` comes back)
/// or when its caller is limited by OAuth scopes: a call without the scopes it needs is
/// answered 403 with the challenge here, before a response stream opens, which is what OAuth
/// clients step up on. Other posts go to the SDK unread.
async fn admit_post(
    registry: &Registry,
    request: &mut Request,
    body_limit: usize,
) -> Result<Option<serde_json::Value>, Response> {
    let scoped = scoped_caller(request);
    if request.method() != axum::http::Method::POST
        || (scoped.is_none() && request.headers().contains_key(SESSION_ID))
    {
        return Ok(None);
    }
    let taken = std::mem::replace(request, Request::new(Body::empty()));
    let (read, post) = read_post(taken, body_limit).await?;
    *request = read;
    let Some(post) = post else {
        return Ok(None);
    };
    // A task's `Mcp-Name` is for intermediaries that route polls to the replica holding the
    // task; every replica here reads every task, and some clients leave it out. Given, it must
    // match (the SDK checks); missing, it is the body's.
    if matches!(
        post.method.as_str(),
        "tasks/get" | "tasks/update" | "tasks/cancel"
    ) && !request.headers().contains_key(MCP_NAME)
        && let Some(value) = post.task.and_then(|t| HeaderValue::from_str(&t).ok())
    {
        request.headers_mut().insert(MCP_NAME, value);
    }
    let item = match (post.method.as_str(), &post.name, &post.uri) {
        ("tools/call", Some(name), _) => Some(ScopedItem::Tool(name)),
        ("prompts/get", Some(name), _) => Some(ScopedItem::Prompt(name)),
        ("resources/read", _, Some(uri)) => Some(ScopedItem::Resource(uri)),
        _ => None,
    };
    if let (Some(caller), Some(item)) = (&scoped, item)
        && let Some(refusal) = registry.scope_refusal(item, caller)
    {
        return Err(insufficient_scope(&post.id, &refusal));
    }
    Ok((post.method == "initialize").then_some(post.id))
}

/// The header naming a request's target (SEP-2243).
const MCP_NAME: axum::http::HeaderName = axum::http::HeaderName::from_static("mcp-name");

/// The caller of a request, as the front layer found it.
fn caller_of(request: &Request) -> crate::Caller {
    request
        .extensions()
        .get::<crate::front::requester::Requester>()
        .map_or_else(
            || crate::Caller::new(crate::Source::Mcp),
            |r| r.caller(crate::Source::Mcp),
        )
}

/// The caller of a request the front layer authenticated, when its token limits it by scopes.
fn scoped_caller(request: &Request) -> Option<crate::tool::caller::Caller> {
    let requester = request
        .extensions()
        .get::<crate::front::requester::Requester>()?;
    requester.identity.as_ref()?;
    Some(requester.caller(crate::tool::caller::Source::Mcp))
}

/// The answer to a call whose token lacks its scopes: 403 and a JSON-RPC error naming them;
/// the front layer adds the `WWW-Authenticate` challenge.
fn insufficient_scope(id: &serde_json::Value, refusal: &crate::tool::error::ToolError) -> Response {
    let scopes = crate::front::auth::challenge::scopes_of(refusal).unwrap_or_default();
    let error = json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32003,
        "message": refusal.message(),
        "data": {"type": "insufficient_scope", "scopes": scopes.split(' ').collect::<Vec<_>>()},
    }});
    let mut response = Response::new(Body::from(error.to_string()));
    *response.status_mut() = StatusCode::FORBIDDEN;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response.extensions_mut().insert(ScopeChallenge(scopes));
    response
}

/// The SDK's answer to a request in a session that does not exist.
fn session_not_found() -> Response {
    let mut response = Response::new(Body::from("Not Found: Session not found"));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// The answer to a client's answer (a response or error) to a request this server never sent
/// it from here: 400 and a JSON-RPC error, rather than the `202 Accepted` of an answer taken,
/// after which a client would wait for ever for what it thinks it answered (an answer sent to
/// the wrong replica, say).
fn unasked(id: &rmcp::model::RequestId) -> Response {
    let error = json!({"jsonrpc": "2.0", "id": null, "error": {
        "code": -32600,
        "message": format!(
            "invalid request: this server sent no request with id {id} in this MCP session \
             (or it was answered already), so the answer was not taken"
        ),
    }});
    let mut response = Response::new(Body::from(error.to_string()));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The answer to an `initialize` while `max_sessions` are open: 503, a JSON-RPC error with the
/// request's id, and `Retry-After`.
fn no_room(id: &serde_json::Value, max_sessions: usize) -> Response {
    let error = json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32000,
        "message": format!(
            "the server has {max_sessions} MCP sessions open, the most it keeps; \
             retry later, or close a session you no longer use (DELETE /mcp)"
        ),
    }});
    let mut response = Response::new(Body::from(error.to_string()));
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// Whether the request declares a JSON body (`application/json`, with any parameters), as the
/// SDK requires: its `415` then means the body could not be read, not a wrong media type.
fn declares_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The SDK answers a JSON body it cannot read (malformed, nested too deep, not JSON-RPC) with a
/// plain-text 415; clients expect JSON-RPC errors. Same message, as `-32700` (parse error) or
/// `-32600` (invalid request) with status 400.
async fn parse_error<B>(response: axum::http::Response<B>) -> Response
where
    B: axum::body::HttpBody,
{
    let detail = match http_body_util::BodyExt::collect(response.into_body()).await {
        Ok(body) => String::from_utf8_lossy(&body.to_bytes()).into_owned(),
        Err(_) => String::new(),
    };
    // Valid JSON that is no JSON-RPC message is an invalid request, not a parse error.
    let (code, what) = if detail.contains("unrecognized JSON-RPC message") {
        (-32600, "invalid request")
    } else {
        (-32700, "parse error")
    };
    let error = json!({"jsonrpc": "2.0", "id": null, "error": {
        "code": code,
        "message": format!("{what}: {}", detail.trim()),
    }});
    let mut response = Response::new(Body::from(error.to_string()));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
