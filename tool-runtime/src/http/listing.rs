//! What a caller may see: `GET /tools`, `GET /tools/{name}`, `GET /openapi.json`, `/healthz`,
//! `/readyz`.

use std::sync::{Arc, PoisonError};

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Map, Value, json};

use crate::llm::{self, Target};
use crate::registry::RegisteredTool;
use crate::tool::caller::Source;

use super::front::context_of;
use super::response::{error_response, json_bytes, json_response};
use super::{Requester, ServedRegistry, body, openapi};

/// `GET /toolsets`: each mounted toolset's name, tool count, availability and last error; an
/// operator endpoint (`Access::operator_only`): its errors name URLs and connection failures.
pub(super) async fn list_toolsets(
    State(state): State<Arc<ServedRegistry>>,
    mut request: Request,
) -> Response {
    let ctx = context_of(&mut request);
    let access = &state.options.access;
    if let Some(refused) = access.operator_only(ctx.identity.as_ref(), "the toolsets' status") {
        return error_response(None, refused, &ctx.id);
    }
    let toolsets = state.registry.toolset_status().await;
    json_response(StatusCode::OK, &serde_json::json!({ "toolsets": toolsets }))
}

/// The query of `GET /audit`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditQuery {
    /// How many calls (default 50, at most 500).
    limit: Option<usize>,
    /// Only this tool's calls.
    tool: Option<String>,
}

