//! Output caps: a result larger than its cap (default 1 MiB, `#[tool(max_output = "64KiB")]`)
//! is not sent whole. Text is cut with an explicit marker; a list is cut to the items that fit
//! when the tool allows it (`#[tool(truncate_output)]`); anything else fails with
//! `output_too_large`. A result that was cut says so in its envelope (`meta.truncated: true`).

use std::io::Write;

use serde_json::Value;

use crate::tool::error::{ErrorKind, ToolError};

/// The cap of tools that set none.
pub(crate) const DEFAULT_MAX_OUTPUT: usize = 1024 * 1024;

/// Counts serialized bytes without keeping them.
struct Counter(usize);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The size of `value` as compact JSON.
pub(crate) fn json_size(value: &Value) -> usize {
    let mut c = Counter(0);
    let _ = serde_json::to_writer(&mut c, value);
    c.0
}

/// Whether `value` surely serializes within `cap` bytes, by an upper bound of its size that
/// costs a walk of the value rather than a serialization (every string byte counted as an
/// escape, `\u00XX`; every number as its longest form). `false` means "count exactly".
fn surely_within(value: &Value, cap: usize) -> bool {
    fn take(left: &mut usize, n: usize) -> bool {
        left.checked_sub(n).map(|rest| *left = rest).is_some()
    }
    fn bound(value: &Value, left: &mut usize) -> bool {
        match value {
            Value::Null | Value::Bool(_) => take(left, 5),
            // `-1.2345678901234567e-308`: 24 bytes; integers take at most 20.
            Value::Number(_) => take(left, 24),
            Value::String(text) => take(left, 2 + 6 * text.len()),
            // Brackets, and a comma before each item: one per item is a bound.
            Value::Array(items) => {
                take(left, 2 + items.len()) && items.iter().all(|item| bound(item, left))
            }
            Value::Object(map) => {
                take(left, 2 + map.len())
                    && map
                        .iter()
                        .all(|(k, v)| take(left, 3 + 6 * k.len()) && bound(v, left))
            }
        }
    }
    let mut left = cap;
    bound(value, &mut left)
}

/// Applies the cap: the result, and whether it was cut.
pub(crate) fn apply(
    result: Value,
    cap: usize,
    truncate_lists: bool,
    tool: &str,
) -> Result<(Value, bool), ToolError> {
    // Most results are far below their cap: a bound says so without serializing them.
    if surely_within(&result, cap) {
        return Ok((result, false));
    }
    let size = json_size(&result);
    if size <= cap {
        return Ok((result, false));
    }
    match result {
        Value::String(text) => {
            let marker = format!(" … [truncated: {size} bytes, limit {cap}]");
            // Leave room for the quotes, the marker and escapes of what is kept.
            let mut keep = cap.saturating_sub(marker.len() + 2);
            let mut cut: String;
            loop {
                let mut end = keep.min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                cut = format!("{}{marker}", &text[..end]);
                if json_size(&Value::String(cut.clone())) <= cap || end == 0 {
                    break;
                }
                keep = end.saturating_sub((end / 8).max(1));
            }
            Ok((Value::String(cut), true))
        }
        Value::Array(items) if truncate_lists => {
            let mut kept = Vec::new();
            let mut used = 2; // []
            for item in items {
                let add = json_size(&item) + usize::from(!kept.is_empty());
                if used + add > cap {
                    break;
                }
                used += add;
                kept.push(item);
            }
            Ok((Value::Array(kept), true))
        }
        _ => Err(ToolError::new(
            ErrorKind::OUTPUT_TOO_LARGE,
            format!(
                "`{tool}` returned {size} bytes, over its limit of {cap}; ask for less (a narrower query), or raise `max_output`"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_bound_is_never_below_the_size() {
        let values = [
            json!(null),
            json!(false),
            json!(-1.234_567_890_123_456_7e-308),
            json!(i64::MIN),
            json!(u64::MAX),
            json!("\u{0}\u{1f}\"\\ é€😀\n"),
            json!([]),
            json!([1, [2, [3, {}]], "x"]),
            json!({"": null, "\u{7}k\"": {"n": [1.5, -0.0, true]}, "é": "\t"}),
        ];
        for v in values {
            let size = json_size(&v);
            assert!(!surely_within(&v, size - 1), "{v}: bound below {size}");
            let container = json!([v.clone(), {"k": v}]);
            let size = json_size(&container);
            assert!(!surely_within(&container, size - 1), "{container}");
        }
        assert!(surely_within(&json!({"a": 1}), 100));
        assert!(surely_within(&json!([]), 2));
    }

    #[test]
    fn small_results_pass_untouched() {
        assert_eq!(
            apply(json!({"a": 1}), 100, false, "t").unwrap(),
            (json!({"a": 1}), false)
        );
    }

    #[test]
    fn text_is_cut_with_a_marker_within_the_cap() {
        let long = "é".repeat(1000);
        let (v, cut) = apply(Value::String(long), 200, false, "t").unwrap();
        assert!(cut);
        assert!(json_size(&v) <= 200, "{}", json_size(&v));
        assert!(
            v.as_str()
                .unwrap()
                .contains("[truncated: 2002 bytes, limit 200]")
        );
    }

    #[test]
    fn lists_are_cut_only_when_allowed_and_objects_fail() {
        let list = json!((0..100).map(|i| json!({"n": i})).collect::<Vec<_>>());
        let (v, cut) = apply(list.clone(), 50, true, "t").unwrap();
        assert!(cut && json_size(&v) <= 50 && !v.as_array().unwrap().is_empty());
        let e = apply(list, 50, false, "t").unwrap_err();
        assert_eq!((e.kind(), e.status()), (&ErrorKind::OUTPUT_TOO_LARGE, 500));
        assert!(apply(json!({"big": "x".repeat(100)}), 50, true, "t").is_err());
    }
}
