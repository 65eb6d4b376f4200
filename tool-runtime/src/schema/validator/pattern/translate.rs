//! The scanner that rewrites an ECMA-262 pattern in the syntax of the `regex` crate.

use std::fmt::Write as _;

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
pub(super) fn translate(ecma: &str) -> Result<String, String> {
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
    format!("uses {construct}{CANNOT}")
}

/// How every message about a construct the crate cannot express ends.
pub(super) const CANNOT: &str = ", which this validator cannot express";

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
        // ECMA's boundaries are ASCII's (and the crate's Unicode ones need its Unicode tables).
        'b' if !in_class => Ok(Escape::Boundary(r"(?-u:\b)")),
        'B' if !in_class => Ok(Escape::Boundary(r"(?-u:\B)")),
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
