//! Writing responses: JSON bodies, envelopes, errors before the pipeline.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::json;

use crate::front::auth::challenge::ScopeChallenge;
use crate::tool::envelope::Envelope;
use crate::tool::error::{ErrorKind, ToolError};

/// `body` as a JSON response with `status`.
///
/// Serialises straight into one buffer, rather than through `BytesMut`'s `io::Write` as
/// `axum::Json` does: every call's answer takes this path.
pub(crate) fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    let mut buf = Vec::with_capacity(256);
    let status = match serde_json::to_writer(&mut buf, body) {
        Ok(()) => status,
        // Our bodies are JSON values and envelopes, which always serialise; say so if one does not.
        Err(e) => {
            let error =
                ToolError::internal(format_args!("the response could not be serialised: {e}"));
            buf =
                serde_json::to_vec(&json!({"status": "error", "error": error})).unwrap_or_default();
            StatusCode::INTERNAL_SERVER_ERROR
        }
    };
    json_bytes(status, buf)
}

pub(super) fn json_bytes(status: StatusCode, buf: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(buf));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Marks `response` for the scope challenge when `error` is `insufficient_scope`.
fn challenge_scopes(response: &mut Response, error: &ToolError) {
    if error.kind() == ErrorKind::INSUFFICIENT_SCOPE
        && let Some(scopes) = crate::front::auth::challenge::scopes_of(error)
    {
        response.extensions_mut().insert(ScopeChallenge(scopes));
    }
}

pub(super) fn envelope_response(envelope: &Envelope) -> Response {
    let status =
        StatusCode::from_u16(envelope.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut buf = Vec::with_capacity(256);
    let mut response = match envelope.write_json(&mut buf) {
        Ok(()) => json_bytes(status, buf),
        Err(_) => json_response(status, envelope),
    };
    if let Some(e) = envelope.error()
        && e.kind() == ErrorKind::RATE_LIMITED
    {
        let after = e.retry_after().map(|d| d.as_secs_f64()).map_or(1, |s| {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            // Reason: clamped to at least 1 first; seconds beyond u64 are not a real wait.
            let secs = s.ceil().max(1.0) as u64;
            secs
        });
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(after));
    }
    if let Some(e) = envelope.error() {
        challenge_scopes(&mut response, e);
    }
    response
}

/// An error envelope for a request that never reached the pipeline.
#[allow(clippy::needless_pass_by_value)] // Reason: every caller builds the error for this call.
pub(crate) fn error_response(tool: Option<&str>, error: ToolError, request_id: &str) -> Response {
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let body = json!({
        "tool": tool,
        "status": "error",
        "error": &error,
        "meta": {"request_id": request_id},
    });
    let mut response = json_response(status, &body);
    challenge_scopes(&mut response, &error);
    response
}
