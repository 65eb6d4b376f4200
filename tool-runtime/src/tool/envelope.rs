//! The one result shape every transport returns.
//!
//! ```json
//! {"tool":"device_add","status":"ok","result":{...},"meta":{"request_id":"...","duration_ms":0.4}}
//! {"tool":"device_add","status":"error","error":{"type":"invalid_arguments","message":"...",
//!  "retryable":true,"details":{"violations":[...]}},"meta":{"request_id":"..."}}
//! ```

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::Value;

use crate::tool::error::ToolError;

/// Facts about the call itself, not its result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct EnvelopeMeta {
    /// The request id, echoed to the caller.
    pub request_id: String,
    /// Wall time spent in the pipeline, in milliseconds; absent when the call never started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// The result was cut to its output cap (see `output_cap`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// The outcome of one call: the tool's result or a [`ToolError`], with [`EnvelopeMeta`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Envelope {
    /// The tool's name as the caller asked for it.
    pub tool: String,
    /// The result, or why there is none.
    pub outcome: Result<Value, ToolError>,
    /// Request id and duration.
    pub meta: EnvelopeMeta,
}

impl Envelope {
    /// Whether the call succeeded.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.outcome.is_ok()
    }

    /// The result of a successful call.
    #[must_use]
    pub fn result(&self) -> Option<&Value> {
        self.outcome.as_ref().ok()
    }

    /// The error of a failed call.
    #[must_use]
    pub fn error(&self) -> Option<&ToolError> {
        self.outcome.as_ref().err()
    }

    /// The HTTP status of this envelope: 200, or the error's status.
    #[must_use]
    pub fn http_status(&self) -> u16 {
        self.outcome
            .as_ref()
            .map_or_else(ToolError::status, |_| 200)
    }

    /// The envelope as a JSON value.
    #[must_use]
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Appends the envelope as JSON to `out`: the same bytes as `serde_json::to_writer`, with
    /// the fixed keys written as they are rather than escaped one by one, for a server that
    /// writes one per call.
    ///
    /// # Errors
    /// Only what `serde_json` reports for a value it cannot write.
    pub fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(br#"{"tool":"#);
        serde_json::to_writer(&mut *out, &self.tool)?;
        match &self.outcome {
            Ok(result) => {
                out.extend_from_slice(br#","status":"ok","result":"#);
                serde_json::to_writer(&mut *out, result)?;
            }
            Err(error) => {
                out.extend_from_slice(br#","status":"error","error":"#);
                serde_json::to_writer(&mut *out, error)?;
            }
        }
        out.extend_from_slice(br#","meta":{"request_id":"#);
        serde_json::to_writer(&mut *out, &self.meta.request_id)?;
        if let Some(ms) = self.meta.duration_ms {
            out.extend_from_slice(br#","duration_ms":"#);
            write_millis(out, ms)?;
        }
        if self.meta.truncated {
            out.extend_from_slice(br#","truncated":true"#);
        }
        out.extend_from_slice(b"}}");
        Ok(())
    }
}

/// Writes `ms` as `serde_json` does. The pipeline's durations are whole microseconds, and for
/// those the shortest form that reads back as the same `f64` (what `serde_json` writes) is
/// their plain decimal digits: written here from integers, which costs a fraction of the
/// general float formatting. Any other value goes through `serde_json`.
fn write_millis(out: &mut Vec<u8>, ms: f64) -> serde_json::Result<()> {
    let micros = (ms * 1000.0).round();
    // Below 1e12 µs a double's spacing is far finer than a microsecond, so no shorter decimal
    // reads back as `ms`.
    // Exactly equal (`to_bits`), and not -0.0, which `serde_json` writes with its sign.
    let whole_micros = ms.is_sign_positive()
        && (0.0..1e12).contains(&micros)
        && (micros / 1000.0).to_bits() == ms.to_bits();
    if !whole_micros {
        return serde_json::to_writer(out, &ms);
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    // Reason: checked above to be a whole, non-negative number below 1e12.
    let micros = micros as u64;
    let mut digits = itoa::Buffer::new();
    out.extend_from_slice(digits.format(micros / 1000).as_bytes());
    let frac = micros % 1000;
    if frac == 0 {
        out.extend_from_slice(b".0");
    } else {
        let three = [
            b'0' + (frac / 100) as u8,
            b'0' + (frac / 10 % 10) as u8,
            b'0' + (frac % 10) as u8,
        ];
        let len = if frac.is_multiple_of(100) {
            1
        } else if frac.is_multiple_of(10) {
            2
        } else {
            3
        };
        out.push(b'.');
        out.extend_from_slice(&three[..len]);
    }
    Ok(())
}

impl Serialize for Envelope {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("tool", &self.tool)?;
        match &self.outcome {
            Ok(result) => {
                map.serialize_entry("status", "ok")?;
                map.serialize_entry("result", result)?;
            }
            Err(error) => {
                map.serialize_entry("status", "error")?;
                map.serialize_entry("error", error)?;
            }
        }
        map.serialize_entry("meta", &self.meta)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_to_the_documented_shapes() {
        let ok = Envelope {
            tool: "t".into(),
            outcome: Ok(json!({"x": 1})),
            meta: EnvelopeMeta {
                request_id: "r".into(),
                duration_ms: Some(0.5),
                truncated: false,
            },
        };
        assert_eq!(
            ok.to_json(),
            json!({"tool":"t","status":"ok","result":{"x":1},"meta":{"request_id":"r","duration_ms":0.5}})
        );
        let err = Envelope {
            tool: "t".into(),
            outcome: Err(ToolError::not_found("no such device")),
            meta: EnvelopeMeta {
                request_id: "r".into(),
                duration_ms: None,
                truncated: false,
            },
        };
        assert_eq!(err.http_status(), 404);
        let odd = Envelope {
            tool: "quote\"and\\ünïcode".into(),
            outcome: Err(ToolError::new("invalid_arguments", "bad \n line")
                .with_details(json!({"violations": [{"path": "/a"}]}))),
            meta: EnvelopeMeta {
                request_id: "r\"1".into(),
                duration_ms: Some(1.25),
                truncated: true,
            },
        };
        for e in [&ok, &err, &odd] {
            let mut fast = Vec::new();
            e.write_json(&mut fast).unwrap();
            assert_eq!(
                String::from_utf8(fast).unwrap(),
                serde_json::to_string(e).unwrap()
            );
        }
        // Durations as the pipeline makes them (whole microseconds), and others.
        let micros = (0..200_000u64).chain([999_999_999_999, 1_000_000_000_000, 123_456_789_012]);
        #[allow(clippy::cast_precision_loss)]
        let durations = micros.map(|us| us as f64 / 1000.0).chain([
            0.0005,
            1e-7,
            -1.0,
            -0.0,
            1e300,
            f64::NAN,
            f64::INFINITY,
            0.1 + 0.2,
        ]);
        for ms in durations {
            let mut fast = Vec::new();
            super::write_millis(&mut fast, ms).unwrap();
            assert_eq!(
                String::from_utf8(fast).unwrap(),
                serde_json::to_string(&ms).unwrap(),
                "{ms}"
            );
        }
        assert_eq!(
            err.to_json(),
            json!({"tool":"t","status":"error","error":{"type":"not_found","message":"no such device","retryable":false},"meta":{"request_id":"r"}})
        );
    }
}
