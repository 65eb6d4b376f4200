//! Calls: `POST /tools/{name}` and `POST /invoke`, from request to envelope.

use std::future::Future;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderName};
use axum::response::Response;
use axum::routing::{MethodRouter, get};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::pipeline::Input;
use crate::tool::caller::{Caller, Source};
use crate::tool::context::CallContext;
use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::parsed::Node;

use super::front::{FrontContext, FrontLayer, context_of, front, header_of};
use super::listing::describe_named;
use super::response::{envelope_response, error_response};
use super::{AppState, Shared, body};

/// `GET` and `POST /tools/<name>` for one tool, without a URL parameter to extract. `GET` (and
/// the 405 of other methods) behind the front layer; `POST` does the front's work itself
/// ([`CallService`]).
pub(super) fn named_tool_routes(state: &AppState, name: Arc<str>) -> MethodRouter<AppState> {
    let described = name.clone();
    get(move |State(state): State<AppState>, mut request: Request| {
        let name = described.clone();
        async move { describe_named(&state, &name, &context_of(&mut request)) }
    })
    .layer(FrontLayer(state.clone()))
    // After the layer, so not under it.
    .post_service(CallService {
        state: state.clone(),
        name,
    })
}

/// `POST /tools/<name>` of one tool as a tower service rather than an axum handler behind the
/// front layer: it does what [`Front`] does (request id, authentication, the log line) on its
/// own, without passing a context through the request's extensions, and boxes only the call's
/// own future, where a handler's is boxed with the request it was given and the machinery of
/// its extractors, and the layer's in a box of its own: on every call.
#[derive(Clone)]
pub(super) struct CallService {
    state: AppState,
    name: Arc<str>,
}

impl tower::Service<Request> for CallService {
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = futures_util::future::BoxFuture<'static, Result<Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let (admitted, finish) = front(&self.state, &request);
        let call =
            admitted.and_then(|ctx| call_request_with(&self.state, &self.name, request, ctx));
        let (state, name) = (self.state.clone(), self.name.clone());
        Box::pin(async move {
            let response = match call {
                Ok(call) => call_named(&state, &name, call).await,
                Err(refused) => *refused,
            };
            Ok(finish.response(response))
        })
    }
}

/// The query of `POST /tools/{name}`: `confirm` and `dry_run` (`true` or `false`),
/// `confirmation` (a token), and `format` (the form of the specs the caller was shown).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct CallQuery {
    confirm: Option<bool>,
    dry_run: Option<bool>,
    confirmation: Option<String>,
    format: Option<String>,
}

/// How a `POST /tools/{name}` asks for its call to run.
pub(super) struct CallFlags {
    confirm: bool,
    dry_run: bool,
    confirmation: Option<String>,
    strict_nulls: bool,
}

/// Whether the arguments of a caller shown the specs of `format` (`GET /tools?format=`) may
/// carry strict mode's `null`s; an unknown format is a bad request.
fn strict_nulls_of(format: Option<&str>) -> Result<bool, ToolError> {
    let Some(name) = format else {
        return Ok(false);
    };
    crate::llm::Target::from_name(name)
        .map(crate::llm::Target::writes_strict_nulls)
        .ok_or_else(|| {
            body::invalid_request(format!(
                "unknown format `{name}`; one of {}",
                crate::llm::Target::ALL
                    .map(crate::llm::Target::name)
                    .join(", ")
            ))
        })
}