/// `GET /metrics`: every metric in the Prometheus text format, for operators; `404 not_found`
/// while telemetry is off.
#[cfg(feature = "otel")]
pub(super) async fn metrics(
    State(state): State<Arc<ServedRegistry>>,
    mut request: Request,
) -> Response {
    let ctx = context_of(&mut request);
    let access = &state.options.access;
    if let Some(refused) = access.operator_only(ctx.identity.as_ref(), "the metrics") {
        return error_response(None, refused, &ctx.id);
    }
    let Some(telemetry) = crate::otel::installed() else {
        return error_response(
            None,
            crate::ToolError::new(
                crate::ErrorKind::NOT_FOUND,
                "no metrics: telemetry is off (set OTEL_EXPORTER_OTLP_ENDPOINT, or enable it in the \
                 server's telemetry options)",
            ),
            &ctx.id,
        );
    };
    let mut response = Response::new(Body::from(telemetry.prometheus_text()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// `GET /audit?limit=&tool=`: the latest calls in the audit log, newest first, as their outcome
/// records (`{"calls": [...]}`).
pub(super) async fn recent_calls(
    State(state): State<Arc<ServedRegistry>>,
    mut request: Request,
) -> Response {
    let ctx = context_of(&mut request);
    let access = &state.options.access;
    if let Some(refused) = access.operator_only(ctx.identity.as_ref(), "the audit log") {
        return error_response(None, refused, &ctx.id);
    }
    let query = request.uri().query().unwrap_or_default();
    let query: AuditQuery = match serde_urlencoded_query(query) {
        Ok(q) => q,
        Err(e) => {
            return error_response(
                None,
                body::invalid_request(format!("{e}; the query takes `limit` and `tool`")),
                &ctx.id,
            );
        }
    };
    let limit = query.limit.unwrap_or(50).min(500);
    match state
        .registry
        .recent_calls(limit, query.tool.as_deref())
        .await
    {
        Some(Ok(calls)) => json_response(StatusCode::OK, &json!({ "calls": calls })),
        Some(Err(e)) => error_response(
            None,
            crate::tool::error::ToolError::new(
                crate::tool::error::ErrorKind::UNAVAILABLE,
                format!("the audit log cannot be read: {e}"),
            ),
            &ctx.id,
        ),
        None => error_response(
            None,
            crate::tool::error::ToolError::new(
                crate::tool::error::ErrorKind::UNSUPPORTED,
                "this server keeps no audit log",
            ),
            &ctx.id,
        ),
    }
}

/// `GET /.well-known/oauth-protected-resource`: the protected resource metadata (RFC 9728) of
/// the server's base URL.
#[cfg(feature = "oauth")]
pub(super) async fn resource_metadata(State(state): State<Arc<ServedRegistry>>) -> Response {
    protected_resource(&state, false)
}

/// `GET /.well-known/oauth-protected-resource/mcp`: the protected resource metadata of the MCP
/// URL, the one MCP clients read from the challenge of a 401.
#[cfg(feature = "oauth")]
pub(super) async fn mcp_resource_metadata(State(state): State<Arc<ServedRegistry>>) -> Response {
    protected_resource(&state, true)
}

#[cfg(feature = "oauth")]
fn protected_resource(state: &ServedRegistry, mcp: bool) -> Response {
    let Some(oauth) = &state.options.access.oauth else {
        return json_response(StatusCode::NOT_FOUND, &json!({}));
    };
    let document = oauth.metadata_document(mcp, &state.options.info.title);
    let mut response = json_response(StatusCode::OK, &document);
    // The same for every caller, and changed only by a restart with new configuration.
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    response
}

pub(super) async fn healthz() -> Response {
    json_response(StatusCode::OK, &json!({"status": "ok"}))
}

/// `GET /readyz`: 200 `{"status": "ready"}`; 503 while the server drains
/// (`{"status": "draining"}`) or while a readiness check fails (`{"status": "unavailable",
/// "checks": {name: "unavailable"}}`): a check's name says which kind of engine is down
/// (`redis`, `postgres`), never where it is. Why, with the engine's address, is logged, and
/// shown in place of `"unavailable"` to a caller whose token has the operator role. The
/// checks run as `Readiness::report` shares them: once at a time, kept for a second.
pub(super) async fn readyz(
    State(state): State<Arc<ServedRegistry>>,
    mut request: Request,
) -> Response {
    let readiness = &state.options.readiness;
    if readiness.is_draining() {
        return json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &json!({"status": "draining"}),
        );
    }
    let report = readiness.report().await;
    if report.failing.is_empty() {
        return json_response(StatusCode::OK, &json!({"status": "ready"}));
    }
    let access = &state.options.access;
    let identity = context_of(&mut request).identity;
    let operator = access.authenticates() && access.may_operate(identity.as_ref());
    let failing: Map<String, Value> = (report.failing.iter())
        .map(|(name, why)| {
            let shown = if operator {
                why.as_str()
            } else {
                "unavailable"
            };
            (name.to_string(), Value::from(shown))
        })
        .collect();
    json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        &json!({"status": "unavailable", "checks": failing}),
    )
}

pub(super) async fn openapi_json(
    State(state): State<Arc<ServedRegistry>>,
    mut request: Request,
) -> Response {
    let o = &state.options;
    let registry = &state.registry;
    let ctx = context_of(&mut request);
    // The document lists what this caller may see; without policies that is every tool, and
    // the document is kept until the registry changes.
    let cacheable = !registry.has_policies();
    let version = registry.version();
    if cacheable
        && let Some((v, doc)) = &*state.openapi.lock().unwrap_or_else(PoisonError::into_inner)
        && *v == version
    {
        return json_response(StatusCode::OK, &**doc);
    }
    let tools = registry.visible(&ctx.caller(Source::Http));
    #[cfg_attr(not(feature = "oauth"), allow(unused_mut))]
    let mut doc = openapi::document_for(
        &tools,
        &o.info.title,
        &o.info.version,
        o.access.authenticates(),
    );
    #[cfg(feature = "oauth")]
    if let Some(oauth) = &o.access.oauth {
        openapi::with_oauth(&mut doc, oauth.issuer());
    }
    let doc = Arc::new(doc);
    if cacheable {
        *state.openapi.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((version, doc.clone()));
    }
    json_response(StatusCode::OK, &*doc)
}

/// A tool as `GET /tools` describes it, with the OAuth scopes a call needs (`scopes`, the
/// same as the OpenAPI document's per-operation security).
pub(super) fn describe(tool: &RegisteredTool) -> Value {
    let meta = tool.meta();
    let input = tool.input_schema();
    let mut params = Map::new();
    for param in crate::front::describe::params(input, &meta.params) {
        let mut p = json!({
            "type": param.kind().word(),
            "description": param.description(),
            "required": param.required,
        });
        if let Some(d) = param.default() {
            p["default"] = d.clone();
        }
        params.insert(param.name.to_owned(), p);
    }
    let mut described = json!({
        "name": meta.name,
        "title": meta.title,
        "description": meta.description,
        "params": params,
        "input_schema": input,
        "output_schema": tool.output_schema(),
        "annotations": meta.annotations,
        "tags": meta.tags,
        "scopes": meta.options.scopes,
    });
    // `optional` or `required`: its call answers `202` with a task (`Prefer: respond-async`).
    if meta.task != crate::tool::TaskMode::Forbidden {
        described["task"] = json!(meta.task);
    }
    described
}

/// `GET /tools?format=`: the specs, or with `lint=true` the findings, serialised from the cache.
#[derive(serde::Serialize)]
struct Lowered<'a> {
    format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    findings: Option<&'a [llm::Finding]>,
}

