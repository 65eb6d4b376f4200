//! `list_resources` and `read_resource`, the tools an agent offers when asked to
//! ([`AgentBuilder::resources`](super::AgentBuilder::resources)): the application's resources
//! for models whose APIs know only tools. Ordinary read-only tools in a registry of the agent's
//! own, lowered for each provider by `llm`; each reads through the application's registry, so
//! the run's caller sees only what it may and every read passes the pipeline.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use crate::registry::Registry;
use crate::tool::caller::Caller;
use crate::tool::context::CallContext;
use crate::tool::definition::{Tool, ToolMeta};
use crate::tool::error::ToolError;

/// The name of the tool that lists resources.
pub(super) const LIST_RESOURCES: &str = "list_resources";
/// The name of the tool that reads one.
pub(super) const READ_RESOURCE: &str = "read_resource";

/// The run's caller, given to each call of these tools, on whose behalf they read.
#[derive(Clone)]
pub(super) struct OnBehalf(pub(super) Caller);

fn caller_of(ctx: &CallContext) -> Result<Caller, ToolError> {
    ctx.extension::<OnBehalf>()
        .map(|c| c.0.clone())
        .ok_or_else(|| ToolError::internal("a resource tool called outside an agent run"))
}

fn read_only(name: &str, description: &str) -> ToolMeta {
    let mut meta = ToolMeta::new(name.to_owned(), description.to_owned());
    meta.annotations.read_only = Some(true);
    meta
}

struct ListResources(Arc<Registry>);

impl Tool for ListResources {
    fn meta(&self) -> ToolMeta {
        read_only(
            LIST_RESOURCES,
            "List the resources you can read with read_resource: each URI with its name, description and media type, and URI templates whose {variables} you fill in.",
        )
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    }

    fn output_schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn call(&self, _args: Value, ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            let caller = caller_of(&ctx)?;
            let listed: Vec<Value> = self
                .0
                .list_resources(&caller)
                .await
                .into_iter()
                .map(|(listed, _)| json!(listed))
                .collect();
            let templates: Vec<Value> = self
                .0
                .resources(&caller)
                .iter()
                .filter(|r| !r.variables.is_empty())
                .map(|r| {
                    json!({
                        "uriTemplate": r.uri,
                        "name": r.name,
                        "description": r.description,
                        "mimeType": r.mime_type,
                    })
                })
                .collect();
            Ok(json!({"resources": listed, "templates": templates}))
        })
    }
}

struct ReadResource(Arc<Registry>);

impl Tool for ReadResource {
    fn meta(&self) -> ToolMeta {
        read_only(
            READ_RESOURCE,
            "Read the resource at a URI (from list_resources, or a template filled in) and return its contents.",
        )
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "The resource's URI"}},
            "required": ["uri"],
            "additionalProperties": false,
        })
    }

    fn output_schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn call(&self, args: Value, ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            let caller = caller_of(&ctx)?;
            let uri = args["uri"].as_str().unwrap_or_default();
            let read = self.0.read_resource(uri, caller).await?;
            Ok(json!({"contents": read.contents}))
        })
    }
}

/// A registry of the two tools, reading from `registry`.
pub(super) fn registry(registry: &Arc<Registry>) -> Registry {
    Registry::builder()
        .without_inventory()
        .tool(ListResources(Arc::clone(registry)))
        .tool(ReadResource(Arc::clone(registry)))
        .build()
        .expect("the resource tools are valid tools")
}
