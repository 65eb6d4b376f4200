//! `pattern` and `patternProperties`: ECMA-262 regular expressions, as JSON Schema 2020-12
//! defines them, translated to the syntax of the `regex-lite` crate by a small scanner and
//! compiled.
//!
//! The translation keeps ECMA's meaning where the two dialects differ: `\d` `\w` `\b` are
//! ASCII, `\s` is ECMA's white space and line terminators, `.` stops only at ECMA's line
//! terminators, a class is never nested and never a set operation, and a `{` that does not
//! begin a quantifier is a literal (Annex B). Patterns are matched over code points, as with
//! ECMA's `u` flag (`\u{1F432}`, a surrogate pair as one character). What the crate cannot
//! express (lookaround, backreferences, Unicode property escapes `\p{…}`) is an error naming
//! the construct, never a silently different match.

use std::fmt::{self, Write as _};

use regex_lite::{Regex, RegexBuilder};

/// An ECMA-262 regular expression (a schema's `pattern`, or a key of `patternProperties`),
/// translated to the Rust regex syntax and compiled.
pub(crate) struct Pattern {
    source: Box<str>,
    regex: Regex,
}

impl Pattern {
    /// Err: a message naming what is wrong or unsupported, e.g.
    /// "the pattern `(?=a)` uses a lookahead `(?=`, which this validator cannot express".
    pub(crate) fn new(ecma: &str) -> Result<Self, String> {
        let quoted = Quoted(ecma);
        let translated = translate(ecma).map_err(|e| format!("the pattern {quoted} {e}"))?;
        let regex = RegexBuilder::new(&translated)
            // The crate's own limits, spelled out: a pattern whose compiled form would pass
            // them is an error here, not an allocation without bound.
            .size_limit(SIZE_LIMIT)
            .nest_limit(NEST_LIMIT)
            .build()
            .map_err(|e| format!("the pattern {quoted} cannot be compiled: {e}"))?;
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

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pattern").field(&self.source).finish()
    }
}

/// The compiled program's limit in bytes (the crate's default).
const SIZE_LIMIT: usize = 10 * (1 << 20);
/// The deepest nesting of groups and repetitions the parser accepts (the crate's default).
const NEST_LIMIT: u32 = 50;

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

/// ECMA's `\d`.
const DIGIT: &[(char, char)] = &[('0', '9')];
/// ECMA's `\w`.
const WORD: &[(char, char)] = &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];
/// ECMA's `\s`: white space (U+0009, U+000B, U+000C, U+0020, U+00A0, U+FEFF, Zs) and line
/// terminators (U+000A, U+000D, U+2028, U+2029).
const SPACE: &[(char, char)] = &[
    ('\u{9}', '\u{D}'),
    (' ', ' '),
    ('\u{A0}', '\u{A0}'),
    ('\u{1680}', '\u{1680}'),
    ('\u{2000}', '\u{200A}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{202F}', '\u{202F}'),
    ('\u{205F}', '\u{205F}'),
    ('\u{3000}', '\u{3000}'),
    ('\u{FEFF}', '\u{FEFF}'),
];
/// ECMA's `.` without the `s` flag: anything but a line terminator.
const DOT: &str = r"[^\x{A}\x{D}\x{2028}\x{2029}]";
/// `[]`: a class that matches nothing.
const NOTHING: &str = r"[^\x{0}-\x{10FFFF}]";
/// `[^]`: a class that matches any character.
const ANYTHING: &str = r"[\x{0}-\x{10FFFF}]";

/// What an escape stands for.
enum Escape {
    /// One character.
    Char(char),
    /// A set of characters (`\d`, `\W`…), as sorted, disjoint ranges: the crate has no
    /// nested classes, so inside a class these are the class's own items.
    Set(Vec<(char, char)>),
    /// `\b` or `\B` outside a class.
    Boundary(&'static str),
}

/// The source as characters, with a cursor.
struct Scanner {
    chars: Vec<char>,
    at: usize,
}

impl Scanner {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.at += 1;
        }
        found
    }

    /// Whether the source continues with `s`, consuming it if so.
    fn eat_str(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        let found = self.chars.len() >= self.at + n
            && s.chars().zip(&self.chars[self.at..]).all(|(a, b)| a == *b);
        if found {
            self.at += n;
        }
        found
    }

    /// `n` hexadecimal digits as a number, consumed only if all are there.
    fn hex(&mut self, n: usize) -> Option<u32> {
        let digits = self.chars.get(self.at..self.at + n)?;
        let mut value = 0;
        for d in digits {
            value = value * 16 + d.to_digit(16)?;
        }
        self.at += n;
        Some(value)
    }

    /// A run of decimal digits, as text (possibly empty).
    fn digits(&mut self) -> String {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }

    /// The characters up to (not including) `end`, consumed with it; None if `end` never comes.
    fn until(&mut self, end: char) -> Option<String> {
        let len = self.chars[self.at..].iter().position(|&c| c == end)?;
        let text = self.chars[self.at..self.at + len].iter().collect();
        self.at += len + 1;
        Some(text)
    }
}

