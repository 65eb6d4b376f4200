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
use tracing::Instrument;

use crate::registry::CallTool;
use crate::registry::task::Started;
use crate::tool::caller::{Caller, Source};
use crate::tool::error::{ErrorKind, ToolError};

use super::front::{Admission, FrontLayer, context_of, front, header_of, requester};
use super::listing::describe_named;
use super::response::{envelope_response, error_response};
use super::{Requester, ServedRegistry, body};

/// `GET` and `POST /tools/<name>` for one tool, without a URL parameter to extract. `GET` (and
/// the 405 of other methods) behind the front layer; `POST` does the front's work itself
/// ([`CallService`]).
pub(super) fn named_tool_routes(
    state: &Arc<ServedRegistry>,
    name: Arc<str>,
) -> MethodRouter<Arc<ServedRegistry>> {
    let described = name.clone();
    get(
        move |State(state): State<Arc<ServedRegistry>>, mut request: Request| {
            let name = described.clone();
            async move { describe_named(&state, &name, &context_of(&mut request)) }
        },
    )
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
    state: Arc<ServedRegistry>,
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
        let (state, name) = (self.state.clone(), self.name.clone());
        let span = finish.span.clone();
        match admitted {
            Admission::Ready(admitted) => {
                let call = admitted.and_then(|ctx| call_request_with(&self.name, request, &ctx));
                Box::pin(
                    async move {
                        let response = match call {
                            Ok(call) => call_named(&state, &name, call).await,
                            Err(refused) => *refused,
                        };
                        Ok(finish.response(response))
                    }
                    .instrument(span),
                )
            }
            // The token is checked once keys or an introspection answer are fetched.
            Admission::Waiting(verifying, id) => Box::pin(
                async move {
                    let response = match verifying.await {
                        Ok(identity) => {
                            let ctx = requester(&request, &finish.span, id, identity);
                            match call_request_with(&name, request, &ctx) {
                                Ok(call) => call_named(&state, &name, call).await,
                                Err(refused) => *refused,
                            }
                        }
                        Err(refused) => *refused,
                    };
                    Ok(finish.response(response))
                }
                .instrument(span),
            ),
        }
    }
}

/// What a call asks for, wherever it says so: the query string of `POST /tools/{name}` with its
/// headers ([`of_request`](Self::of_request)), or the body of `POST /invoke`
/// (`invocation`), which also names the tool and its arguments. A value of the wrong type, or
/// a name not listed here, is a bad request that names it.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub(super) struct CallOptions {
    /// The tool to call: `POST /invoke`'s body only (required there).
    #[serde(deserialize_with = "present")]
    tool: Option<String>,
    /// The arguments: `POST /invoke`'s body only (`{}` when left out).
    #[serde(deserialize_with = "present")]
    params: Option<Map<String, Value>>,
    /// Confirms a destructive call (`?confirm=true`, `x-confirm: true`).
    confirm: bool,
    /// A preview without side effects (`?dry_run=true`, `x-dry-run: true`).
    dry_run: bool,
    /// The token of a `confirmation_required` answer (`?confirmation=`, `x-confirmation:`).
    #[serde(deserialize_with = "present")]
    confirmation: Option<String>,
    /// The form of the specs the caller was shown (`GET /tools?format=`).
    #[serde(deserialize_with = "present")]
    format: Option<SpecsFormat>,
}

/// An option given: its value, never `null` (an option left out is `None` by default).
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// A specs format a call names: whether the arguments of a caller shown those specs may carry
/// strict mode's `null`s. Read from its name; an unknown name is a bad request.
#[derive(Deserialize, Clone, Copy)]
#[serde(try_from = "String")]
struct SpecsFormat {
    strict_nulls: bool,
}

impl TryFrom<String> for SpecsFormat {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        use crate::llm::Target;
        Target::from_name(&name)
            .map(|target| SpecsFormat {
                strict_nulls: target.writes_strict_nulls(),
            })
            .ok_or_else(|| {
                let names = Target::ALL.map(Target::name).join(", ");
                format!("unknown format `{name}`; one of {names}")
            })
    }
}

