//! The loop of one run: ask the model, run its tool calls through the pipeline (a bounded
//! number at once, results kept in the calls' order), answer every call, repeat.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::confirm::ConfirmCallback;
use super::model::{Api, Model};
use super::transcript::{Event, Message, Refusal, ToolCall, ToolResult, Transcript, Turn};
use super::wire::Request;
use super::{Budget, Inner, Run, RunError, RunErrorKind, RunOutput, SWITCH_MODEL};
use super::{client, trace};
use crate::llm::{self, Target};
use crate::registry::Refuse;
use crate::tool::error::{ErrorKind, ToolError};
use crate::{Caller, Envelope};

/// What the loop keeps between turns.
struct State {
    inner: Arc<Inner>,
    caller: Caller,
    tier: String,
    events: Option<mpsc::UnboundedSender<Event>>,
    transcript: Transcript,
    /// Invalid-argument answers per tool so far.
    invalid: HashMap<String, u32>,
    started: Instant,
}

impl State {
    fn emit(&self, event: Event) {
        if let Some(tx) = &self.events {
            let _ = tx.send(event);
        }
    }

    fn end(mut self, kind: RunErrorKind) -> Result<RunOutput, RunError> {
        self.transcript.elapsed = self.started.elapsed();
        tracing::info!(target: "tool_runtime::agent", stop = kind.name(), "run ended");
        let error = RunError {
            kind,
            transcript: Box::new(self.transcript),
        };
        if let Some(tx) = &self.events {
            let _ = tx.send(Event::Finished {
                answer: None,
                stop: error.kind.name().to_owned(),
                error: Some(error.to_string()),
                usage: error.transcript.usage,
            });
        }
        Err(error)
    }

    fn answered(mut self, answer: String) -> RunOutput {
        self.transcript.elapsed = self.started.elapsed();
        let stop = if answer.trim().is_empty() {
            "empty_answer"
        } else {
            "answered"
        };
        self.emit(Event::Finished {
            answer: Some(answer.clone()),
            stop: stop.to_owned(),
            error: None,
            usage: self.transcript.usage,
        });
        RunOutput {
            answer,
            tier: self.tier,
            transcript: self.transcript,
        }
    }
}

impl State {
    /// Ends the run on a refusal. What the model said is kept in the conversation, so a chat
    /// that goes on knows it was refused; a stop with nothing said leaves no empty message,
    /// which no API takes.
    fn refused(mut self, model: &Model, refusal: Refusal) -> Result<RunOutput, RunError> {
        if !refusal.text.is_empty() {
            self.transcript.messages.push(Message::Assistant {
                text: refusal.text.clone(),
                tool_calls: Vec::new(),
                model: model.to_string(),
                native: None,
            });
        }
        self.emit(Event::Refused {
            refusal: refusal.clone(),
        });
        self.end(RunErrorKind::Refused(Box::new(refusal)))
    }
}

/// How a wait ended early.
enum Interrupt {
    Cancelled,
    Deadline,
}

/// Runs `run` under its span, `invoke_agent {name}` in the GenAI conventions, which records
/// the run's token totals and, for a run that ended without an answer, why.
pub(super) async fn drive(run: Run) -> Result<RunOutput, RunError> {
    let span = trace::run_span(&run);
    let result = turns(run).instrument(span.clone()).await;
    trace::run_ended(&span, &result);
    result
}

