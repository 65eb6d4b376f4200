//! The agent: a model calls the registered tools, in-process, through the pipeline.
//!
//! A run sends the conversation and the lowered specs of the tools the run's caller may see
//! ([`Registry::visible`] with source [`Source::Agent`]) to the model, runs every tool call of
//! the reply through [`Registry::call`] — so policies, guards, confirmation, limits, output
//! caps and the audit apply as to every other caller — sends one result per call back in the
//! provider's format, and repeats until the model answers without calling a tool or a budget
//! ends the run.
//!
//! ```no_run
//! use std::sync::Arc;
//! use tool_runtime::agent::{Agent, Api, Budgets, Model};
//! use tool_runtime::layers::policy::DenyDestructive;
//! use tool_runtime::{Registry, Source};
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Arc::new(
//!     Registry::builder()
//!         .policy(DenyDestructive::for_sources([Source::Agent]))
//!         .build()?,
//! );
//! // OPENAI_API_KEY (and OPENAI_BASE_URL, if set) from the environment.
//! let model = Model::from_env(Api::OpenAiChat, "gpt-4.1-mini", None)?;
//! let agent = Agent::builder(registry, model)
//!     .system("You manage the devices of a home network.")
//!     .budgets(Budgets::default().max_tool_calls(20))
//!     .confirm(|request| async move {
//!         eprintln!("{}", request.question);
//!         false // a host with a user would ask them
//!     })
//!     .build()?;
//! let output = agent.run("Which devices are paired in workspace home?").await?;
//! println!("{}", output.answer);
//! # Ok(()) }
//! ```
//!
//! What the model gets back when a call goes wrong is a result it can act on, never a broken
//! run: arguments that are not JSON, an unknown tool (with the nearest names), invalid
//! arguments (every violation), a tool's error, a time-out, a refusal, a declined
//! confirmation. Invalid arguments to one tool are answered [`Budgets::invalid_argument_retries`]
//! times; after that the tool is not run again in this run and the model is told so. Every
//! call has one audit record, those the run refuses itself (arguments that are not JSON, a
//! budget used up, the retry cap) included, except `switch_model` (see [`Tiers`]), which runs
//! in a registry of the agent's own, without the application's observers, and so is not in the
//! application's audit.
//!
//! Providers and the API versions spoken are listed at [`Api`]. Keys come from the environment
//! variables the providers' SDKs read ([`Model::from_env`]) into a [`Secret`](crate::Secret):
//! they are never logged, never in a transcript and never in an error.
#![doc = include_str!("../../docs/agent.md")]

mod client;
mod confirm;
mod model;
mod resources;
mod run;
mod switch;
mod trace;
mod transcript;
mod wire;

use std::fmt;
use std::future::{Future, IntoFuture};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Serialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use client::ProviderError;
pub use model::{Api, Model, ModelError, Tiers, default_model, detect_api, parse_reference};
pub use transcript::{Event, Message, Refusal, ToolCall, ToolResult, Transcript, Turn, Usage};

use crate::llm;
use crate::tool::Confirmation;
use crate::{Caller, Registry, Source};

/// The name of the tool that moves a run to another tier (offered with two tiers or more).
pub const SWITCH_MODEL: &str = "switch_model";

/// Limits on one run. Each ends the run with [`RunErrorKind::Budget`] when reached; the
/// transcript so far is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Budgets {
    /// Model turns (requests to the model); default 16.
    pub max_turns: u32,
    /// Tool calls the model may make; default 64.
    pub max_tool_calls: u32,
    /// Tokens, input and output together, as the provider reports them; default none.
    pub max_tokens: Option<u64>,
    /// Wall-clock time for the whole run; default none.
    pub deadline: Option<Duration>,
    /// How many times one tool's invalid arguments are answered with the violations before
    /// the tool is refused for the rest of the run; default 2.
    pub invalid_argument_retries: u32,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            max_turns: 16,
            max_tool_calls: 64,
            max_tokens: None,
            deadline: None,
            invalid_argument_retries: 2,
        }
    }
}

