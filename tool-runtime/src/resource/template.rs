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
//!
//! A template's path is matched by a regular expression (the regex crate matches in time linear
//! in the URI's length), so a long URI costs one pass, however the template's variables could
//! split it. It is compiled at the template's first match, not when it is parsed: a command
//! that reads no resource does not pay for it at start-up.

use std::borrow::Cow;
use std::collections::BTreeMap;

use tool_grammar::uri_template::{Part, Template};

/// A parsed URI template.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    source: String,
    parsed: Template,
    /// The path as a regular expression, one group a variable, in the order of `parsed.parts`;
    /// compiled at the first match; `None` past the regex crate's size limit (a template no
    /// URI matches: one that long comes only from a mounted server).
    path: std::sync::OnceLock<Option<regex::Regex>>,
}

impl PartialEq for UriTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for UriTemplate {}

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
            path: std::sync::OnceLock::new(),
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
        let found = self
            .path
            .get_or_init(|| path_regex(&self.parsed.parts).ok())
            .as_ref()?
            .captures(path)?;
        let variables = self.parsed.parts.iter().filter_map(|p| match p {
            Part::Literal(_) => None,
            Part::Segment(name) | Part::Rest(name) => Some(name),
        });
        for (name, value) in variables.zip(found.iter().skip(1)) {
            values.insert(name.clone(), decode(value?.as_str())?);
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

/// The path of a template as an anchored regular expression: literals escaped, `{name}` one
/// or more characters other than `/` (as many as leave a match, the longest first), `{name*}`
/// one or more of any character. Leftmost-first matching prefers, at each variable, the
/// longest value that lets the rest match, as a backtracking matcher would, in one pass.
fn path_regex(parts: &[Part]) -> Result<regex::Regex, regex::Error> {
    let mut pattern = String::from(r"\A");
    for part in parts {
        match part {
            Part::Literal(l) => pattern.push_str(&regex::escape(l)),
            Part::Segment(_) => pattern.push_str("([^/]+)"),
            Part::Rest(_) => pattern.push_str("((?s:.)+)"),
        }
    }
    pattern.push_str(r"\z");
    regex::Regex::new(&pattern)
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
    fn a_long_uri_is_matched_in_one_pass() {
        // Every cut of the million `A`s could be a value of `{id}`: a matcher that tries each
        // cut and decodes it costs a million decodes of up to a million bytes.
        let long = format!("devices://{}/x", "A".repeat(1_000_000));
        assert_eq!(t("devices://{id}/status").matches(&long), None);
        assert_eq!(t("devices://{id}-{n}/x").matches(&long), None);
        let values = t("devices://{id}/x").matches(&long).unwrap();
        assert_eq!(values["id"].len(), 1_000_000);
        let dashes = format!("a://{}x", "-".repeat(100_000));
        assert_eq!(t("a://{p}-{q}-{r}x").matches(&dashes).unwrap()["r"], "-");
    }

    #[test]
    fn a_segment_takes_the_longest_value_that_lets_the_rest_match() {
        assert_eq!(
            t("a://{x}-{y}").matches("a://p-q-r"),
            Some(vars(&[("x", "p-q"), ("y", "r")]))
        );
        assert_eq!(
            t("docs://{path*}.md").matches("docs://a.md.md"),
            Some(vars(&[("path", "a.md")]))
        );
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
