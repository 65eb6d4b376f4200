//! Invoking a tool from the command line: the call, the confirmation question on a terminal,
//! progress, and the report with its exit code.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use clap::ArgMatches;
use futures_util::future::BoxFuture;

use crate::tool::caller::{ProgressSink, ProgressUpdate};
use crate::tool::envelope::Envelope;
use crate::tool::error::ErrorKind;
use crate::tool::{Answer, Ask, Confirmation};

use super::render::{self, Palette, color_for, fail};
use super::{args, command};
use crate::registry::{CallTool, RegisteredTool, Registry};

/// Calls `tool`, found in `registry` among the tools the command line may see, with the
/// arguments of its subcommand's matches, asking on a terminal when it needs confirmation, and
/// prints the report; returns the exit code.
pub(crate) async fn invoke(
    registry: &Registry,
    tool: &RegisteredTool,
    sub_matches: &ArgMatches,
    json_out: bool,
    out: &mut dyn Write,
) -> u8 {
    let call_args = match args::collect(tool, sub_matches, &mut std::io::stdin().lock()) {
        Ok(a) => a,
        Err(e) => return fail(&e.0, 2),
    };
    call(registry, tool.name(), call_args, sub_matches, json_out, out).await
}

/// Calls `tool_name` with `arguments` as the command line ([`caller`](super::caller), with
/// `--yes` and `--dry-run` where `flags` has them, the terminal as its peer, a progress bar
/// on a terminal), asking on a terminal when the call needs confirmation, and prints the
/// report; returns the exit code.
pub(crate) async fn call(
    registry: &Registry,
    tool_name: &str,
    arguments: serde_json::Value,
    flags: &ArgMatches,
    json_out: bool,
    out: &mut dyn Write,
) -> u8 {
    // `--dry-run` and `--yes` exist only on tools they apply to.
    let flag = |id| flags.try_get_one::<bool>(id).ok().flatten() == Some(&true);
    let caller = super::caller()
        .dry_run(flag(command::DRY_RUN))
        .confirm(flag(command::YES));
    if flag(command::DETACH) {
        return super::tasks::detached(registry, tool_name, arguments, &caller, json_out, out)
            .await;
    }
    let mut caller = caller
        .peer(Arc::new(super::form::TerminalPeer))
        .asking(Arc::new(Terminal));
    let bar = std::io::stderr().is_terminal().then(progress_bar);
    if let Some(bar) = &bar {
        caller = caller.progress(Arc::new(BarSink(bar.clone())));
    }
    let finished = registry
        .handle(CallTool::new(tool_name, arguments), caller)
        .await;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    report(&finished.envelope, finished.tool(), json_out, out)
}

/// Prints the envelope (as JSON, or rendered for people) and returns the exit code.
pub(crate) fn report(
    envelope: &Envelope,
    tool: Option<&RegisteredTool>,
    json_out: bool,
    out: &mut dyn Write,
) -> u8 {
    if json_out {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(envelope).unwrap_or_default()
        );
    }
    match &envelope.outcome {
        Ok(result) => {
            if !json_out {
                let text = if tool.is_some_and(|t| t.meta().content) {
                    render::content(result)
                } else {
                    render::render(result, Palette::new(color_for(&std::io::stdout())))
                };
                let _ = write!(out, "{text}");
            }
            0
        }
        // With `--json` the envelope on stdout says it all; stderr stays quiet.
        Err(e) if json_out => e.kind().exit_code(),
        Err(e) => {
            let p = Palette::new(color_for(&std::io::stderr()));
            let (error, reset) = (p.error.render(), p.error.render_reset());
            let violations = e.violations();
            match violations {
                // One violation: said once, by the flag it concerns.
                [one]
                    if e.kind() == ErrorKind::INVALID_ARGUMENTS
                        && e.message().ends_with(&one.message) =>
                {
                    eprintln!(
                        "{error}error:{reset} {}: {}",
                        flag_for(one, tool),
                        one.message
                    );
                }
                _ => {
                    eprintln!("{error}error:{reset} {}", e.message());
                    for v in violations {
                        let at = flag_for(v, tool);
                        eprintln!(
                            "  {}{at}:{} {}",
                            p.dim.render(),
                            p.dim.render_reset(),
                            v.message
                        );
                    }
                }
            }
            if e.kind() == ErrorKind::CONFIRMATION_REQUIRED {
                eprintln!(
                    "  hint: run it again with --yes to confirm, or from a terminal to be asked"
                );
            }
            e.kind().exit_code()
        }
    }
}

