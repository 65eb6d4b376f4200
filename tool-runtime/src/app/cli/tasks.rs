//! Calls as tasks on the command line: `TOOL --detach` leaves the call for a running `serve`
//! that shares the task store (PostgreSQL or Redis) and prints the task's id; `tasks get ID`,
//! `tasks wait ID` and `tasks cancel ID` follow it from any machine on that store.

use std::collections::BTreeSet;
use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use clap::{Arg, ArgMatches, Command};
use serde_json::{Map, Value};

use super::render::{self, Palette, color_for, fail};
use crate::registry::Registry;
use crate::task::{Task, TaskStatus};
use crate::tool::caller::Caller;
use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::peer::Elicited;

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
                .long_about(
                    "Wait for the task to end, then print its result. On a terminal, the \
                     questions the task asks its user are asked here, field by field.",
                )
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
        "wait" if std::io::stdin().is_terminal() => {
            let ask = |task: Task| {
                tokio::task::spawn_blocking(move || {
                    answers(&task, &mut std::io::stdin().lock(), &mut std::io::stderr())
                })
            };
            wait_answering(registry, id, principal, |task| async move {
                ask(task).await.unwrap_or_default()
            })
            .await
        }
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

/// The task `id` once it has ended, its questions answered by `ask` as they come (answers by
/// key, or `None` for questions it cannot answer, where the waiting ends).
async fn wait_answering<F, A>(
    registry: &Registry,
    id: &str,
    principal: Option<&str>,
    ask: F,
) -> Result<Option<Task>, ToolError>
where
    F: Fn(Task) -> A,
    A: Future<Output = Option<Map<String, Value>>>,
{
    let tasks = registry.tasks();
    let mut answered = BTreeSet::new();
    loop {
        let Some(task) = wait(registry, id, principal).await? else {
            return Ok(None);
        };
        if task.status != TaskStatus::InputRequired {
            return Ok(Some(task));
        }
        let mut asking = task.clone();
        asking.questions.retain(|key, _| !answered.contains(key));
        if asking.questions.is_empty() {
            // Answered, and not yet taken by the call.
            tasks
                .changed(id, Duration::from_millis(task.poll_ms.max(50)))
                .await;
            continue;
        }
        let Some(given) = ask(asking).await else {
            return Ok(Some(task));
        };
        answered.extend(given.keys().cloned());
        tasks.answer(id, principal, &given).await?;
    }
}

/// The answers to `task`'s questions, asked on `out` and read from `input`; `None` when one is
/// not a form (a sampling request, the roots), which a terminal does not answer.
fn answers(
    task: &Task,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Option<Map<String, Value>> {
    let mut answers = Map::new();
    for (key, question) in &task.questions {
        if question["method"] != "elicitation/create" {
            return None;
        }
        let params = &question["params"];
        let message = params["message"].as_str().unwrap_or("The task asks:");
        let answer = super::form::ask_form(message, &params["requestedSchema"], input, out);
        answers.insert(key.clone(), elicited(answer));
    }
    Some(answers)
}

/// An elicitation's answer as the caller gives it: `{"action": "accept", "content": {...}}`.
fn elicited(answer: Elicited<Map<String, Value>>) -> Value {
    match answer {
        Elicited::Accepted(content) => serde_json::json!({"action": "accept", "content": content}),
        Elicited::Declined => serde_json::json!({"action": "decline"}),
        Elicited::Cancelled => serde_json::json!({"action": "cancel"}),
    }
}

/// An ended task's result, as a call's is printed; a task waiting for answers says which.
fn report(task: &Task, out: &mut dyn Write) -> u8 {
    if task.status == TaskStatus::InputRequired {
        let keys: Vec<&str> = task.questions.keys().map(String::as_str).collect();
        return fail(
            format_args!(
                "the task waits for answers ({}): give them over HTTP (`POST /tasks/{}/input`) or MCP (`tasks/update`), or a form's on a terminal (`tasks wait`)",
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures_util::future::BoxFuture;
    use serde_json::json;

    use super::*;
    use crate::CallContext;
    use crate::Tool;
    use crate::tool::caller::Source;
    use crate::tool::{TaskMode, ToolMeta};

    /// Asks for a colour, then for a size, as a task.
    struct Paint;

    impl Tool for Paint {
        fn meta(&self) -> ToolMeta {
            let mut meta = ToolMeta::new("paint", "Paint, asking how.");
            meta.task = TaskMode::Required;
            meta
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object", "additionalProperties": false})
        }
        fn output_schema(&self) -> Value {
            json!({"type": "string"})
        }
        fn call(&self, _: Value, ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
            Box::pin(async move {
                let field = |name: &str| json!({"type": "object", "properties": {name: {"type": "string"}}, "required": [name]});
                let mut said = Vec::new();
                for name in ["colour", "size"] {
                    let asked = ctx
                        .question(name)
                        .elicit_with(format!("Choose a {name}?"), field(name));
                    match asked.await? {
                        Elicited::Accepted(content) => {
                            said.push(content[name].as_str().unwrap_or_default().to_owned());
                        }
                        _ => said.push(String::new()),
                    }
                }
                Ok(json!(said.join(" ")))
            })
        }
    }

    #[tokio::test]
    async fn a_terminal_answers_each_question_of_a_task_as_it_comes() {
        let registry = Arc::new(
            Registry::builder()
                .without_inventory()
                .tool(Paint)
                .build()
                .unwrap(),
        );
        let task = registry
            .start_task("paint", json!({}), Caller::new(Source::Cli))
            .await
            .unwrap();
        let typed = std::sync::Mutex::new(std::io::Cursor::new(b"y\number\ny\nlarge\n".to_vec()));
        let shown = std::sync::Mutex::new(Vec::new());
        let ended = wait_answering(&registry, &task.id, None, |asking| {
            let answered = answers(
                &asking,
                &mut *typed.lock().unwrap(),
                &mut *shown.lock().unwrap(),
            );
            std::future::ready(answered)
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!(ended.status, TaskStatus::Completed, "{ended:?}");
        assert_eq!(ended.result(), Some(&json!("umber large")));
        let shown = String::from_utf8(shown.into_inner().unwrap()).unwrap();
        assert!(
            shown.contains("Choose a colour?") && shown.contains("Choose a size?"),
            "{shown}"
        );
    }

    #[test]
    fn a_question_that_is_no_form_is_left_to_other_front_ends() {
        let mut task: Task = serde_json::from_value(json!({
            "id": "task-1", "tool": "t", "principal": null, "status": "input_required",
            "message": null, "created_ms": 0, "updated_ms": 0, "ttl_ms": 1, "poll_ms": 1,
            "lease_until_ms": 0, "outcome": null, "questions": {}, "answers": {},
            "cancel_requested": false,
        }))
        .unwrap();
        task.questions.insert(
            "model".to_owned(),
            json!({"method": "sampling/createMessage", "params": {}}),
        );
        let asked = answers(
            &task,
            &mut std::io::Cursor::new(Vec::new()),
            &mut Vec::new(),
        );
        assert!(asked.is_none());
    }
}