impl CallOptions {
    /// The options of a `POST /tools/{name}`: its query string, and the headers `x-confirm` and
    /// `x-dry-run` (each `true` or `false` exactly, either form turning its option on) and
    /// `x-confirmation` (used when the query has no `confirmation`).
    fn of_request(uri: &axum::http::Uri, headers: &HeaderMap) -> Result<Self, ToolError> {
        static CONFIRM: HeaderName = HeaderName::from_static("x-confirm");
        static DRY_RUN: HeaderName = HeaderName::from_static("x-dry-run");
        static CONFIRMATION: HeaderName = HeaderName::from_static("x-confirmation");
        let bad_query = |why: &str| {
            body::invalid_request(format!(
                "bad query string ({why}); the parameters are `confirm` and `dry_run`, each `true` or `false`, `confirmation`, a token, and `format`, the specs' format (`GET /tools?format=`)"
            ))
        };
        let mut options = if uri.query().is_some() {
            Query::<Self>::try_from_uri(uri)
                .map_err(|e| bad_query(&cause(&e)))?
                .0
        } else {
            Self::default()
        };
        // The tool is in the path, its arguments in the body.
        if options.tool.is_some() || options.params.is_some() {
            let field = if options.tool.is_some() {
                "tool"
            } else {
                "params"
            };
            return Err(bad_query(&format!("unknown field `{field}`")));
        }
        let flag = |name: &HeaderName| match header_of(headers, name).map(|v| v.to_str()) {
            Some(Ok("true")) => Ok(true),
            None | Some(Ok("false")) => Ok(false),
            Some(_) => Err(body::invalid_request(format!(
                "`{name}` must be `true` or `false`"
            ))),
        };
        options.confirm |= flag(&CONFIRM)?;
        options.dry_run |= flag(&DRY_RUN)?;
        match header_of(headers, &CONFIRMATION).map(|v| v.to_str()) {
            None => {}
            Some(Ok(token)) => {
                options.confirmation.get_or_insert_with(|| token.to_owned());
            }
            Some(Err(_)) => {
                return Err(body::invalid_request(format!(
                    "`{CONFIRMATION}` must be the token of a `confirmation_required` answer"
                )));
            }
        }
        Ok(options)
    }

    /// The caller `requester` is, asking for its call to run this way.
    fn caller(self, requester: &Requester) -> Caller {
        let mut caller = requester
            .caller(Source::Http)
            .confirm(self.confirm)
            .dry_run(self.dry_run)
            .strict_nulls(self.format.is_some_and(|f| f.strict_nulls));
        if let Some(token) = self.confirmation {
            caller = caller.confirmation(token);
        }
        caller
    }
}

