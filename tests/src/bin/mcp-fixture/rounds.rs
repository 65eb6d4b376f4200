//! The tools and the prompt of the conformance suite's input-required scenarios (protocol
//! 2026-07-28): each asks its client through the call context, under the names the scenarios
//! expect, and on that protocol the questions go back as an input-required result and the
//! answers come with the request made again.

use futures_util::join;
use tool_runtime::tool::peer::{Elicited, Root, Sample};
use tool_runtime::{CallContext, ToolError, prompt, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Colour {
    color: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirmed {
    ok: bool,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Context {
    context: String,
}

/// The name given, or a placeholder for a user who did not give one.
fn name_of(answer: Elicited<Name>) -> String {
    match answer {
        Elicited::Accepted(n) => n.name,
        Elicited::Declined | Elicited::Cancelled => "stranger".to_owned(),
    }
}

fn listed(roots: &[Root]) -> String {
    roots
        .iter()
        .map(|r| r.uri.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Asks the user's name, and greets them.
#[tool(annotations(read_only))]
async fn test_input_required_result_elicitation(ctx: &CallContext) -> Result<String, ToolError> {
    let name = ctx
        .question("user_name")
        .elicit::<Name>("What is your name?")
        .await?;
    Ok(format!("Hello, {}!", name_of(name)))
}

/// Asks the client's model a question, and returns its answer.
#[tool(annotations(read_only))]
async fn test_input_required_result_sampling(ctx: &CallContext) -> Result<String, ToolError> {
    let answer = ctx
        .question("capital_question")
        .sample(Sample::new("What is the capital of France?").max_tokens(100))
        .await?;
    Ok(format!("The model said: {}", answer.text))
}

/// Lists the client's roots.
#[tool(annotations(read_only))]
async fn test_input_required_result_list_roots(ctx: &CallContext) -> Result<String, ToolError> {
    let roots = ctx.question("client_roots").roots().await?;
    Ok(format!("Roots: {}", listed(&roots)))
}

/// Asks for a confirmation, and says the request state came back whole.
#[tool(annotations(read_only))]
async fn test_input_required_result_request_state(ctx: &CallContext) -> Result<String, ToolError> {
    let answer = ctx
        .question("confirm")
        .elicit::<Confirmed>("Please confirm")
        .await?;
    let ok = matches!(answer, Elicited::Accepted(Confirmed { ok: true }));
    Ok(format!("state-ok: confirmed {ok}"))
}

/// Asks three things at once: the user's name, a greeting from the model, the roots.
#[tool(annotations(read_only))]
async fn test_input_required_result_multiple_inputs(
    ctx: &CallContext,
) -> Result<String, ToolError> {
    let (name, greeting, roots) = join!(
        ctx.question("user_name")
            .elicit::<Name>("What is your name?"),
        ctx.question("greeting")
            .sample(Sample::new("Generate a greeting").max_tokens(50)),
        ctx.question("client_roots").roots(),
    );
    let (name, greeting, roots) = (name?, greeting?, roots?);
    Ok(format!(
        "{} {}, working in {}",
        greeting.text,
        name_of(name),
        listed(&roots)
    ))
}

/// Asks in two rounds: the name, then the favourite colour.
#[tool(annotations(read_only))]
async fn test_input_required_result_multi_round(ctx: &CallContext) -> Result<String, ToolError> {
    let name = ctx
        .question("step1")
        .elicit::<Name>("Step 1: What is your name?")
        .await?;
    let colour = ctx
        .question("step2")
        .elicit::<Colour>("Step 2: What is your favorite color?")
        .await?;
    let colour = match colour {
        Elicited::Accepted(c) => c.color,
        Elicited::Declined | Elicited::Cancelled => "none".to_owned(),
    };
    Ok(format!("{} likes {colour}", name_of(name)))
}

/// Asks the user's name; its request state is checked when it comes back.
#[tool(annotations(read_only))]
async fn test_input_required_result_tampered_state(ctx: &CallContext) -> Result<String, ToolError> {
    let name = ctx
        .question("user_name")
        .elicit::<Name>("What is your name?")
        .await?;
    Ok(format!("Hello, {}!", name_of(name)))
}

/// Asks the user and the model at once: only what the client declared it can answer goes to
/// it, and the rest is done without.
#[tool(annotations(read_only))]
async fn test_input_required_result_capabilities(ctx: &CallContext) -> Result<String, ToolError> {
    let (name, answer) = join!(
        ctx.question("user_name")
            .elicit::<Name>("What is your name?"),
        ctx.question("capital_question")
            .sample(Sample::new("What is the capital of France?").max_tokens(100)),
    );
    let name = match name {
        Ok(name) => name_of(name),
        Err(e) if *e.kind() == tool_runtime::ErrorKind::UNSUPPORTED => "unasked".to_owned(),
        Err(e) => return Err(e),
    };
    let answer = match answer {
        Ok(answer) => answer.text,
        Err(e) if *e.kind() == tool_runtime::ErrorKind::UNSUPPORTED => "unasked".to_owned(),
        Err(e) => return Err(e),
    };
    Ok(format!("name: {name}; model: {answer}"))
}

/// A prompt that asks the user for its context first.
#[prompt]
async fn test_input_required_result_prompt(ctx: &CallContext) -> Result<String, ToolError> {
    let context = ctx
        .question("user_context")
        .elicit::<Context>("What context should the prompt use?")
        .await?;
    Ok(match context {
        Elicited::Accepted(c) => format!("Answer with this context in mind: {}", c.context),
        Elicited::Declined | Elicited::Cancelled => {
            "Answer without a particular context.".to_owned()
        }
    })
}
