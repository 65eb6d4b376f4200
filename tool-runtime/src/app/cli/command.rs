//! The clap command tree, built from the registry: one subcommand per tool, flags from each
//! tool's input schema and parameter hints.
//!
//! Flags come from the schema rather than from code generated per tool, so dynamic tools get a
//! command line too; the schema is generated from the Rust types, so a `u32` parameter still
//! parses as a `u32`. Only the type is checked here: constraints (`minimum`, `pattern`, ...)
//! are left to the pipeline's validator, which reports every violation for every caller alike.
//!
//! Subcommands are built lazily: only the invoked tool's subcommand gets its arguments; the
//! others carry a name and a one-line summary, enough for `--help` and suggestions.

use clap::{Arg, ArgAction, Command};

use crate::front::describe as schema;
use crate::registry::Registry;
use crate::registry::{RegisteredTool, ToolRef};
use crate::tool::caller::Caller;

use super::flags::{PARAMS_JSON, flag_kind, param_arg};
use crate::front::describe::Kind;

/// The id of `--yes`.
pub(crate) const YES: &str = "yes";
/// The id of `--dry-run`.
pub(crate) const DRY_RUN: &str = "dry-run";
/// The id of `--detach`, on a tool that may run as a task.
pub(crate) const DETACH: &str = "detach";
/// The id of the global `--json`.
pub(crate) const JSON: &str = "json";

/// Built-ins are listed after the tools in `--help`.
pub(crate) const BUILTIN_ORDER: usize = 10_000;

/// The built-in subcommands.
pub(crate) const BUILTINS: &[&str] = &[
    "tools",
    "schema",
    "completions",
    "serve",
    "mcp",
    #[cfg(feature = "agent")]
    "agent",
    #[cfg(feature = "agent")]
    "chat",
    "toolsets",
    "call",
    "login",
    "tasks",
];

/// The subcommand name of a tool: `device_add` → `device-add`.
#[must_use]
pub(crate) fn subcommand_name(tool: &str) -> String {
    tool.replace('_', "-")
}

/// Whether `sub`, typed on the command line, names `tool`: its name or its subcommand name
/// (`subcommand_name(tool) == sub`, without allocating, for scans over every tool). The one rule
/// by which the command line resolves a tool's name: see [`find_tool`].
pub(crate) fn names_tool(sub: &str, tool: &str) -> bool {
    sub.len() == tool.len()
        && sub
            .bytes()
            .zip(tool.bytes())
            .all(|(s, t)| s == t || (s == b'-' && t == b'_'))
}

/// The tool `typed` names on the command line ([`names_tool`]): the tool of that name, else the
/// one whose subcommand name it is (`device-add` for `device_add`). Among the tools `visible_to`
/// may see, or with `None` among every tool (a hidden tool called by name is then answered
/// `unknown_tool` by the pipeline, as on every front end).
pub(crate) fn find_tool<'r>(
    registry: &'r Registry,
    typed: &str,
    visible_to: Option<&Caller>,
) -> Option<ToolRef<'r>> {
    let exact = match visible_to {
        Some(caller) => registry.visible_tool(typed, caller),
        None => registry.get(typed),
    };
    // Only a subcommand name with a `-` can differ from its tool's name: most often that of
    // the tool with `_` for every `-` (one more lookup); else, a name with both (a mounted
    // `everything-get_sum`), found among all.
    if exact.is_some() || !typed.contains('-') {
        return exact;
    }
    let snake = typed.replace('-', "_");
    let snake = match visible_to {
        Some(caller) => registry.visible_tool(&snake, caller),
        None => registry.get(&snake),
    };
    if snake.is_some() {
        return snake;
    }
    let tools = match visible_to {
        Some(caller) => registry.visible(caller),
        None => registry.tools(),
    };
    tools.into_iter().find(|t| names_tool(typed, t.name()))
}

/// The command tree for `registry`: built-ins and one subcommand per tool. Only the tool named
/// `invoked` (by tool or subcommand name) gets its flags; pass `None` to build every tool's
/// flags (completions do). Embed it in your own clap application, or let [`App`](crate::App)
/// run it.
#[must_use]
pub fn command(name: &str, registry: &Registry, invoked: Option<&str>) -> Command {
    let mut cmd = builtins(name);
    // The tools a command-line caller may call: hidden ones are not offered.
    let visible = registry.visible(&super::caller());
    for (order, tool) in visible.iter().enumerate() {
        let wanted = invoked.is_none_or(|i| names_tool(i, tool.name()));
        cmd = cmd.subcommand(tool_command(name, tool, wanted).display_order(order));
    }
    cmd
}

/// The command tree for a call of `tool`, known before parsing: that tool's subcommand, without
/// the other tools. clap gives every subcommand its own copy of each global option when it
/// builds the tree, and that copying is most of a call's parsing work: the tree has no `help`
/// subcommand either (a call never parses one), and the built-ins' names are there only in
/// debug builds, where clap asserts that
/// `ArgMatches::subcommand_matches("serve")` (a setup step may ask) names a subcommand of the
/// tree. The answer, `None` for a call, is the same without them (`placeholders`:
/// `cfg!(debug_assertions)`).
pub(crate) fn for_call(name: &str, tool: &RegisteredTool, placeholders: bool) -> Command {
    let mut cmd = root(name).disable_help_subcommand(true);
    if placeholders {
        for builtin in BUILTINS {
            cmd = cmd.subcommand(Command::new(*builtin));
        }
    }
    cmd.subcommand(tool_command(name, tool, true))
}

