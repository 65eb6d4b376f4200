//! URI templates, as resources match them: a subset of RFC 6570 with rules of our own, chosen so
//! that a URI matches at most one resource and a template value never escapes its place.
//!
//! - `{name}` matches one path segment: one or more characters, none of them `/`, `?` or `#`.
//! - `{name*}` matches the rest of the path: one or more characters, `/` included, up to the
//!   query.
//! - `{?a,b}`, at the end, matches a form query (`?a=1&b=2`): every variable optional, each at
//!   most once, no other parameter.
//! - Everything else is literal and matched exactly.
//!
//! Values are percent-decoded; a value that does not decode to UTF-8 does not match.

use std::borrow::Cow;
use std::collections::BTreeMap;

use tool_grammar::uri_template::{Part, Template};

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parsed: Template,
}

/// Why a URI template does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

impl UriTemplate {
    /// Parses `source`: `files://{path*}`, `devices://{id}/status{?verbose}`.
    ///
    /// # Errors
    /// An unclosed or empty `{}`, an operator other than `?` (and `*` after a name), a query
    /// that is not last, a variable named twice, two variables side by side (where would one
    /// end?), or a `{name*}` that is not the last variable of the path.
    pub fn parse(source: &str) -> Result<Self, TemplateError> {
        let parsed = tool_grammar::uri_template::parse(source).map_err(TemplateError)?;
        Ok(Self {
            source: source.to_owned(),
            parsed,
        })
    }

    /// The template as written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether it has no variables: a static URI.
    #[must_use]
    pub fn is_static(&self) -> bool {
        self.parsed.query.is_empty()
            && self
                .parsed
                .parts
                .iter()
                .all(|p| matches!(p, Part::Literal(_)))
    }

    /// Every variable, path then query, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parsed.variables()
    }

    /// Whether `name` is a query variable (always optional).
    #[must_use]
    pub fn is_query(&self, name: &str) -> bool {
        self.parsed.query.iter().any(|q| q == name)
    }

    /// The number of literal characters: the more, the more specific.
    #[must_use]
    pub fn literal_len(&self) -> usize {
        self.parsed
            .parts
            .iter()
            .map(|p| match p {
                Part::Literal(l) => l.chars().count(),
                _ => 0,
            })
            .sum()
    }

    /// The variables' decoded values if `uri` matches, `None` if it does not.
    #[must_use]
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let (path, query) = match uri.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (uri, None),
        };
        if path.contains('#') {
            return None;
        }
        let mut values = BTreeMap::new();
        if !match_parts(&self.parsed.parts, path, &mut values) {
            return None;
        }
        if let Some(query) = query {
            if self.parsed.query.is_empty() {
                return None;
            }
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                let k = decode(k)?;
                if !self.is_query(&k) || values.contains_key(&k) {
                    return None;
                }
                values.insert(k, decode(&v.replace('+', " "))?);
            }
        }
        Some(values)
    }

    /// Whether some URI matches both templates (queries aside, which never decide a match).
    #[must_use]
    pub fn overlaps(&self, other: &UriTemplate) -> bool {
        let a = tokens(&self.parsed.parts);
        let b = tokens(&other.parsed.parts);
        intersects(&a, &b)
    }
}

fn decode(raw: &str) -> Option<String> {
    percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .ok()
        .map(Cow::into_owned)
}

fn match_parts(parts: &[Part], text: &str, values: &mut BTreeMap<String, String>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return text.is_empty();
    };
    match first {
        Part::Literal(l) => text
            .strip_prefix(l.as_str())
            .is_some_and(|t| match_parts(rest, t, values)),
        Part::Rest(name) => {
            // The last variable of the path: everything up to a literal tail.
            let tail: String = rest
                .iter()
                .map(|p| match p {
                    Part::Literal(l) => l.as_str(),
                    _ => "",
                })
                .collect();
            let Some(value) = text.strip_suffix(tail.as_str()) else {
                return false;
            };
            if value.is_empty() {
                return false;
            }
            decode(value).is_some_and(|v| {
                values.insert(name.clone(), v);
                true
            })
        }
        Part::Segment(name) => {
            // One segment: up to the next literal (variables never sit side by side), and
            // never across a `/`.
            let end = text.find('/').unwrap_or(text.len());
            for cut in (1..=end).rev().filter(|&i| text.is_char_boundary(i)) {
                let mut attempt = values.clone();
                if let Some(v) = decode(&text[..cut]) {
                    attempt.insert(name.clone(), v);
                    if match_parts(rest, &text[cut..], &mut attempt) {
                        *values = attempt;
                        return true;
                    }
                }
            }
            false
        }
    }
}

/// One character class of a template's path, for the overlap check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Char(char),
    NotSlash,
    Any,
}

/// A class, once or any number of times.
#[derive(Debug, Clone, Copy)]
struct Token {
    class: Class,
    repeat: bool,
}