/// The query of `GET /tools`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    /// A [`Target`] name: the tools lowered for it instead of the listing.
    format: Option<String>,
    /// With `format`, the lint report instead of the specs.
    #[serde(default)]
    lint: bool,
}

/// `GET /tools`: the tools this caller may see, with an `ETag` (a hash of the body): a client
/// polling with `If-None-Match` gets `304` until the listing changes for it. With
/// `?format=openai` (any [`Target`] name) the same tools as that toolset's `tools` value;
/// adding `&lint=true`, the lint report.
pub(super) async fn list_tools(
    State(state): State<Arc<ServedRegistry>>,
    mut request: Request,
) -> Response {
    let ctx = context_of(&mut request);
    let query = request.uri().query().unwrap_or_default();
    let query: ListQuery = match serde_urlencoded_query(query) {
        Ok(q) => q,
        Err(e) => return error_response(None, body::invalid_request(e), &ctx.id),
    };
    let caller = ctx.caller(Source::Http);
    let body = match query.format.as_deref().map(|f| (f, Target::from_name(f))) {
        None => {
            let visible = state.registry.visible(&caller);
            let tools: Vec<Value> = visible.iter().map(|t| describe(t)).collect();
            serde_json::to_vec(&json!({ "tools": tools }))
        }
        Some((_, Some(target))) => {
            let lowered =
                state
                    .specs
                    .specs(&state.registry, &caller, target, &llm::Options::default());
            let (specs, report) = &*lowered;
            if query.lint {
                serde_json::to_vec(&Lowered {
                    format: target.name(),
                    tools: None,
                    findings: Some(&report.findings),
                })
            } else {
                serde_json::to_vec(&Lowered {
                    format: target.name(),
                    tools: Some(specs),
                    findings: None,
                })
            }
        }
        Some((other, None)) => {
            let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
            let message = format!("unknown format `{other}`; one of {}", names.join(", "));
            return error_response(None, body::invalid_request(message), &ctx.id);
        }
    }
    .unwrap_or_default();
    let etag = format!("\"{:016x}\"", crate::registry::stable_hash(&body));
    let fresh = request
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim().trim_start_matches("W/") == etag)
        });
    let mut response = if fresh {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        json_bytes(StatusCode::OK, body)
    };
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response.headers_mut().insert(header::ETAG, value);
    }
    response
}

pub(super) async fn get_tool(
    State(state): State<Arc<ServedRegistry>>,
    Path(name): Path<String>,
    mut request: Request,
) -> Response {
    describe_named(&state, &name, &context_of(&mut request))
}

pub(super) fn describe_named(state: &ServedRegistry, name: &str, ctx: &Requester) -> Response {
    let caller = ctx.caller(Source::Http);
    if let Some(tool) = state.registry.visible_tool(name, &caller) {
        return json_response(StatusCode::OK, &describe(&tool));
    }
    let error = state.registry.unknown_tool(name, &caller);
    error_response(Some(name), error, &ctx.id)
}

/// The query string as `T`, with axum's own decoder (what `Query<T>` does), its error as text.
pub(super) fn serde_urlencoded_query<T: serde::de::DeserializeOwned>(
    query: &str,
) -> Result<T, String> {
    let uri: axum::http::Uri = format!("/?{query}").parse().map_err(|e| format!("{e}"))?;
    axum::extract::Query::<T>::try_from_uri(&uri)
        .map(|q| q.0)
        .map_err(|e| e.body_text())
}
