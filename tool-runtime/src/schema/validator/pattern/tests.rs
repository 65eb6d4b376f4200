//! The translation, rule by rule, and the patterns of the JSON Schema Test Suite.

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
        Err(e) => e.to_string(),
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
        e.contains("cannot be compiled: it exceeds the size limit"),
        "{e}"
    );
    let long = "x".repeat(1_000_000);
    let e = error(&long);
    assert!(
        e.contains("exceeds the size limit") && e.contains("(1000000 bytes)") && e.len() < 200,
        "{e}"
    );
    let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
    let e = error(&deep);
    assert!(
        e.contains("cannot be compiled: ") && e.contains("nest") && e.len() < 300,
        "{e}"
    );
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
                    counts.refused(&e.to_string(), tests.len());
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
        } else if let Some(patterns) = schema.get("patternProperties").and_then(Value::as_object) {
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
                    counts.refused(&e.to_string(), tests.len());
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

/// What one suite file's cases come to.
struct Expected {
    path: &'static str,
    matched: usize,
    /// Refused, by the construct the error names.
    refused: &'static [(&'static str, usize)],
    /// Data that is not a string or an object, schemas with other keywords.
    skipped: usize,
}

/// The suite's figures. A change here is a change of what the translator expresses: made on
/// purpose, with this table.
const SUITE: &[Expected] = &[
    Expected {
        path: "optional/ecmascript-regex.json",
        matched: 60,
        refused: &[
            (r"a Unicode property escape `\p{Letter}`", 8),
            (r"a Unicode property escape `\p{digit}`", 6),
        ],
        skipped: 0,
    },
    Expected {
        path: "optional/non-bmp-regex.json",
        matched: 12,
        refused: &[],
        skipped: 0,
    },
    Expected {
        path: "pattern.json",
        matched: 3,
        refused: &[(r"a Unicode property escape `\p{Letter}`", 3)],
        skipped: 6,
    },
    Expected {
        path: "patternProperties.json",
        matched: 20,
        refused: &[(r"a Unicode property escape `\p{Letter}`", 2)],
        skipped: 3,
    },
];

#[test]
fn agrees_with_the_json_schema_test_suite() {
    for expected in SUITE {
        let mut counts = Counts::default();
        run_suite_file(expected.path, &mut counts);
        assert!(counts.mismatched.is_empty(), "{:#?}", counts.mismatched);
        let refused: std::collections::BTreeMap<String, usize> = expected
            .refused
            .iter()
            .map(|&(construct, cases)| (construct.to_owned(), cases))
            .collect();
        assert_eq!(
            (counts.matched, &counts.erred, counts.skipped),
            (expected.matched, &refused, expected.skipped),
            "{}: (matched, refused by construct, skipped)",
            expected.path
        );
    }
}

#[test]
fn what_the_crate_cannot_express_is_told_from_what_is_invalid() {
    use super::PatternError;
    for inexpressible in ["(?=a)", "(?<!a)b", r"(a)\1", r"\p{Letter}"] {
        assert!(
            matches!(
                Pattern::new(inexpressible),
                Err(PatternError::Inexpressible(_))
            ),
            "{inexpressible}"
        );
    }
    for invalid in ["(", "[a", "a**", r"\z"] {
        assert!(
            matches!(Pattern::new(invalid), Err(PatternError::Invalid(_))),
            "{invalid}"
        );
    }
}