/// The Rust regex with the meaning of the ECMA-262 pattern `ecma`, or what stops it, as the
/// end of a sentence starting "the pattern `…`".
fn translate(ecma: &str) -> Result<String, String> {
    let mut s = Scanner {
        chars: ecma.chars().collect(),
        at: 0,
    };
    let mut out = String::with_capacity(ecma.len() * 2);
    let mut depth = 0usize;
    // Whether the last thing written is an atom a quantifier may follow.
    let mut quantifiable = false;
    while let Some(c) = s.next() {
        quantifiable = match c {
            '(' => {
                group_start(&mut s)?;
                // Every group is written non-capturing: only whether the pattern matches counts.
                out.push_str("(?:");
                depth += 1;
                false
            }
            ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or("is not valid: a `)` closes no group")?;
                out.push(')');
                true
            }
            // Without the `m` flag, `^` and `$` are the start and end of the input in both.
            '|' | '^' | '$' => {
                out.push(c);
                false
            }
            '.' => {
                out.push_str(DOT);
                true
            }
            '*' | '+' | '?' => {
                if !quantifiable {
                    return Err(format!("is not valid: `{c}` has nothing to repeat"));
                }
                out.push(c);
                lazy(&mut s, &mut out);
                false
            }
            '{' => {
                if let Some(quantifier) = braced_quantifier(&mut s)? {
                    if !quantifiable {
                        return Err(format!(
                            "is not valid: `{quantifier}` has nothing to repeat"
                        ));
                    }
                    out.push_str(&quantifier);
                    lazy(&mut s, &mut out);
                    false
                } else {
                    // Annex B: a `{` that begins no quantifier is itself.
                    push_char(&mut out, '{');
                    true
                }
            }
            '[' => {
                class(&mut s, &mut out)?;
                true
            }
            '\\' => match escape(&mut s, false)? {
                Escape::Char(c) => {
                    push_char(&mut out, c);
                    true
                }
                Escape::Set(set) => {
                    out.push('[');
                    push_ranges(&mut out, &set);
                    out.push(']');
                    true
                }
                Escape::Boundary(b) => {
                    out.push_str(b);
                    false
                }
            },
            // `]` and `}` alone are literals (Annex B), as is everything else.
            c => {
                push_char(&mut out, c);
                true
            }
        };
    }
    if depth > 0 {
        return Err("is not valid: a `(` is never closed".into());
    }
    Ok(out)
}

/// After a group's `(`: `?:`, `?<name>`, or nothing, consumed; lookarounds and anything
/// else after `(?` are errors.
fn group_start(s: &mut Scanner) -> Result<(), String> {
    if !s.eat('?') || s.eat(':') {
        Ok(())
    } else if s.eat('=') {
        Err(cannot("a lookahead `(?=`"))
    } else if s.eat('!') {
        Err(cannot("a negative lookahead `(?!`"))
    } else if s.eat_str("<=") {
        Err(cannot("a lookbehind `(?<=`"))
    } else if s.eat_str("<!") {
        Err(cannot("a negative lookbehind `(?<!`"))
    } else if s.eat('<') {
        group_name(s)
    } else {
        let next: String = s.peek().into_iter().collect();
        Err(format!(
            "has `(?{next}`, which ECMA-262 patterns do not have here: a group starting `(?` \
             is `(?:`, `(?<name>`, or a lookaround"
        ))
    }
}

/// The end of a message for a construct the crate cannot express.
fn cannot(construct: &str) -> String {
    format!("uses {construct}, which this validator cannot express")
}

/// A group's name after `(?<`, through its `>`: an ECMA identifier.
fn group_name(s: &mut Scanner) -> Result<(), String> {
    let name = s
        .until('>')
        .ok_or("is not valid: a group name `(?<` has no closing `>`")?;
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    if valid {
        Ok(())
    } else {
        Err(format!("is not valid: `{name}` is not a group name"))
    }
}

/// A `?` after a quantifier, making it lazy (which changes no `is_match`, but is kept).
fn lazy(s: &mut Scanner, out: &mut String) {
    if s.eat('?') {
        out.push('?');
    }
}