/// The flags from `?confirm=`/`x-confirm:` and `?dry_run=`/`x-dry-run:`, each `true` or
/// `false` exactly, and `?confirmation=`/`x-confirmation:`; anything else is a bad request.
pub(super) fn call_flags(
    uri: &axum::http::Uri,
    headers: &HeaderMap,
) -> Result<CallFlags, ToolError> {
    static CONFIRM: HeaderName = HeaderName::from_static("x-confirm");
    static DRY_RUN: HeaderName = HeaderName::from_static("x-dry-run");
    static CONFIRMATION: HeaderName = HeaderName::from_static("x-confirmation");
    let query = if uri.query().is_some() {
        Query::<CallQuery>::try_from_uri(uri)
            .map_err(|e| {
                body::invalid_request(format!(
                    "bad query string ({}); the parameters are `confirm` and `dry_run`, each `true` or `false`, `confirmation`, a token, and `format`, the specs' format (`GET /tools?format=`)",
                    e.body_text()
                ))
            })?
            .0
    } else {
        CallQuery::default()
    };
    let header = |name: &HeaderName| match header_of(headers, name).map(|v| v.to_str()) {
        Some(Ok("true")) => Ok(true),
        None | Some(Ok("false")) => Ok(false),
        Some(_) => Err(body::invalid_request(format!(
            "`{name}` must be `true` or `false`"
        ))),
    };
    let token = match header_of(headers, &CONFIRMATION).map(|v| v.to_str()) {
        None => None,
        Some(Ok(t)) => Some(t.to_owned()),
        Some(Err(_)) => {
            return Err(body::invalid_request(format!(
                "`{CONFIRMATION}` must be the token of a `confirmation_required` answer"
            )));
        }
    };
    Ok(CallFlags {
        confirm: query.confirm.unwrap_or(false) || header(&CONFIRM)?,
        dry_run: query.dry_run.unwrap_or(false) || header(&DRY_RUN)?,
        confirmation: query.confirmation.or(token),
        strict_nulls: strict_nulls_of(query.format.as_deref())?,
    })
}

pub(super) fn call_tool(
    State(state): State<AppState>,
    Path(name): Path<String>,
    request: Request,
) -> impl Future<Output = Response> {
    let call = call_request(&state, &name, request);
    async move {
        match call {
            Ok(call) => call_named(&state, &name, call).await,
            Err(refused) => *refused,
        }
    }
}

/// What a call takes from its request before the body is read: the request's parts are not
/// kept in the call's future, which is on every call's path and moved with it (the handlers
/// are plain fns returning futures for the same reason: an `async fn` keeps its arguments).
pub(super) struct CallRequest {
    ctx: CallContext,
    json: bool,
    body: Body,
}

/// A refusal (a bad query or flag header) is boxed: it is rare, and the result is kept in the
/// call's future.
pub(super) fn call_request(
    state: &Shared,
    name: &str,
    mut request: Request,
) -> Result<CallRequest, Box<Response>> {
    let ctx = context_of(&mut request);
    call_request_with(state, name, request, ctx)
}

pub(super) fn call_request_with(
    state: &Shared,
    name: &str,
    request: Request,
    ctx: FrontContext,
) -> Result<CallRequest, Box<Response>> {
    let (parts, body) = request.into_parts();
    match call_flags(&parts.uri, &parts.headers) {
        Ok(flags) => {
            let mut caller = caller(ctx)
                .confirm(flags.confirm)
                .dry_run(flags.dry_run)
                .strict_nulls(flags.strict_nulls);
            if let Some(token) = flags.confirmation {
                caller = caller.confirmation(token);
            }
            Ok(CallRequest {
                json: body::is_json(&parts.headers),
                body,
                ctx: state.registry.context(caller),
            })
        }
        Err(e) => Err(Box::new(error_response(Some(name), e, &ctx.id))),
    }
}

pub(super) async fn call_named(state: &Shared, name: &str, call: CallRequest) -> Response {
    let o = &state.options;
    let CallRequest { ctx, json, body } = call;
    let bytes = match body::json_bytes(
        json,
        body,
        o.requests.body_limit,
        o.requests.max_depth,
        true,
    )
    .await
    {
        Ok(b) => b,
        Err(e) => return error_response(Some(name), e, ctx.request_id()),
    };
    // Parsed into a tree, which a `#[tool]` decodes without a `serde_json::Value`
    // (`crate::parsed`); a body that is not a JSON object is told what is wrong with it.
    let tree = Node::parse(&bytes);
    let args = match &tree {
        Some(node @ Node::Object(_)) => Input::Parsed(node),
        _ => match body::object_of(&bytes) {
            Ok(params) => Input::Value(Value::Object(params)),
            Err(e) => return error_response(Some(name), e, ctx.request_id()),
        },
    };
    envelope_response(&state.registry.call_in(name, args, ctx).await)
}

