//! Any JSON value as a tool's arguments, through the pipeline's validator: no panic, an answer
//! for every value (the time limit of each run is libFuzzer's `-timeout`), and a refusal that
//! names at least one violation with a JSON pointer. Every value also goes to the schema
//! validator and to the `jsonschema` crate, which must agree: on the tool's own schema, and, for
//! a value `{"schema": S, "instance": I}`, on `S` itself wherever both compile it.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tool_runtime::__private::validator::Validator;
use tool_runtime::{Caller, Registry, Source};

fuzz_target!(|bytes: &[u8]| {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    static KINDS: OnceLock<(Validator, jsonschema::Validator, Value)> = OnceLock::new();
    let registry = REGISTRY.get_or_init(|| tool_fuzz::builder().build().expect("a registry"));
    let Ok(args) = serde_json::from_slice::<Value>(bytes) else {
        return;
    };
    let (ours, theirs, kinds) = KINDS.get_or_init(|| {
        let schema = registry.get("kinds").expect("kinds").input_schema().clone();
        (
            Validator::new(&schema).expect("ours"),
            reference(&schema).expect("jsonschema's"),
            schema,
        )
    });
    agree(ours, theirs, kinds, &args);
    // Where both compile it: `jsonschema` refuses some patterns ECMA-262's Annex B reads
    // (`a{,}`), which the validator takes as browsers do.
    if let (Some(schema), Some(instance)) = (args.get("schema"), args.get("instance"))
        && let Ok(ours) = Validator::new(schema)
        && let Ok(theirs) = reference(schema)
        && !dialects_differ(schema)
    {
        agree(&ours, &theirs, schema, instance);
    }
    let envelope =
        tool_fuzz::runtime().block_on(registry.call("kinds", args, Caller::new(Source::Internal)));
    if let Some(e) = envelope.error() {
        if e.kind() == "invalid_arguments" {
            assert!(!e.violations().is_empty(), "{e:?}");
            for v in e.violations() {
                assert!(v.path.is_empty() || v.path.starts_with('/'), "{v:?}");
            }
        } else {
            assert_eq!(e.kind(), "invalid_request", "{e:?}");
        }
    }
});

fn reference(
    schema: &Value,
) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
}

/// Both verdicts the same, and the validator's errors empty exactly when it says valid.
/// Left out: integers beyond 2^53, which `jsonschema` compares and divides in floating point,
/// and a `multipleOf` whose quotient its decimal reading cannot hold in `i128`, where it divides
/// the binary values instead; the validator is exact and decimal in both.
fn agree(ours: &Validator, theirs: &jsonschema::Validator, schema: &Value, instance: &Value) {
    if has_big_integer(instance) || beyond_decimal(schema, instance) {
        return;
    }
    let verdict = theirs.is_valid(instance);
    assert_eq!(
        ours.is_valid(instance),
        verdict,
        "{instance}: jsonschema says {verdict}"
    );
    assert_eq!(
        ours.errors(instance).is_empty(),
        verdict,
        "{instance}: errors against verdict"
    );
}

fn has_big_integer(value: &Value) -> bool {
    const EXACT: u64 = 1 << 53;
    match value {
        Value::Number(n) => {
            n.as_u64().is_some_and(|u| u > EXACT)
                || n.as_i64().is_some_and(|i| i.unsigned_abs() > EXACT)
        }
        Value::Array(items) => items.iter().any(has_big_integer),
        Value::Object(map) => map.values().any(has_big_integer),
        _ => false,
    }
}

/// Whether some `multipleOf` of `schema` and some number of `instance`, one of them written
/// as a float, are beyond `jsonschema`'s decimal reading: both as `mantissa × 10^-decimals`,
/// scaled to the same power of ten, must fit `i128`.
fn beyond_decimal(schema: &Value, instance: &Value) -> bool {
    fn divisors(schema: &Value, out: &mut Vec<serde_json::Number>) {
        match schema {
            Value::Object(map) => map.iter().for_each(|(keyword, value)| match value {
                Value::Number(n) if keyword == "multipleOf" => out.push(n.clone()),
                value => divisors(value, out),
            }),
            Value::Array(items) => items.iter().for_each(|value| divisors(value, out)),
            _ => {}
        }
    }
    fn numbers(value: &Value, out: &mut Vec<serde_json::Number>) {
        match value {
            Value::Number(n) => out.push(n.clone()),
            Value::Object(map) => map.values().for_each(|value| numbers(value, out)),
            Value::Array(items) => items.iter().for_each(|value| numbers(value, out)),
            _ => {}
        }
    }
    fn decimal(f: f64) -> Option<(i128, i32)> {
        let text = format!("{f:e}");
        let (mantissa, exponent) = text.split_once('e')?;
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
        Some((
            digits,
            i32::try_from(fraction.len()).ok()? - exponent.parse::<i32>().ok()?,
        ))
    }
    fn fits(value: f64, divisor: f64) -> bool {
        let (Some((v, v_places)), Some((d, d_places))) = (decimal(value), decimal(divisor)) else {
            return false;
        };
        let shared = v_places.min(d_places);
        let scale = |m: i128, places: i32| {
            m.checked_mul(10_i128.checked_pow(u32::try_from(places - shared).ok()?)?)
        };
        scale(v, d_places).is_some() && scale(d, v_places).is_some()
    }
    let mut found = Vec::new();
    divisors(schema, &mut found);
    if found.is_empty() {
        return false;
    }
    let mut values = Vec::new();
    numbers(instance, &mut values);
    found.iter().any(|d| {
        values.iter().any(|v| {
            (v.is_f64() || d.is_f64())
                && !fits(v.as_f64().unwrap_or(0.0), d.as_f64().unwrap_or(1.0))
        })
    })
}

/// Whether `schema` has a pattern whose meaning `jsonschema` takes from Rust's regex syntax
/// rather than ECMA-262's: `[]` (ECMA: a class that matches nothing; Rust: a class that begins
/// with `]`) and `[^]` (ECMA: any character).
fn dialects_differ(schema: &Value) -> bool {
    let differs = |pattern: &str| pattern.contains("[]") || pattern.contains("[^]");
    match schema {
        Value::Object(map) => map
            .iter()
            .any(|(keyword, value)| match (keyword.as_str(), value) {
                ("pattern", Value::String(p)) => differs(p),
                ("patternProperties", Value::Object(patterns)) => {
                    patterns.keys().any(|p| differs(p)) || patterns.values().any(dialects_differ)
                }
                _ => dialects_differ(value),
            }),
        Value::Array(items) => items.iter().any(dialects_differ),
        _ => false,
    }
}
