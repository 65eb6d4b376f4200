//! Readable rendering of results on a terminal: objects as `key: value` lines, arrays of objects
//! as aligned tables. Machines use `--json`, which prints the envelope instead.

use std::fmt::Write;

use clap::builder::styling::{AnsiColor, Style};
use serde_json::Value;

/// Styles, or none when colour is off (`NO_COLOR`, or not a terminal).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Palette {
    pub(crate) key: Style,
    pub(crate) header: Style,
    pub(crate) error: Style,
    pub(crate) dim: Style,
}

impl Palette {
    pub(crate) fn new(color: bool) -> Self {
        if color {
            Palette {
                key: Style::new().bold(),
                header: Style::new().bold().underline(),
                error: AnsiColor::Red.on_default().bold(),
                dim: AnsiColor::BrightBlack.on_default(),
            }
        } else {
            Palette {
                key: Style::new(),
                header: Style::new(),
                error: Style::new(),
                dim: Style::new(),
            }
        }
    }
}

/// Renders a tool's result for people.
pub(crate) fn render(value: &Value, p: Palette) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if map.is_empty() => out.push_str("(empty)\n"),
        Value::Object(_) => object(&mut out, value, 0, p),
        Value::Array(items) if items.is_empty() => out.push_str("(none)\n"),
        Value::Array(items) if items.iter().all(Value::is_object) => table(&mut out, items, 0, p),
        Value::Array(items) => {
            for item in items {
                let _ = writeln!(out, "{}", scalar(item));
            }
        }
        other => {
            let _ = writeln!(out, "{}", scalar(other));
        }
    }
    out
}

/// Renders content blocks ([`Content`](crate::Content)) for people: texts as they are, media
/// and resources by their kind, media type and size.
pub(crate) fn content(value: &Value) -> String {
    let blocks = match value {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    let mut out = String::new();
    for block in blocks {
        let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or_default();
        // Base64 carries three bytes in four characters.
        let bytes = |data: &str| data.trim_end_matches('=').len() * 3 / 4;
        let _ = match field("type") {
            "text" => writeln!(out, "{}", field("text")),
            kind @ ("image" | "audio") => writeln!(
                out,
                "[{kind} {}, {} bytes]",
                field("mimeType"),
                bytes(field("data"))
            ),
            "resource" => {
                let resource = &block["resource"];
                let of = |name: &str| resource.get(name).and_then(Value::as_str);
                let _ = writeln!(
                    out,
                    "[resource {} {}]",
                    of("uri").unwrap_or_default(),
                    of("mimeType").unwrap_or_default()
                );
                match (of("text"), of("blob")) {
                    (Some(text), _) => writeln!(out, "{text}"),
                    (None, Some(blob)) => writeln!(out, "({} bytes)", bytes(blob)),
                    (None, None) => Ok(()),
                }
            }
            _ => writeln!(out, "{block}"),
        };
    }
    out
}

fn object(out: &mut String, value: &Value, indent: usize, p: Palette) {
    let Value::Object(map) = value else { return };
    let pad = " ".repeat(indent);
    let width = map.keys().map(|k| k.chars().count()).max().unwrap_or(0);
    for (k, v) in map {
        let key = format!("{k}:");
        match v {
            Value::Object(inner) if !inner.is_empty() => {
                let _ = writeln!(out, "{pad}{}{key}{}", p.key.render(), p.key.render_reset());
                object(out, v, indent + 2, p);
            }
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
                let _ = writeln!(out, "{pad}{}{key}{}", p.key.render(), p.key.render_reset());
                table(out, items, indent + 2, p);
            }
            _ => {
                let _ = writeln!(
                    out,
                    "{pad}{}{key:<w$}{} {}",
                    p.key.render(),
                    p.key.render_reset(),
                    scalar(v),
                    w = width + 1
                );
            }
        }
    }
}

fn table(out: &mut String, rows: &[Value], indent: usize, p: Palette) {
    let pad = " ".repeat(indent);
    let mut columns: Vec<&str> = Vec::new();
    for row in rows {
        for k in row.as_object().into_iter().flat_map(|m| m.keys()) {
            if !columns.contains(&k.as_str()) {
                columns.push(k);
            }
        }
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| columns.iter().map(|c| scalar(&r[*c])).collect())
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .chain([c.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let header: Vec<String> = columns
        .iter()
        .zip(&widths)
        .map(|(c, w)| format!("{}{c:<w$}{}", p.header.render(), p.header.render_reset()))
        .collect();
    let _ = writeln!(out, "{pad}{}", header.join("  ").trim_end());
    for row in cells {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "{pad}{}", line.join("  ").trim_end());
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "-".to_owned(),
        Value::Array(items) if items.is_empty() => "(none)".to_owned(),
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            items.iter().map(scalar).collect::<Vec<_>>().join(", ")
        }
        other => other.to_string(),
    }
}

/// Prints `error: {message}` on stderr (red on a terminal) and returns `code`.
pub(crate) fn fail(message: impl std::fmt::Display, code: u8) -> u8 {
    let p = Palette::new(color_for(&std::io::stderr()));
    eprintln!(
        "{}error:{} {message}",
        p.error.render(),
        p.error.render_reset()
    );
    code
}

/// Whether to colour what goes to `stream`: a terminal, and `NO_COLOR` unset or empty.
pub(super) fn color_for(stream: &impl std::io::IsTerminal) -> bool {
    stream.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_blocks_render_as_text_and_media_by_kind_and_size() {
        let blocks = serde_json::to_value(vec![
            crate::Content::text("a dot:"),
            crate::Content::image([1, 2, 3, 4], "image/png"),
            crate::Content::resource_text("test://r", "text/plain", "inside"),
        ])
        .unwrap();
        assert_eq!(
            content(&blocks),
            "a dot:\n[image image/png, 4 bytes]\n[resource test://r text/plain]\ninside\n"
        );
    }

    #[test]
    fn objects_render_as_aligned_key_value_lines() {
        let text = render(
            &json!({"code": "123456", "expires_at": "2026-01-01T00:00:00Z", "workspace": null}),
            Palette::new(false),
        );
        assert_eq!(
            text,
            "code:       123456\nexpires_at: 2026-01-01T00:00:00Z\nworkspace:  -\n"
        );
    }

    #[test]
    fn arrays_of_objects_render_as_tables() {
        let text = render(
            &json!({"devices": [{"id": "dev_1", "name": "phone"}, {"id": "dev_22", "name": "tv"}], "pending": []}),
            Palette::new(false),
        );
        assert_eq!(
            text,
            "devices:\n  id      name\n  dev_1   phone\n  dev_22  tv\npending: (none)\n"
        );
    }
}
