//! The values the file writes as text, each read once into its type: rates and durations in the
//! grammar `#[tool]` attributes use, model providers, names and programs.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde::de::{Deserializer, Error};
use tool_runtime::agent::Api;
use tool_runtime::tool::Rate;

/// The longest store, server or bridge name: a store's or server's tools are named
/// `NAME-TOOL`, within the 64 characters of a tool name.
const MAX_NAME: usize = 32;

/// Reads a string and parses it, or says what it is not and what to write instead.
fn parsed<'de, D: Deserializer<'de>, T>(
    deserializer: D,
    parse: impl FnOnce(&str) -> Option<T>,
    expected: &str,
) -> Result<T, D::Error> {
    let text = Cow::<str>::deserialize(deserializer)?;
    parse(&text).ok_or_else(|| D::Error::custom(format!("\"{text}\" is not {expected}")))
}

/// `"30/min"`: calls per second, minute or hour.
pub(super) fn rate<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Rate>, D::Error> {
    let expected = "a rate; write calls per period, such as \"30/min\" (s, min or h)";
    parsed(d, Rate::parse, expected).map(Some)
}

/// `"500ms"`, `"30s"`, `"2m"`, `"1h"`, above zero.
pub(super) fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let parse = |text: &str| tool_grammar::duration_ms(text).filter(|ms| *ms > 0);
    let expected = "a duration; write one above zero, such as \"30s\" (ms, s, m or h)";
    parsed(d, parse, expected).map(Duration::from_millis)
}

/// A duration where the key may be left out.
pub(super) fn some_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    duration(d).map(Some)
}

/// An `http://` or `https://` URL with a host, such as `"http://collector:4318"`.
pub(super) fn some_http_url<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let parse = |text: &str| {
        let rest = (text.strip_prefix("http://")).or_else(|| text.strip_prefix("https://"))?;
        let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
        (!host.is_empty() && !text.contains(char::is_whitespace)).then(|| text.to_owned())
    };
    let expected = "an http(s) URL; write one such as \"http://collector:4318\"";
    parsed(d, parse, expected).map(Some)
}

/// A model provider's API by name (`anthropic`).
pub(super) fn api<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Api>, D::Error> {
    let names = Api::ALL.map(Api::name).join(", ");
    parsed(
        d,
        Api::from_name,
        &format!("a provider; write one of {names}"),
    )
    .map(Some)
}

/// Whether `name` names a store, a server or a bridge: a tool name's characters, short enough
/// to leave room for the tools' names.
fn is_name(name: &str) -> bool {
    tool_runtime::registry::is_valid_name(name) && name.len() <= MAX_NAME
}

fn not_a_name<E: Error>(name: &str) -> E {
    E::custom(format!(
        "\"{name}\" is not a name; write letters, digits, `_` and `-`, starting with a letter or `_`, at most {MAX_NAME} characters"
    ))
}

/// The name of a store or an MCP server, the prefix of its tools.
pub(super) fn name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let name = String::deserialize(d)?;
    if is_name(&name) {
        Ok(name)
    } else {
        Err(not_a_name(&name))
    }
}

/// A table of named entries (`[host.bridges.NAME]`).
pub(super) fn named<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<BTreeMap<String, T>, D::Error> {
    let table = BTreeMap::<String, T>::deserialize(d)?;
    match table.keys().find(|name| !is_name(name)) {
        Some(name) => Err(not_a_name(name)),
        None => Ok(table),
    }
}

/// Programs allowed to run, by name, looked up on `PATH`: no path, no spaces.
pub(super) fn programs<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let programs = Vec::<String>::deserialize(d)?;
    match programs
        .iter()
        .find(|p| p.is_empty() || p.contains(['/', ' ']))
    {
        Some(p) => Err(D::Error::custom(format!(
            "`{p}` is not a program name; write names such as \"ls\", looked up on PATH"
        ))),
        None => Ok(programs),
    }
}
