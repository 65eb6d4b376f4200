//! The small grammars a `#[tool]` attribute and the runtime read alike: rates (`"10/min"`),
//! time limits (`"5s"`), sizes (`"64KiB"`), and a tool's title and summary from its name and
//! doc comment. The macro reads them when a tool compiles and writes the values into the
//! expansion; the runtime reads rates from configuration (`tool::Rate::parse`) and titles and
//! summaries for tools made at run time (`ToolMeta::new`), and resource URI templates
//! ([`uri_template`]). One definition each, so both agree.
// Every public item is documented, and `pub` means reachable by users.
#![warn(missing_docs, unreachable_pub)]

/// Whether `name` is an HTTP field name (a `token`, RFC 9110 section 5.1), as an MCP parameter
/// header (`#[arg(header = ...)]`, SEP-2243) must be: `Region`, `X-Trace`.
#[must_use]
pub fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `"10/min"` → `(10, 60)`: calls, and the period in seconds (`s`, `min`, `h` and their long
/// names). `None` for anything else, or a count of zero.
#[must_use]
pub fn rate(text: &str) -> Option<(u32, u64)> {
    let (count, unit) = text.trim().split_once('/')?;
    let count: u32 = count.trim().parse().ok().filter(|c| *c > 0)?;
    let secs = match unit.trim() {
        "s" | "sec" | "second" => 1,
        "m" | "min" | "minute" => 60,
        "h" | "hour" => 3600,
        _ => return None,
    };
    Some((count, secs))
}

/// `"500ms"`, `"5s"`, `"2m"`, `"1h"` → milliseconds. `None` without a unit or on overflow.
#[must_use]
pub fn duration_ms(text: &str) -> Option<u64> {
    let (n, unit) = number_and_unit(text)?;
    let factor = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    n.checked_mul(factor)
}

/// `"64KiB"`, `"1MiB"`, `"500B"`, `"2MB"` → bytes. `None` without a unit, for zero, or on
/// overflow.
#[must_use]
pub fn size(text: &str) -> Option<usize> {
    let (n, unit) = number_and_unit(text)?;
    let factor: u64 = match unit {
        "B" => 1,
        "KB" => 1000,
        "KiB" => 1024,
        "MB" => 1_000_000,
        "MiB" => 1024 * 1024,
        _ => return None,
    };
    let bytes = n.checked_mul(factor).filter(|n| *n > 0)?;
    usize::try_from(bytes).ok()
}

/// The leading digits of `text` and the unit after them, spaces trimmed.
fn number_and_unit(text: &str) -> Option<(u64, &str)> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = text.split_at(split);
    Some((digits.parse().ok()?, unit.trim()))
}

