//! The terminal as a tool's [`Peer`]: a form a tool (or a mounted MCP server's tool) asks for
//! is asked field by field on the terminal. Without a terminal, elicitation is `unsupported`.

use std::io::{BufRead, IsTerminal, Write};

use futures_util::future::BoxFuture;
use serde_json::{Map, Number, Value};

use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::peer::{Elicited, Peer};

/// Asks on the terminal: stderr for the questions, stdin for the answers.
pub(crate) struct TerminalPeer;

impl Peer for TerminalPeer {
    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicited<Map<String, Value>>, ToolError>> {
        Box::pin(async move {
            if !std::io::stdin().is_terminal() {
                return Err(ToolError::new(
                    ErrorKind::UNSUPPORTED,
                    "the tool asks for input, and there is no terminal to ask on",
                ));
            }
            tokio::task::spawn_blocking(move || {
                ask_form(
                    &message,
                    &schema,
                    &mut std::io::stdin().lock(),
                    &mut std::io::stderr(),
                )
            })
            .await
            .map_err(ToolError::internal)
        })
    }
}

/// How many times a field is asked again after an answer that does not fit.
const TRIES: usize = 3;

/// Asks `message`, then each field of `schema`, reading answers from `input`. An empty answer
/// takes the field's default, or leaves an optional field out; the end of the input cancels.
pub(crate) fn ask_form(
    message: &str,
    schema: &Value,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Elicited<Map<String, Value>> {
    let _ = write!(out, "{message} [y/N] ");
    let _ = out.flush();
    match read_line(input).as_deref().map(str::to_ascii_lowercase) {
        None => return Elicited::Cancelled,
        Some(a) if a == "y" || a == "yes" => {}
        Some(_) => return Elicited::Declined,
    }
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    for (name, field) in properties {
        let needed = required.contains(&name.as_str());
        let mut tries = 0;
        loop {
            let _ = write!(out, "  {}", prompt(name, field, needed));
            let _ = out.flush();
            let Some(answer) = read_line(input) else {
                return Elicited::Cancelled;
            };
            if answer.is_empty() {
                if let Some(default) = field.get("default") {
                    content.insert(name.clone(), default.clone());
                    break;
                }
                if !needed {
                    break;
                }
            }
            let parsed = if answer.is_empty() {
                Err("an answer is needed".to_owned())
            } else {
                parse(field, &answer)
            };
            match parsed {
                Ok(value) => {
                    content.insert(name.clone(), value);
                    break;
                }
                Err(why) => {
                    let _ = writeln!(out, "  {why}");
                    tries += 1;
                    if tries == TRIES {
                        return Elicited::Cancelled;
                    }
                }
            }
        }
    }
    Elicited::Accepted(content)
}

fn read_line(input: &mut dyn BufRead) -> Option<String> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

/// The choices a field offers: `enum` values, or the `const`s of `oneOf`/`anyOf` with their
/// titles; for an array, its items'.
fn choices(field: &Value) -> Option<Vec<(String, Option<String>)>> {
    let field = match field.get("type").and_then(Value::as_str) {
        Some("array") => field.get("items")?,
        _ => field,
    };
    if let Some(values) = field.get("enum").and_then(Value::as_array) {
        let names = field.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let title = names.and_then(|n| n.get(i)).and_then(Value::as_str);
                    Some((v.as_str()?.to_owned(), title.map(str::to_owned)))
                })
                .collect(),
        );
    }
    let options = field
        .get("oneOf")
        .or_else(|| field.get("anyOf"))?
        .as_array()?;
    Some(
        options
            .iter()
            .filter_map(|o| {
                let title = o.get("title").and_then(Value::as_str).map(str::to_owned);
                Some((o.get("const")?.as_str()?.to_owned(), title))
            })
            .collect(),
    )
}