pub(super) fn caller(ctx: FrontContext) -> Caller {
    let mut caller = Caller::new(Source::Http).request_id(ctx.id);
    if let Some(who) = ctx.identity {
        caller = caller.principal(who.principal).roles(who.roles);
    }
    caller
}

/// What `POST /invoke` asks for.
struct Invocation {
    tool: String,
    params: Value,
    confirm: bool,
    dry_run: bool,
    confirmation: Option<String>,
    strict_nulls: bool,
}

pub(super) async fn invoke(State(state): State<AppState>, mut request: Request) -> Response {
    let FrontContext { id, identity } = context_of(&mut request);
    let (parts, body) = request.into_parts();
    let o = &state.options;
    let request = match body::json_object(
        &parts.headers,
        body,
        o.requests.body_limit,
        o.requests.max_depth,
        false,
    )
    .await
    {
        Ok(r) => r,
        Err(e) => return error_response(None, e, &id),
    };
    let asked = match invocation(request) {
        Ok(asked) => asked,
        Err((tool, e)) => return error_response(tool.as_deref(), e, &id),
    };
    let mut caller = caller(FrontContext { id, identity })
        .confirm(asked.confirm)
        .dry_run(asked.dry_run)
        .strict_nulls(asked.strict_nulls);
    if let Some(token) = asked.confirmation {
        caller = caller.confirmation(token);
    }
    let envelope = state.registry.call(&asked.tool, asked.params, caller).await;
    envelope_response(&envelope)
}

/// The body of `POST /invoke` read: `tool`, `params`, `confirm`, `dry_run`, `confirmation` and
/// `format`, each of its type, and nothing else; or what is wrong (with the tool, once known).
fn invocation(mut request: Map<String, Value>) -> Result<Invocation, (Option<String>, ToolError)> {
    let shape = |m: &str| {
        body::invalid_request(format!(
            "{m}; send {{\"tool\": \"name\", \"params\": {{...}}}}"
        ))
    };
    let kind_of = crate::schema::validate::value_kind;
    let tool = match request.remove("tool") {
        Some(Value::String(t)) => t,
        Some(other) => {
            let e = shape(&format!("`tool` must be a string, not {}", kind_of(&other)));
            return Err((None, e));
        }
        None => return Err((None, shape("`tool` is missing"))),
    };
    let fail = |e: ToolError| Err((Some(tool.clone()), e));
    let params = match request.remove("params") {
        None => Value::Object(Map::new()),
        Some(Value::Object(p)) => Value::Object(p),
        Some(other) => {
            return fail(shape(&format!(
                "`params` must be an object, not {}",
                kind_of(&other)
            )));
        }
    };
    let mut flags = [false; 2];
    for (slot, key) in flags.iter_mut().zip(["confirm", "dry_run"]) {
        match request.remove(key) {
            None => {}
            Some(Value::Bool(b)) => *slot = b,
            Some(other) => {
                return fail(shape(&format!(
                    "`{key}` must be a boolean, not {}",
                    kind_of(&other)
                )));
            }
        }
    }
    let confirmation = match request.remove("confirmation") {
        None => None,
        Some(Value::String(token)) => Some(token),
        Some(other) => {
            return fail(shape(&format!(
                "`confirmation` must be the token string of a `confirmation_required` answer, not {}",
                kind_of(&other)
            )));
        }
    };
    let strict_nulls = match request.remove("format") {
        None => false,
        Some(Value::String(format)) => match strict_nulls_of(Some(&format)) {
            Ok(s) => s,
            Err(e) => return fail(e),
        },
        Some(other) => {
            return fail(shape(&format!(
                "`format` must be the name of a specs format (`GET /tools?format=`), not {}",
                kind_of(&other)
            )));
        }
    };
    if let Some(unknown) = request.keys().next() {
        return fail(shape(&format!("unknown field `{unknown}`")));
    }
    Ok(Invocation {
        tool,
        params,
        confirm: flags[0],
        dry_run: flags[1],
        confirmation,
        strict_nulls,
    })
}

pub(super) async fn not_found(mut request: Request) -> Response {
    error_response(
        None,
        ToolError::new(ErrorKind::NOT_FOUND, "no such route; see GET /openapi.json"),
        &context_of(&mut request).id,
    )
}
