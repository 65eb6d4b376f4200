//! The diagnostic tools of the conformance suite's `tasks-*` scenarios (the tasks extension of
//! protocol 2026-07-28): one that never runs as a task, one that may and takes a while, one
//! that must and ends with its own error, one whose run fails, two that ask their user
//! mid-task, and one that asks before its task exists.

use std::time::Duration;

use tool_runtime::tool::peer::Elicited;
use tool_runtime::{CallContext, Content, ToolError, tool};

/// Greets `name`, at once: never a task.
#[tool(annotations(read_only))]
async fn greet(name: String) -> Content {
    Content::text(format!("Hello, {name}!"))
}

/// Computes for `seconds` (at most 120): a task whenever the client can follow one.
#[tool(annotations(read_only), task = "optional", timeout = "150s")]
async fn slow_compute(#[arg(range(max = 120))] seconds: u64, label: Option<String>) -> String {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    format!(
        "computed {} in {seconds} s",
        label.as_deref().unwrap_or("something")
    )
}

/// Works for a second, then fails with its own error: only ever a task.
#[tool(annotations(read_only), task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::failed("the job failed, as it always does"))
}

/// Ends without an answer of its own: its task fails.
#[tool(annotations(read_only), task = "optional")]
async fn protocol_error_job() -> Result<String, ToolError> {
    Err(ToolError::internal("the job could not run"))
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    /// Whether to go on.
    confirm: bool,
}

/// Asks its user whether to delete `filename`, mid-task.
#[tool(annotations(read_only), task = "optional")]
async fn confirm_delete(filename: String, ctx: &CallContext) -> Result<String, ToolError> {
    let answer = ctx.elicit::<Confirm>(format!("Delete {filename}?")).await?;
    Ok(match answer {
        Elicited::Accepted(Confirm { confirm: true }) => format!("deleted {filename}"),
        _ => format!("kept {filename}"),
    })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Partial {
    /// A name.
    name: String,
    /// Whether to go on.
    confirm: bool,
}

/// Asks its user two questions at once, mid-task, and ends once both are answered.
#[tool(annotations(read_only), task = "optional")]
async fn multi_input(ctx: &CallContext) -> Result<String, ToolError> {
    let (first, second) = tokio::join!(
        ctx.question("first").elicit::<Partial>("A first name?"),
        ctx.question("second").elicit::<Partial>("A second name?"),
    );
    let name = |answer: Elicited<Partial>| match answer {
        Elicited::Accepted(p) if p.confirm => p.name,
        _ => "none".to_owned(),
    };
    Ok(format!("{} and {}", name(first?), name(second?)))
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct UserName {
    /// The user's name.
    name: String,
}

/// Asks its user's name in the request, then goes on as a task and greets them: the input
/// gathered before the task exists, the work done inside it.
#[tool(annotations(read_only), task = "required", detach = "explicit")]
async fn test_tool_with_task(ctx: &CallContext) -> Result<String, ToolError> {
    let name = match ctx
        .question("user_name")
        .elicit::<UserName>("Your name?")
        .await?
    {
        Elicited::Accepted(UserName { name }) => name,
        _ => "nobody".to_owned(),
    };
    ctx.detach().await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {name}, from a task"))
}
