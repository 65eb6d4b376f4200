//! The agent built-ins: `agent PROMPT` (one run, progress on standard error, the answer on
//! standard output; `--json` prints the run instead) and `chat` (a conversation, one run per
//! line). Both exist when the application supplies an agent with [`App::agent`].

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::context::AgentFlags;
use super::{App, AppContext, SetupError};
use crate::agent::{
    AgentBuilder, Api, Event, Message, ModelError, RunContext, RunError, RunErrorKind,
};
use crate::app::cli::call::ask;
use crate::app::cli::fail;
use crate::registry::Registry;

impl App {
    /// Offers `agent` and `chat` subcommands, and `POST /agent` on `serve`, running the agent
    /// `make` returns over the application's registry (after [`setup`](Self::setup) and
    /// [`toolsets`](Self::toolsets)). `make`, an async closure (or an `async fn`), runs once
    /// and gets the run's [`AppContext`] (the parsed command line, what the earlier hooks left),
    /// the `--provider`/`--model` flags (none for `serve`) and the registry; a
    /// [`ModelError`] from it (no provider, no key) exits with 2 and its message (for `serve`,
    /// the server runs without `POST /agent`). On a terminal, `agent` and `chat` ask the user
    /// to confirm destructive calls; elsewhere the answer is whatever `make` configured (by
    /// default no one is asked, and the model gets `confirmation_required`).
    #[must_use]
    pub fn agent<F>(mut self, make: F) -> Self
    where
        F: AsyncFnOnce(
                &mut AppContext,
                AgentFlags,
                Arc<Registry>,
            ) -> Result<AgentBuilder, SetupError>
            + 'static,
    {
        self.agent = Some(Box::new(move |cx, flags, registry| {
            Box::pin(make(cx, flags, registry))
        }));
        self
    }

    /// `agent` and `chat`.
    pub(super) async fn run_agent(mut self, cx: &mut AppContext, sub: &str, m: &ArgMatches) -> u8 {
        let Some(make) = self.agent.take() else {
            return 2;
        };
        let flags = AgentFlags {
            provider: m
                .get_one::<String>("provider")
                .and_then(|p| Api::from_name(p)),
            model: m.get_one::<String>("model").cloned(),
        };
        let registry = match self.mounted_registry(cx).await {
            Ok(r) => r,
            Err(e) => return fail(e, 1),
        };
        let mut builder = match make(cx, flags, registry).await {
            Ok(b) => b,
            Err(e) => return fail(&e, if e.is::<ModelError>() { 2 } else { 1 }),
        };
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            builder = builder.confirm(|request| async move {
                tokio::task::spawn_blocking(move || ask(&request.question))
                    .await
                    .unwrap_or(false)
            });
        }
        let agent = match builder.build() {
            Ok(a) => a,
            Err(e) => return fail(e, 1),
        };
        let json = cx.matches().get_flag(crate::app::cli::command::JSON);
        let tier = m.get_one::<String>("tier").cloned();
        if sub == "agent" {
            let prompt = m
                .get_many::<String>("prompt")
                .expect("required")
                .cloned()
                .collect::<Vec<_>>()
                .join(" ");
            let (code, _) = one_run(&agent, prompt, Vec::new(), tier.as_deref(), json).await;
            return code;
        }
        let mut history: Vec<Message> = Vec::new();
        let stdin = std::io::stdin();
        let prompt_shown = stdin.is_terminal();
        loop {
            if prompt_shown {
                eprint!("> ");
                let _ = std::io::stderr().flush();
            }
            let mut line = String::new();
            match stdin.lock().read_line(&mut line) {
                Ok(0) | Err(_) => return 0,
                Ok(_) => {}
            }
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (_, messages) =
                one_run(&agent, line.to_owned(), history, tier.as_deref(), json).await;
            history = messages;
        }
    }
}

