//! Paginated lists: every `*/list` answers at most a page of items, and a `nextCursor` when
//! there are more. A cursor is opaque to clients: the offset of the next page, encoded.

use base64::Engine as _;
use rmcp::ErrorData;
use rmcp::model::{Cursor, PaginatedRequestParams};

/// How many items one page of a list holds unless the server is told otherwise
/// ([`McpServer::page_size`](super::McpServer::page_size)).
pub const PAGE_SIZE: usize = 100;

/// What a cursor says before its offset, so that a cursor of another server is refused.
const PREFIX: &str = "page:";

/// The page of `items` the request's cursor points at, and the cursor of the next page when
/// there is one. A cursor that is not one of ours is `-32602` (invalid params). A cursor past
/// the end (the list shrank since) gives an empty page.
pub(super) fn page<T>(
    mut items: Vec<T>,
    request: Option<&PaginatedRequestParams>,
    size: usize,
) -> Result<(Vec<T>, Option<Cursor>), ErrorData> {
    let start = match request.and_then(|r| r.cursor.as_deref()) {
        None => 0,
        Some(cursor) => offset(cursor).ok_or_else(|| {
            ErrorData::invalid_params(
                format!("`{cursor}` is not a cursor this server gave"),
                Some(serde_json::json!({ "cursor": cursor })),
            )
        })?,
    };
    let size = size.max(1);
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| cursor(end));
    items.truncate(end);
    let start = start.min(items.len());
    Ok((items.split_off(start), next))
}

/// Where the request's cursor of `resources/list` points: the resource or template it starts
/// at, and how many of what that template lists come before (the first page without one). A
/// cursor that is not one of ours is `-32602` (invalid params).
pub(super) fn position(
    request: Option<&PaginatedRequestParams>,
) -> Result<crate::registry::ListPosition, ErrorData> {
    let Some(cursor) = request.and_then(|r| r.cursor.as_deref()) else {
        return Ok(crate::registry::ListPosition::default());
    };
    let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok());
    decoded
        .as_deref()
        .and_then(|text| text.strip_prefix(PREFIX)?.split_once('.'))
        .and_then(|(entry, offset)| {
            Some(crate::registry::ListPosition {
                entry: entry.parse().ok()?,
                offset: offset.parse().ok()?,
            })
        })
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!("`{cursor}` is not a cursor this server gave"),
                Some(serde_json::json!({ "cursor": cursor })),
            )
        })
}

/// The cursor of the `resources/list` page that starts at `at`.
pub(super) fn position_cursor(at: crate::registry::ListPosition) -> Cursor {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(format!("{PREFIX}{}.{}", at.entry, at.offset))
}

/// The cursor of the page that starts at `offset`.
fn cursor(offset: usize) -> Cursor {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{PREFIX}{offset}"))
}

/// The offset a cursor of ours points at.
fn offset(cursor: &str) -> Option<usize> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    std::str::from_utf8(&bytes)
        .ok()?
        .strip_prefix(PREFIX)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(cursor: Option<&Cursor>) -> PaginatedRequestParams {
        let mut params = PaginatedRequestParams::default();
        params.cursor = cursor.cloned();
        params
    }

    #[test]
    fn pages_follow_their_cursors_to_the_end() {
        let items: Vec<u32> = (0..250).collect();
        let (first, next) = page(items.clone(), None, 100).unwrap();
        assert_eq!((first.len(), first[0]), (100, 0));
        let (second, next) = page(items.clone(), Some(&at(next.as_ref())), 100).unwrap();
        assert_eq!(second[0], 100);
        let (last, next) = page(items.clone(), Some(&at(next.as_ref())), 100).unwrap();
        assert_eq!((last.len(), last[0], next), (50, 200, None));
        let (all, next) = page(items, None, 1000).unwrap();
        assert_eq!((all.len(), next), (250, None));
    }

    #[test]
    fn a_foreign_cursor_is_invalid_params_and_one_past_the_end_an_empty_page() {
        let e = page(vec![1], Some(&at(Some(&"nonsense".to_owned()))), 100).unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        let (empty, next) = page(vec![1, 2], Some(&at(Some(&cursor(5)))), 100).unwrap();
        assert_eq!((empty, next), (vec![], None));
    }
}
