//! Resources and prompts over HTTP: `GET /resources`, `GET /resources/read?uri=`,
//! `GET /prompts`, `POST /prompts/{name}` and `POST /complete`. Each read, get, completion and
//! listing enters the registry through [`Registry::handle`](crate::Registry::handle): reads and
//! gets pass the pipeline's policies, limits and audit as a call does; completions and a
//! template's list run as their resource or prompt (its roles, rate, concurrency and time
//! limit), not audited.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::registry::{Caching, ResourceRead};
use crate::resource::{ResourceMeta, UriTemplate};
use crate::tool::caller::Source;
use crate::tool::complete::CompletionRef;
use crate::tool::error::{ErrorKind, ToolError};

use super::front::context_of;
use super::response::{error_response, json_response};
use super::{ServedRegistry, body, listing::serde_urlencoded_query};

/// A raw read is served in a sandbox of its own: a resource's HTML or SVG never runs as the
/// server's (and the console's) origin.
const RAW_CSP: &str = "sandbox";

/// An error envelope, with `Retry-After` when the error is `rate_limited`.
fn refused(error: ToolError, request_id: &str) -> Response {
    let after = (error.kind() == ErrorKind::RATE_LIMITED).then(|| {
        error.retry_after().map_or(1, |d| {
            (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
        })
    });
    let mut response = error_response(None, error, request_id);
    if let Some(after) = after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(after));
    }
    response
}

/// A template as `GET /resources` lists it.
fn describe_template(meta: &ResourceMeta) -> Value {
    let mut t = json!({
        "name": meta.name,
        "uriTemplate": meta.uri,
        "title": meta.title,
    });
    if !meta.description.is_empty() {
        t["description"] = json!(meta.description);
    }
    if let Some(mime) = &meta.mime_type {
        t["mimeType"] = json!(mime);
    }
    t
}

/// `GET /resources`: `{"resources": [...], "templates": [...]}`, what this caller may see: the
/// static resources and those the templates list, then the templates themselves.
pub(super) async fn list_resources(
    State(state): State<Arc<ServedRegistry>>,
    mut request: Request,
) -> Response {
    let caller = context_of(&mut request).caller(Source::Http);
    let templates: Vec<Value> = state
        .registry
        .resources(&caller)
        .iter()
        .filter(|m| UriTemplate::parse(&m.uri).is_ok_and(|t| !t.is_static()))
        .map(|m| describe_template(m))
        .collect();
    let resources: Vec<Value> = state
        .registry
        .list_resources(&caller)
        .await
        .into_iter()
        .map(|(listed, _)| serde_json::to_value(listed).unwrap_or_default())
        .collect();
    json_response(
        StatusCode::OK,
        &json!({"resources": resources, "templates": templates}),
    )
}

/// The query of `GET /resources/read`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadQuery {
    /// The URI to read.
    uri: String,
    /// `json`: the contents envelope whatever the resource's media type.
    format: Option<String>,
}

/// `GET /resources/read?uri=...`: the contents as they are (text, or a blob decoded) with their
/// media type and caching, or with `&format=json` (and always when a read answers several
/// contents) `{"contents": [...]}`.
pub(super) async fn read_resource(
    State(state): State<Arc<ServedRegistry>>,
    mut request: Request,
) -> Response {
    let ctx = context_of(&mut request);
    let query = request.uri().query().unwrap_or_default();
    let query: ReadQuery = match serde_urlencoded_query(query) {
        Ok(q) => q,
        Err(e) => {
            let message = format!(
                "{e}; the query takes `uri`, the resource's URI, and `format=json` for the contents as JSON"
            );
            return refused(body::invalid_request(message), &ctx.id);
        }
    };
    let json_wanted = match query.format.as_deref() {
        None => false,
        Some("json") => true,
        Some(other) => {
            let message = format!("unknown format `{other}`; `json` is the one there is");
            return refused(body::invalid_request(message), &ctx.id);
        }
    };
    let read = match state
        .registry
        .read_resource(&query.uri, ctx.caller(Source::Http))
        .await
    {
        Ok(read) => read,
        Err(e) => return refused(e, &ctx.id),
    };
    let mut response = if json_wanted || read.contents.len() != 1 {
        json_response(StatusCode::OK, &json!({ "contents": read.contents }))
    } else {
        match raw(&read) {
            Ok(r) => r,
            Err(e) => return refused(e, &ctx.id),
        }
    };
    let caching = state.registry.read_caching(&read.resource);
    if let Ok(value) = HeaderValue::from_str(&cache_control(caching)) {
        response.headers_mut().insert(header::CACHE_CONTROL, value);
    }
    if !caching.public {
        // What a private read answers depends on who asks: a cache keys it by the credentials.
        response
            .headers_mut()
            .insert(header::VARY, HeaderValue::from_static("authorization"));
    }
    response
}

/// `Cache-Control` for the registry's caching decision: `max-age` from the time to live,
/// `public` or `private` from who may keep it; without a time to live, `no-cache` (stored, but
/// asked again before each use).
fn cache_control(caching: Caching) -> String {
    let scope = if caching.public { "public" } else { "private" };
    match caching.ttl {
        Some(ttl) => format!("max-age={}, {scope}", ttl.as_secs()),
        None => format!("no-cache, {scope}"),
    }
}