/// After a `{`: `n}`, `n,}` or `n,m}` as a Rust quantifier, consumed; None (nothing consumed) if
/// the text is not one, making the `{` a literal.
fn braced_quantifier(s: &mut Scanner) -> Result<Option<String>, String> {
    let start = s.at;
    let min = s.digits();
    // The upper bound: None for `{n}`, Some("") for `{n,}`, Some(m) for `{n,m}`.
    let max = if min.is_empty() {
        Err(())
    } else if s.eat('}') {
        Ok(None)
    } else if s.eat(',') {
        let max = s.digits();
        if s.eat('}') { Ok(Some(max)) } else { Err(()) }
    } else {
        Err(())
    };
    let Ok(max) = max else {
        s.at = start;
        return Ok(None);
    };
    let count = |digits: &str| {
        digits
            .parse::<u32>()
            .map_err(|_| format!("is not valid: the repetition count {digits} is too large"))
    };
    let min = count(&min)?;
    Ok(Some(match max.as_deref() {
        None => format!("{{{min}}}"),
        Some("") => format!("{{{min},}}"),
        Some(max) => {
            let max = count(max)?;
            if max < min {
                return Err(format!(
                    "is not valid: in `{{{min},{max}}}` the numbers are out of order"
                ));
            }
            format!("{{{min},{max}}}")
        }
    }))
}

/// A character class after its `[`, through its `]`, written as a Rust class.
fn class(s: &mut Scanner, out: &mut String) -> Result<(), String> {
    let negated = s.eat('^');
    if s.eat(']') {
        out.push_str(if negated { ANYTHING } else { NOTHING });
        return Ok(());
    }
    out.push_str(if negated { "[^" } else { "[" });
    loop {
        let Some(c) = s.next() else {
            return Err("is not valid: a `[` is never closed".into());
        };
        if c == ']' {
            break;
        }
        let first = class_atom(s, c)?;
        // `a-z` is a range unless the `-` is last; with a set on either side (`[\w-.]`), the
        // `-` is itself (Annex B).
        if s.peek() == Some('-') && s.peek_at(1).is_some_and(|c| c != ']') {
            s.at += 1;
            let c = s.next().expect("peeked");
            let second = class_atom(s, c)?;
            match (first, second) {
                (Escape::Char(lo), Escape::Char(hi)) => {
                    if lo > hi {
                        return Err(format!(
                            "is not valid: the range `{}-{}` is out of order",
                            lo.escape_debug(),
                            hi.escape_debug()
                        ));
                    }
                    push_char(out, lo);
                    out.push('-');
                    push_char(out, hi);
                }
                (first, second) => {
                    push_class_item(out, first);
                    push_char(out, '-');
                    push_class_item(out, second);
                }
            }
        } else {
            push_class_item(out, first);
        }
    }
    out.push(']');
    Ok(())
}

/// One character or escape inside a class, its first character `c` already read.
fn class_atom(s: &mut Scanner, c: char) -> Result<Escape, String> {
    if c == '\\' {
        escape(s, true)
    } else {
        Ok(Escape::Char(c))
    }
}

fn push_class_item(out: &mut String, item: Escape) {
    match item {
        Escape::Char(c) => push_char(out, c),
        // The union, as ECMA means by a class escape inside a class.
        Escape::Set(set) => push_ranges(out, &set),
        Escape::Boundary(_) => unreachable!("no boundary inside a class"),
    }
}

/// A literal character: ASCII letters, digits and `_` and any non-ASCII character as
/// themselves, any other ASCII character as `\x{…}`, so that nothing is read as syntax
/// (`[`, `&&`, `--`, `~~`, `#` and white space included).
fn push_char(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii() {
        out.push(c);
    } else {
        write!(out, r"\x{{{:X}}}", u32::from(c)).expect("writing to a String");
    }
}

/// Ranges as the items of a class.
fn push_ranges(out: &mut String, ranges: &[(char, char)]) {
    for &(lo, hi) in ranges {
        push_char(out, lo);
        if hi != lo {
            out.push('-');
            push_char(out, hi);
        }
    }
}

/// The characters not in `ranges` (sorted and disjoint), as ranges.
fn complement(ranges: &[(char, char)]) -> Vec<(char, char)> {
    let mut out = Vec::with_capacity(ranges.len() + 1);
    let mut next = Some('\0');
    for &(lo, hi) in ranges {
        if let Some(from) = next
            && from < lo
        {
            out.push((from, before(lo)));
        }
        next = after(hi);
    }
    if let Some(from) = next {
        out.push((from, char::MAX));
    }
    out
}

/// The character before `c` (not `\0`), skipping the surrogates.
fn before(c: char) -> char {
    match c {
        '\u{E000}' => '\u{D7FF}',
        c => char::from_u32(u32::from(c) - 1).expect("not after a surrogate"),
    }
}

