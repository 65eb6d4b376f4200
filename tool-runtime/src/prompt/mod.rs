//! Prompts: messages a server offers its clients to start a conversation with, filled in from
//! arguments. `#[prompt]` fns become a const [`PromptDescriptor`]; code that discovers prompts
//! at run time (a mounted MCP server) implements [`Prompt`]. A get passes the call pipeline as
//! a tool call does: each prompt is adapted into a [`Tool`] whose [`ToolMeta::kind`] is
//! [`Kind::Prompt`].

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::tool::complete::{Completer, Completing};
use crate::tool::content::{Content, Icon};
use crate::tool::context::CallContext;
use crate::tool::definition::{Kind, Tool, ToolMeta};
use crate::tool::error::ToolError;
use crate::tool::options::{ItemOptions, OptionsDescriptor};

/// One argument of a prompt. On the wire every argument is a string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Its name: the parameter's.
    pub name: Cow<'static, str>,
    /// What it is: the parameter's doc comment.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub description: Cow<'static, str>,
    /// Whether it must be given (the parameter is not an `Option`).
    pub required: bool,
    /// Whether a completion is offered for it.
    #[serde(skip)]
    pub completes: bool,
}

/// Everything about a prompt except its code.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PromptMeta {
    /// Who may call it, its limits, the state it needs, where it is defined, as a tool's.
    pub options: ItemOptions,
    /// A name unique among prompts: the fn's.
    pub name: Cow<'static, str>,
    /// A human-readable title.
    pub title: Cow<'static, str>,
    /// What it is for: the doc comment.
    pub description: Cow<'static, str>,
    /// Its arguments, in order.
    pub arguments: Vec<PromptArgument>,
    /// Its icons.
    pub icons: Vec<Icon>,
}

impl PromptMeta {
    /// Metadata for the prompt `name`, described by `description`; the rest empty.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> Self {
        let name = name.into();
        Self {
            title: Cow::Owned(tool_grammar::title_from_name(&name)),
            name,
            description: description.into(),
            arguments: Vec::new(),
            icons: Vec::new(),
            options: ItemOptions {
                defined_at: Cow::Borrowed(crate::tool::definition::UNSTATED_ORIGIN),
                ..ItemOptions::default()
            },
        }
    }
}

/// Who says a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt: text, an image, a sound, a resource link or an embedded resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<Content>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

/// What a prompt get answers: the messages, and a description of this rendering.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptReply {
    /// A description of the messages, when they need one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl From<String> for PromptReply {
    fn from(text: String) -> Self {
        vec![PromptMessage::user(text)].into()
    }
}

impl From<&str> for PromptReply {
    fn from(text: &str) -> Self {
        vec![PromptMessage::user(text)].into()
    }
}

impl From<Vec<PromptMessage>> for PromptReply {
    fn from(messages: Vec<PromptMessage>) -> Self {
        Self {
            description: None,
            messages,
        }
    }
}

impl From<PromptMessage> for PromptReply {
    fn from(message: PromptMessage) -> Self {
        vec![message].into()
    }
}

/// A prompt: metadata and a get. Object-safe.
///
/// Implement it for prompts discovered at run time; `#[prompt]` implements it for you.
pub trait Prompt: Send + Sync + 'static {
    /// Metadata; read once, when the prompt is registered.
    fn meta(&self) -> PromptMeta;
    /// The messages for these arguments (each a string, as the wire carries them; required
    /// ones present).
    fn get(
        &self,
        args: BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<PromptReply, ToolError>>;
    /// The values offered for an argument; `None`: none are.
    fn complete(
        &self,
        completing: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        let _ = completing;
        None
    }
}

/// Not public API: how `#[prompt]` code gets the messages from the arguments.
#[doc(hidden)]
pub type GetFn =
    fn(BTreeMap<String, String>, CallContext) -> BoxFuture<'static, Result<PromptReply, ToolError>>;