/// One run, its progress on standard error, its answer (or with `json` the whole output) on
/// standard output. Ctrl-C cancels it. Returns the exit code and the conversation so far.
async fn one_run(
    agent: &crate::agent::Agent,
    prompt: String,
    history: Vec<Message>,
    tier: Option<&str>,
    json: bool,
) -> (u8, Vec<Message>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut run = agent
        .run(prompt)
        .history(history.clone())
        .context(RunContext::new("cli"))
        .events(tx)
        .cancellation(cancel.clone());
    if let Some(tier) = tier {
        run = run.tier(tier);
    }
    let show = !json;
    let printer = async move {
        let mut wrote_text = false;
        while let Some(event) = rx.recv().await {
            if show {
                wrote_text = show_event(&event, wrote_text);
            }
        }
    };
    let ctrl_c = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            ctrl_c.cancel();
        }
    });
    let (outcome, ()) = tokio::join!(run.into_future(), printer);
    watcher.abort();
    let mut out = std::io::stdout();
    match outcome {
        Ok(output) => {
            if json {
                let _ = writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&output).unwrap_or_default()
                );
            } else {
                let _ = writeln!(out);
            }
            if output.answer.trim().is_empty() {
                eprintln!("note: the model ended the run with no answer (no text, no tool call)");
            }
            (0, output.transcript.messages)
        }
        Err(e) => {
            let code = run_error_code(&e);
            if json {
                let value = serde_json::json!({
                    "error": {"type": e.kind.name(), "message": e.to_string()},
                    "transcript": e.transcript,
                });
                let _ = writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&value).unwrap_or_default()
                );
            }
            if matches!(e.kind, RunErrorKind::Refused(_)) {
                eprintln!("refused: {e}");
            } else {
                eprintln!("error: {e}");
            }
            let mut messages = e.transcript.messages;
            // A conversation that goes on needs every call answered: keep what was answered.
            if matches!(messages.last(), Some(Message::Assistant { tool_calls, .. }) if !tool_calls.is_empty())
            {
                messages.pop();
            }
            let _ = history;
            (code, messages)
        }
    }
}

/// The exit code of a run that ended without an answer: 130 cancelled, 2 an unknown tier,
/// 4 refused, 1 anything else (a budget, the provider).
fn run_error_code(e: &RunError) -> u8 {
    match e.kind {
        RunErrorKind::Cancelled => 130,
        RunErrorKind::UnknownTier(_) => 2,
        RunErrorKind::Refused(_) => 4,
        _ => 1,
    }
}

/// Shows one event: text as it comes on standard output, tool calls on standard error.
/// Returns whether the last thing written was model text (so a tool line starts on its own).
fn show_event(event: &Event, wrote_text: bool) -> bool {
    let mut out = std::io::stdout();
    match event {
        Event::TextDelta { text } => {
            let _ = write!(out, "{text}");
            let _ = out.flush();
            true
        }
        Event::ToolCallStarted {
            name, arguments, ..
        } => {
            if wrote_text {
                let _ = writeln!(out);
            }
            let shown: String = arguments.chars().take(120).collect();
            eprintln!("→ {name} {shown}");
            false
        }
        Event::ToolCallFinished { result } => {
            let ms = result.duration.as_secs_f64() * 1000.0;
            if result.is_error {
                let kind = result.content["type"].as_str().unwrap_or("error");
                let message = result.content["message"].as_str().unwrap_or_default();
                eprintln!("✗ {} {kind}: {message} ({ms:.0} ms)", result.name);
            } else {
                eprintln!("✓ {} ({ms:.0} ms)", result.name);
            }
            false
        }
        Event::ModelSwitched { tier, model } => {
            eprintln!("⇄ tier {tier} ({model})");
            wrote_text
        }
        _ => wrote_text,
    }
}

/// `agent` and `chat`.
pub(super) fn commands() -> [Command; 2] {
    let provider = Arg::new("provider")
        .long("provider")
        .value_name("PROVIDER")
        .value_parser(clap::builder::PossibleValuesParser::new(
            Api::ALL.map(Api::name),
        ))
        .help("The model provider (overrides the configuration)");
    let model = Arg::new("model")
        .long("model")
        .value_name("MODEL")
        .help("The model's name at the provider (overrides the configuration)");
    let tier = Arg::new("tier")
        .long("tier")
        .value_name("TIER")
        .help("The model tier to start on");
    [
        Command::new("agent")
            .about("Run a model against the tools for one request; progress on stderr, the answer on stdout")
            .display_order(crate::app::cli::command::BUILTIN_ORDER)
            .arg(
                Arg::new("prompt")
                    .required(true)
                    .num_args(1..)
                    .action(ArgAction::Append)
                    .help("What to ask"),
            )
            .arg(provider.clone())
            .arg(model.clone())
            .arg(tier.clone()),
        Command::new("chat")
            .about("Talk to a model that can call the tools, one line per message, until end of input")
            .display_order(crate::app::cli::command::BUILTIN_ORDER)
            .arg(provider)
            .arg(model)
            .arg(tier),
    ]
}