/// What a rejection of axum's extractors says is wrong (the field and the fault), without the
/// extractor's own preamble.
fn cause(rejection: &(dyn std::error::Error + 'static)) -> String {
    rejection
        .source()
        .map_or_else(|| rejection.to_string(), ToString::to_string)
}

pub(super) fn call_tool(
    State(state): State<Arc<ServedRegistry>>,
    Path(name): Path<String>,
    request: Request,
) -> impl Future<Output = Response> {
    let call = call_request(&name, request);
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
    caller: Caller,
    json: bool,
    /// `Prefer: respond-async`: run as a task if the tool may be one.
    respond_async: bool,
    body: Body,
}

/// A refusal (a bad query or flag header) is boxed: it is rare, and the result is kept in the
/// call's future.
pub(super) fn call_request(name: &str, mut request: Request) -> Result<CallRequest, Box<Response>> {
    let ctx = context_of(&mut request);
    call_request_with(name, request, &ctx)
}

pub(super) fn call_request_with(
    name: &str,
    request: Request,
    ctx: &Requester,
) -> Result<CallRequest, Box<Response>> {
    let (parts, body) = request.into_parts();
    match CallOptions::of_request(&parts.uri, &parts.headers) {
        Ok(options) => Ok(CallRequest {
            json: body::is_json(&parts.headers),
            respond_async: super::tasks::prefers_async(&parts.headers),
            body,
            caller: options.caller(ctx),
        }),
        Err(e) => Err(Box::new(error_response(Some(name), e, &ctx.id))),
    }
}

pub(super) async fn call_named(state: &ServedRegistry, name: &str, call: CallRequest) -> Response {
    let o = &state.options;
    let CallRequest {
        caller,
        json,
        respond_async,
        body,
    } = call;
    let request_id = caller.given_request_id().unwrap_or_default();
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
        Err(e) => return error_response(Some(name), e, request_id),
    };
    if super::tasks::runs_as_task(&state.registry, name, &caller, respond_async) {
        let args = match body::object_of(&bytes) {
            Ok(params) => Value::Object(params),
            Err(e) => return error_response(Some(name), e, request_id),
        };
        let request_id = request_id.to_owned();
        return match state.registry.begin_task(name, args, caller).await {
            Ok(Started::Answered(called)) => envelope_response(&called.envelope),
            Ok(Started::Task(task)) => super::tasks::started(Ok(task), name, &request_id),
            Err(e) => super::tasks::started(Err(e), name, &request_id),
        };
    }
    // Parsed into a tree, which a `#[tool]` decodes without a `serde_json::Value`
    // (`crate::parsed`); a body that is not a JSON object is told what is wrong with it.
    let request = match CallTool::from_json(name, &bytes) {
        Some(request) => request,
        None => match body::object_of(&bytes) {
            Ok(params) => CallTool::new(name, Value::Object(params)),
            Err(e) => return error_response(Some(name), e, request_id),
        },
    };
    envelope_response(&state.registry.handle(request, caller).await.envelope)
}

pub(super) async fn invoke(
    State(state): State<Arc<ServedRegistry>>,
    mut request: Request,
) -> Response {
    let requester = context_of(&mut request);
    let (parts, body) = request.into_parts();
    let o = &state.options;
    let bytes = match body::json_bytes(
        body::is_json(&parts.headers),
        body,
        o.requests.body_limit,
        o.requests.max_depth,
        false,
    )
    .await
    {
        Ok(bytes) => bytes,
        Err(e) => return error_response(None, e, &requester.id),
    };
    let (tool, mut options) = match invocation(&bytes) {
        Ok(asked) => asked,
        Err((tool, e)) => return error_response(tool.as_deref(), e, &requester.id),
    };
    let params = Value::Object(options.params.take().unwrap_or_default());
    let caller = options.caller(&requester);
    envelope_response(&state.registry.call(&tool, params, caller).await)
}

/// The body of `POST /invoke` read: the tool, and its arguments and how it is to run; or what
/// is wrong with it (with the tool, once known).
fn invocation(bytes: &[u8]) -> Result<(String, CallOptions), (Option<String>, ToolError)> {
    let shape = |m: &str| {
        body::invalid_request(format!(
            "{m}; send {{\"tool\": \"name\", \"params\": {{...}}}}, and if need be `confirm` and `dry_run` (booleans), `confirmation` (a token) and `format` (a specs format)"
        ))
    };
    match axum::Json::<CallOptions>::from_bytes(bytes) {
        Ok(axum::Json(mut options)) => match options.tool.take() {
            Some(tool) => Ok((tool, options)),
            None => Err((None, shape("`tool` is missing"))),
        },
        Err(rejection) => {
            // Not a JSON object at all is said as for every body.
            let object = body::object_of(bytes).map_err(|e| (None, e))?;
            let tool = object
                .get("tool")
                .and_then(Value::as_str)
                .map(str::to_owned);
            Err((tool, shape(&cause(&rejection))))
        }
    }
}

pub(super) async fn not_found(mut request: Request) -> Response {
    error_response(
        None,
        ToolError::new(ErrorKind::NOT_FOUND, "no such route; see GET /openapi.json"),
        &context_of(&mut request).id,
    )
}
