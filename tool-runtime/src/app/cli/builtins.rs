//! The listing built-ins: `tools` and `schema`.

use std::io::Write;

use clap::ArgMatches;
use serde_json::{Value, json};

use super::command::{find_tool, subcommand_name};
use super::render::fail;
use crate::llm::{self, Target};
use crate::registry::Registry;

pub(crate) fn list_tools(
    registry: &Registry,
    m: &ArgMatches,
    json_out: bool,
    out: &mut dyn Write,
) -> u8 {
    // What a command-line caller may call (it carries no roles: with `RequireRoles`,
    // role-gated tools are not shown).
    let visible = registry.visible(&super::caller());
    if let Some(target) = m
        .get_one::<String>("format")
        .and_then(|f| Target::from_name(f))
    {
        let (specs, report) = llm::specs(&visible, target, &llm::Options::default());
        if !m.get_flag("lint") {
            let text = serde_json::to_string_pretty(&specs).unwrap_or_default();
            let _ = writeln!(out, "{text}");
            return 0;
        }
        if json_out {
            let _ = writeln!(
                out,
                "{}",
                json!({ "format": target.name(), "findings": report.findings })
            );
        } else if report.findings.is_empty() {
            let _ = writeln!(out, "{target}: nothing dropped or rewritten");
        } else {
            let _ = write!(out, "{report}");
        }
        return u8::from(report.has_errors());
    }
    if json_out {
        let tools: Vec<Value> = visible
            .iter()
            .map(|t| {
                let m = t.meta();
                json!({"name": m.name, "title": m.title, "summary": m.summary,
                       "description": m.description, "annotations": m.annotations, "tags": m.tags})
            })
            .collect();
        let _ = writeln!(out, "{}", json!({ "tools": tools }));
        return 0;
    }
    let width = visible
        .iter()
        .map(|t| subcommand_name(t.name()).len())
        .max()
        .unwrap_or(0);
    for t in &visible {
        let _ = writeln!(
            out,
            "{:<width$}  {}",
            subcommand_name(t.name()),
            t.meta().summary
        );
    }
    0
}

pub(crate) fn print_schema(registry: &Registry, m: &ArgMatches, out: &mut dyn Write) -> u8 {
    let name = m.get_one::<String>("tool").expect("required");
    let caller = super::caller();
    let Some(tool) = find_tool(registry, name, Some(&caller)) else {
        let error = registry.unknown_tool(name, &caller);
        let listed = !error.suggestions().is_empty();
        let hint = if listed { "" } else { "; `tools` lists them" };
        return fail(format!("{}{hint}", error.message()), 2);
    };
    let schema = if m.get_flag("output-schema") {
        tool.output_schema()
    } else {
        tool.input_schema()
    };
    let _ = writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(schema).unwrap_or_default()
    );
    0
}
