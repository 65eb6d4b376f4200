//! `pattern` and `patternProperties`: ECMA-262 regular expressions, as JSON Schema 2020-12
//! defines them, translated to the syntax of the `regex` crate by a small scanner and
//! compiled.
//!
//! The translation keeps ECMA's meaning where the two dialects differ: `\d` `\w` `\b` are
//! ASCII, `\s` is ECMA's white space and line terminators, `.` stops only at ECMA's line
//! terminators, a class is never nested and never a set operation, and a `{` that does not
//! begin a quantifier is a literal (Annex B). Patterns are matched over code points, as with
//! ECMA's `u` flag (`\u{1F432}`, a surrogate pair as one character). What the crate cannot
//! express (lookaround, backreferences, Unicode property escapes `\p{…}`) is an error naming
//! the construct, never a silently different match.

use std::fmt;

use regex::{Regex, RegexBuilder};

use translate::{CANNOT, translate};

#[cfg(test)]
mod tests;
mod translate;

/// An ECMA-262 regular expression (a schema's `pattern`, or a key of `patternProperties`),
/// translated to the Rust regex syntax and compiled.
pub(crate) struct Pattern {
    source: Box<str>,
    regex: Regex,
}

impl Pattern {
    /// Err: what is wrong, or what the crate cannot express, named: "the pattern `(?=a)` uses
    /// a lookahead `(?=`, which this validator cannot express".
    pub(crate) fn new(ecma: &str) -> Result<Self, PatternError> {
        let quoted = Quoted(ecma);
        let translated = translate(ecma).map_err(|e| {
            let message = format!("the pattern {quoted} {e}");
            if e.ends_with(CANNOT) {
                PatternError::Inexpressible(message)
            } else {
                PatternError::Invalid(message)
            }
        })?;
        let regex = RegexBuilder::new(&translated)
            // The crate's own limits, spelled out: a pattern whose compiled form would pass
            // them is an error here, not an allocation without bound.
            .size_limit(SIZE_LIMIT)
            .nest_limit(NEST_LIMIT)
            .build()
            .map_err(|e| {
                PatternError::Invalid(format!(
                    "the pattern {quoted} cannot be compiled: {}",
                    brief(&e)
                ))
            })?;
        Ok(Self {
            source: ecma.into(),
            regex,
        })
    }

    /// Whether the pattern matches anywhere in `text` (unanchored, as ECMA's RegExp.test).
    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// The ECMA source, as the schema wrote it (for messages).
    pub(crate) fn as_str(&self) -> &str {
        &self.source
    }
}

/// Why a pattern does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatternError {
    /// Valid ECMA-262 that the crate cannot express: lookaround, backreferences, `\p{…}`.
    Inexpressible(String),
    /// Not a valid pattern.
    Invalid(String),
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternError::Inexpressible(m) | PatternError::Invalid(m) => f.write_str(m),
        }
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pattern").field(&self.source).finish()
    }
}

/// The compiled program's limit in bytes (the crate's default).
const SIZE_LIMIT: usize = 10 * (1 << 20);
/// The deepest nesting of groups and repetitions the parser accepts (the crate's default).
const NEST_LIMIT: u32 = 50;

/// The crate's error in one line: its parse errors quote the whole pattern over several lines,
/// the last of which says what is wrong.
fn brief(e: &regex::Error) -> String {
    match e {
        regex::Error::CompiledTooBig(limit) => {
            format!("it exceeds the size limit of {limit} bytes")
        }
        other => other
            .to_string()
            .lines()
            .rev()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or_default()
            .trim_start_matches("error: ")
            .to_owned(),
    }
}

/// A pattern's source in backquotes for a message, cut short when long.
struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 60;
        match self.0.char_indices().nth(SHOWN) {
            Some((cut, _)) => write!(f, "`{}…` ({} bytes)", &self.0[..cut], self.0.len()),
            None => write!(f, "`{}`", self.0),
        }
    }
}