impl Budgets {
    /// Sets [`max_turns`](Self::max_turns).
    #[must_use]
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = turns;
        self
    }

    /// Sets [`max_tool_calls`](Self::max_tool_calls).
    #[must_use]
    pub fn max_tool_calls(mut self, calls: u32) -> Self {
        self.max_tool_calls = calls;
        self
    }

    /// Sets [`max_tokens`](Self::max_tokens).
    #[must_use]
    pub fn max_tokens(mut self, tokens: Option<u64>) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// Sets [`deadline`](Self::deadline).
    #[must_use]
    pub fn deadline(mut self, deadline: Option<Duration>) -> Self {
        self.deadline = deadline;
        self
    }

    /// Sets [`invalid_argument_retries`](Self::invalid_argument_retries).
    #[must_use]
    pub fn invalid_argument_retries(mut self, retries: u32) -> Self {
        self.invalid_argument_retries = retries;
        self
    }
}

type ConfirmFn = Arc<dyn Fn(Confirmation) -> BoxFuture<'static, bool> + Send + Sync>;

/// Facts about the conversation a run serves — the channel, the chat, the user — which tools
/// read with `ctx.extension::<RunContext>()`. Each run carries its own, so concurrent runs
/// never see each other's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RunContext {
    /// The channel the conversation happens on (`cli`, `http`, a chat service).
    pub channel: Option<String>,
    /// The chat or thread within the channel.
    pub chat_id: Option<String>,
    /// The user the run speaks for.
    pub user: Option<String>,
}

impl RunContext {
    /// A context on `channel`.
    #[must_use]
    pub fn new(channel: impl Into<String>) -> Self {
        RunContext {
            channel: Some(channel.into()),
            ..RunContext::default()
        }
    }

    /// Sets the chat.
    #[must_use]
    pub fn chat_id(mut self, chat_id: impl Into<String>) -> Self {
        self.chat_id = Some(chat_id.into());
        self
    }

    /// Sets the user.
    #[must_use]
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }
}

/// A model, tools and the rules of a run. Cheap to clone; runs may go on concurrently.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

struct Inner {
    /// `gen_ai.agent.name` on the run's span.
    name: Option<String>,
    registry: Arc<Registry>,
    tiers: Tiers,
    system: String,
    budgets: Budgets,
    parallel: usize,
    confirm: Option<ConfirmFn>,
    http: reqwest::Client,
    specs: llm::SpecCache,
    /// `switch_model`, with two tiers or more, and its specs as each provider takes them.
    switch: Option<(Registry, llm::SpecCache)>,
    /// `list_resources` and `read_resource`, when asked for, and their specs.
    resources: Option<(Registry, llm::SpecCache)>,
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("tiers", &self.inner.tiers)
            .field("budgets", &self.inner.budgets)
            .field("parallel", &self.inner.parallel)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent over `registry`'s tools, talking to `models` (one [`Model`], or [`Tiers`]).
    pub fn builder(registry: Arc<Registry>, models: impl Into<Tiers>) -> AgentBuilder {
        AgentBuilder {
            name: None,
            registry,
            tiers: models.into(),
            system: String::new(),
            budgets: Budgets::default(),
            parallel: 4,
            confirm: None,
            resources: false,
        }
    }

    /// A run that starts with the user saying `prompt`. Await it, or configure it first.
    pub fn run(&self, prompt: impl Into<String>) -> Run {
        Run {
            agent: self.clone(),
            messages: vec![Message::user(prompt)],
            caller: Caller::new(Source::Agent),
            conversation: None,
            tier: None,
            events: None,
            cancel: None,
        }
    }

    /// The tiers.
    #[must_use]
    pub fn tiers(&self) -> &Tiers {
        &self.inner.tiers
    }

    /// The registry.
    #[must_use]
    pub fn registry(&self) -> &Arc<Registry> {
        &self.inner.registry
    }
}

/// Configures an [`Agent`].
#[must_use]
pub struct AgentBuilder {
    name: Option<String>,
    registry: Arc<Registry>,
    tiers: Tiers,
    system: String,
    budgets: Budgets,
    parallel: usize,
    confirm: Option<ConfirmFn>,
    resources: bool,
}

