//! The resources and prompts the official MCP conformance suite reads and gets in its server
//! scenarios, each as the scenario describes it, declared with `#[resource]` and `#[prompt]`;
//! and a tool that tells subscribers a resource changed.

use tool_runtime::prompt::PromptMessage;
use tool_runtime::resource::{Listed, ResourceContents};
use tool_runtime::tool::Completing;
use tool_runtime::{CallContext, Content, prompt, resource, tool};

use super::conformance::RED_PIXEL_PNG;

/// A static text resource
#[resource("test://static-text", mime = "text/plain")]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource
#[resource("test://static-binary", mime = "image/png")]
fn static_binary() -> ResourceContents {
    ResourceContents {
        uri: "test://static-binary".to_owned(),
        mime_type: Some("image/png".to_owned()),
        text: None,
        blob: Some(RED_PIXEL_PNG.to_owned()),
    }
}

/// A resource whose updates are announced (`touch`)
#[resource("test://watched-resource", name = "watched", mime = "text/plain")]
fn watched_resource() -> &'static str {
    "watched"
}

/// Data for an id
#[resource(
    "test://template/{id}/data",
    name = "template_data",
    mime = "application/json",
    list = template_listed
)]
fn template_data(#[arg(complete = ids)] id: String) -> serde_json::Value {
    serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
}

fn template_listed() -> Vec<Listed> {
    vec![Listed::new("test://template/123/data", "data 123")]
}

/// The values of `choices` that start with what the user typed.
fn starting(completing: &Completing, choices: &[&str]) -> Vec<String> {
    choices
        .iter()
        .filter(|c| c.starts_with(completing.value()))
        .map(|c| (*c).to_owned())
        .collect()
}

async fn ids(c: Completing) -> Vec<String> {
    starting(&c, &["123", "124", "200"])
}

async fn arg_values(c: Completing) -> Vec<String> {
    starting(&c, &["test", "testValue1", "other"])
}

/// A simple prompt
#[prompt]
fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with arguments
#[prompt]
fn test_prompt_with_arguments(
    /// First test argument
    #[arg(complete = arg_values)]
    arg1: String,
    /// Second test argument
    #[arg(complete = arg_values)]
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt with an embedded resource
#[prompt]
#[allow(non_snake_case, reason = "the suite names the argument `resourceUri`")]
fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed
    resourceUri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::resource_text(
            resourceUri,
            "text/plain",
            "Embedded resource content for testing.",
        )),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt with an image
#[prompt]
fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::Image {
            data: RED_PIXEL_PNG.to_owned(),
            mime_type: "image/png".to_owned(),
        }),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// Tells the subscribers of the resource at `uri` that it changed.
#[tool(annotations(read_only))]
async fn touch(ctx: &CallContext, #[arg(length(max = 200))] uri: String) -> String {
    ctx.notifier().resource_updated(uri.clone());
    uri
}
