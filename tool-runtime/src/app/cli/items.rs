//! Resources and prompts on the command line: `resource list`, `resource read URI` and
//! `prompt NAME --ARG VALUE`, offered only when the command line may see resources or prompts.
//! Reads and gets go through the registry's pipeline as command-line calls.

use std::io::Write;

use base64::Engine as _;
use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{Value, json};

use super::command::{BUILTIN_ORDER, BUILTINS, names_tool};
use super::render::{self, Palette, color_for, fail};
use crate::registry::Registry;
use crate::resource::UriTemplate;
use crate::tool::error::ToolError;

/// The subcommand of resources.
pub(crate) const RESOURCE: &str = "resource";
/// The subcommand of prompts.
pub(crate) const PROMPT: &str = "prompt";

/// The item built-ins `registry` offers the command line: `resource` when it may see a
/// resource, `prompt` when it may see a prompt.
pub(crate) fn builtins(registry: &Registry) -> Vec<&'static str> {
    let caller = super::caller();
    let mut names = Vec::new();
    if !registry.resources(&caller).is_empty() {
        names.push(RESOURCE);
    }
    if !registry.prompts(&caller).is_empty() {
        names.push(PROMPT);
    }
    names
}

/// A tool named like a built-in subcommand, said as an error.
pub(crate) fn builtin_clash(listing: &Registry) -> Option<String> {
    // `resource` and `prompt` are built-ins only where the command line sees resources or
    // prompts.
    let items = builtins(listing);
    let clash = listing
        .names()
        .into_iter()
        .find(|n| BUILTINS.iter().chain(&items).any(|b| names_tool(b, n)))?;
    Some(format!(
        "tool `{clash}` has the name of a built-in subcommand; rename it with #[tool(name = \"...\")]"
    ))
}

/// `resource list` and `resource read URI`.
pub(crate) fn resource_command() -> Command {
    Command::new(RESOURCE)
        .about("List the resources, or print one's contents")
        .display_order(BUILTIN_ORDER)
        .subcommand_required(true)
        .subcommand(
            Command::new("list")
                .about("List the resources (URI, name, media type), then the templates"),
        )
        .subcommand(
            Command::new("read")
                .about("Print a resource's contents: its text, or its bytes; --json: the contents as JSON")
                .arg(
                    Arg::new("uri")
                        .required(true)
                        .value_name("URI")
                        .help("The resource's URI (`resource list` shows them)"),
                )
                .arg(
                    Arg::new("output")
                        .long("output")
                        .short('o')
                        .value_name("FILE")
                        .value_hint(clap::ValueHint::FilePath)
                        .help("Write the contents to FILE instead of standard output"),
                ),
        )
}

/// The flag of a prompt's argument: its name, `_` as `-`; a name that is already a flag of
/// every command (`--help`, `--json`) gets `arg-` before it.
fn argument_flag(name: &str) -> String {
    let flag = name.replace('_', "-");
    if matches!(flag.as_str(), "help" | "json" | "version") {
        format!("arg-{flag}")
    } else {
        flag
    }
}

/// `prompt NAME --ARG VALUE ...`: a subcommand per prompt the command line may see, a flag per
/// argument (required ones required); `prompt` alone lists them.
pub(crate) fn prompt_command(registry: &Registry) -> Command {
    let mut cmd = Command::new(PROMPT)
        .about("Print a prompt's messages for its arguments; alone, list the prompts")
        .display_order(BUILTIN_ORDER);
    for prompt in registry.prompts(&super::caller()) {
        let summary = prompt.description.lines().next().unwrap_or_default();
        let mut sub = Command::new(prompt.name.to_string())
            .about(summary.to_owned())
            .long_about(prompt.description.to_string());
        for argument in &prompt.arguments {
            sub = sub.arg(
                Arg::new(argument.name.to_string())
                    .long(argument_flag(&argument.name))
                    .value_name(argument.name.to_uppercase())
                    .help(argument.description.to_string())
                    .required(argument.required)
                    .action(ArgAction::Set),
            );
        }
        cmd = cmd.subcommand(sub);
    }
    cmd
}

/// Says a refused read or get as a tool call's error is said (with `--json`, as the error
/// envelope on standard output) and returns its exit code. `flag` names where a violation's
/// pointer is to be fixed.
fn refused(
    error: &ToolError,
    json_out: bool,
    out: &mut dyn Write,
    flag: &dyn Fn(&str) -> String,
) -> u8 {
    if json_out {
        let _ = writeln!(out, "{}", json!({"status": "error", "error": error}));
        return error.kind().exit_code();
    }
    let p = Palette::new(color_for(&std::io::stderr()));
    eprintln!(
        "{}error:{} {}",
        p.error.render(),
        p.error.render_reset(),
        error.message()
    );
    for v in error.violations() {
        eprintln!(
            "  {}{}:{} {}",
            p.dim.render(),
            flag(&v.path),
            p.dim.render_reset(),
            v.message
        );
    }
    error.kind().exit_code()
}

/// Runs `resource list` or `resource read`.
pub(crate) async fn resource(
    registry: &Registry,
    m: &ArgMatches,
    json_out: bool,
    out: &mut dyn Write,
) -> u8 {
    match m.subcommand() {
        Some(("read", m)) => {
            let uri = m.get_one::<String>("uri").expect("required");
            let file = m.get_one::<String>("output");
            read(registry, uri, file.map(String::as_str), json_out, out).await
        }
        _ => list(registry, json_out, out).await,
    }
}

