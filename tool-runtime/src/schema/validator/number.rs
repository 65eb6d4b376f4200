//! Numbers as JSON Schema compares them: by value, whatever their representation (`1`, `1.0`
//! and `1e0` are the same number), exactly where both are integers.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// A JSON number, read once: an integer (`u64` and `i64` both fit `i128`) or a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    pub(crate) fn of(n: &Number) -> Self {
        if let Some(i) = n.as_i64() {
            Num::Int(i.into())
        } else if let Some(u) = n.as_u64() {
            Num::Int(u.into())
        } else {
            Num::Float(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// Whether the value is integral (`5` and `5.0` are; JSON Schema's `integer`).
    pub(crate) fn is_integer(self) -> bool {
        match self {
            Num::Int(_) => true,
            Num::Float(f) => f.is_finite() && f.fract() == 0.0,
        }
    }

    /// The exact order of two numbers.
    pub(crate) fn cmp(self, other: Num) -> Ordering {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.cmp(&b),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
            (Num::Float(f), Num::Int(i)) => float_cmp_int(f, i),
            (Num::Int(i), Num::Float(f)) => float_cmp_int(f, i).reverse(),
        }
    }

    /// Whether `self` is a multiple of `divisor` (positive, as the schema requires). Decimal,
    /// as the JSON text reads, and exact at every magnitude: `0.0075` is a multiple of `0.0001`,
    /// which binary floating point division would deny, and `1e60` is no multiple of `3`, which a
    /// float quotient, integral that far out, would grant.
    pub(crate) fn is_multiple_of(self, divisor: Num) -> bool {
        let (Some((a, a_exp)), Some((b, b_exp))) = (self.decimal(), divisor.decimal()) else {
            return false;
        };
        if b == 0 {
            return false;
        }
        if a == 0 {
            return true;
        }
        // Both mantissas are at most 2^64, so a product of two residues fits a u128.
        let (a, b) = (a.unsigned_abs(), b.unsigned_abs());
        match u32::try_from(a_exp - b_exp) {
            // a·10^e ÷ b: the residue of a times that of 10^e.
            Ok(e) => ((a % b) * pow10_mod(e, b)).is_multiple_of(b),
            // a ÷ b·10^e: a divisor beyond u128 exceeds a.
            Err(_) => u32::try_from(b_exp - a_exp)
                .ok()
                .and_then(|e| 10_u128.checked_pow(e))
                .and_then(|scale| b.checked_mul(scale))
                .is_some_and(|divisor| a.is_multiple_of(divisor)),
        }
    }

    /// The number as `m × 10^exp`, from its shortest decimal form; `None` if not finite.
    fn decimal(self) -> Option<(i128, i32)> {
        let f = match self {
            Num::Int(i) => return Some((i, 0)),
            Num::Float(f) if f.is_finite() => f,
            Num::Float(_) => return None,
        };
        // `{:e}` is the shortest form that reads back as `f`: `7.5e-3`, at most 17 digits.
        let text = format!("{f:e}");
        let (mantissa, exponent) = text.split_once('e')?;
        let exponent: i32 = exponent.parse().ok()?;
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
        Some((digits, exponent - i32::try_from(fraction.len()).ok()?))
    }
}

/// 10^e mod m, by squaring; `m` is at most 2^64, so every product fits a u128.
fn pow10_mod(mut e: u32, m: u128) -> u128 {
    let (mut base, mut result) = (10 % m, 1 % m);
    while e > 0 {
        if e & 1 == 1 {
            result = result * base % m;
        }
        base = base * base % m;
        e >>= 1;
    }
    result
}

/// `f` compared with `i`, exactly: the integral part first, then the fraction.
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
fn float_cmp_int(f: f64, i: i128) -> Ordering {
    // 2^127: beyond i128, so beyond every integer a JSON number here holds.
    const LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if f.is_nan() {
        return Ordering::Equal;
    }
    if f >= LIMIT {
        return Ordering::Greater;
    }
    if f < -LIMIT {
        return Ordering::Less;
    }
    let whole = f.trunc();
    // In range and integral: the conversion is exact.
    match (whole as i128).cmp(&i) {
        Ordering::Equal => (f - whole).partial_cmp(&0.0).unwrap_or(Ordering::Equal),
        other => other,
    }
}