/// The loop of a run.
async fn turns(run: Run) -> Result<RunOutput, RunError> {
    let inner = run.agent.inner.clone();
    let cancel = run.cancel.unwrap_or_default();
    // Dropping the run cancels its tool calls; they end (and are audited) on their own tasks.
    let _cancel_on_drop = cancel.clone().drop_guard();
    let deadline = inner
        .budgets
        .deadline
        .map(|d| tokio::time::Instant::now() + d);
    let mut state = State {
        tier: run
            .tier
            .unwrap_or_else(|| inner.tiers.default_name().to_owned()),
        inner,
        caller: run.caller,
        events: run.events,
        transcript: Transcript {
            messages: run.messages,
            ..Transcript::default()
        },
        invalid: HashMap::new(),
        started: Instant::now(),
    };
    if state.inner.tiers.get(&state.tier).is_none() {
        let tier = state.tier.clone();
        return state.end(RunErrorKind::UnknownTier(tier));
    }
    let interrupted = || async {
        tokio::select! {
            () = cancel.cancelled() => Interrupt::Cancelled,
            () = sleep_until(deadline) => Interrupt::Deadline,
        }
    };
    let budgets = state.inner.budgets.clone();
    loop {
        if state.transcript.turns.len() >= budgets.max_turns as usize {
            return state.end(RunErrorKind::Budget(Budget::Turns));
        }
        let model = state.inner.tiers.get(&state.tier).expect("checked").clone();
        let reply = tokio::select! {
            reply = ask(&mut state, &model) => reply,
            why = interrupted() => Err(match why {
                Interrupt::Cancelled => RunErrorKind::Cancelled,
                Interrupt::Deadline => RunErrorKind::Budget(Budget::Deadline),
            }),
        };
        let mut reply = match reply {
            Ok(reply) => reply,
            Err(kind) => return state.end(kind),
        };
        if let Some(refusal) = reply.refusal.take() {
            return state.refused(&model, refusal);
        }
        let calls = reply.tool_calls.clone();
        state.transcript.messages.push(Message::Assistant {
            text: reply.text.clone(),
            tool_calls: reply.tool_calls,
            model: model.to_string(),
            native: reply.native.map(|n| (model.api, n)),
        });
        if calls.is_empty() {
            return Ok(state.answered(reply.text));
        }
        let over_tokens = budgets
            .max_tokens
            .is_some_and(|max| state.transcript.usage.total() >= max);
        let room = budgets
            .max_tool_calls
            .saturating_sub(state.transcript.tool_calls) as usize;
        let over_calls = calls.len() > room;
        let (results, interrupt) = if over_tokens {
            let why = "the run's token budget is used up; this call was not run";
            let refusals = calls
                .iter()
                .map(|call| refuse(&state.inner, &state.caller, call, over_budget(why)));
            (futures_util::future::join_all(refusals).await, None)
        } else {
            run_calls(&mut state, &model, calls, room, &cancel, deadline).await
        };
        state.transcript.messages.push(Message::Tool { results });
        match interrupt {
            Some(Interrupt::Cancelled) => return state.end(RunErrorKind::Cancelled),
            Some(Interrupt::Deadline) => return state.end(RunErrorKind::Budget(Budget::Deadline)),
            None => {}
        }
        if over_tokens {
            return state.end(RunErrorKind::Budget(Budget::Tokens));
        }
        if over_calls {
            return state.end(RunErrorKind::Budget(Budget::ToolCalls));
        }
    }
}