fn prompt(name: &str, field: &Value, needed: bool) -> String {
    use std::fmt::Write as _;
    let mut text = name.to_owned();
    if let Some(about) = field
        .get("description")
        .or_else(|| field.get("title"))
        .and_then(Value::as_str)
    {
        let _ = write!(text, " ({about})");
    }
    let kind = field
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string");
    if let Some(choices) = choices(field) {
        let listed: Vec<String> = choices
            .iter()
            .map(|(v, t)| {
                t.as_ref()
                    .map_or_else(|| v.clone(), |t| format!("{v}: {t}"))
            })
            .collect();
        let many = if kind == "array" {
            ", any of, comma-separated"
        } else {
            ""
        };
        let _ = write!(text, " [{}{many}]", listed.join(" | "));
    } else if kind == "boolean" {
        text.push_str(" [y/n]");
    }
    if let Some(default) = field.get("default") {
        let _ = write!(text, " (default {default})");
    } else if !needed {
        text.push_str(" (optional)");
    }
    text.push_str(": ");
    text
}

/// An answer as the field's type, or why it does not fit.
fn parse(field: &Value, answer: &str) -> Result<Value, String> {
    let kind = field
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string");
    let choose = |one: &str| -> Result<Value, String> {
        match choices(field) {
            Some(choices) => choices
                .iter()
                .find(|(v, t)| v == one || t.as_deref() == Some(one))
                .map(|(v, _)| Value::String(v.clone()))
                .ok_or_else(|| format!("`{one}` is not one of the choices")),
            None => Ok(Value::String(one.to_owned())),
        }
    };
    match kind {
        "integer" => answer
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("`{answer}` is not a whole number")),
        "number" => answer
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("`{answer}` is not a number")),
        "boolean" => match answer.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err(format!("`{answer}` is neither y nor n")),
        },
        "array" => answer
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(choose)
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        _ => choose(answer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(schema: &Value, lines: &str) -> (Elicited<Map<String, Value>>, String) {
        let mut out = Vec::new();
        let got = ask_form("Fill in?", schema, &mut lines.as_bytes(), &mut out);
        (got, String::from_utf8(out).unwrap())
    }

    #[test]
    fn each_field_is_asked_as_its_type_with_defaults_and_choices() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "description": "Your name"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number"},
            "ok": {"type": "boolean"},
            "status": {"type": "string", "oneOf": [
                {"const": "on", "title": "Switched on"}, {"const": "off", "title": "Switched off"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
            "nick": {"type": "string"},
        }, "required": ["name"]});
        let (got, shown) = answer(&schema, "y\nAda\n\n9.5\nyes\nSwitched off\na, c\n\n");
        let Elicited::Accepted(content) = got else {
            panic!("{got:?}")
        };
        assert_eq!(
            Value::Object(content),
            json!({"name": "Ada", "age": 30, "score": 9.5, "ok": true, "status": "off", "tags": ["a", "c"]})
        );
        assert!(shown.starts_with("Fill in? [y/N] "), "{shown}");
        assert!(shown.contains("name (Your name): "), "{shown}");
        assert!(shown.contains("age (default 30): "), "{shown}");
        assert!(
            shown.contains("[on: Switched on | off: Switched off]"),
            "{shown}"
        );
        assert!(shown.contains("nick (optional): "), "{shown}");
    }

    #[test]
    fn a_wrong_answer_is_asked_again_and_no_or_the_end_of_input_refuse() {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let (got, shown) = answer(&schema, "y\nseven\n7\n");
        assert_eq!(
            got,
            Elicited::Accepted(json!({"n": 7}).as_object().cloned().unwrap())
        );
        assert!(shown.contains("`seven` is not a whole number"), "{shown}");
        assert_eq!(answer(&schema, "n\n").0, Elicited::Declined);
        assert_eq!(answer(&schema, "y\n").0, Elicited::Cancelled);
        assert_eq!(answer(&schema, "y\nx\nx\nx\n").0, Elicited::Cancelled);
    }
}
