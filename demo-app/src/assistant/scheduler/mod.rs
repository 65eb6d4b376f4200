//! Scheduled tasks: `schedule_task`, `list_tasks`, `cancel_task`, and the [`Scheduler`] that
//! `serve` runs, which makes each due task one agent run and delivers its answer to the task's
//! channel.
//!
//! Each due time runs at most once: a scheduler claims a due task by moving its next due time
//! on, in the same transaction that reads it, before the run starts. A crash during a run loses
//! that run rather than repeating it after a restart. Runs missed while no scheduler was running
//! are not replayed one by one: a task that came due meanwhile runs once, as soon as a
//! scheduler starts, and its next due time is counted from then.
//!
//! The tasks live behind [`TaskStore`]: in the demo's SQLite file ([`SqliteTasks`], `sqlite`),
//! or in PostgreSQL ([`PostgresTasks`], `postgres`), where the schedulers of several replicas
//! claim from one table by the database's clock.

mod postgres;
mod sqlite;

use std::sync::Arc;
use std::time::Duration;

use croner::Cron;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tool_runtime::agent::{Agent, RunContext};
use tool_runtime::prelude::*;
use tracing::Instrument as _;

use super::channels::{Channels, LOG};
use crate::store;

pub use postgres::PostgresTasks;
pub use sqlite::SqliteTasks;

/// How a task repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScheduleType {
    /// A cron expression, in UTC: five fields (`0 9 * * 1-5`), or six with seconds first.
    Cron,
    /// Every so long: `30s`, `15m`, `2h`, `1d`.
    Interval,
    /// Once, at an ISO-8601 time in the future: `2026-12-24T18:00:00Z`.
    Once,
}

impl ScheduleType {
    fn as_str(self) -> &'static str {
        match self {
            ScheduleType::Cron => "cron",
            ScheduleType::Interval => "interval",
            ScheduleType::Once => "once",
        }
    }

    fn from_stored(text: &str) -> Self {
        match text {
            "cron" => ScheduleType::Cron,
            "interval" => ScheduleType::Interval,
            _ => ScheduleType::Once,
        }
    }
}

/// A parsed schedule.
#[derive(Debug, Clone)]
pub enum Schedule {
    /// A cron pattern.
    Cron(Box<Cron>),
    /// Seconds between runs.
    Interval(i64),
    /// The one time, Unix seconds.
    Once(i64),
}

/// An `invalid_arguments` error for a schedule value the schema accepts but that does not
/// parse: a violation of the value's syntax, `format`, at `/schedule_value`.
fn invalid(message: String) -> ToolError {
    let details = serde_json::json!({"violations": [
        {"path": "/schedule_value", "message": &message, "keyword": "format"}
    ]});
    ToolError::new(tool_runtime::ErrorKind::INVALID_ARGUMENTS, message).with_details(details)
}

impl Schedule {
    /// Parses `value` as a schedule of `kind`, judged at `now` (Unix seconds).
    pub fn parse(kind: ScheduleType, value: &str, now: i64) -> Result<Self, ToolError> {
        let value = value.trim();
        match kind {
            ScheduleType::Cron => value
                .parse::<Cron>()
                .map(|c| Schedule::Cron(Box::new(c)))
                .map_err(|e| {
                    invalid(format!(
                        "`{value}` is not a cron expression ({e}); write five fields, minute hour day-of-month month day-of-week, such as \"0 9 * * 1-5\""
                    ))
                }),
            ScheduleType::Interval => {
                let seconds = match value.parse::<i64>() {
                    Ok(n) => n,
                    Err(_) => humantime::parse_duration(value)
                        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
                        .map_err(|e| {
                            invalid(format!(
                                "`{value}` is not an interval ({e}); write a duration such as \"15m\" or a number of seconds"
                            ))
                        })?,
                };
                if seconds <= 0 {
                    return Err(invalid(format!(
                        "the interval must be positive, at least one second; `{value}` is not"
                    )));
                }
                Ok(Schedule::Interval(seconds))
            }
            ScheduleType::Once => {
                let at = chrono::DateTime::parse_from_rfc3339(value)
                    .map(|t| t.timestamp())
                    .or_else(|_| {
                        chrono::NaiveDateTime::parse_from_str(value, "%Y-%m-%dT%H:%M:%S")
                            .map(|t| t.and_utc().timestamp())
                    })
                    .map_err(|e| {
                        invalid(format!(
                            "`{value}` is not an ISO-8601 time ({e}); write one such as \"2026-12-24T18:00:00Z\""
                        ))
                    })?;
                if at <= now {
                    return Err(invalid(format!("`{value}` is not in the future")));
                }
                Ok(Schedule::Once(at))
            }
        }
    }