/// One model turn: the request built from the conversation, sent, and its reply recorded.
async fn ask(state: &mut State, model: &Model) -> Result<super::wire::Reply, RunErrorKind> {
    let tools = tool_specs(state, model);
    let system = system_prompt(state, model);
    state.emit(Event::TurnStarted {
        model: model.to_string(),
    });
    let started = Instant::now();
    let events = state.events.clone();
    let mut on_text = move |text: &str| {
        if let Some(tx) = &events {
            let _ = tx.send(Event::TextDelta {
                text: text.to_owned(),
            });
        }
    };
    let request = Request {
        model,
        system: &system,
        messages: &state.transcript.messages,
        tools: &tools,
    };
    let (reply, retries) = client::complete(&state.inner.http, &request, &mut on_text)
        .await
        .map_err(RunErrorKind::Provider)?;
    state.transcript.usage.add(reply.usage);
    state.transcript.turns.push(Turn {
        model: model.to_string(),
        duration: started.elapsed(),
        usage: reply.usage,
        retries,
    });
    state.emit(Event::Usage {
        turn: reply.usage,
        total: state.transcript.usage,
    });
    Ok(reply)
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The specs of the tools the run's caller may see, for `model`'s API: tools the provider
/// would reject are left out (and logged), `switch_model` added with two tiers or more.
fn tool_specs(state: &State, model: &Model) -> Vec<Value> {
    let target = model.api.target();
    // OpenAI-compatible servers get non-strict specs: few of them implement strict mode.
    let options = llm::Options {
        strict: model.api != Api::OpenAiCompatible,
        ..llm::Options::default()
    };
    let cached = state
        .inner
        .specs
        .specs(&state.inner.registry, &state.caller, target, &options);
    let (specs, report) = &*cached;
    let mut entries = entries_of(specs, target);
    if report.has_errors() {
        let rejected: Vec<&str> = report
            .at_least(llm::Severity::Error)
            .map(|f| f.tool.as_str())
            .collect();
        entries.retain(|e| !rejected.contains(&spec_name(e)));
        tracing::warn!(
            target: "tool_runtime::agent",
            api = %model.api,
            tools = ?rejected,
            "tools left out: the provider would reject their specs (see `tools --lint`)",
        );
    }
    for (own, specs) in [&state.inner.switch, &state.inner.resources]
        .into_iter()
        .flatten()
    {
        let lowered = specs.specs(own, &state.caller, target, &options);
        entries.extend(entries_of(&lowered.0, target));
    }
    entries
}

/// The entries of a target's `tools` value: for Gemini, its function declarations.
fn entries_of(specs: &Value, target: Target) -> Vec<Value> {
    let entries = match target {
        Target::Gemini => specs.pointer("/0/functionDeclarations"),
        _ => Some(specs),
    };
    entries
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn spec_name(entry: &Value) -> &str {
    entry
        .pointer("/function/name")
        .or_else(|| entry.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn system_prompt(state: &State, model: &Model) -> String {
    let tiers = &state.inner.tiers;
    if tiers.models.len() < 2 {
        return state.inner.system.clone();
    }
    let mut prompt = state.inner.system.clone();
    if !prompt.is_empty() {
        prompt.push_str("\n\n");
    }
    let others: Vec<String> = tiers
        .models
        .iter()
        .map(|(name, m)| format!("`{name}` ({m})"))
        .collect();
    let _ = write!(
        prompt,
        "You are running as {model} (tier `{}`). Model tiers: {}. Call `{SWITCH_MODEL}` to move the rest of the task to another tier.",
        state.tier,
        others.join(", ")
    );
    prompt
}

/// The error of a call refused because a budget of the run is used up.
fn over_budget(why: &str) -> ToolError {
    ToolError::new(ErrorKind::BUDGET_EXHAUSTED, why)
}

/// A call the run refuses itself (a budget used up, a tool refused after too many invalid
/// arguments), answered as `error` through the pipeline's observers: it leaves an audit
/// record like any call, with the arguments as the model sent them (their text, as a string,
/// when they are not JSON).
async fn refuse(inner: &Inner, caller: &Caller, call: &ToolCall, error: ToolError) -> ToolResult {
    let started = Instant::now();
    let args =
        parse_arguments(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()));
    let envelope = inner
        .registry
        .handle(
            Refuse::new(&call.name, args, error),
            trace::with_call_id(caller.clone(), call),
        )
        .await
        .envelope;
    result_of(call, &envelope, started.elapsed())
}

fn not_run(call: &ToolCall, kind: &ErrorKind, message: &str) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        is_error: true,
        content: json!({"type": kind, "message": message}),
        envelope: Value::Null,
        duration: Duration::ZERO,
    }
}

/// Runs one reply's calls: at most `room` of them (the rest answered as over budget), up to
/// `parallel` at once, each on its own task. Returns the results in the calls' order, and
/// what interrupted the run meanwhile, if anything: the calls in flight were then cancelled
/// and their `cancelled` envelopes are among the results.
async fn run_calls(
    state: &mut State,
    model: &Model,
    calls: Vec<ToolCall>,
    room: usize,
    cancel: &CancellationToken,
    deadline: Option<tokio::time::Instant>,
) -> (Vec<ToolResult>, Option<Interrupt>) {
    let target = model.api.target();
    let retries = state.inner.budgets.invalid_argument_retries;
    let tools_cancel = cancel.child_token();
    let mut planned = Vec::with_capacity(calls.len());
    for (i, call) in calls.into_iter().enumerate() {
        state.transcript.tool_calls += 1;
        if i >= room {
            planned.push(Planned::Refused(
                call,
                over_budget("the run's tool-call budget is used up; this call was not run"),
            ));
        } else if call.name == SWITCH_MODEL && state.inner.switch.is_some() {
            planned.push(Planned::Done(switch_model(state, &call).await));
        } else if let Some((own, _)) = state
            .inner
            .resources
            .as_ref()
            .filter(|(own, _)| own.get(&call.name).is_some())
        {
            // Read on behalf of the run's caller.
            let on_behalf = super::resources::OnBehalf(state.caller.clone());
            let caller = state.caller.clone().extension(on_behalf);
            planned.push(Planned::Done(own_call(own, caller, &call).await));
        } else if state.invalid.get(&call.name).copied().unwrap_or(0) > retries {
            let error = ToolError::new(
                ErrorKind::INVALID_ARGUMENTS,
                format!(
                    "`{}` got invalid arguments {} times in this run and is not run again; answer without it",
                    call.name,
                    retries + 1
                ),
            );
            planned.push(Planned::Refused(call, error));
        } else {
            planned.push(Planned::Run(call));
        }
    }
    let job = Job {
        inner: state.inner.clone(),
        caller: state.caller.clone(),
        target,
        cancel: tools_cancel.clone(),
        events: state.events.clone(),
    };
    let mut results = futures_util::stream::iter(planned)
        .map(|p| {
            let job = job.clone();
            async move {
                match p {
                    // Not run: never counted as invalid arguments.
                    Planned::Done(result) => (result, false),
                    Planned::Refused(call, error) => {
                        (refuse(&job.inner, &job.caller, &call, error).await, false)
                    }
                    Planned::Run(call) => {
                        let fallback = call.clone();
                        // On its own task, still under the run's span.
                        let task = job.execute(call).in_current_span();
                        tokio::spawn(task).await.unwrap_or_else(|e| {
                            let result = not_run(
                                &fallback,
                                &ErrorKind::INTERNAL,
                                &format!("the call's task failed: {e}"),
                            );
                            (result, false)
                        })
                    }
                }
            }
        })
        .buffered(state.inner.parallel);
    let mut out = Vec::new();
    let mut interrupt = None;
    loop {
        let next = if interrupt.is_some() {
            results.next().await
        } else {
            tokio::select! {
                next = results.next() => next,
                () = cancel.cancelled() => { interrupt = Some(Interrupt::Cancelled); tools_cancel.cancel(); continue; }
                () = sleep_until(deadline) => { interrupt = Some(Interrupt::Deadline); tools_cancel.cancel(); continue; }
            }
        };
        let Some((result, invalid_arguments)) = next else {
            break;
        };
        if invalid_arguments {
            *state.invalid.entry(result.name.clone()).or_default() += 1;
        }
        out.push(result);
    }
    (out, interrupt)
}

enum Planned {
    /// Answered already (`switch_model`).
    Done(ToolResult),
    /// Refused by the run itself, with this error.
    Refused(ToolCall, ToolError),
    /// Run through the pipeline.
    Run(ToolCall),
}

/// A call of `switch_model`, through the pipeline of the agent's own registry; the run moves
/// to the tier it chose.
async fn switch_model(state: &mut State, call: &ToolCall) -> ToolResult {
    let inner = Arc::clone(&state.inner);
    let Some((switch, _)) = &inner.switch else {
        return not_run(call, &ErrorKind::UNKNOWN_TOOL, "this agent has one tier");
    };
    let chosen = super::switch::Chosen::default();
    let caller = state.caller.clone().extension(chosen.clone());
    let result = own_call(switch, caller, call).await;
    if let Some(tier) = chosen.take()
        && let Some(model) = inner.tiers.get(&tier)
    {
        state.emit(Event::ModelSwitched {
            tier: tier.clone(),
            model: model.to_string(),
        });
        state.tier = tier;
    }
    result
}

/// A call of one of the agent's own tools (`switch_model`, `list_resources`,
/// `read_resource`), through the pipeline of its own registry, as `caller`.
async fn own_call(own: &crate::registry::Registry, caller: Caller, call: &ToolCall) -> ToolResult {
    let started = Instant::now();
    let envelope = match parse_arguments(&call.arguments) {
        Err(e) => {
            let text = Value::String(call.arguments.clone());
            own.handle(Refuse::new(&call.name, text, e), caller)
                .await
                .envelope
        }
        Ok(args) => own.call(&call.name, args, caller).await,
    };
    result_of(call, &envelope, started.elapsed())
}

/// The result the model is told of: the envelope's result, or its error.
fn result_of(call: &ToolCall, envelope: &Envelope, duration: Duration) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        is_error: !envelope.is_ok(),
        content: match &envelope.outcome {
            Ok(result) => result.clone(),
            Err(e) => serde_json::to_value(e).unwrap_or(Value::Null),
        },
        envelope: envelope.to_json(),
        duration,
    }
}

