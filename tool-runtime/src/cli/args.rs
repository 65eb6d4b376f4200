//! A subcommand's matches → the tool's JSON arguments: `--params-json` first, flags over it.

use std::io::Read;

use clap::ArgMatches;
use serde_json::{Map, Value};

use super::command::{PARAMS_JSON, ValueKind, ordered_params};
use crate::registry::RegisteredTool;

/// Why the arguments could not be assembled: a usage error (exit 2).
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

pub(crate) fn collect(
    tool: &RegisteredTool,
    matches: &ArgMatches,
    stdin: &mut dyn Read,
) -> Result<Value, UsageError> {
    let mut args = match matches.get_one::<String>(PARAMS_JSON) {
        None => Map::new(),
        Some(text) => {
            let text = if text == "-" {
                let mut buf = String::new();
                stdin.read_to_string(&mut buf).map_err(|e| {
                    UsageError(format!("cannot read --params-json from stdin: {e}"))
                })?;
                buf
            } else {
                text.clone()
            };
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(map)) => map,
                Ok(other) => {
                    return Err(UsageError(format!(
                        "--params-json must be a JSON object, not {}",
                        crate::validate::value_kind(&other)
                    )));
                }
                Err(e) => return Err(UsageError(format!("--params-json is not JSON: {e}"))),
            }
        }
    };
    let schema = tool.input_schema();
    let required = |name: &str| {
        schema["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|n| n == name))
    };
    for (name, prop, _) in ordered_params(schema, &tool.meta().params) {
        match ValueKind::of(prop) {
            ValueKind::Bool => {
                if matches.get_flag(name) {
                    args.insert(name.to_owned(), Value::Bool(true));
                } else if required(name) && !args.contains_key(name) {
                    // A flag left out is `false`: a required `bool` must not demand `--flag`.
                    args.insert(name.to_owned(), Value::Bool(false));
                }
            }
            ValueKind::Array(_) => {
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
