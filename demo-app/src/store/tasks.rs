//! Scheduled tasks: what the assistant's scheduler asks of a store ([`TaskStore`]), the tasks
//! it answers with, and the schedules they repeat on.

use std::sync::Arc;

use croner::Cron;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_runtime::ToolError;

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
    pub(super) fn as_str(self) -> &'static str {
        match self {
            ScheduleType::Cron => "cron",
            ScheduleType::Interval => "interval",
            ScheduleType::Once => "once",
        }
    }

    pub(super) fn from_stored(text: &str) -> Self {
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
pub(crate) fn invalid_schedule(message: String) -> ToolError {
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
                    invalid_schedule(format!(
                        "`{value}` is not a cron expression ({e}); write five fields, minute hour day-of-month month day-of-week, such as \"0 9 * * 1-5\""
                    ))
                }),
            ScheduleType::Interval => {
                let seconds = match value.parse::<i64>() {
                    Ok(n) => n,
                    Err(_) => humantime::parse_duration(value)
                        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
                        .map_err(|e| {
                            invalid_schedule(format!(
                                "`{value}` is not an interval ({e}); write a duration such as \"15m\" or a number of seconds"
                            ))
                        })?,
                };
                if seconds <= 0 {
                    return Err(invalid_schedule(format!(
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
                        invalid_schedule(format!(
                            "`{value}` is not an ISO-8601 time ({e}); write one such as \"2026-12-24T18:00:00Z\""
                        ))
                    })?;
                if at <= now {
                    return Err(invalid_schedule(format!("`{value}` is not in the future")));
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
pub(super) fn next_due(task: &Task, due: i64, now: i64) -> Option<i64> {
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
pub(super) const COLUMNS: &str = "task_id, prompt, schedule_type, schedule_value, channel, chat_id, tier, \
                       status, next_run, last_run, last_outcome, runs";