/// One read's only contents as the body: its text, or its blob decoded.
fn raw(read: &ResourceRead) -> Result<Response, ToolError> {
    let contents = &read.contents[0];
    let (bytes, default_type) = match (&contents.text, &contents.blob) {
        (Some(text), _) => (text.clone().into_bytes(), "text/plain"),
        (None, Some(blob)) => (
            base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map_err(|e| {
                    ToolError::internal(format_args!("the resource's blob is not base64: {e}"))
                })?,
            "application/octet-stream",
        ),
        (None, None) => (Vec::new(), "application/octet-stream"),
    };
    let mut media = contents
        .mime_type
        .clone()
        .unwrap_or_else(|| default_type.to_owned());
    // Text is UTF-8; say so, or a browser reads `text/*` as Latin-1.
    if contents.text.is_some()
        && media.starts_with("text/")
        && !media.to_ascii_lowercase().contains("charset")
    {
        media.push_str("; charset=utf-8");
    }
    let media = HeaderValue::from_str(&media)
        .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"));
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, media);
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(RAW_CSP),
    );
    Ok(response)
}

/// `GET /prompts`: `{"prompts": [{"name", "title", "description", "arguments"}]}`, what this
/// caller may see.
pub(super) async fn list_prompts(
    State(state): State<Arc<ServedRegistry>>,
    mut request: Request,
) -> Response {
    let caller = context_of(&mut request).caller(Source::Http);
    let prompts: Vec<Value> = state
        .registry
        .prompts(&caller)
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "title": p.title,
                "description": p.description,
                "arguments": p.arguments,
            })
        })
        .collect();
    json_response(StatusCode::OK, &json!({ "prompts": prompts }))
}

/// `POST /prompts/{name}` with an object of string arguments (an empty body: none) →
/// `{"description"?, "messages": [...]}`.
pub(super) async fn get_prompt(
    State(state): State<Arc<ServedRegistry>>,
    Path(name): Path<String>,
    mut request: Request,
) -> Response {
    let ctx = context_of(&mut request);
    let args = match object_body(&state, request).await {
        Ok(args) => args,
        Err(e) => return refused(e, &ctx.id),
    };
    match state
        .registry
        .get_prompt(&name, Value::Object(args), ctx.caller(Source::Http))
        .await
    {
        Ok(reply) => json_response(StatusCode::OK, &reply),
        Err(e) => refused(e, &ctx.id),
    }
}

/// A request's body as a JSON object, within the server's limits; empty: `{}`.
async fn object_body(
    state: &ServedRegistry,
    request: Request,
) -> Result<Map<String, Value>, ToolError> {
    let (parts, request_body) = request.into_parts();
    let o = &state.options.requests;
    let bytes = body::json_bytes(
        body::is_json(&parts.headers),
        request_body,
        o.body_limit,
        o.max_depth,
        true,
    )
    .await?;
    body::object_of(&bytes)
}

/// The body of `POST /complete`, in MCP's `completion/complete` shape.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompleteRequest {
    #[serde(rename = "ref")]
    reference: Reference,
    argument: ArgumentTyped,
    #[serde(default)]
    context: CompleteContext,
}

#[derive(Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
enum Reference {
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArgumentTyped {
    name: String,
    value: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CompleteContext {
    #[serde(default)]
    arguments: BTreeMap<String, String>,
}

/// `POST /complete`: `{"ref": {"type": "ref/prompt", "name"} | {"type": "ref/resource", "uri"},
/// "argument": {"name", "value"}, "context": {"arguments": {...}}}` → `{"completion":
/// {"values", "total"?, "hasMore"}}`, as MCP's `completion/complete` answers.
pub(super) async fn complete(
    State(state): State<Arc<ServedRegistry>>,
    mut request: Request,
) -> Response {
    let ctx = context_of(&mut request);
    let asked = match object_body(&state, request).await.and_then(|object| {
        serde_json::from_value::<CompleteRequest>(Value::Object(object)).map_err(|e| {
            body::invalid_request(format!(
                "{e}; send {{\"ref\": {{\"type\": \"ref/prompt\", \"name\": ...}} or {{\"type\": \"ref/resource\", \"uri\": ...}}, \"argument\": {{\"name\": ..., \"value\": ...}}}}"
            ))
        })
    }) {
        Ok(asked) => asked,
        Err(e) => return refused(e, &ctx.id),
    };
    let reference = match asked.reference {
        Reference::Prompt { name } => CompletionRef::Prompt(name),
        Reference::Resource { uri } => CompletionRef::Resource(uri),
    };
    match state
        .registry
        .complete(
            &reference,
            &asked.argument.name,
            &asked.argument.value,
            asked.context.arguments,
            ctx.caller(Source::Http),
        )
        .await
    {
        Ok(completion) => json_response(StatusCode::OK, &json!({ "completion": completion })),
        Err(e) => refused(e, &ctx.id),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn cache_control_renders_the_decision() {
        let mut caching = Caching {
            ttl: None,
            public: false,
        };
        assert_eq!(cache_control(caching), "no-cache, private");
        caching.ttl = Some(Duration::from_secs(60));
        assert_eq!(cache_control(caching), "max-age=60, private");
        caching.public = true;
        assert_eq!(cache_control(caching), "max-age=60, public");
    }
}
