//! The resources and prompts the official MCP conformance suite reads and gets in its server
//! scenarios, each as the scenario describes it, and a tool that tells subscribers a resource
//! changed. Written as [`Resource`] and [`Prompt`] impls over plain fns.

use std::collections::BTreeMap;

use tool_runtime::prompt::{Prompt, PromptArgument, PromptMessage, PromptMeta, PromptReply};
use tool_runtime::resource::{Listed, Resource, ResourceBody, ResourceMeta};
use tool_runtime::{
    BoxFuture, CallContext, Completing, Content, EmbeddedResource, ToolError, tool,
};

use super::conformance::RED_PIXEL_PNG;

type Read = fn(&str, &BTreeMap<String, String>) -> ResourceBody;

/// A resource whose read is a plain fn of the URI and the template's values.
struct FnResource {
    meta: ResourceMeta,
    read: Read,
    listed: Vec<Listed>,
    complete: Option<fn(&Completing) -> Vec<String>>,
}

impl FnResource {
    fn new(name: &'static str, uri: &'static str, description: &'static str, read: Read) -> Self {
        Self {
            meta: ResourceMeta::new(name, uri, description),
            read,
            listed: Vec::new(),
            complete: None,
        }
    }

    fn mime(mut self, mime: &'static str) -> Self {
        self.meta.mime_type = Some(mime.into());
        self
    }
}

impl Resource for FnResource {
    fn meta(&self) -> ResourceMeta {
        let mut meta = self.meta.clone();
        if self.complete.is_some() {
            for v in &mut meta.variables {
                v.completes = true;
            }
        }
        meta
    }

    fn read(
        &self,
        uri: String,
        values: BTreeMap<String, String>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        let body = (self.read)(&uri, &values);
        Box::pin(async move { Ok(body) })
    }

    fn list(&self, _ctx: CallContext) -> Option<BoxFuture<'_, Result<Vec<Listed>, ToolError>>> {
        (!self.listed.is_empty()).then(|| {
            let listed = self.listed.clone();
            Box::pin(async move { Ok(listed) }) as BoxFuture<'_, _>
        })
    }

    fn complete(
        &self,
        completing: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        let values = self.complete?(&completing);
        Some(Box::pin(async move { Ok(values) }))
    }
}

type Get = fn(&BTreeMap<String, String>) -> PromptReply;

/// A prompt whose get is a plain fn of its arguments.
struct FnPrompt {
    meta: PromptMeta,
    get: Get,
    complete: Option<fn(&Completing) -> Vec<String>>,
}

impl FnPrompt {
    fn new(name: &'static str, description: &'static str, get: Get) -> Self {
        Self {
            meta: PromptMeta::new(name, description),
            get,
            complete: None,
        }
    }

    fn arg(mut self, name: &'static str, description: &'static str) -> Self {
        self.meta.arguments.push(PromptArgument {
            name: name.into(),
            description: description.into(),
            required: true,
            completes: false,
        });
        self
    }
}

impl Prompt for FnPrompt {
    fn meta(&self) -> PromptMeta {
        let mut meta = self.meta.clone();
        if self.complete.is_some() {
            for a in &mut meta.arguments {
                a.completes = true;
            }
        }
        meta
    }

    fn get(
        &self,
        args: BTreeMap<String, String>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, Result<PromptReply, ToolError>> {
        let reply = (self.get)(&args);
        Box::pin(async move { Ok(reply) })
    }

    fn complete(
        &self,
        completing: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        let values = self.complete?(&completing);
        Some(Box::pin(async move { Ok(values) }))
    }
}

/// The values of `choices` that start with what the user typed.
fn starting(completing: &Completing, choices: &[&str]) -> Vec<String> {
    choices
        .iter()
        .filter(|c| c.starts_with(completing.value()))
        .map(|c| (*c).to_owned())
        .collect()
}

fn arg<'a>(args: &'a BTreeMap<String, String>, name: &str) -> &'a str {
    args.get(name).map_or("", String::as_str)
}

/// The conformance suite's resources and templates.
pub fn resources() -> Vec<std::sync::Arc<dyn Resource>> {
    let mut template = FnResource::new(
        "template_data",
        "test://template/{id}/data",
        "Data for an id",
        |_, values| {
            let id = values.get("id").cloned().unwrap_or_default();
            ResourceBody::Json(serde_json::json!({
                "id": id, "templateTest": true, "data": format!("Data for ID: {id}"),
            }))
        },
    )
    .mime("application/json");
    template.listed = vec![Listed::new("test://template/123/data", "data 123")];
    template.complete = Some(|c| starting(c, &["123", "124", "200"]));
    vec![
        std::sync::Arc::new(
            FnResource::new(
                "static_text",
                "test://static-text",
                "A static text resource",
                |_, _| {
                    ResourceBody::Text("This is the content of the static text resource.".into())
                },
            )
            .mime("text/plain"),
        ),
        std::sync::Arc::new(
            FnResource::new(
                "static_binary",
                "test://static-binary",
                "A static binary resource",
                |uri, _| {
                    ResourceBody::Contents(vec![EmbeddedResource {
                        uri: uri.to_owned(),
                        mime_type: Some("image/png".to_owned()),
                        text: None,
                        blob: Some(RED_PIXEL_PNG.to_owned()),
                    }])
                },
            )
            .mime("image/png"),
        ),
        std::sync::Arc::new(
            FnResource::new(
                "watched",
                "test://watched-resource",
                "A resource whose updates are announced (`touch`)",
                |_, _| ResourceBody::Text("watched".into()),
            )
            .mime("text/plain"),
        ),
        std::sync::Arc::new(template),
    ]
}

/// The conformance suite's prompts.
pub fn prompts() -> Vec<std::sync::Arc<dyn Prompt>> {
    let mut with_arguments = FnPrompt::new(
        "test_prompt_with_arguments",
        "A prompt with arguments",
        |args| {
            format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                arg(args, "arg1"),
                arg(args, "arg2")
            )
            .into()
        },
    )
    .arg("arg1", "First test argument")
    .arg("arg2", "Second test argument");
    with_arguments.complete = Some(|c| starting(c, &["test", "testValue1", "other"]));
    vec![
        std::sync::Arc::new(FnPrompt::new(
            "test_simple_prompt",
            "A simple prompt",
            |_| "This is a simple prompt for testing.".into(),
        )),
        std::sync::Arc::new(with_arguments),
        std::sync::Arc::new(
            FnPrompt::new(
                "test_prompt_with_embedded_resource",
                "A prompt with an embedded resource",
                |args| {
                    vec![
                        PromptMessage::user(Content::resource_text(
                            arg(args, "resourceUri"),
                            "text/plain",
                            "Embedded resource content for testing.",
                        )),
                        PromptMessage::user("Please process the embedded resource above."),
                    ]
                    .into()
                },
            )
            .arg("resourceUri", "URI of the resource to embed"),
        ),
        std::sync::Arc::new(FnPrompt::new(
            "test_prompt_with_image",
            "A prompt with an image",
            |_| {
                vec![
                    PromptMessage::user(Content::Image {
                        data: RED_PIXEL_PNG.to_owned(),
                        mime_type: "image/png".to_owned(),
                    }),
                    PromptMessage::user("Please analyze the image above."),
                ]
                .into()
            },
        )),
    ]
}

/// Tells the subscribers of the resource at `uri` that it changed.
#[tool(annotations(read_only))]
async fn touch(ctx: &CallContext, #[arg(length(max = 200))] uri: String) -> String {
    ctx.notifier().resource_updated(uri.clone());
    uri
}