/// The character after `c`, skipping the surrogates; None after the last.
fn after(c: char) -> Option<char> {
    match c {
        '\u{D7FF}' => Some('\u{E000}'),
        c => char::from_u32(u32::from(c) + 1),
    }
}

/// An escape after its `\`, inside a class or not.
fn escape(s: &mut Scanner, in_class: bool) -> Result<Escape, String> {
    let Some(c) = s.next() else {
        return Err("is not valid: it ends with a lone `\\`".into());
    };
    let set = |ranges: &[(char, char)], negated: bool| {
        Ok(Escape::Set(if negated {
            complement(ranges)
        } else {
            ranges.to_vec()
        }))
    };
    match c {
        'd' | 'D' => set(DIGIT, c == 'D'),
        'w' | 'W' => set(WORD, c == 'W'),
        's' | 'S' => set(SPACE, c == 'S'),
        // ECMA's word characters are ASCII, and so are the crate's: so is the boundary.
        'b' if !in_class => Ok(Escape::Boundary(r"\b")),
        'B' if !in_class => Ok(Escape::Boundary(r"\B")),
        'b' => Ok(Escape::Char('\u{8}')),
        'B' => Err("is not valid: `\\B` inside a class".into()),
        't' => Ok(Escape::Char('\t')),
        'n' => Ok(Escape::Char('\n')),
        'v' => Ok(Escape::Char('\u{B}')),
        'f' => Ok(Escape::Char('\u{C}')),
        'r' => Ok(Escape::Char('\r')),
        '0' if !s.peek().is_some_and(|c| c.is_ascii_digit()) => Ok(Escape::Char('\0')),
        '0'..='9' => {
            let digits = format!("{c}{}", s.digits());
            if in_class || c == '0' {
                Err(format!(
                    "uses a legacy octal escape `\\{digits}`, which this validator does not accept"
                ))
            } else {
                Err(cannot(&format!("a backreference `\\{digits}`")))
            }
        }
        'k' => {
            let name = if s.peek() == Some('<') {
                s.until('>').unwrap_or_default() + ">"
            } else {
                String::new()
            };
            Err(cannot(&format!("a named backreference `\\k{name}`")))
        }
        'c' => match s.peek() {
            Some(letter) if letter.is_ascii_alphabetic() => {
                s.at += 1;
                Ok(Escape::Char(char::from(
                    u8::try_from(letter).expect("ASCII") % 32,
                )))
            }
            _ => Err("is not valid: `\\c` must be followed by a letter".into()),
        },
        'x' => match s.hex(2) {
            Some(code) => Ok(Escape::Char(char::from_u32(code).expect("below 256"))),
            None => Err("is not valid: `\\x` must be followed by two hexadecimal digits".into()),
        },
        'u' => unicode_escape(s).map(Escape::Char),
        'p' | 'P' => property(s, c == 'P'),
        // Syntax characters and `/`, escaped to stand for themselves; `-` inside a class.
        '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
        | '/' | '-' => Ok(Escape::Char(c)),
        c if c.is_ascii_alphanumeric() => {
            Err(format!("is not valid: `\\{c}` is not an ECMA-262 escape"))
        }
        // Any other character escaped is itself (Annex B's identity escape).
        c => Ok(Escape::Char(c)),
    }
}

/// After `\u`: `HHHH` (a surrogate pair `\uHHHH\uHHHH` as one code point) or `{H…}`.
fn unicode_escape(s: &mut Scanner) -> Result<char, String> {
    let code = if s.eat('{') {
        let digits = s.until('}').ok_or("is not valid: `\\u{` is never closed")?;
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!(
                "is not valid: `\\u{{{digits}}}` is not a code point"
            ));
        }
        // Leading zeros are allowed, any number of them.
        let significant = digits.trim_start_matches('0');
        if significant.len() > 6 {
            return Err(format!("is not valid: `\\u{{{digits}}}` is past U+10FFFF"));
        }
        u32::from_str_radix(significant, 16).unwrap_or(0)
    } else {
        let Some(code) = s.hex(4) else {
            return Err(
                "is not valid: `\\u` must be followed by four hexadecimal digits or `{…}`".into(),
            );
        };
        if (0xD800..0xDC00).contains(&code) {
            let start = s.at;
            if s.eat_str("\\u")
                && let Some(low) = s.hex(4)
                && (0xDC00..0xE000).contains(&low)
            {
                return Ok(
                    char::from_u32(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
                        .expect("a pair"),
                );
            }
            s.at = start;
        }
        code
    };
    char::from_u32(code).ok_or_else(|| {
        if code > 0x10_FFFF {
            format!("is not valid: `\\u{{{code:X}}}` is past U+10FFFF")
        } else {
            format!("has a lone surrogate `\\u{code:04X}`, which no string can hold")
        }
    })
}