    /// The first due time after `now`, or `None` when the schedule has no run left.
    #[must_use]
    pub fn next_after(&self, now: i64) -> Option<i64> {
        match self {
            Schedule::Cron(cron) => {
                let from = chrono::DateTime::from_timestamp(now, 0)?;
                cron.find_next_occurrence(&from, false)
                    .ok()
                    .map(|t| t.timestamp())
            }
            Schedule::Interval(seconds) => now.checked_add(*seconds),
            Schedule::Once(at) => (*at > now).then_some(*at),
        }
    }
}

/// A scheduled task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Task {
    /// Its id, `task_` and 16 hex digits.
    pub task_id: String,
    /// What the agent is asked at each run.
    pub prompt: String,
    /// `cron`, `interval` or `once`.
    pub schedule_type: ScheduleType,
    /// The cron expression, interval or time.
    pub schedule_value: String,
    /// Where the answers go (the caller's channel, else `log`).
    pub channel: String,
    /// The chat within the channel.
    pub chat_id: Option<String>,
    /// The model tier the runs use.
    pub tier: Option<String>,
    /// `active`, `done` (a `once` task that ran) or `cancelled`.
    pub status: String,
    /// The next due time (RFC 3339, UTC).
    pub next_run: Option<String>,
    /// The last run's start (RFC 3339, UTC).
    pub last_run: Option<String>,
    /// How the last run ended.
    pub last_outcome: Option<String>,
    /// How many runs started.
    pub runs: u32,
}

/// A task claimed to run now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The task as it was claimed.
    pub task: Task,
    /// The due time claimed (Unix seconds).
    pub due: i64,
}

/// Where tasks are kept. Each due time must be claimed by exactly one scheduler, however many
/// run against the same storage: [`claim_due`](Self::claim_due) moves a task's next due time
/// on in the same atomic step that finds it due (in SQL, `UPDATE ... WHERE next_run = <the due
/// time read>`), and records the run under the key (task, due time). The store reads the time
/// itself, from the one clock its schedulers share (the database's, when several processes
/// claim from one).
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task.
    fn add(&self, task: Task, next_run: i64) -> BoxFuture<'_, Result<Task, ToolError>>;
    /// Every task, newest first.
    fn list(&self) -> BoxFuture<'_, Result<Vec<Task>, ToolError>>;
    /// Cancels an active task; `None` when there is no such task.
    fn cancel(&self, task_id: String) -> BoxFuture<'_, Result<Option<Task>, ToolError>>;
    /// Claims up to `limit` tasks due now, by the store's clock.
    fn claim_due(&self, limit: usize) -> BoxFuture<'_, Result<Vec<Claim>, ToolError>>;
    /// Records how the run of `task_id` for `due` ended.
    fn finish(
        &self,
        task_id: String,
        due: i64,
        outcome: String,
    ) -> BoxFuture<'_, Result<(), ToolError>>;
}

/// The due time after a run of `task` for `due` claimed at `now`; `None` when no run is left.
/// Runs missed meanwhile are not replayed: an interval counts on from now, a cron pattern finds
/// its next time after now.
fn next_due(task: &Task, due: i64, now: i64) -> Option<i64> {
    let schedule = Schedule::parse(task.schedule_type, &task.schedule_value, i64::MIN).ok();
    match (&schedule, task.schedule_type) {
        (_, ScheduleType::Once) | (None, _) => None,
        (Some(Schedule::Interval(every)), _) => {
            // The next after this due time, or after now when runs were missed.
            Some(if due + every > now {
                due + every
            } else {
                now + every
            })
        }
        (Some(s), _) => s.next_after(now),
    }
}

