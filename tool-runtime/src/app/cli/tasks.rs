//! Calls as tasks on the command line: `TOOL --detach` leaves the call for a running `serve`
//! that shares the task store (PostgreSQL or Redis) and prints the task's id; `tasks get ID`,
//! `tasks wait ID` and `tasks cancel ID` follow it from any machine on that store.

use std::io::Write;
use std::time::Duration;

use clap::{Arg, ArgMatches, Command};

use super::render::{self, Palette, color_for, fail};
use crate::registry::Registry;
use crate::task::{Task, TaskStatus};
use crate::tool::caller::Caller;
use crate::tool::error::{ErrorKind, ToolError};

/// `tasks get|wait|cancel ID`.
pub(crate) fn command() -> Command {
    let id = || Arg::new("id").required(true).help("The task's id");
    Command::new("tasks")
        .about("Follow a call run as a task: its status, its end, or cancel it")
        .display_order(super::command::BUILTIN_ORDER)
        .subcommand_required(true)
        .subcommand(
            Command::new("get")
                .about("Print the task as it is")
                .arg(id()),
        )
        .subcommand(
            Command::new("wait")
                .about("Wait for the task to end, then print its result")
                .arg(id()),
        )
        .subcommand(Command::new("cancel").about("Cancel the task").arg(id()))
}

/// Leaves the call of `tool` with `arguments` by `caller` as a task, and prints its id.
pub(crate) async fn detached(
    registry: &Registry,
    tool: &str,
    arguments: serde_json::Value,
    caller: &Caller,
    json_out: bool,
    out: &mut dyn Write,
) -> u8 {
    match registry.queue_task(tool, arguments, caller).await {
        Ok(task) => {
            if json_out {
                let _ = writeln!(out, "{}", task.to_json());
            } else {
                let _ = writeln!(out, "{}", task.id);
            }
            0
        }
        Err(e) => error(&e),
    }
}

/// `tasks ...`: the command line's own tasks (those started without a principal).
pub(crate) async fn run(
    registry: &Registry,
    m: &ArgMatches,
    json_out: bool,
    out: &mut dyn Write,
) -> u8 {
    let (action, m) = m.subcommand().expect("a subcommand is required");
    let id = m.get_one::<String>("id").expect("required");
    let caller = super::caller();
    let principal = caller.given_principal();
    let tasks = registry.tasks();
    let found = match action {
        "cancel" => tasks.cancel(id, principal).await,
        "wait" => wait(registry, id, principal).await,
        _ => tasks.get(id, principal).await,
    };
    let task = match found {
        Ok(Some(task)) => task,
        Ok(None) => return error(&ToolError::not_found(format!("no task `{id}`"))),
        Err(e) => return error(&e),
    };
    if json_out {
        let _ = writeln!(out, "{}", task.to_json());
        return exit_code(&task);
    }
    if action == "wait" {
        return report(&task, out);
    }
    let _ = writeln!(out, "{}: {} ({})", task.id, task.status.as_str(), task.tool);
    if let Some(message) = &task.message {
        let _ = writeln!(out, "{message}");
    }
    0
}

/// The task `id` once it has ended, or waits for answers.
async fn wait(
    registry: &Registry,
    id: &str,
    principal: Option<&str>,
) -> Result<Option<Task>, ToolError> {
    let tasks = registry.tasks();
    loop {
        let task = tasks.get(id, principal).await?;
        match &task {
            Some(t) if !t.status.is_terminal() && t.status != TaskStatus::InputRequired => {
                tasks
                    .changed(id, Duration::from_millis(t.poll_ms.max(50)))
                    .await;
            }
            _ => return Ok(task),
        }
    }
}

/// An ended task's result, as a call's is printed; a task waiting for answers says which.
fn report(task: &Task, out: &mut dyn Write) -> u8 {
    if task.status == TaskStatus::InputRequired {
        let keys: Vec<&str> = task.questions.keys().map(String::as_str).collect();
        return fail(
            format_args!(
                "the task waits for answers ({}): give them over HTTP (`POST /tasks/{}/input`) or MCP (`tasks/update`)",
                keys.join(", "),
                task.id
            ),
            1,
        );
    }
    if let Some(result) = task.result() {
        let text = render::render(result, Palette::new(color_for(&std::io::stdout())));
        let _ = write!(out, "{text}");
        return 0;
    }
    match task.error() {
        Some(e) => error(&e),
        None => fail(format_args!("the task was {}", task.status.as_str()), 1),
    }
}

/// The exit code of a task printed as JSON: 0 once it completed with a result.
fn exit_code(task: &Task) -> u8 {
    match (task.status, task.error()) {
        (_, Some(e)) => e.kind().exit_code(),
        (TaskStatus::Cancelled, None) => ErrorKind::CANCELLED.exit_code(),
        _ => 0,
    }
}

fn error(e: &ToolError) -> u8 {
    fail(e.message(), e.kind().exit_code())
}
