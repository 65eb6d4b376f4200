//! Reading request bodies within limits: size (413), media type (415), nesting depth (400).
//!
//! Depth is measured on the raw bytes before parsing, so a hostile body never reaches a
//! recursive parser: no stack overflow whatever the input.

use axum::body::{Body, Bytes};
use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;
use serde_json::{Map, Value};

use crate::tool::error::{ErrorKind, ToolError};

/// Why a body was refused, as the error the caller receives.
pub(crate) fn invalid_request(message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorKind::INVALID_REQUEST, message)
}

/// Reads a JSON object body (`POST /agent`'s). An empty body is `{}` when `empty_is_object`.
#[cfg_attr(not(feature = "agent"), allow(dead_code))]
pub(crate) async fn json_object(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    max_depth: usize,
    empty_is_object: bool,
) -> Result<Map<String, Value>, ToolError> {
    let bytes = json_bytes(is_json(headers), body, limit, max_depth, empty_is_object).await?;
    object_of(&bytes)
}

/// Reads a body that is to be a JSON object, checking its size, media type (`json`: whether
/// [`is_json`] said so, asked before reading, so that the request's headers need not be kept
/// while it is read) and depth, but not parsing it. An empty body is `{}` when
/// `empty_is_object`, whatever its media type.
pub(crate) async fn json_bytes(
    json: bool,
    body: Body,
    limit: usize,
    max_depth: usize,
    empty_is_object: bool,
) -> Result<Bytes, ToolError> {
    let bytes = read_limited(body, limit).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        if empty_is_object {
            return Ok(Bytes::from_static(b"{}"));
        }
        return Err(invalid_request("the body is empty; send a JSON object"));
    }
    if !json {
        return Err(ToolError::new(
            ErrorKind::UNSUPPORTED_MEDIA_TYPE,
            "send the body as `Content-Type: application/json`",
        ));
    }
    check_depth(&bytes, max_depth)?;
    Ok(bytes)
}

/// Parses a body read by [`json_bytes`] as a JSON object.
pub(crate) fn object_of(bytes: &[u8]) -> Result<Map<String, Value>, ToolError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(invalid_request(format!(
            "the body must be a JSON object, not {}",
            crate::front::value_kind(&other)
        ))),
        Err(e) => Err(invalid_request(format!("the body is not JSON: {e}"))),
    }
}

async fn read_limited(body: Body, limit: usize) -> Result<Bytes, ToolError> {
    let too_large = || {
        ToolError::new(
            ErrorKind::PAYLOAD_TOO_LARGE,
            format!("the body is larger than the limit of {limit} bytes"),
        )
    };
    // What `Content-Length` declares (hyper's body reports it as its lower bound): refused
    // before reading a byte. Other bodies are cut off at the limit as they are read.
    if axum::body::HttpBody::size_hint(&body).lower() > limit as u64 {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        if let Some(late) = find_source::<super::serve::BodyTimeout>(&e) {
            return ToolError::new(ErrorKind::REQUEST_TIMEOUT, late.to_string());
        }
        let over = std::error::Error::source(&e)
            .is_some_and(<dyn std::error::Error>::is::<http_body_util::LengthLimitError>)
            || e.to_string().contains("length limit");
        if over {
            too_large()
        } else {
            invalid_request(format!("the body could not be read: {e}"))
        }
    })
}

/// The first error of type `E` in `e`'s chain of sources.
fn find_source<'e, E: std::error::Error + 'static>(
    e: &'e (dyn std::error::Error + 'static),
) -> Option<&'e E> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<E>() {
            return Some(found);
        }
        next = e.source();
    }
    None
}

/// `Content-Type` is `application/json` or `application/...+json`.
pub(super) fn is_json(headers: &HeaderMap) -> bool {
    let Some(header) = headers.get(CONTENT_TYPE) else {
        return false;
    };
    // What nearly every client sends, checked first.
    if header.as_bytes() == b"application/json" {
        return true;
    }
    let Ok(value) = header.to_str() else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    // Compared without allocating: this runs on every call.
    let (kind, subtype) = essence.split_at(essence.len().min("application/".len()));
    kind.eq_ignore_ascii_case("application/")
        && (subtype.eq_ignore_ascii_case("json")
            || (subtype.len() > "+json".len()
                && subtype.is_char_boundary(subtype.len() - "+json".len())
                && subtype[subtype.len() - "+json".len()..].eq_ignore_ascii_case("+json")))
}

/// Fails if arrays and objects nest deeper than `max`, scanning bytes (strings skipped).
pub(crate) fn check_depth(bytes: &[u8], max: usize) -> Result<(), ToolError> {
    // Each level opens with a byte of its own: a body of at most `max` bytes cannot nest deeper
    // than `max`, and most calls' bodies are that short.
    if bytes.len() <= max {
        return Ok(());
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Err(invalid_request(format!(
                        "the body nests deeper than {max} levels"
                    )));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_depth;

    #[test]
    fn depth_counts_brackets_outside_strings() {
        assert!(check_depth(br#"{"a":[[1]]}"#, 3).is_ok());
        assert!(check_depth(br#"{"a":[[[1]]]}"#, 3).is_err());
        assert!(check_depth(br#"{"a":"[[[[[[\"[[["}"#, 1).is_ok());
        let deep = "[".repeat(100_000);
        assert!(check_depth(deep.as_bytes(), 64).is_err());
        // The shortest bodies past the limit, and the deepest ones within it.
        assert!(check_depth("[".repeat(65).as_bytes(), 64).is_err());
        assert!(check_depth("[".repeat(64).as_bytes(), 64).is_ok());
        assert!(check_depth(b"[[", 1).is_err());
        assert!(check_depth(b"[", 1).is_ok());
        assert!(check_depth(b"", 0).is_ok());
        assert!(check_depth(b"[", 0).is_err());
    }

    #[test]
    fn json_media_types() {
        let is = |v: &str| {
            let mut h = axum::http::HeaderMap::new();
            h.insert(super::CONTENT_TYPE, v.parse().unwrap());
            super::is_json(&h)
        };
        for ok in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            " application/json ;x=y",
            "application/problem+json",
            "application/VND.API+JSON",
        ] {
            assert!(is(ok), "{ok}");
        }
        for bad in [
            "text/plain",
            "application/jsonx",
            "application/+json",
            "application/",
            "text/json",
            "application/xml",
            "app",
            "",
        ] {
            assert!(!is(bad), "{bad}");
        }
        assert!(!super::is_json(&axum::http::HeaderMap::new()));
    }
}