/// Where to fix `violation`: `/ttl_seconds` → `--ttl-seconds` when it names a flag of the tool,
/// the pointer otherwise. A missing property is the flag to pass: `"device_id" is a required
/// property` of the root → `--device-id`.
pub(super) fn flag_for(
    violation: &crate::tool::Violation,
    tool: Option<&RegisteredTool>,
) -> String {
    let pointer = violation.pointer();
    let path = pointer.as_ref();
    let Some(tool) = tool else {
        return path.to_owned();
    };
    let top = path.strip_prefix('/').unwrap_or(path);
    let (head, rest) = top.split_once('/').map_or((top, ""), |(h, r)| (h, r));
    let known = tool.input_schema()["properties"]
        .as_object()
        .is_some_and(|p| p.contains_key(head));
    let positional = tool
        .meta()
        .params
        .iter()
        .any(|h| h.name == head && h.positional);
    match (known, positional) {
        (true, false) if rest.is_empty() => format!("--{}", head.replace('_', "-")),
        (true, false) => format!("--{} /{rest}", head.replace('_', "-")),
        (true, true) => format!("<{}>", head.to_uppercase()),
        _ if path.is_empty() => "arguments".to_owned(),
        _ => path.to_owned(),
    }
}

/// The person at the terminal: shown the preview and asked. Without a terminal the question
/// stands as the answer (`confirmation_required`, exit code 3).
pub(crate) struct Terminal;

impl Ask for Terminal {
    fn ask<'a>(&'a self, confirmation: &'a Confirmation) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            if !std::io::stdin().is_terminal() {
                return Answer::Unasked(None);
            }
            if let Some(preview) = &confirmation.preview {
                let p = Palette::new(color_for(&std::io::stderr()));
                eprint!("{}", render::render(preview, p));
            }
            let question = confirmation.question.clone();
            let yes = tokio::task::spawn_blocking(move || ask(&question))
                .await
                .unwrap_or(false);
            if yes { Answer::Yes } else { Answer::No }
        })
    }
}

/// Asks on the terminal; only `y` or `yes` confirms.
pub(crate) fn ask(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

pub(super) fn progress_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar
}

/// Shows a tool's progress reports as a spinner, or a bar once a total is known.
pub(super) struct BarSink(indicatif::ProgressBar);

impl ProgressSink for BarSink {
    fn report(&self, update: ProgressUpdate) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        // Reason: progress counts are small non-negative numbers; a bar needs integers.
        let (pos, total) = (
            update.progress.max(0.0) as u64,
            update.total.map(|t| t.max(0.0) as u64),
        );
        if let Some(total) = total
            && self.0.length() != Some(total)
        {
            self.0.set_length(total);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg}")
            {
                self.0.set_style(style.progress_chars("=> "));
            }
        }
        self.0.set_position(pos);
        if let Some(m) = update.message {
            self.0.set_message(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reports_drive_the_bar() {
        let bar = indicatif::ProgressBar::hidden();
        let sink = BarSink(bar.clone());
        sink.report(ProgressUpdate {
            progress: 2.0,
            total: Some(5.0),
            message: Some("copying".into()),
        });
        assert_eq!((bar.position(), bar.length()), (2, Some(5)));
        assert_eq!(bar.message(), "copying");
    }
}