/// After `\p` or `\P`: the crate has no Unicode property tables.
fn property(s: &mut Scanner, negated: bool) -> Result<Escape, String> {
    let letter = if negated { 'P' } else { 'p' };
    let name = if s.peek() == Some('{') {
        s.until('}').map(|n| format!("{n}}}"))
    } else {
        None
    };
    Err(cannot(&format!(
        "a Unicode property escape `\\{letter}{}`",
        name.unwrap_or_default()
    )))
}

#[cfg(test)]
mod tests {
    use super::Pattern;
    use serde_json::Value;

    #[track_caller]
    fn matches(pattern: &str, text: &str) -> bool {
        Pattern::new(pattern)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_match(text)
    }

    #[track_caller]
    fn error(pattern: &str) -> String {
        match Pattern::new(pattern) {
            Ok(p) => panic!("{p:?} compiled"),
            Err(e) => e,
        }
    }

    #[test]
    fn matches_anywhere_and_anchors_only_at_the_ends_of_the_input() {
        assert!(matches("a+", "xaay"));
        assert!(!matches("^a+$", "xaay"));
        assert!(matches("^abc$", "abc"));
        assert!(!matches("^abc$", "abc\n"));
        assert!(!matches("^abc$", "x\nabc"));
    }

    #[test]
    fn digit_and_word_classes_are_ascii() {
        for d in ["0", "5", "9"] {
            assert!(matches(r"^\d$", d) && !matches(r"^\D$", d), "{d}");
        }
        for d in ["\u{7C0}", "\u{663}", "a"] {
            assert!(!matches(r"^\d$", d) && matches(r"^\D$", d), "{d}");
        }
        for w in ["a", "Z", "0", "_"] {
            assert!(matches(r"^\w$", w) && !matches(r"^\W$", w), "{w}");
        }
        for w in ["é", "\u{3B1}", "-", " "] {
            assert!(!matches(r"^\w$", w) && matches(r"^\W$", w), "{w}");
        }
    }

    #[test]
    fn word_boundaries_are_ascii() {
        // `é` is not an ECMA word character, so `c` begins a word.
        assert!(matches(r"\bcole", "école"));
        assert!(!matches(r"\Bcole", "école"));
        assert!(matches(r"\Bcole", "xcole"));
        assert!(matches(r"^a\b", "a-"));
        assert!(!matches(r"^a\b", "ab"));
    }

    #[test]
    fn white_space_is_ecma_white_space_and_line_terminators() {
        let space = [
            "\t", "\n", "\u{B}", "\u{C}", "\r", " ", "\u{A0}", "\u{1680}", "\u{2000}", "\u{2005}",
            "\u{200A}", "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}", "\u{3000}", "\u{FEFF}",
        ];
        for s in space {
            assert!(matches(r"^\s$", s) && !matches(r"^\S$", s), "{s:?}");
            assert!(matches(r"^[\s]$", s) && !matches(r"^[\S]$", s), "{s:?}");
        }
        // Not white space in ECMA-262: U+0085, U+180E, U+200B.
        for s in ["\u{85}", "\u{180E}", "\u{200B}", "a"] {
            assert!(!matches(r"^\s$", s) && matches(r"^\S$", s), "{s:?}");
        }
    }

    #[test]
    fn dot_is_any_character_but_a_line_terminator() {
        for s in ["a", "é", "😀", "\u{85}", "\t"] {
            assert!(matches("^.$", s), "{s:?}");
        }
        for s in ["\n", "\r", "\u{2028}", "\u{2029}"] {
            assert!(!matches("^.$", s), "{s:?}");
        }
    }