/// What one tool call needs on its own task.
#[derive(Clone)]
struct Job {
    inner: Arc<Inner>,
    caller: Caller,
    target: Target,
    cancel: CancellationToken,
    events: Option<mpsc::UnboundedSender<Event>>,
}

impl Job {
    fn emit(&self, event: Event) {
        if let Some(tx) = &self.events {
            let _ = tx.send(event);
        }
    }

    /// Runs one call through the pipeline; its result, and whether the pipeline refused its
    /// arguments (`invalid_arguments`, which the run's retry budget counts).
    async fn execute(self, call: ToolCall) -> (ToolResult, bool) {
        let started = Instant::now();
        self.emit(Event::ToolCallStarted {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        let registry = &self.inner.registry;
        let caller = self
            .caller
            .clone()
            .strict_nulls(self.target.writes_strict_nulls())
            .cancellation(self.cancel.clone());
        let caller = trace::with_call_id(caller, &call);
        let envelope = match parse_arguments(&call.arguments) {
            // A name the caller cannot see is the first mistake: the pipeline answers it
            // (`unknown_tool`, with the names the model may have meant), whatever came with it.
            Err(_) if registry.visible_tool(&call.name, &caller).is_none() => {
                let text = Value::String(call.arguments.clone());
                registry.call(&call.name, text, caller).await
            }
            // Never run, but recorded: the observers see the text the model sent.
            Err(e) => {
                let text = Value::String(call.arguments.clone());
                let refused = Refuse::new(&call.name, text, e);
                registry.handle(refused, caller).await.envelope
            }
            Ok(args) => {
                let asker = ConfirmCallback {
                    confirm: self.inner.confirm.clone(),
                    events: self.events.clone(),
                    call_id: call.id.clone(),
                };
                let caller = caller.asking(Arc::new(asker));
                registry.call(&call.name, args, caller).await
            }
        };
        let invalid_arguments = envelope
            .error()
            .is_some_and(|e| e.kind() == ErrorKind::INVALID_ARGUMENTS);
        let result = result_of(&call, &envelope, started.elapsed());
        self.emit(Event::ToolCallFinished {
            result: result.clone(),
        });
        (result, invalid_arguments)
    }
}

/// A model's argument text as JSON: empty means no arguments; anything that is not JSON is
/// `invalid_arguments` saying so, with the start of what was sent.
fn parse_arguments(text: &str) -> Result<Value, ToolError> {
    if text.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(text).map_err(|e| {
        let shown: String = text.chars().take(200).collect();
        ToolError::new(
            ErrorKind::INVALID_ARGUMENTS,
            format!("the arguments are not JSON ({e}); send one JSON object"),
        )
        .with_details(json!({"arguments": shown}))
    })
}