impl fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("tiers", &self.tiers)
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    /// The agent's name, which its runs' spans carry (`invoke_agent {name}`,
    /// `gen_ai.agent.name`). By default it has none.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The system prompt. With several tiers, a line naming the current model is added.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system = prompt.into();
        self
    }

    /// The budgets of every run.
    pub fn budgets(mut self, budgets: Budgets) -> Self {
        self.budgets = budgets;
        self
    }

    /// How many tool calls of one reply run at once (default 4; at least 1). The pipeline's
    /// own concurrency limits apply as well.
    pub fn parallel(mut self, calls: usize) -> Self {
        self.parallel = calls.max(1);
        self
    }

    /// How destructive calls are confirmed: `answer` gets the [`Confirmation`] (the question,
    /// the redacted arguments, the tool's preview) and says yes or no. Without it no one can be
    /// asked: the call is not run, and the model gets its `confirmation_required` error with a
    /// hint saying so, as from every front end that cannot ask.
    pub fn confirm<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(Confirmation) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = bool> + Send + 'static,
    {
        self.confirm = Some(Arc::new(move |request| Box::pin(answer(request))));
        self
    }

    /// Offers the model the application's resources as two read-only tools, for models
    /// whose APIs know only tools: `list_resources` (URIs and templates the run's caller may
    /// see) and `read_resource` (a URI's contents, read through the pipeline on the caller's
    /// behalf). Off by default.
    pub fn resources(mut self, offer: bool) -> Self {
        self.resources = offer;
        self
    }

    /// The agent.
    pub fn build(self) -> Result<Agent, AgentError> {
        if self.resources
            && let Some(taken) = [resources::LIST_RESOURCES, resources::READ_RESOURCE]
                .into_iter()
                .find(|n| self.registry.get(n).is_some())
        {
            return Err(AgentError(format!(
                "a tool named `{taken}` is registered, and the agent offers its own to read resources: rename the tool"
            )));
        }
        if self.tiers.models.len() > 1 && self.registry.get(SWITCH_MODEL).is_some() {
            return Err(AgentError(format!(
                "a tool named `{SWITCH_MODEL}` is registered, and the agent offers its own with several tiers: rename the tool"
            )));
        }
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| AgentError(format!("the HTTP client could not be made: {e}")))?;
        let resources = self
            .resources
            .then(|| (resources::registry(&self.registry), llm::SpecCache::new()));
        Ok(Agent {
            inner: Arc::new(Inner {
                name: self.name,
                registry: self.registry,
                switch: switch::registry(&self.tiers).map(|r| (r, llm::SpecCache::new())),
                resources,
                tiers: self.tiers,
                system: self.system,
                budgets: self.budgets,
                parallel: self.parallel,
                confirm: self.confirm,
                http,
                specs: llm::SpecCache::new(),
            }),
        })
    }
}

/// Why an [`Agent`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentError(String);

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AgentError {}

/// One run, configured before it is awaited:
///
/// ```no_run
/// # use tool_runtime::agent::{Agent, RunContext};
/// # async fn f(agent: Agent, history: Vec<tool_runtime::agent::Message>) {
/// let (events, mut rx) = tokio::sync::mpsc::unbounded_channel();
/// let run = agent
///     .run("and now revoke the old one")
///     .history(history)
///     .context(RunContext::new("telegram").chat_id("42").user("alice"))
///     .tier("fast")
///     .events(events);
/// tokio::spawn(async move { while let Some(event) = rx.recv().await { println!("{event:?}") } });
/// let output = run.await;
/// # }
/// ```
///
/// Dropping the run (or cancelling its [`cancellation`](Run::cancellation) token) cancels the
/// tool calls in flight; each still ends as a `cancelled` envelope with its audit record.
#[must_use = "a run does nothing until awaited"]
pub struct Run {
    agent: Agent,
    messages: Vec<Message>,
    caller: Caller,
    /// The chat of the run's [`RunContext`], `gen_ai.conversation.id` on the run's span.
    conversation: Option<String>,
    tier: Option<String>,
    events: Option<mpsc::UnboundedSender<Event>>,
    cancel: Option<CancellationToken>,
}

impl fmt::Debug for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run")
            .field("messages", &self.messages.len())
            .field("caller", &self.caller)
            .field("tier", &self.tier)
            .finish_non_exhaustive()
    }
}

impl Run {
    /// The conversation before the prompt (a chat's earlier messages, e.g. the previous run's
    /// [`Transcript::messages`]).
    pub fn history(mut self, history: Vec<Message>) -> Self {
        let prompt = self.messages.pop();
        self.messages = history;
        self.messages.extend(prompt);
        self
    }