async fn list(registry: &Registry, json_out: bool, out: &mut dyn Write) -> u8 {
    let caller = super::caller();
    let listed = registry.list_resources(&caller).await;
    let templates: Vec<_> = registry
        .resources(&caller)
        .into_iter()
        .filter(|m| UriTemplate::parse(&m.uri).is_ok_and(|t| !t.is_static()))
        .collect();
    if json_out {
        let resources: Vec<Value> = listed
            .iter()
            .map(|(l, _)| serde_json::to_value(l).unwrap_or_default())
            .collect();
        let templates: Vec<Value> = templates
            .iter()
            .map(|m| {
                json!({"name": m.name, "uriTemplate": m.uri, "title": m.title,
                       "description": m.description, "mimeType": m.mime_type})
            })
            .collect();
        let _ = writeln!(
            out,
            "{}",
            json!({"resources": resources, "templates": templates})
        );
        return 0;
    }
    let mut rows: Vec<[String; 3]> = listed
        .iter()
        .map(|(l, _)| {
            [
                l.uri.clone(),
                l.name.clone(),
                l.mime_type.clone().unwrap_or_default(),
            ]
        })
        .collect();
    rows.extend(templates.iter().map(|m| {
        [
            m.uri.to_string(),
            format!("{} (template)", m.name),
            m.mime_type.as_deref().unwrap_or_default().to_owned(),
        ]
    }));
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (uri_width, name_width) = (width(0), width(1));
    for [uri, name, mime] in &rows {
        let line = format!("{uri:<uri_width$}  {name:<name_width$}  {mime}");
        let _ = writeln!(out, "{}", line.trim_end());
    }
    0
}

async fn read(
    registry: &Registry,
    uri: &str,
    file: Option<&str>,
    json_out: bool,
    out: &mut dyn Write,
) -> u8 {
    let read = match registry.read_resource(uri, super::caller()).await {
        Ok(read) => read,
        Err(e) => return refused(&e, json_out, out, &|path| path.to_owned()),
    };
    let bytes = if json_out {
        let mut text = json!({ "contents": read.contents }).to_string();
        text.push('\n');
        text.into_bytes()
    } else if let [only] = &read.contents[..] {
        match (&only.text, &only.blob) {
            // On a terminal, text ends its line, so the shell's prompt starts a line of its
            // own; piped or written to a file, the contents stay as they are.
            (Some(text), _) if file.is_none() && !text.ends_with('\n') && stdout_is_terminal() => {
                format!("{text}\n").into_bytes()
            }
            (Some(text), _) => text.clone().into_bytes(),
            (None, Some(blob)) => match base64::engine::general_purpose::STANDARD.decode(blob) {
                Ok(bytes) => bytes,
                Err(e) => return fail(format_args!("the resource's blob is not base64: {e}"), 1),
            },
            (None, None) => Vec::new(),
        }
    } else {
        let blocks: Vec<Value> = read
            .contents
            .iter()
            .map(|c| json!({"type": "resource", "resource": c}))
            .collect();
        render::content(&Value::Array(blocks)).into_bytes()
    };
    if let Some(path) = file {
        return match std::fs::write(path, &bytes) {
            Ok(()) => 0,
            Err(e) => fail(format_args!("cannot write {path}: {e}"), 1),
        };
    }
    let _ = out.write_all(&bytes);
    0
}

fn stdout_is_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal()
}

/// Runs `prompt NAME --ARG VALUE ...`, or lists the prompts.
pub(crate) async fn prompt(
    registry: &Registry,
    m: &ArgMatches,
    json_out: bool,
    out: &mut dyn Write,
) -> u8 {
    let caller = super::caller();
    let Some((name, m)) = m.subcommand() else {
        let prompts = registry.prompts(&caller);
        if json_out {
            let prompts: Vec<Value> = prompts
                .iter()
                .map(|p| {
                    json!({"name": p.name, "title": p.title, "description": p.description,
                           "arguments": p.arguments})
                })
                .collect();
            let _ = writeln!(out, "{}", json!({ "prompts": prompts }));
            return 0;
        }
        let width = prompts.iter().map(|p| p.name.len()).max().unwrap_or(0);
        for p in &prompts {
            let summary = p.description.lines().next().unwrap_or_default();
            let line = format!("{:<width$}  {summary}", p.name);
            let _ = writeln!(out, "{}", line.trim_end());
        }
        return 0;
    };
    // The prompt's own arguments: the matches hold the application's global options too.
    let arguments = registry
        .prompts(&caller)
        .into_iter()
        .find(|p| p.name == name)
        .map(|p| p.arguments.clone())
        .unwrap_or_default();
    let args: serde_json::Map<String, Value> = arguments
        .iter()
        .filter_map(|a| {
            let value = m.try_get_one::<String>(&a.name).ok().flatten()?;
            Some((a.name.to_string(), Value::String(value.clone())))
        })
        .collect();
    let args = Value::Object(args);
    let reply = match registry.get_prompt(name, args, caller).await {
        Ok(reply) => reply,
        Err(e) => {
            let flag = |path: &str| {
                let name = path.trim_start_matches('/');
                if name.is_empty() {
                    path.to_owned()
                } else {
                    format!("--{}", argument_flag(name))
                }
            };
            return refused(&e, json_out, out, &flag);
        }
    };
    if json_out {
        let _ = writeln!(out, "{}", serde_json::to_string(&reply).unwrap_or_default());
        return 0;
    }
    let p = Palette::new(color_for(&std::io::stdout()));
    for (i, message) in reply.messages.iter().enumerate() {
        if i > 0 {
            let _ = writeln!(out);
        }
        let role = serde_json::to_value(message.role).unwrap_or_default();
        let _ = writeln!(
            out,
            "{}[{}]{}",
            p.dim.render(),
            role.as_str().unwrap_or_default(),
            p.dim.render_reset()
        );
        let content = serde_json::to_value(&message.content).unwrap_or_default();
        let _ = write!(out, "{}", render::content(&content));
    }
    0
}