    #[test]
    fn classes_are_flat_ecma_classes() {
        assert!(matches("^[a-z]+$", "abc") && !matches("^[a-z]+$", "aBc"));
        assert!(matches("^[^a-z]$", "B") && !matches("^[^a-z]$", "b"));
        // What Rust reads as nesting or set operations are characters in ECMA.
        assert!(matches("^[[]$", "["));
        assert!(matches("^[[a]+$", "[a["));
        assert!(matches("^[a&&b]$", "&") && matches("^[a&&b]$", "b"));
        assert!(matches("^[+--]$", ",") && matches("^[a-c--]$", "-"));
        assert!(matches("^[a~~b]$", "~"));
        assert!(matches("^[#^ ]+$", "# ^"));
        // A `]` after the class is closed is itself (Annex B).
        assert!(matches("^[a]]$", "a]"));
        assert!(matches(r"^[\]]$", "]"));
        // `-` first, last, escaped, or beside a class escape is itself.
        assert!(matches("^[-a]$", "-") && matches("^[a-]$", "-"));
        assert!(matches(r"^[a\-z]$", "-") && !matches(r"^[a\-z]$", "b"));
        assert!(matches(r"^[\w-.]+$", "a-b.c") && !matches(r"^[\w-.]+$", "a,b"));
        assert!(matches(r"^[--0]$", "/"));
        // Class escapes inside a class.
        assert!(matches(r"^[\d.]+$", "1.5") && !matches(r"^[\d.]+$", "١"));
        assert!(matches(r"^[\Da]$", "x") && matches(r"^[\Da]$", "a") && !matches(r"^[\Da]$", "1"));
        assert!(matches(r"^[^\W]$", "a") && !matches(r"^[^\W]$", "-"));
        assert!(matches(r"^[\b]$", "\u{8}"));
        // `[]` matches nothing, `[^]` anything.
        assert!(!matches("[]", "a") && !matches("[]", ""));
        assert!(matches("^a[^]b$", "a\nb"));
    }

    #[test]
    fn escapes_stand_for_their_characters() {
        assert!(matches(r"^\t\n\v\f\r\0$", "\t\n\u{B}\u{C}\r\0"));
        assert!(matches(r"^\cJ\cj\cC$", "\n\n\u{3}"));
        assert!(matches(r"^\x41\u0042\u{43}\u{1F600}$", "ABC😀"));
        assert!(matches(r"^\u{0000000044}\u{0}$", "D\0"));
        // A surrogate pair is one code point, quantified as one.
        assert!(matches(r"^\uD83D\uDE00+$", "😀😀"));
        assert!(matches(r"^[\uD83D\uDE00]$", "😀"));
        assert!(matches(r"^[\uD83D\uDE00-\uD83D\uDE4F]$", "🙏"));
        assert!(matches("^🐲*$", "🐲🐲") && !matches("^🐲*$", "🐉"));
        assert!(matches(
            r"^\/\.\*\+\?\(\)\[\]\{\}\|\^\$\\$",
            r"/.*+?()[]{}|^$\"
        ));
        // Annex B identity escapes of other punctuation.
        assert!(matches(r"^\-\#\ \@\é$", "-# @é"));
    }

    #[test]
    fn unicode_properties_are_an_error_naming_them() {
        assert_eq!(
            error(r"^\p{Letter}+$"),
            r"the pattern `^\p{Letter}+$` uses a Unicode property escape `\p{Letter}`, which this validator cannot express"
        );
        assert!(error(r"[\P{L}]").contains(r"a Unicode property escape `\P{L}`"));
        assert!(error(r"\p").contains(r"a Unicode property escape `\p`"));
    }

    #[test]
    fn quantifiers_and_braces_as_ecma_reads_them() {
        assert!(matches("^a{2}$", "aa") && !matches("^a{2}$", "aaa"));
        assert!(matches("^a{2,}$", "aaaa") && !matches("^a{2,}$", "a"));
        assert!(matches("^a{1,2}$", "aa") && !matches("^a{1,2}$", "aaa"));
        assert!(matches("^a+?b*?c??d{1,2}?$", "aacd"));
        assert!(matches("^(?:ab)+$", "abab") && matches("^(ab|cd)*$", "abcd"));
        // Annex B: a `{` that begins no quantifier, and a `}`, are themselves.
        assert!(matches("^a{$", "a{"));
        assert!(matches("^a{1$", "a{1"));
        assert!(matches("^a{1,$", "a{1,"));
        assert!(matches("^a{,3}$", "a{,3}"));
        assert!(matches("^{,3}$", "{,3}"));
        assert!(matches("^a{x}$", "a{x}"));
        assert!(matches("^}$", "}"));
        assert!(error("a{3,1}").contains("`{3,1}` the numbers are out of order"));
        assert!(error("a{99999999999}").contains("the repetition count 99999999999 is too large"));
    }

    #[test]
    fn groups_pass_named_or_not() {
        assert!(matches("^(?:a|b)c$", "bc"));
        assert!(matches("^(?<year>[0-9]{4})-(?<month>[0-9]{2})$", "2026-11"));
        assert!(matches("^(?<$x_1>a)$", "a"));
        assert!(matches("^()a$", "a"));
        assert!(error("(?<1x>a)").contains("`1x` is not a group name"));
        assert!(error("(?<x").contains("no closing `>`"));
    }

