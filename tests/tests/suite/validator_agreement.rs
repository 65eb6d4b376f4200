//! The validator against the `jsonschema` crate over generated schemas and values: both must
//! give every value the same verdict. The schemas use only the validator's keywords, nested and
//! combined as no hand-written case would; the values probe each keyword's edges.

use serde_json::{Map, Value, json};
use tool_runtime::__private::validator::Validator;

/// A small deterministic generator (xorshift64*), so a failure reproduces from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }
    fn pick<T: Clone>(&mut self, options: &[T]) -> T {
        options[self.below(options.len())].clone()
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const NAMES: [&str; 5] = ["a", "b", "c", "a1", "x"];
const PATTERNS: [&str; 7] = ["^a", "[0-9]$", "^$", "^[a-c]+$", "b|c", "^\\d+$", "^.{2}$"];

fn number(rng: &mut Rng) -> Value {
    rng.pick(&[
        json!(0),
        json!(1),
        json!(-1),
        json!(2),
        json!(3),
        json!(10),
        json!(0.5),
        json!(1.5),
        json!(2.0),
        json!(-2.5),
        json!(0.1),
        json!(1e20),
        // The largest integers a float holds exactly: beyond them `jsonschema` compares and
        // divides in floating point, where the validator is exact (its own tests).
        json!(9_007_199_254_740_991_u64),
        json!(-9_007_199_254_740_991_i64),
    ])
}

fn string(rng: &mut Rng) -> Value {
    json!(rng.pick(&["", "a", "b", "ab", "abc", "a1", "12", "é😀", "x\ny", "cc"]))
}

fn instance(rng: &mut Rng, depth: usize) -> Value {
    let kinds = if depth >= 3 { 4 } else { 6 };
    match rng.below(kinds) {
        0 => rng.pick(&[Value::Null, json!(true), json!(false)]),
        1 => number(rng),
        2 | 3 => string(rng),
        4 => Value::Array(
            (0..rng.below(4))
                .map(|_| instance(rng, depth + 1))
                .collect(),
        ),
        _ => {
            let mut map = Map::new();
            for _ in 0..rng.below(4) {
                map.insert(rng.pick(&NAMES).to_owned(), instance(rng, depth + 1));
            }
            Value::Object(map)
        }
    }
}

fn schemas(rng: &mut Rng, depth: usize, most: usize) -> Value {
    let count = 1 + rng.below(most);
    Value::Array((0..count).map(|_| schema(rng, depth + 1)).collect())
}

#[allow(clippy::too_many_lines)] // One arm per keyword.
fn schema(rng: &mut Rng, depth: usize) -> Value {
    if depth > 3 || rng.chance(8) {
        return rng.pick(&[
            json!(true),
            json!(false),
            json!({}),
            json!({"type": "string"}),
        ]);
    }
    let mut s = Map::new();
    for _ in 0..=rng.below(3) {
        let (keyword, value) = match rng.below(27) {
            0 => (
                "type",
                json!(rng.pick(&[
                    "null", "boolean", "object", "array", "number", "string", "integer"
                ])),
            ),
            1 => (
                "type",
                json!([
                    rng.pick(&["integer", "string"]),
                    rng.pick(&["null", "array", "number"])
                ]),
            ),
            2 => (
                "enum",
                Value::Array((0..=rng.below(3)).map(|_| instance(rng, 2)).collect()),
            ),
            3 => ("const", instance(rng, 2)),
            4 => {
                let mut props = Map::new();
                for _ in 0..=rng.below(3) {
                    props.insert(rng.pick(&NAMES).to_owned(), schema(rng, depth + 1));
                }
                ("properties", Value::Object(props))
            }
            5 => ("required", json!([rng.pick(&NAMES), rng.pick(&NAMES)])),
            6 => ("additionalProperties", schema(rng, depth + 1)),
            7 => {
                let mut props = Map::new();
                props.insert(rng.pick(&PATTERNS).to_owned(), schema(rng, depth + 1));
                ("patternProperties", Value::Object(props))
            }
            8 => (
                "unevaluatedProperties",
                rng.pick(&[json!(false), json!({"type": "integer"})]),
            ),
            9 => ("minProperties", json!(rng.below(3))),
            10 => ("maxProperties", json!(rng.below(3))),
            11 => ("items", schema(rng, depth + 1)),
            12 => ("prefixItems", schemas(rng, depth, 2)),
            13 => ("minItems", json!(rng.below(3))),
            14 => ("maxItems", json!(rng.below(3))),
            15 => ("uniqueItems", json!(rng.chance(70))),
            16 => ("minLength", json!(rng.below(3))),
            17 => ("maxLength", json!(rng.below(3))),
            18 => ("pattern", json!(rng.pick(&PATTERNS))),
            19 => (
                rng.pick(&["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
                number(rng),
            ),
            20 => (
                "multipleOf",
                rng.pick(&[json!(2), json!(0.5), json!(0.1), json!(3), json!(1.5)]),
            ),
            21 => ("allOf", schemas(rng, depth, 3)),
            22 => ("anyOf", schemas(rng, depth, 3)),
            23 => ("oneOf", schemas(rng, depth, 3)),
            24 => ("not", schema(rng, depth + 1)),
            // A recursive reference, reached only one level into the value.
            25 => ("items", json!({"$ref": "#"})),
            // References resolve from the root, where the definitions are.
            _ if depth == 0 => {
                s.insert("$defs".into(), json!({"d": schema(rng, depth + 1)}));
                ("$ref", json!("#/$defs/d"))
            }
            _ => ("not", schema(rng, depth + 1)),
        };
        s.insert(keyword.into(), value);
    }
    Value::Object(s)
}

#[test]
fn the_validator_agrees_with_jsonschema_on_generated_schemas() {
    let (mut schemas_checked, mut values_checked, mut valid_seen, mut refused) = (0, 0, 0, 0);
    for seed in 1..=10_000_u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let schema = schema(&mut rng, 0);
        let theirs = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema);
        let (ours, theirs) = match (Validator::new(&schema), theirs) {
            (Ok(ours), Ok(theirs)) => (ours, theirs),
            // A schema the meta-schema refuses (a name twice in `required`): both refuse it.
            (Err(_), Err(_)) => {
                refused += 1;
                continue;
            }
            (ours, theirs) => panic!(
                "seed {seed}: {schema}: compiles here: {}, with jsonschema: {}",
                ours.is_ok(),
                theirs.is_ok()
            ),
        };
        schemas_checked += 1;
        for _ in 0..12 {
            let value = instance(&mut rng, 0);
            let verdict = theirs.is_valid(&value);
            assert_eq!(
                ours.is_valid(&value),
                verdict,
                "seed {seed}: schema {schema}, value {value}: jsonschema says {verdict}"
            );
            assert_eq!(
                ours.errors(&value).is_empty(),
                verdict,
                "seed {seed}: schema {schema}, value {value}: the errors disagree with the verdict"
            );
            values_checked += 1;
            valid_seen += usize::from(verdict);
        }
    }
    // Both verdicts well represented, or the comparison says little.
    assert!(
        valid_seen > values_checked / 5 && valid_seen < values_checked * 4 / 5,
        "{valid_seen} of {values_checked} valid"
    );
    assert!(
        refused < schemas_checked / 10,
        "{refused} schemas refused by both"
    );
    eprintln!(
        "{schemas_checked} schemas (and {refused} refused by both), {values_checked} values, {valid_seen} valid: the same verdicts"
    );
}