fn tokens(parts: &[Part]) -> Vec<Token> {
    let mut out = Vec::new();
    for part in parts {
        match part {
            Part::Literal(l) => out.extend(l.chars().map(|c| Token {
                class: Class::Char(c),
                repeat: false,
            })),
            Part::Segment(_) | Part::Rest(_) => {
                let class = if matches!(part, Part::Segment(_)) {
                    Class::NotSlash
                } else {
                    Class::Any
                };
                out.push(Token {
                    class,
                    repeat: false,
                });
                out.push(Token {
                    class,
                    repeat: true,
                });
            }
        }
    }
    out
}

fn meet(a: Class, b: Class) -> bool {
    match (a, b) {
        (Class::Char(x), Class::Char(y)) => x == y,
        (Class::Char(c), Class::NotSlash) | (Class::NotSlash, Class::Char(c)) => c != '/',
        _ => true,
    }
}

/// Whether the two token lists accept a common string: a search over pairs of positions,
/// where a repeated token may be skipped or stay.
fn intersects(a: &[Token], b: &[Token]) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![(0usize, 0usize)];
    while let Some((i, j)) = todo.pop() {
        if !seen.insert((i, j)) {
            continue;
        }
        if i == a.len() && j == b.len() {
            return true;
        }
        // Skip a repeated token on either side.
        if a.get(i).is_some_and(|t| t.repeat) {
            todo.push((i + 1, j));
        }
        if b.get(j).is_some_and(|t| t.repeat) {
            todo.push((i, j + 1));
        }
        if let (Some(x), Some(y)) = (a.get(i), b.get(j))
            && meet(x.class, y.class)
        {
            let ni = if x.repeat { i } else { i + 1 };
            let nj = if y.repeat { j } else { j + 1 };
            if (ni, nj) == (i, j) {
                // Both repeat: consuming a common character changes nothing but may end here.
                todo.push((i + 1, j + 1));
            } else {
                todo.push((ni, nj));
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> UriTemplate {
        UriTemplate::parse(s).unwrap()
    }

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_segment_variable_matches_one_segment() {
        let tpl = t("devices://{id}/status");
        assert_eq!(
            tpl.matches("devices://d-1/status"),
            Some(vars(&[("id", "d-1")]))
        );
        assert_eq!(tpl.matches("devices://a/b/status"), None);
        assert_eq!(tpl.matches("devices:///status"), None);
        assert_eq!(
            tpl.matches("devices://a%20b/status"),
            Some(vars(&[("id", "a b")]))
        );
        assert_eq!(tpl.matches("devices://%FF/status"), None);
    }

    #[test]
    fn a_rest_variable_takes_the_rest_of_the_path() {
        let tpl = t("files://{path*}");
        assert_eq!(
            tpl.matches("files://a/b/c.txt"),
            Some(vars(&[("path", "a/b/c.txt")]))
        );
        assert_eq!(tpl.matches("files://"), None);
        let tail = t("docs://{path*}.md");
        assert_eq!(
            tail.matches("docs://a/b.md"),
            Some(vars(&[("path", "a/b")]))
        );
    }

    #[test]
    fn a_query_is_optional_and_closed() {
        let tpl = t("logs://{day}{?level,limit}");
        assert_eq!(tpl.matches("logs://mon"), Some(vars(&[("day", "mon")])));
        assert_eq!(
            tpl.matches("logs://mon?limit=5&level=warn"),
            Some(vars(&[("day", "mon"), ("level", "warn"), ("limit", "5")]))
        );
        assert_eq!(tpl.matches("logs://mon?other=1"), None);
        assert_eq!(tpl.matches("logs://mon?limit=1&limit=2"), None);
        assert_eq!(t("a://b").matches("a://b?x=1"), None);
    }

    #[test]
    fn bad_templates_say_why() {
        for (bad, why) in [
            ("a://{id", "unclosed"),
            ("a://{}", "a variable is a name"),
            ("a://{a}{b}", "side by side"),
            ("a://{p*}/{q}", "last variable"),
            ("a://{?x}/b", "must come last"),
            ("a://{x}/{x}", "named twice"),
            ("a://{+x}", "only `{name}`"),
            ("a://x}", "unmatched"),
        ] {
            let e = UriTemplate::parse(bad).unwrap_err().0;
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn overlaps_are_found() {
        assert!(t("a://{x}/b").overlaps(&t("a://b/{y}")));
        assert!(t("files://{p*}").overlaps(&t("files://docs/{name}")));
        assert!(!t("a://{x}/b").overlaps(&t("a://{y}/c")));
        assert!(!t("a://{x}").overlaps(&t("a://{x}/b")));
        assert!(t("a://{x}").overlaps(&t("a://{y}")));
        assert!(!t("users://{id}").overlaps(&t("devices://{id}")));
    }

    #[test]
    fn specificity_counts_literal_characters() {
        assert!(t("files://docs/{name}").literal_len() > t("files://{p*}").literal_len());
        assert!(t("a://b").is_static());
        assert!(!t("a://{b}").is_static());
        assert_eq!(
            t("a://{x}/{y*}{?q}").variables().collect::<Vec<_>>(),
            ["x", "y", "q"]
        );
    }
}