/// The tasks, as the tools and the scheduler share them.
#[derive(Clone)]
pub struct Tasks(pub Arc<dyn TaskStore>);

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tasks")
    }
}

/// The columns of a task, in [`Task`]'s order, as both engines name them.
const COLUMNS: &str = "task_id, prompt, schedule_type, schedule_value, channel, chat_id, tier, \
                       status, next_run, last_run, last_outcome, runs";

/// Schedule a prompt for the assistant to run on a cron, interval or one-time schedule.
///
/// At each due time the assistant runs `prompt` and delivers its answer to `channel`, else to
/// the channel of the conversation that scheduled it, else to `log`.
///
/// `schedule_type` is `cron` (five fields, UTC: "0 9 * * 1-5"), `interval` ("15m", "1h",
/// or seconds) or `once` (a future ISO-8601 time: "2026-12-24T18:00:00Z").
#[tool(
    annotations(destructive = false, idempotent = false),
    tags("scheduler")
)]
pub async fn schedule_task(
    tasks: State<Tasks>,
    ctx: &CallContext,
    /// What the assistant should do at each run
    #[arg(length(min = 1, max = 4000))]
    prompt: String,
    /// cron, interval or once
    schedule_type: ScheduleType,
    /// The cron expression, the interval, or the time
    #[arg(length(min = 1, max = 200))]
    schedule_value: String,
    /// The model tier the runs use (default: the agent's default)
    #[arg(length(min = 1, max = 64))]
    tier: Option<String>,
    /// The channel the answers go to (default: the conversation's, else log)
    #[arg(pattern = "^[a-z0-9][a-z0-9_-]{0,31}$")]
    channel: Option<String>,
) -> Result<Task, ToolError> {
    let now = store::now();
    let schedule = Schedule::parse(schedule_type, &schedule_value, now)?;
    let Some(first) = schedule.next_after(now) else {
        return Err(invalid(format!("`{schedule_value}` never comes due")));
    };
    let conversation = ctx.extension::<RunContext>();
    let task = Task {
        task_id: store::new_id("task").map_err(ToolError::from)?,
        prompt,
        schedule_type,
        schedule_value: schedule_value.trim().to_owned(),
        channel: channel
            .or_else(|| conversation.as_ref().and_then(|c| c.channel.clone()))
            .filter(|c| !matches!(c.as_str(), "cli" | "http"))
            .unwrap_or_else(|| LOG.to_owned()),
        chat_id: conversation.as_ref().and_then(|c| c.chat_id.clone()),
        tier,
        status: "active".to_owned(),
        next_run: None,
        last_run: None,
        last_outcome: None,
        runs: 0,
    };
    tasks.0.add(task, first).await
}

/// The scheduled tasks.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskList {
    /// Every task, newest first, cancelled and finished ones included.
    pub tasks: Vec<Task>,
}

/// List the scheduled tasks with their next and last runs.
#[tool(annotations(read_only, idempotent), tags("scheduler"))]
pub async fn list_tasks(tasks: State<Tasks>) -> Result<TaskList, ToolError> {
    Ok(TaskList {
        tasks: tasks.0.list().await?,
    })
}

/// Cancel a scheduled task so it never runs again.
///
/// Cancelling a cancelled task changes nothing. Error: `not_found`.
#[tool(annotations(destructive, idempotent), tags("scheduler"))]
pub async fn cancel_task(
    tasks: State<Tasks>,
    /// The task's id, as list_tasks shows it
    #[arg(positional, pattern = "^task_[0-9a-f]{16}$")]
    task_id: String,
) -> Result<Task, ToolError> {
    tasks
        .0
        .cancel(task_id.clone())
        .await?
        .ok_or_else(|| ToolError::not_found(format!("no task `{task_id}`")))
}