/// `"device_add"` → `"Device add"`.
#[must_use]
pub fn title_from_name(name: &str) -> String {
    let spaced = name.replace(['_', '-'], " ");
    let mut chars = spaced.trim().chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// The first paragraph of a text, its lines trimmed and joined by spaces.
#[must_use]
pub fn first_paragraph(text: &str) -> String {
    text.trim()
        .split("\n\n")
        .next()
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

/// One piece of a confirmation question written with `{param}` placeholders, as
/// [`question_pieces`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuestionPiece<'a> {
    /// Text shown as written.
    Text(&'a str),
    /// `{name}`: the value of the parameter `name`.
    Param(&'a str),
    /// A `{` never closed, and all that follows it, shown as written.
    Unclosed(&'a str),
}

/// The pieces of a question written with `{param}` placeholders (`#[tool(confirm = "...")]`),
/// in order: `#[tool]` checks each placeholder names a parameter, the runtime fills them in.
#[must_use]
pub fn question_pieces(template: &str) -> Vec<QuestionPiece<'_>> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            pieces.push(QuestionPiece::Text(&rest[..open]));
        }
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            pieces.push(QuestionPiece::Unclosed(&rest[open..]));
            return pieces;
        };
        pieces.push(QuestionPiece::Param(&after[..close]));
        rest = &after[close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(QuestionPiece::Text(rest));
    }
    pieces
}

/// Resource URI templates: `files://{path*}`, `devices://{id}/status{?verbose}`. Parsed here so
/// that `#[resource]` rejects a template when it compiles by the rule the runtime matches URIs
/// with.
///
/// - `{name}` is one path segment; `{name*}` the rest of the path (the last variable of the
///   path); `{?a,b}`, at the end, an optional form query.
/// - Variables are names of letters, digits and `_`, each named once, never side by side.
pub mod uri_template {
    /// One piece of a template's path.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Part {
        /// Matched exactly.
        Literal(String),
        /// One path segment.
        Segment(String),
        /// The rest of the path.
        Rest(String),
    }

    /// A template taken apart: its path, and its query variables.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Template {
        /// The path, in order.
        pub parts: Vec<Part>,
        /// The query variables (`{?a,b}`), in order.
        pub query: Vec<String>,
    }

    impl Template {
        /// Every variable, path then query, in order.
        pub fn variables(&self) -> impl Iterator<Item = &str> {
            self.parts
                .iter()
                .filter_map(|p| match p {
                    Part::Segment(n) | Part::Rest(n) => Some(n.as_str()),
                    Part::Literal(_) => None,
                })
                .chain(self.query.iter().map(String::as_str))
        }
    }

    /// Parses `source`.
    ///
    /// # Errors
    /// Why it does not parse, in a sentence: an unclosed or empty `{}`, an operator other than
    /// `?` (and `*` after a name), a query that is not last, a variable named twice, two
    /// variables side by side (where would one end?), or a `{name*}` that is not the last
    /// variable of the path.
    pub fn parse(source: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut query = Vec::new();
        let mut rest = source;
        let mut names: Vec<String> = Vec::new();
        let add_name = |name: &str, names: &mut Vec<String>| {
            if !valid_name(name) {
                return Err(format!(
                    "`{{{name}}}` in `{source}`: a variable is a name of letters, digits and `_`"
                ));
            }
            if names.iter().any(|n| n == name) {
                return Err(format!("`{name}` is named twice in `{source}`"));
            }
            names.push(name.to_owned());
            Ok(name.to_owned())
        };
        while !rest.is_empty() {
            let Some(open) = rest.find('{') else {
                if rest.contains('}') {
                    return Err(format!("an unmatched `}}` in `{source}`"));
                }
                parts.push(Part::Literal(rest.to_owned()));
                break;
            };
            if open > 0 {
                let literal = &rest[..open];
                if literal.contains('}') {
                    return Err(format!("an unmatched `}}` in `{source}`"));
                }
                parts.push(Part::Literal(literal.to_owned()));
            }
            let Some(close) = rest[open..].find('}') else {
                return Err(format!("an unclosed `{{` in `{source}`"));
            };
            let expr = &rest[open + 1..open + close];
            rest = &rest[open + close + 1..];
            if !query.is_empty() {
                return Err(format!("`{{?…}}` must come last in `{source}`"));
            }
            if let Some(vars) = expr.strip_prefix('?') {
                if vars.is_empty() {
                    return Err(format!("an empty `{{?}}` in `{source}`"));
                }
                for var in vars.split(',') {
                    query.push(add_name(var.trim(), &mut names)?);
                }
                if !rest.is_empty() {
                    return Err(format!("`{{?…}}` must come last in `{source}`"));
                }
                continue;
            }
            if matches!(parts.last(), Some(Part::Segment(_) | Part::Rest(_))) {
                return Err(format!(
                    "two variables side by side in `{source}`: put a literal between them"
                ));
            }
            if parts.iter().any(|p| matches!(p, Part::Rest(_))) {
                return Err(format!(
                    "`{{name*}}` takes the rest of the path, so it must be the last variable of the path in `{source}`"
                ));
            }
            if let Some(name) = expr.strip_suffix('*') {
                parts.push(Part::Rest(add_name(name, &mut names)?));
            } else if expr.starts_with(['+', '#', '.', '/', ';', '&']) {
                return Err(format!(
                    "`{{{expr}}}` in `{source}`: only `{{name}}`, `{{name*}}` and `{{?a,b}}` are supported"
                ));
            } else {
                parts.push(Part::Segment(add_name(expr, &mut names)?));
            }
        }
        Ok(Template { parts, query })
    }

    fn valid_name(name: &str) -> bool {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_read_into_text_and_placeholders() {
        use QuestionPiece::{Param, Text, Unclosed};
        assert_eq!(
            question_pieces("Delete {name} from {folder}?"),
            [
                Text("Delete "),
                Param("name"),
                Text(" from "),
                Param("folder"),
                Text("?")
            ]
        );
        assert_eq!(question_pieces("{id}"), [Param("id")]);
        assert_eq!(
            question_pieces("Drop {all"),
            [Text("Drop "), Unclosed("{all")]
        );
        assert!(question_pieces("").is_empty());
    }

    #[test]
    fn rates() {
        assert_eq!(rate("10/min"), Some((10, 60)));
        assert_eq!(rate("5/s"), Some((5, 1)));
        assert_eq!(rate("100 / hour"), Some((100, 3600)));
        for bad in ["0/min", "10", "10/day", "x/min", ""] {
            assert_eq!(rate(bad), None, "{bad}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(duration_ms("500ms"), Some(500));
        assert_eq!(duration_ms("5s"), Some(5_000));
        assert_eq!(duration_ms("2m"), Some(120_000));
        assert_eq!(duration_ms("1h"), Some(3_600_000));
        for bad in ["5", "s", "5 parsecs", "99999999999999999999s"] {
            assert_eq!(duration_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(size("64KiB"), Some(65_536));
        assert_eq!(size("1MiB"), Some(1_048_576));
        assert_eq!(size("500B"), Some(500));
        assert_eq!(size("2MB"), Some(2_000_000));
        for bad in ["0B", "64", "64 kib", "KiB"] {
            assert_eq!(size(bad), None, "{bad}");
        }
    }

    #[test]
    fn titles_and_summaries() {
        assert_eq!(title_from_name("device_add"), "Device add");
        assert_eq!(title_from_name("x"), "X");
        assert_eq!(title_from_name("ticket-open"), "Ticket open");
        assert_eq!(
            first_paragraph("Generate a code\nfor a device.\n\nMore text."),
            "Generate a code for a device."
        );
        assert_eq!(first_paragraph("  One line.  "), "One line.");
        assert_eq!(first_paragraph(""), "");
    }
}