    /// The principal the run acts for: policies and the audit see it on every tool call.
    pub fn principal(mut self, principal: impl Into<String>) -> Self {
        self.caller = self.caller.principal(principal);
        self
    }

    /// The principal's roles.
    pub fn roles<I, S>(mut self, roles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.caller = self.caller.roles(roles);
        self
    }

    /// The OAuth scopes of the token the run acts under: every tool call the model makes is
    /// held to them ([`Caller::scopes`]).
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.caller = self.caller.scopes(scopes);
        self
    }

    /// The conversation's context, for tools to read (`ctx.extension::<RunContext>()`). Its
    /// chat is the run's conversation in telemetry (`gen_ai.conversation.id`).
    pub fn context(mut self, context: RunContext) -> Self {
        self.conversation.clone_from(&context.chat_id);
        self.extension(context)
    }

    /// Any value for tools to read with [`CallContext::extension`](crate::CallContext::extension).
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.caller = self.caller.extension(value);
        self
    }

    /// The tier the run starts on (the agent's default tier otherwise). An unknown tier ends
    /// the run before it starts.
    pub fn tier(mut self, tier: impl Into<String>) -> Self {
        self.tier = Some(tier.into());
        self
    }

    /// Where the run's [`Event`]s go as it goes.
    pub fn events(mut self, sender: mpsc::UnboundedSender<Event>) -> Self {
        self.events = Some(sender);
        self
    }

    /// A token that cancels the run (Ctrl-C, a closed connection) and its tool calls.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
}

impl IntoFuture for Run {
    type Output = Result<RunOutput, RunError>;
    type IntoFuture = BoxFuture<'static, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(run::drive(self))
    }
}

/// A run that ended with the model's answer.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct RunOutput {
    /// The answer: the text of the model's last reply.
    pub answer: String,
    /// The tier the run ended on.
    pub tier: String,
    /// Everything said and done.
    pub transcript: Transcript,
}

/// Why a run ended without an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunErrorKind {
    /// A budget ran out.
    Budget(Budget),
    /// The run was cancelled.
    Cancelled,
    /// The model could not be asked (after retries).
    Provider(ProviderError),
    /// The run asked for a tier that does not exist.
    UnknownTier(String),
    /// The model refused to answer, or the provider stopped its reply (or blocked the prompt)
    /// for safety.
    Refused(Box<Refusal>),
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Budget {
    /// [`Budgets::max_turns`].
    Turns,
    /// [`Budgets::max_tool_calls`].
    ToolCalls,
    /// [`Budgets::max_tokens`].
    Tokens,
    /// [`Budgets::deadline`].
    Deadline,
}

impl RunErrorKind {
    /// A short name: `max_turns`, `max_tool_calls`, `max_tokens`, `deadline`, `cancelled`,
    /// `provider`, `unknown_tier`, `refused`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            RunErrorKind::Budget(Budget::Turns) => "max_turns",
            RunErrorKind::Budget(Budget::ToolCalls) => "max_tool_calls",
            RunErrorKind::Budget(Budget::Tokens) => "max_tokens",
            RunErrorKind::Budget(Budget::Deadline) => "deadline",
            RunErrorKind::Cancelled => "cancelled",
            RunErrorKind::Provider(_) => "provider",
            RunErrorKind::UnknownTier(_) => "unknown_tier",
            RunErrorKind::Refused(_) => "refused",
        }
    }
}

/// A run that ended without an answer, with everything it said and did until then.
#[derive(Debug, Clone)]
pub struct RunError {
    /// Why.
    pub kind: RunErrorKind,
    /// The transcript until then (boxed: an error is passed up by value).
    pub transcript: Box<Transcript>,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            RunErrorKind::Budget(budget) => {
                let what = match budget {
                    Budget::Turns => "model turns",
                    Budget::ToolCalls => "tool calls",
                    Budget::Tokens => "tokens",
                    Budget::Deadline => "time",
                };
                write!(f, "the run used up its {what} budget before an answer")
            }
            RunErrorKind::Cancelled => f.write_str("the run was cancelled"),
            RunErrorKind::Provider(e) => e.fmt(f),
            RunErrorKind::UnknownTier(t) => write!(f, "no model tier is called `{t}`"),
            RunErrorKind::Refused(refusal) => refusal.fmt(f),
        }
    }
}

impl std::error::Error for RunError {}
