//! What the front ends share, beneath them and above the registry: for the network listeners,
//! the options they take ([`server`]), whether to send the server traffic ([`readiness`]),
//! what the HTTP front layer learns of a request
//! ([`requester`]), bearer tokens ([`auth`]) and the access rules they all
//! apply ([`safety`]); for the command line and HTTP, a tool's parameters as they show them
//! ([`describe`]) and the words for a JSON value's kind ([`value_kind`]). The core (the tools,
//! schemas, the registry, the pipeline and its layers) tests no front end's feature; what a
//! front end needs from it is a type it is given.

#[cfg(feature = "http")]
pub(crate) mod auth;
// Read by the command line and by `GET /tools`; either may be left out of a build.
#[cfg(any(feature = "cli", feature = "http"))]
#[cfg_attr(not(all(feature = "cli", feature = "http")), allow(dead_code))]
pub(crate) mod describe;
#[cfg(feature = "http")]
pub(crate) mod readiness;
#[cfg(feature = "http")]
pub(crate) mod requester;
#[cfg(feature = "http")]
pub(crate) mod safety;
#[cfg(feature = "http")]
pub(crate) mod server;
#[cfg(feature = "mcp")]
pub(crate) mod state_key;

/// "a string", "an object", ...: a JSON value's kind, for messages.
#[cfg(any(feature = "cli", feature = "http"))]
pub(crate) fn value_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