/// The const descriptor `#[prompt]` generates and submits to `inventory`. Not built by hand:
/// implement [`Prompt`] instead.
#[allow(clippy::type_complexity)] // Reason: a fn pointer the generated code fills, named nowhere else.
pub struct PromptDescriptor {
    #[doc(hidden)]
    pub options: OptionsDescriptor,
    #[doc(hidden)]
    pub name: &'static str,
    #[doc(hidden)]
    pub title: &'static str,
    #[doc(hidden)]
    pub description: &'static str,
    /// `(name, description, required)`.
    #[doc(hidden)]
    pub arguments: &'static [(&'static str, &'static str, bool)],
    /// `(src, mime type, sizes)`.
    #[doc(hidden)]
    pub icons: &'static [crate::tool::content::StaticIcon],
    #[doc(hidden)]
    pub get: GetFn,
    #[doc(hidden)]
    pub completers: &'static [(&'static str, Completer)],
}

impl std::fmt::Debug for PromptDescriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDescriptor")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Prompt for &'static PromptDescriptor {
    fn meta(&self) -> PromptMeta {
        PromptMeta {
            name: Cow::Borrowed(self.name),
            title: Cow::Borrowed(self.title),
            description: Cow::Borrowed(self.description),
            arguments: self
                .arguments
                .iter()
                .map(|(name, description, required)| PromptArgument {
                    name: Cow::Borrowed(name),
                    description: Cow::Borrowed(description),
                    required: *required,
                    completes: self.completers.iter().any(|(n, _)| n == name),
                })
                .collect(),
            icons: Icon::all_of(self.icons),
            options: self.options.to_options(),
        }
    }

    fn get(
        &self,
        args: BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<PromptReply, ToolError>> {
        (self.get)(args, ctx)
    }

    fn complete(
        &self,
        completing: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        crate::tool::complete::run(self.completers, completing)
    }
}

/// The `inventory` item `#[prompt]` submits.
#[doc(hidden)]
#[derive(Debug)]
pub struct PromptRegistration(pub &'static PromptDescriptor);

inventory::collect!(PromptRegistration);

/// A prompt fn's return type: messages.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt's messages",
    label = "a prompt returns `String`, `&str`, `PromptMessage`, `Vec<PromptMessage>` or `PromptReply`",
    note = "or `Result<_, E>` of one of them, where `E: Into<ToolError>`"
)]
pub trait PromptOutput {
    /// The messages.
    fn into_reply(self) -> PromptReply;
}

// Not recommended: the error names this trait, in the words above, and not `From`.
#[diagnostic::do_not_recommend]
impl<T: Into<PromptReply>> PromptOutput for T {
    fn into_reply(self) -> PromptReply {
        self.into()
    }
}

/// A prompt as the pipeline calls it: its arguments are strings; its result the reply.
pub(crate) struct PromptTool {
    pub(crate) prompt: Arc<dyn Prompt>,
    pub(crate) meta: PromptMeta,
}

impl PromptTool {
    /// The name its pipeline calls go by: `prompt:{name}`.
    pub(crate) fn call_name(name: &str) -> String {
        format!("prompt:{name}")
    }
}

impl Tool for PromptTool {
    fn meta(&self) -> ToolMeta {
        let m = &self.meta;
        ToolMeta::of_item(
            Kind::Prompt,
            Self::call_name(&m.name),
            m.title.clone(),
            m.description.clone(),
            &m.options,
        )
    }

    fn input_schema(&self) -> Value {
        let properties: serde_json::Map<String, Value> = self
            .meta
            .arguments
            .iter()
            .map(|a| (a.name.to_string(), json!({"type": "string"})))
            .collect();
        let required: Vec<&str> = self
            .meta
            .arguments
            .iter()
            .filter(|a| a.required)
            .map(|a| &*a.name)
            .collect();
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }

    fn output_schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn call(&self, args: Value, ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            let args: BTreeMap<String, String> = match args {
                Value::Object(map) => map
                    .into_iter()
                    .filter_map(|(k, v)| match v {
                        Value::String(s) => Some((k, s)),
                        _ => None,
                    })
                    .collect(),
                _ => BTreeMap::new(),
            };
            let reply = self.prompt.get(args, ctx).await?;
            serde_json::to_value(reply)
                .map_err(|e| ToolError::internal(format_args!("unserializable messages: {e}")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_serialize_as_mcp_messages() {
        let reply: PromptReply = "Hello".into();
        assert_eq!(
            serde_json::to_value(&reply).unwrap(),
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Hello"}}]})
        );
        let link = PromptMessage::assistant(Content::resource_link("devices://d1", "d1"));
        assert_eq!(
            serde_json::to_value(&link).unwrap()["content"],
            json!({"type": "resource_link", "uri": "devices://d1", "name": "d1"})
        );
    }
}
