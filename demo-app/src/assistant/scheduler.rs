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
//! The tasks live in the demo's store, behind [`TaskStore`](store::TaskStore): in its SQLite
//! file, or in PostgreSQL, where the schedulers of several replicas claim from one table by the
//! database's clock.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use tokio_util::sync::CancellationToken;
use tool_runtime::agent::{Agent, RunContext};
use tool_runtime::prelude::*;
use tracing::Instrument as _;

use super::channels::{Channels, LOG};
use crate::store::{self, Claim, Schedule, ScheduleType, Task, Tasks, invalid_schedule};

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
        return Err(invalid_schedule(format!(
            "`{schedule_value}` never comes due"
        )));
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

/// The longest pause between attempts to record a run's outcome: about six seconds of
/// attempts in all.
const FINISH_RETRY_LIMIT: Duration = Duration::from_secs(6);

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

    /// Runs until `shutdown` is cancelled, then claims nothing more (another replica claims
    /// what falls due from then on) and returns once the runs it holds have finished: `serve`
    /// cancels the token as its drain begins and waits for this task for the grace period
    /// after it stops serving, so a run in progress has both to finish in.
    pub async fn run(self, shutdown: CancellationToken) {
        tracing::info!(target: "demo_app::scheduler", tick = ?self.tick, "scheduler started");
        let mut runs = tokio::task::JoinSet::new();
        loop {
            match self.tasks.0.claim_due(16).await {
                Ok(claims) => {
                    for claim in claims {
                        runs.spawn(self.clone().run_one(claim));
                    }
                }
                Err(e) => {
                    tracing::error!(target: "demo_app::scheduler", error = %e.message(), "claiming due tasks failed");
                }
            }
            while runs.try_join_next().is_some() {}
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = tokio::time::sleep(self.tick) => {}
            }
        }
        if !runs.is_empty() {
            tracing::info!(target: "demo_app::scheduler", runs = runs.len(), "shutting down: claiming no more tasks, finishing the runs in progress");
        }
        while runs.join_next().await.is_some() {}
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
        // The run happened: its outcome is recorded through a store that is briefly out of
        // reach or out of connections (every replica's runs finishing at once), not dropped.
        let mut wait = Duration::from_millis(100);
        loop {
            match self
                .tasks
                .0
                .finish(task.task_id.clone(), due, outcome.clone())
                .await
            {
                Ok(()) => return,
                Err(e) if e.is_retryable() && wait <= FINISH_RETRY_LIMIT => {
                    tracing::warn!(target: "demo_app::scheduler", task = %task.task_id, error = %e.message(), "recording a run failed; trying again");
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                }
                Err(e) => {
                    tracing::error!(target: "demo_app::scheduler", task = %task.task_id, error = %e.message(), "recording a run failed");
                    return;
                }
            }
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
