//! The diagnostic tools of the conformance suite's `server-stateless` scenario (protocol
//! 2026-07-28): one that needs a capability the request did not declare, one that asks the
//! user mid-call, one that logs, and the hooks that change the lists of tools and prompts while
//! `subscriptions/listen` streams are open.

use std::sync::{Arc, OnceLock, Weak};

use tool_runtime::tool::peer::{Elicited, LogLevel, Sample};
use tool_runtime::{CallContext, Registry, ToolError, prompt, tool};

/// The registry `serve` serves, which the hooks change.
pub static SERVED: OnceLock<Weak<Registry>> = OnceLock::new();

fn served() -> Result<Arc<Registry>, ToolError> {
    SERVED
        .get()
        .and_then(Weak::upgrade)
        .ok_or_else(|| ToolError::internal("no registry is being served"))
}

/// Asks the client's model, which it cannot do without: a request that does not declare
/// sampling is refused.
#[tool(annotations(read_only))]
async fn test_missing_capability(ctx: &CallContext) -> Result<String, ToolError> {
    let answer = ctx.sample(Sample::new("Say hello").max_tokens(20)).await?;
    Ok(answer.text)
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Answer {
    answer: String,
}

/// Asks the user mid-call: on 2026-07-28 the question goes back as the call's result, never as
/// a request on the call's stream.
#[tool(annotations(read_only))]
async fn test_streaming_elicitation(ctx: &CallContext) -> Result<String, ToolError> {
    Ok(match ctx.elicit::<Answer>("Anything to add?").await? {
        Elicited::Accepted(a) => a.answer,
        Elicited::Declined | Elicited::Cancelled => "nothing".to_owned(),
    })
}

/// Logs while it runs: heard only by a request whose `_meta` sets a log level.
#[tool(annotations(read_only))]
async fn test_logging_tool(ctx: &CallContext) -> &'static str {
    ctx.log(LogLevel::Info, "starting");
    ctx.log(LogLevel::Warning, "halfway");
    "logged"
}

/// A tool that comes and goes, written by hand: a `#[tool]` is there from the start, and a tool
/// the registry was built with stays.
struct Dynamic;

impl tool_runtime::Tool for Dynamic {
    fn meta(&self) -> tool_runtime::tool::ToolMeta {
        let mut meta =
            tool_runtime::tool::ToolMeta::new("test_dynamic_tool", "A tool that comes and goes.");
        meta.annotations.read_only = Some(true);
        meta
    }

    fn input_schema(&self) -> serde_json::Value {
        serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
    }

    fn output_schema(&self) -> serde_json::Value {
        tool_runtime::schema::output_schema_for::<String>()
    }

    fn call(
        &self,
        _args: serde_json::Value,
        _ctx: CallContext,
    ) -> futures_util::future::BoxFuture<'_, Result<serde_json::Value, ToolError>> {
        Box::pin(async { Ok(serde_json::json!("here")) })
    }
}

/// Adds `test_dynamic_tool`, or removes it again: the tool list changes.
#[tool(annotations(read_only))]
async fn test_trigger_tool_change() -> Result<String, ToolError> {
    let registry = served()?;
    if registry.remove_tool("test_dynamic_tool") {
        return Ok("removed test_dynamic_tool".to_owned());
    }
    registry.add_tool(Dynamic).map_err(ToolError::internal)?;
    Ok("added test_dynamic_tool".to_owned())
}

/// A prompt that comes and goes.
#[prompt]
fn test_dynamic_prompt() -> &'static str {
    "here"
}

/// Removes `test_dynamic_prompt`, or adds it back: the prompt list changes.
#[tool(annotations(read_only))]
async fn test_trigger_prompt_change() -> Result<String, ToolError> {
    let registry = served()?;
    if registry.remove_prompt("test_dynamic_prompt") {
        return Ok("removed test_dynamic_prompt".to_owned());
    }
    registry
        .add_prompt(test_dynamic_prompt::descriptor())
        .map_err(ToolError::internal)?;
    Ok("added test_dynamic_prompt".to_owned())
}