    #[test]
    fn what_cannot_be_expressed_is_an_error_naming_it() {
        assert_eq!(
            error("(?=a)"),
            "the pattern `(?=a)` uses a lookahead `(?=`, which this validator cannot express"
        );
        assert!(error("a(?!b)").contains("a negative lookahead `(?!`"));
        assert!(error("(?<=a)b").contains("a lookbehind `(?<=`"));
        assert!(error("(?<!a)b").contains("a negative lookbehind `(?<!`"));
        assert!(error(r"(a)\1").contains(r"a backreference `\1`"));
        assert!(error(r"(a)\12").contains(r"a backreference `\12`"));
        assert!(error(r"(?<x>a)\k<x>").contains(r"a named backreference `\k<x>`"));
        assert!(error("(?i)a").contains("has `(?i`, which ECMA-262 patterns do not have here"));
        assert!(error("(?i:a)").contains("has `(?i`"));
        assert!(error("(?P<x>a)").contains("has `(?P`"));
    }

    #[test]
    fn invalid_patterns_are_errors_naming_the_fault() {
        let cases = [
            ("(a", "a `(` is never closed"),
            ("a)", "a `)` closes no group"),
            ("[a", "a `[` is never closed"),
            ("*a", "`*` has nothing to repeat"),
            ("a**", "`*` has nothing to repeat"),
            ("a|+", "`+` has nothing to repeat"),
            ("(?)", "has `(?)`"),
            ("{2}", "`{2}` has nothing to repeat"),
            ("a{2}{3}", "`{3}` has nothing to repeat"),
            ("^*", "`*` has nothing to repeat"),
            (r"\b+", "`+` has nothing to repeat"),
            ("[z-a]", "the range `z-a` is out of order"),
            ("[a--b]", "the range `a--` is out of order"),
            ("a\\", "it ends with a lone `\\`"),
            (r"\q", r"`\q` is not an ECMA-262 escape"),
            (r"\z", r"`\z` is not an ECMA-262 escape"),
            (r"\A", r"`\A` is not an ECMA-262 escape"),
            (r"[\B]", r"`\B` inside a class"),
            (r"\c1", r"`\c` must be followed by a letter"),
            (r"\x4", r"`\x` must be followed by two hexadecimal digits"),
            (r"\u12", r"`\u` must be followed by four hexadecimal digits"),
            (r"\u{}", r"`\u{}` is not a code point"),
            (r"\u{12", r"`\u{` is never closed"),
            (r"\u{110000}", "`\\u{110000}` is past U+10FFFF"),
            (r"\u{00FFFFFFF}", "`\\u{00FFFFFFF}` is past U+10FFFF"),
            (r"\u{12g}", "`\\u{12g}` is not a code point"),
            (r"\uD800", r"a lone surrogate `\uD800`"),
            (r"\uDE00\uD83D", r"a lone surrogate `\uDE00`"),
            (r"\01", r"a legacy octal escape `\01`"),
            (r"[\1]", r"a legacy octal escape `\1`"),
        ];
        for (pattern, fault) in cases {
            let e = error(pattern);
            assert!(e.starts_with(&format!("the pattern `{pattern}` ")), "{e}");
            assert!(e.contains(fault), "{pattern}: {e}");
        }
    }

    #[test]
    fn huge_patterns_are_errors_not_exhaustion() {
        let e = error("(?:a{1000}){1000}");
        assert!(
            e.contains("cannot be compiled: compiled regex exceeded size limit"),
            "{e}"
        );
        let long = "x".repeat(1_000_000);
        let e = error(&long);
        assert!(
            e.contains("exceeded size limit") && e.contains("(1000000 bytes)") && e.len() < 200,
            "{e}"
        );
        let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(error(&deep).contains("cannot be compiled: pattern has too much nesting"));
    }