/// The command tree for `builtins`, known before parsing (a server's, or `resource`): those
/// subcommands alone, the other built-ins' names there only in debug builds, as in
/// [`for_call`].
pub(crate) fn for_builtin(name: &str, builtins: Vec<Command>, placeholders: bool) -> Command {
    let mut cmd = root(name).disable_help_subcommand(true);
    if placeholders {
        for builtin in BUILTINS {
            if !builtins.iter().any(|b| b.get_name() == *builtin) {
                cmd = cmd.subcommand(Command::new(*builtin));
            }
        }
    }
    cmd.subcommands(builtins)
}

fn root(name: &str) -> Command {
    Command::new(name.to_owned())
        .about("Every registered tool as a subcommand; `tools` lists them.")
        .arg(
            Arg::new(JSON)
                .long("json")
                .global(true)
                .action(ArgAction::SetTrue)
                .help("Print the result envelope as JSON, exactly as the HTTP API returns it"),
        )
}

/// The root command with `--json` and the built-in subcommands.
fn builtins(name: &str) -> Command {
    root(name)
        .subcommand(
            Command::new("tools")
                .about("List the tools: name and summary; or their specs for a model provider")
                .display_order(BUILTIN_ORDER)
                .arg(
                    Arg::new("format")
                        .long("format")
                        .value_name("FORMAT")
                        .value_parser(clap::builder::PossibleValuesParser::new(
                            crate::llm::Target::ALL.map(crate::llm::Target::name),
                        ))
                        .help("Print the tools as this target's `tools` value (JSON)"),
                )
                .arg(
                    Arg::new("lint")
                        .long("lint")
                        .action(ArgAction::SetTrue)
                        .requires("format")
                        .help(
                            "Print what lowering for --format drops or rewrites; exit 1 on errors",
                        ),
                ),
        )
        .subcommand(
            Command::new("schema")
                .about("Print a tool's input schema (JSON Schema 2020-12)")
                .display_order(BUILTIN_ORDER)
                .arg(Arg::new("tool").required(true).help("The tool's name"))
                .arg(
                    Arg::new("output-schema")
                        .long("output-schema")
                        .action(ArgAction::SetTrue)
                        .help("Print the output schema instead"),
                ),
        )
        .subcommand(
            Command::new("completions")
                .about("Print a shell completion script")
                .arg(
                    Arg::new("shell")
                        .required(true)
                        .value_parser(clap::value_parser!(clap_complete::Shell)),
                )
                .display_order(BUILTIN_ORDER),
        )
}

fn tool_command(app: &str, tool: &RegisteredTool, with_args: bool) -> Command {
    let meta = tool.meta();
    let sub = subcommand_name(&meta.name);
    let mut cmd = Command::new(sub.clone()).about(meta.summary.to_string());
    if !with_args {
        return cmd;
    }
    cmd = cmd.long_about(meta.description.to_string());
    let mut position = 0;
    let (mut flags, mut positionals) = (Vec::new(), Vec::new());
    for param in schema::params(tool.input_schema(), &meta.params) {
        let name = param.name.to_uppercase();
        if param.hint.is_some_and(|h| h.positional) {
            positionals.push(if param.required {
                format!("<{name}>")
            } else {
                format!("[{name}]")
            });
        } else if param.required && flag_kind(param.schema) != Kind::Boolean {
            flags.push(format!("--{} <{name}>", param.name.replace('_', "-")));
        }
        cmd = cmd.arg(param_arg(&param, &mut position));
    }
    // A required parameter is optional to clap (it may come in --params-json instead), which
    // would hide a required flag in `[OPTIONS]` and show a positional as `[NAME]`: the usage
    // names each required flag and says `<NAME>`.
    if !flags.is_empty() || positionals.iter().any(|p| p.starts_with('<')) {
        let words: Vec<String> = flags.into_iter().chain(positionals).collect();
        cmd = cmd.override_usage(format!("{app} {sub} [OPTIONS] {}", words.join(" ")));
    }
    cmd = cmd.arg(
        Arg::new(PARAMS_JSON)
            .long("params-json")
            .value_name("JSON")
            .help("All arguments as one JSON object, or `-` to read it from stdin; flags override its keys"),
    );
    if meta.dry_run {
        cmd = cmd.arg(
            Arg::new(DRY_RUN)
                .long("dry-run")
                .action(ArgAction::SetTrue)
                .help("Show what the call would do, without doing it"),
        );
    }
    if meta.task != crate::tool::TaskMode::Forbidden {
        cmd = cmd.arg(
            Arg::new(DETACH)
                .long("detach")
                .action(ArgAction::SetTrue)
                .help("Leave the call to a running `serve` sharing the task store, print the task's id, and return"),
        );
    }
    if meta.annotations.needs_confirmation() {
        cmd = cmd.arg(
            Arg::new(YES)
                .long("yes")
                .short('y')
                .action(ArgAction::SetTrue)
                .help("Confirm this destructive call without asking"),
        );
    }
    cmd
}

