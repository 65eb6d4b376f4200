//! `Secret<T>`: a parameter whose value never leaves the tool.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// What a secret looks like wherever it would be shown.
pub(crate) const REDACTED: &str = "[redacted]";

/// A parameter whose value never leaves the tool.
///
/// Accepted like `T` (a `Secret<String>` is a JSON string), described as `writeOnly` with
/// `format: password` in the schema, and never shown: `Debug` and `Display` print
/// `[redacted]`, it has no `Serialize` (so it cannot be returned), and the pipeline keeps its
/// value out of violation messages, confirmation prompts and previews.
///
/// ```
/// use tool_runtime::{Secret, prelude::*};
///
/// /// Log in to the mail server.
/// #[tool]
/// async fn mail_login(
///     /// Account
///     user: String,
///     /// Password
///     password: Secret<String>,
/// ) -> bool {
///     password.expose().len() >= 8 && !user.is_empty()
/// }
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wraps a value.
    pub fn new(value: T) -> Self {
        Self(value)
    }

    /// The value, for the code that needs it (and only there).
    pub fn expose(&self) -> &T {
        &self.0
    }

    /// The value, by value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T> fmt::Display for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Secret<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Secret)
    }
}

impl<T: JsonSchema> JsonSchema for Secret<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Secret_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = generator.subschema_for::<T>();
        schema.insert("writeOnly".into(), Value::Bool(true));
        if schema.get("type").and_then(Value::as_str) == Some("string") {
            schema.insert("format".into(), Value::String("password".into()));
        }
        schema
    }
}

/// The JSON pointers of the `writeOnly` properties of an input schema (nested ones included).
pub(crate) fn write_only_paths(schema: &Value) -> Vec<String> {
    fn walk(schema: &Value, at: &str, out: &mut Vec<String>) {
        if schema.get("writeOnly") == Some(&Value::Bool(true)) {
            out.push(at.to_owned());
            return;
        }
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (name, prop) in props {
                let escaped = crate::tool::error::escape_pointer(name);
                walk(prop, &format!("{at}/{escaped}"), out);
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            for alt in schema
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                walk(alt, at, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(schema, "", &mut out);
    out.sort();
    out.dedup();
    out
}

/// A copy of `args` with the values at `paths` replaced by `"[redacted]"`.
#[must_use]
pub(crate) fn redact(args: &Value, paths: &[String]) -> Value {
    let mut copy = args.clone();
    for path in paths {
        if let Some(slot) = copy.pointer_mut(path) {
            *slot = Value::String(REDACTED.into());
        }
    }
    copy
}

/// Whether a violation at `path` is about a secret value.
pub(crate) fn is_secret_path(path: &str, secrets: &[String]) -> bool {
    secrets.iter().any(|s| {
        path == s
            || path
                .strip_prefix(s.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_never_printed() {
        let s = Secret::new("hunter2".to_owned());
        assert_eq!(format!("{s:?} {s}"), "[redacted] [redacted]");
        assert_eq!(s.expose(), "hunter2");
    }

    #[test]
    fn the_schema_is_write_only_password() {
        let schema = crate::schema::output_schema_for::<Secret<String>>();
        assert_eq!(schema["type"], "string");
        assert_eq!(schema["writeOnly"], true);
        assert_eq!(schema["format"], "password");
    }

    #[test]
    fn paths_and_redaction() {
        let schema = json!({"properties": {
            "user": {"type": "string"},
            "password": {"type": "string", "writeOnly": true},
            "nested": {"anyOf": [{"properties": {"token": {"writeOnly": true}}}, {"type": "null"}]}
        }});
        let paths = write_only_paths(&schema);
        assert_eq!(paths, ["/nested/token", "/password"]);
        let args = json!({"user": "a", "password": "p", "nested": {"token": "t"}});
        assert_eq!(
            redact(&args, &paths),
            json!({"user": "a", "password": "[redacted]", "nested": {"token": "[redacted]"}})
        );
        assert!(is_secret_path("/password", &paths));
        assert!(is_secret_path("/nested/token/x", &paths));
        assert!(!is_secret_path("/passwords", &paths));
    }
}
