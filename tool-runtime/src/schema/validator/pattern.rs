//! Patterns: compiled as the regex crate reads them.

/// A schema's `pattern`, compiled.
pub(crate) struct Pattern {
    source: String,
    regex: regex::Regex,
}

impl Pattern {
    pub(crate) fn new(ecma: &str) -> Result<Self, String> {
        regex::Regex::new(ecma)
            .map(|regex| Self {
                source: ecma.to_owned(),
                regex,
            })
            .map_err(|e| format!("the pattern `{ecma}` does not compile: {e}"))
    }

    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.source
    }
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pattern").field(&self.source).finish()
    }
}