/// JSON equality: numbers by value, objects whatever their members' order.
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Num::of(x).cmp(Num::of(y)) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn num(v: &Value) -> Num {
        Num::of(v.as_number().unwrap())
    }

    #[test]
    fn compares_exactly_across_representations() {
        let max = json!(u64::MAX);
        // u64::MAX as a float rounds up to 2^64: greater than the integer, not equal.
        let rounded = json!(18_446_744_073_709_551_615.0_f64);
        assert_eq!(num(&rounded).cmp(num(&max)), Ordering::Greater);
        assert_eq!(num(&json!(1.0)).cmp(num(&json!(1))), Ordering::Equal);
        assert_eq!(num(&json!(1.5)).cmp(num(&json!(1))), Ordering::Greater);
        assert_eq!(num(&json!(-1.5)).cmp(num(&json!(-1))), Ordering::Less);
        assert_eq!(
            num(&json!(i64::MIN)).cmp(num(&json!(-1e300))),
            Ordering::Greater
        );
        assert_eq!(
            num(&json!(1e300)).cmp(num(&json!(u64::MAX))),
            Ordering::Greater
        );
        assert_eq!(
            num(&json!(u64::MAX)).cmp(num(&json!(i64::MIN))),
            Ordering::Greater
        );
    }

    #[test]
    fn integers_and_multiples() {
        assert!(num(&json!(5.0)).is_integer());
        assert!(!num(&json!(5.5)).is_integer());
        assert!(num(&json!(10)).is_multiple_of(num(&json!(5))));
        assert!(!num(&json!(10)).is_multiple_of(num(&json!(3))));
        assert!(num(&json!(4.5)).is_multiple_of(num(&json!(1.5))));
        assert!(!num(&json!(35)).is_multiple_of(num(&json!(1.5))));
        assert!(num(&json!(0.0075)).is_multiple_of(num(&json!(0.0001))));
        assert!(!num(&json!(1e308)).is_multiple_of(num(&json!(0.123_456_789))));
        // Exact beyond 2^53, where a float division would round: 3 × 6148914691236517205.
        assert!(num(&json!(u64::MAX)).is_multiple_of(num(&json!(1.5))));
        assert!(!num(&json!(u64::MAX - 1)).is_multiple_of(num(&json!(1.5))));
        // Beyond i128, where every float is integral and a float quotient says yes to all:
        // 10^60 is no multiple of 3, nor of 1.5; 47777777777777706 × 10^44 (digit sum 108) is.
        assert!(!num(&json!(1e60)).is_multiple_of(num(&json!(3))));
        assert!(!num(&json!(1e60)).is_multiple_of(num(&json!(1.5))));
        assert!(num(&json!(4.777_777_777_777_770_6e60)).is_multiple_of(num(&json!(1.5))));
        assert!(num(&json!(4.5e60)).is_multiple_of(num(&json!(1.5))));
        assert!(num(&json!(1e-300)).is_multiple_of(num(&json!(1e-301))));
        assert!(!num(&json!(1e-301)).is_multiple_of(num(&json!(1e-300))));
        assert!(num(&json!(-3e-5)).is_multiple_of(num(&json!(1e-5))));
        assert!(num(&json!(0.0)).is_multiple_of(num(&json!(0.7))));
    }

    #[test]
    fn equality_is_by_value() {
        assert!(json_eq(
            &json!([1, {"a": 2.0, "b": null}]),
            &json!([1.0, {"b": null, "a": 2}])
        ));
        assert!(!json_eq(&json!([1]), &json!([true])));
        assert!(!json_eq(&json!({"a": 1}), &json!({"a": 1, "b": 1})));
        assert!(!json_eq(&json!(0), &json!(false)));
    }
}