/// clap suggests every subcommand alike enough to the one typed, and tools often share a
/// prefix (`device-add`, `device-list`, ...): keep the few that are close in spelling, as the
/// registry's "did you mean" does for tool names.
pub(crate) fn fewer_suggestions(e: &mut clap::Error) {
    use clap::error::{ContextKind, ContextValue};
    if e.kind() != clap::error::ErrorKind::InvalidSubcommand {
        return;
    }
    let typed = match e.get(ContextKind::InvalidSubcommand) {
        Some(ContextValue::String(typed)) => typed.clone(),
        _ => return,
    };
    if let Some(ContextValue::Strings(all)) = e.get(ContextKind::SuggestedSubcommand) {
        let near = crate::registry::nearest(&typed, all.iter().map(String::as_str));
        e.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(near),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A call's tree parses the same with and without the built-ins' placeholders (release
    /// builds leave them out).
    #[test]
    fn a_call_parses_the_same_without_the_placeholders() {
        struct Echo;
        impl crate::Tool for Echo {
            fn meta(&self) -> crate::tool::ToolMeta {
                crate::tool::ToolMeta::new("echo_text", "Return the text.")
            }
            fn input_schema(&self) -> serde_json::Value {
                json!({"type": "object", "properties": {"text": {"type": "string"}},
                       "required": ["text"], "additionalProperties": false})
            }
            fn output_schema(&self) -> serde_json::Value {
                json!({"type": "string"})
            }
            fn call(
                &self,
                args: serde_json::Value,
                _: crate::CallContext,
            ) -> futures_util::future::BoxFuture<'_, Result<serde_json::Value, crate::ToolError>>
            {
                Box::pin(async move { Ok(args["text"].clone()) })
            }
        }
        let registry = crate::Registry::builder()
            .without_inventory()
            .tool(Echo)
            .build()
            .unwrap();
        let tool = registry.get("echo_text").unwrap();
        let global = Arg::new("db").long("db").global(true).default_value("x.db");
        let parse = |placeholders: bool, args: &[&str]| {
            let mut cmd = for_call("app", &tool, placeholders).arg(global.clone());
            let m = cmd.try_get_matches_from_mut(args).map_err(|e| e.kind())?;
            let (sub, sm) = m.subcommand().unwrap();
            Ok::<_, clap::error::ErrorKind>((
                sub.to_owned(),
                m.get_flag(JSON),
                m.get_one::<String>("db").cloned(),
                sm.get_one::<serde_json::Value>("text").cloned(),
            ))
        };
        for args in [
            &["app", "echo-text", "--text", "hi"][..],
            &["app", "--json", "echo-text", "--text", "hi", "--db", "y.db"],
            &["app", "echo-text", "--json", "--text", "hi"],
            &["app", "--db", "z.db", "echo-text"],
            &["app", "echo-text", "--nope"],
            &["app", "echo-text", "--help"],
        ] {
            assert_eq!(parse(true, args), parse(false, args), "{args:?}");
        }
        assert_eq!(
            parse(
                false,
                &["app", "--json", "echo-text", "--text", "hi", "--db", "y.db"]
            ),
            Ok((
                "echo-text".to_owned(),
                true,
                Some("y.db".to_owned()),
                Some(json!("hi"))
            ))
        );
    }

    #[test]
    fn kinds_follow_the_rust_types_behind_the_schema() {
        assert_eq!(
            flag_kind(&json!({"type": "integer", "format": "uint32"})),
            Kind::Integer("u32")
        );
        assert_eq!(
            flag_kind(&json!({"type": ["string", "null"]})),
            Kind::String(None)
        );
        assert_eq!(flag_kind(&json!({"type": "boolean"})), Kind::Boolean);
        for (sub, tool, same) in [
            ("device-add", "device_add", true),
            ("device-add", "device-add", true),
            ("device_add", "device-add", false),
            ("device-ad", "device_add", false),
            ("dévice-add", "dévice_add", true),
        ] {
            assert_eq!(names_tool(sub, tool), same, "{sub} {tool}");
            assert_eq!(subcommand_name(tool) == sub, same, "{sub} {tool}");
        }
        assert_eq!(
            flag_kind(&json!({"type": "array", "items": {"type": "string"}})),
            Kind::Array(Box::new(Kind::String(None)))
        );
        assert_eq!(
            flag_kind(&json!({"oneOf": [{"const": "low"}, {"const": "high"}]})),
            Kind::String(Some(vec!["low".into(), "high".into()]))
        );
        assert_eq!(
            flag_kind(&json!({"anyOf": [{"type": "object"}, {"type": "null"}]})),
            Kind::Json
        );
        assert_eq!(flag_kind(&json!({"type": "object"})), Kind::Json);
    }
}