    #[test]
    fn keeps_the_source_for_messages() {
        let p = Pattern::new(r"^\d+$").unwrap();
        assert_eq!(p.as_str(), r"^\d+$");
        assert_eq!(format!("{p:?}"), r#"Pattern("^\\d+$")"#);
    }

    /// The subset of JSON Schema the suite's `patternProperties` cases use beside it.
    fn subschema_holds(schema: &Value, value: &Value) -> Option<bool> {
        let Some(object) = schema.as_object() else {
            return schema.as_bool();
        };
        let mut holds = true;
        for (keyword, arg) in object {
            holds &= match (keyword.as_str(), arg.as_str()) {
                ("type", Some("integer")) => value.as_f64().is_some_and(|n| n.fract() == 0.0),
                ("type", Some("number")) => value.is_number(),
                ("type", Some("string")) => value.is_string(),
                ("type", Some("boolean")) => value.is_boolean(),
                ("type", Some("null")) => value.is_null(),
                ("maximum", _) => value
                    .as_f64()
                    .is_none_or(|n| n <= arg.as_f64().expect("a number")),
                _ => return None,
            };
        }
        Some(holds)
    }

    #[derive(Default, Debug)]
    struct Counts {
        matched: usize,
        /// Cases whose pattern is refused, by the construct named.
        erred: std::collections::BTreeMap<String, usize>,
        skipped: usize,
        mismatched: Vec<String>,
    }

    impl Counts {
        /// A pattern refused: only for a construct it names as inexpressible.
        #[track_caller]
        fn refused(&mut self, error: &str, cases: usize) {
            let construct = error
                .split_once(" uses ")
                .and_then(|(_, rest)| rest.split_once(", which this validator cannot express"))
                .unwrap_or_else(|| panic!("refused for another reason: {error}"))
                .0;
            *self.erred.entry(construct.to_owned()).or_default() += cases;
        }
    }

    /// Every case of the suite file whose schema is only `pattern` or only `patternProperties`
    /// (with `type`, and `additionalProperties: false`): `Pattern` either refuses the pattern
    /// as inexpressible, or validates as the suite says.
    fn run_suite_file(path: &str, counts: &mut Counts) {
        let file = format!(
            "{}/../tests/fixtures/json-schema-test-suite/draft2020-12/{path}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let groups: Vec<Value> = serde_json::from_str(&text).unwrap();
        for group in groups {
            let mut schema = group["schema"].as_object().cloned().unwrap_or_default();
            schema.remove("$schema");
            let keys: Vec<&str> = schema.keys().map(String::as_str).collect();
            let name = group["description"].as_str().unwrap_or_default();
            let tests = group["tests"].as_array().unwrap();
            if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
                let only = keys == ["pattern"]
                    || (keys.len() == 2 && schema.get("type") == Some(&"string".into()));
                if !only {
                    counts.skipped += tests.len();
                    continue;
                }
                let compiled = match Pattern::new(pattern) {
                    Ok(p) => p,
                    Err(e) => {
                        counts.refused(&e, tests.len());
                        continue;
                    }
                };
                for test in tests {
                    let Some(data) = test["data"].as_str() else {
                        counts.skipped += 1;
                        continue;
                    };
                    if compiled.is_match(data) == test["valid"].as_bool().unwrap() {
                        counts.matched += 1;
                    } else {
                        counts
                            .mismatched
                            .push(format!("{path}: {name}: {pattern:?} on {data:?}"));
                    }
                }
            } else if let Some(patterns) =
                schema.get("patternProperties").and_then(Value::as_object)
            {
                let closed = match schema.get("additionalProperties") {
                    None => false,
                    Some(Value::Bool(false)) => true,
                    Some(_) => {
                        counts.skipped += tests.len();
                        continue;
                    }
                };
                let typed = schema.get("type").is_some_and(|t| t == "object");
                if keys.len() != 1 + usize::from(closed) + usize::from(typed) {
                    counts.skipped += tests.len();
                    continue;
                }
                let compiled: Result<Vec<_>, _> = patterns
                    .iter()
                    .map(|(p, s)| Pattern::new(p).map(|p| (p, s)))
                    .collect();
                let compiled = match compiled {
                    Ok(c) => c,
                    Err(e) => {
                        counts.refused(&e, tests.len());
                        continue;
                    }
                };
                for test in tests {
                    let Some(object) = test["data"].as_object() else {
                        counts.skipped += 1;
                        continue;
                    };
                    let mut valid = Some(true);
                    for (key, value) in object {
                        let mut any = false;
                        for (pattern, subschema) in &compiled {
                            if pattern.is_match(key) {
                                any = true;
                                valid = valid
                                    .zip(subschema_holds(subschema, value))
                                    .map(|(a, b)| a && b);
                            }
                        }
                        if closed && !any {
                            valid = valid.map(|_| false);
                        }
                    }
                    match valid {
                        None => counts.skipped += 1,
                        Some(v) if v == test["valid"].as_bool().unwrap() => counts.matched += 1,
                        Some(_) => counts
                            .mismatched
                            .push(format!("{path}: {name}: {object:?}")),
                    }
                }
            }
        }
    }

    #[test]
    fn agrees_with_the_json_schema_test_suite() {
        for path in [
            "optional/ecmascript-regex.json",
            "optional/non-bmp-regex.json",
            "pattern.json",
            "patternProperties.json",
        ] {
            let mut counts = Counts::default();
            run_suite_file(path, &mut counts);
            println!(
                "{path}: {} matched, {} erred {:?}, {} skipped (not strings, other keywords), {} mismatched",
                counts.matched,
                counts.erred.values().sum::<usize>(),
                counts.erred,
                counts.skipped,
                counts.mismatched.len()
            );
            assert!(counts.mismatched.is_empty(), "{:#?}", counts.mismatched);
            assert!(counts.matched > 0, "{path}");
        }
    }
}