/// Runs due tasks: every `tick`, claims what is due and runs each as an agent run, its answer
/// delivered to the task's channel.
#[derive(Debug, Clone)]
pub struct Scheduler {
    tasks: Tasks,
    agent: Agent,
    channels: Channels,
    tick: Duration,
}

impl Scheduler {
    /// A scheduler over `tasks`, running `agent`, delivering through `channels`.
    #[must_use]
    pub fn new(tasks: Tasks, agent: Agent, channels: Channels, tick: Duration) -> Self {
        Self {
            tasks,
            agent,
            channels,
            tick,
        }
    }

    /// Runs until `shutdown` is cancelled; runs in progress then finish on their own.
    pub async fn run(self, shutdown: CancellationToken) {
        tracing::info!(target: "demo_app::scheduler", tick = ?self.tick, "scheduler started");
        loop {
            match self.tasks.0.claim_due(16).await {
                Ok(claims) => {
                    for claim in claims {
                        tokio::spawn(self.clone().run_one(claim));
                    }
                }
                Err(e) => {
                    tracing::error!(target: "demo_app::scheduler", error = %e.message(), "claiming due tasks failed");
                }
            }
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(self.tick) => {}
            }
        }
    }

    /// One run of a claimed task, to its end: the agent's answer, delivered, and the outcome
    /// recorded. The run is a trace of its own, a `scheduled_task` root span (whatever span the
    /// caller is in: the scheduler's loop is no request's) with the agent's run inside it.
    pub async fn run_one(self, claim: Claim) {
        let span = tracing::info_span!(
            target: "demo_app::scheduler",
            parent: None,
            "scheduled_task",
            task.id = %claim.task.task_id,
        );
        self.run_claimed(claim).instrument(span).await;
    }

    async fn run_claimed(self, claim: Claim) {
        let Claim { task, due } = claim;
        let mut context = RunContext::new(task.channel.clone());
        if let Some(chat) = &task.chat_id {
            context = context.chat_id(chat.clone());
        }
        let mut run = self.agent.run(task.prompt.clone()).context(context);
        if let Some(tier) = &task.tier {
            run = run.tier(tier.clone());
        }
        let outcome = match run.await {
            Ok(output) => match self
                .channels
                .deliver(&task.channel, task.chat_id.as_deref(), &output.answer)
                .await
            {
                Ok(()) => "delivered".to_owned(),
                Err(e) => format!("answered, not delivered: {}", e.message()),
            },
            Err(e) => format!("the run failed: {e}"),
        };
        tracing::info!(target: "demo_app::scheduler", task = %task.task_id, due, %outcome, "task ran");
        if let Err(e) = self.tasks.0.finish(task.task_id, due, outcome).await {
            tracing::error!(target: "demo_app::scheduler", error = %e.message(), "recording a run failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use tool_runtime::{Caller, Source};

    use super::*;

    /// A task scheduled from a conversation delivers to that conversation's channel and chat.
    #[tokio::test]
    async fn the_callers_conversation_is_the_tasks_channel() {
        let store = crate::Stores::in_memory().unwrap();
        let config = crate::config::Config::parse(crate::config::DEFAULT).unwrap();
        let builder =
            crate::assistant::install(crate::app_registry_builder(), &config, &store, |_| None);
        let registry = builder.state(store.devices).build().unwrap();
        let args = serde_json::json!({
            "prompt": "Water the plants", "schedule_type": "cron", "schedule_value": "0 7 * * *",
        });
        let caller =
            Caller::new(Source::Agent).extension(RunContext::new("telegram").chat_id("chat-42"));
        let task = registry.call("schedule_task", args.clone(), caller).await;
        let task = task.result().unwrap();
        assert_eq!(
            (task["channel"].as_str(), task["chat_id"].as_str()),
            (Some("telegram"), Some("chat-42"))
        );
        assert!(
            task["next_run"].as_str().unwrap().ends_with("T07:00:00Z"),
            "{task}"
        );
        let plain = registry
            .call("schedule_task", args, Caller::new(Source::Cli))
            .await;
        assert_eq!(plain.result().unwrap()["channel"], LOG);
    }
}
