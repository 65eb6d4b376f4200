//! A subcommand's matches → the tool's JSON arguments: `--params-json` first, flags over it.

use std::io::Read;

use clap::ArgMatches;
use serde_json::{Map, Value};

use super::flags::PARAMS_JSON;
use super::flags::flag_kind;
use crate::front::describe::{self as schema, Kind};
use crate::registry::RegisteredTool;

/// Why the arguments could not be assembled: a usage error (exit 2).
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

/// The arguments given as one JSON object by `--params-json` (`-`: read from `stdin`); none
/// given, an empty object. Anything else is a usage error.
pub(crate) fn params_json(
    text: Option<&str>,
    stdin: &mut dyn Read,
) -> Result<Map<String, Value>, UsageError> {
    let Some(text) = text else {
        return Ok(Map::new());
    };
    let mut read = String::new();
    let text = if text == "-" {
        stdin
            .read_to_string(&mut read)
            .map_err(|e| UsageError(format!("cannot read --params-json from stdin: {e}")))?;
        &read
    } else {
        text
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(UsageError(format!(
            "--params-json must be a JSON object, not {}",
            crate::front::value_kind(&other)
        ))),
        Err(e) => Err(UsageError(format!("--params-json is not JSON: {e}"))),
    }
}

/// A tool's JSON arguments from its subcommand's matches: `--params-json`, then each flag
/// given over its key.
pub(crate) fn collect(
    tool: &RegisteredTool,
    matches: &ArgMatches,
    stdin: &mut dyn Read,
) -> Result<Value, UsageError> {
    let mut args = params_json(
        matches.get_one::<String>(PARAMS_JSON).map(String::as_str),
        stdin,
    )?;
    for param in schema::params(tool.input_schema(), &tool.meta().params) {
        let name = param.name;
        match flag_kind(param.schema) {
            Kind::Boolean => {
                if matches.get_flag(name) {
                    args.insert(name.to_owned(), Value::Bool(true));
                } else if param.required && !args.contains_key(name) {
                    // A flag left out is `false`: a required `bool` must not demand `--flag`.
                    args.insert(name.to_owned(), Value::Bool(false));
                }
            }
            Kind::Array(_) => {
                if let Some(values) = matches.get_many::<Value>(name) {
                    args.insert(name.to_owned(), Value::Array(values.cloned().collect()));
                }
            }
            _ => {
                if let Some(v) = matches.get_one::<Value>(name) {
                    args.insert(name.to_owned(), v.clone());
                }
            }
        }
    }
    Ok(Value::Object(args))
}
