//! What a tool can ask of the caller's side while it runs: send it log messages, ask its model
//! for a completion (sampling), ask its user for input (elicitation), list its roots.
//!
//! A tool uses these through its [`CallContext`](crate::CallContext):
//! [`log`](crate::CallContext::log), [`sample`](crate::CallContext::sample),
//! [`elicit`](crate::CallContext::elicit), [`roots`](crate::CallContext::roots), and
//! [`question`](crate::CallContext::question) to name a request. The front end decides where
//! they go. The MCP server sends them to its client as `notifications/message`,
//! `sampling/createMessage`, `elicitation/create` and `roots/list`; on protocol 2026-07-28 the
//! requests go back with the call's answer as an input-required result, and the tool runs
//! again from the top with the answers. A [`RemoteServer`](crate::mcp::RemoteServer) passes the same requests
//! from a mounted server on to whoever called the mounted tool. Other callers attach a [`Peer`]
//! of their own with [`Caller::peer`](crate::Caller::peer), or have none: then log messages go
//! only to `tracing`, and sampling and elicitation fail with [`ErrorKind::UNSUPPORTED`].
//!
//! ```
//! use tool_runtime::tool::peer::{Elicited, LogLevel};
//! use tool_runtime::{CallContext, ToolError, tool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Name {
//!     /// What to call you
//!     name: String,
//! }
//!
//! /// Greets the user by the name they give.
//! #[tool]
//! async fn greet(ctx: &CallContext) -> Result<String, ToolError> {
//!     ctx.log(LogLevel::Info, "asking for a name");
//!     Ok(match ctx.elicit::<Name>("What is your name?").await? {
//!         Elicited::Accepted(n) => format!("Hello, {}!", n.name),
//!         Elicited::Declined | Elicited::Cancelled => "Hello!".to_owned(),
//!     })
//! }
//! ```

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::tool::error::{ErrorKind, ToolError};

/// How severe a log message is: the syslog levels (RFC 5424), as MCP names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// The lower-case name MCP uses.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

/// Who speaks a turn of a [`Sample`] conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// A request for one completion from the caller's model: the conversation so far, a system
/// prompt, and a limit on the answer's length.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    turns: Vec<(Role, String)>,
    system: Option<String>,
    max_tokens: u32,
    temperature: Option<f64>,
}

impl Sample {
    /// A request whose conversation is one user message, answered in at most 1,000 tokens.
    #[must_use]
    pub fn new(prompt: impl Into<String>) -> Self {
        Self {
            turns: vec![(Role::User, prompt.into())],
            system: None,
            max_tokens: 1000,
            temperature: None,
        }
    }

    /// Adds a turn to the conversation.
    #[must_use]
    pub fn turn(mut self, role: Role, text: impl Into<String>) -> Self {
        self.turns.push((role, text.into()));
        self
    }

    /// The system prompt.
    #[must_use]
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// The most tokens the answer may take.
    #[must_use]
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// The sampling temperature.
    #[must_use]
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The conversation, in order.
    #[must_use]
    pub fn turns(&self) -> &[(Role, String)] {
        &self.turns
    }

    /// The system prompt, if set.
    #[must_use]
    pub fn system_prompt(&self) -> Option<&str> {
        self.system.as_deref()
    }

    /// The limit on the answer's length, in tokens.
    #[must_use]
    pub fn token_limit(&self) -> u32 {
        self.max_tokens
    }

    /// The sampling temperature, if set.
    #[must_use]
    pub fn sampling_temperature(&self) -> Option<f64> {
        self.temperature
    }
}

/// The caller's model's answer to a [`Sample`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sampled {
    /// The answer's text.
    pub text: String,
    /// The model that answered, as the caller names it.
    pub model: String,
    /// Why the model stopped (`endTurn`, `maxTokens`, ...), if the caller said.
    pub stop_reason: Option<String>,
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user answered with this content.
    Accepted(T),
    /// The user said no.
    Declined,
    /// The user dismissed the question without choosing.
    Cancelled,
}

/// A root the caller's side works in (MCP `roots/list`): a directory or another location, by
/// URI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// Where the root is (`file:///home/me/project`).
    pub uri: String,
    /// Its name for people, if the caller gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// One request a tool puts to its caller's side, as [`Peer::ask`] receives it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputRequest {
    /// A completion from the caller's model.
    Sample(Sample),
    /// Input from the caller's user: the question, and the JSON Schema of the answer.
    Elicit {
        /// The question.
        message: String,
        /// The JSON Schema of the answer: an object of flat fields.
        schema: Value,
    },
    /// The caller's roots.
    ListRoots,
}

/// The answer to an [`InputRequest`], of the same kind.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputResponse {
    /// The model's completion.
    Sampled(Sampled),
    /// The user's answer.
    Elicited(Elicited<Map<String, Value>>),
    /// The caller's roots.
    Roots(Vec<Root>),
}

/// The caller's side of a call, as a front end presents it to tools: where log messages go, who
/// answers sampling, elicitation and the list of roots. Each method has a default: log messages
/// are dropped, and requests fail with [`ErrorKind::UNSUPPORTED`], so implement only what your
/// caller offers.
pub trait Peer: Send + Sync + 'static {
    /// Delivers a log message from the tool.
    fn log(&self, level: LogLevel, data: Value) {
        let _ = (level, data);
    }

    /// Asks the caller's model for a completion.
    fn sample(&self, request: Sample) -> BoxFuture<'_, Result<Sampled, ToolError>> {
        let _ = request;
        Box::pin(std::future::ready(Err(unsupported("sampling"))))
    }

    /// Asks the caller's user for input: `message` is the question, `schema` the JSON Schema of
    /// the answer (an object of flat fields, as MCP elicitation allows).
    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicited<Map<String, Value>>, ToolError>> {
        let _ = (message, schema);
        Box::pin(std::future::ready(Err(unsupported("elicitation"))))
    }

    /// Lists the caller's roots.
    fn list_roots(&self) -> BoxFuture<'_, Result<Vec<Root>, ToolError>> {
        Box::pin(std::future::ready(Err(unsupported("roots"))))
    }

    /// Puts `request` to the caller under `key`, the name the tool gave the question (or one
    /// the call numbered for it). Every request of a [`CallContext`](crate::CallContext) comes
    /// here; by default it goes to [`sample`](Self::sample), [`elicit`](Self::elicit) or
    /// [`list_roots`](Self::list_roots) and the key is not used. A front end whose caller
    /// answers with the call made again (MCP's input-required results) overrides it: the
    /// key names the question in the result and its answer in the retried call.
    fn ask(
        &self,
        key: &str,
        request: InputRequest,
    ) -> BoxFuture<'_, Result<InputResponse, ToolError>> {
        let _ = key;
        Box::pin(async move {
            Ok(match request {
                InputRequest::Sample(sample) => InputResponse::Sampled(self.sample(sample).await?),
                InputRequest::Elicit { message, schema } => {
                    InputResponse::Elicited(self.elicit(message, schema).await?)
                }
                InputRequest::ListRoots => InputResponse::Roots(self.list_roots().await?),
            })
        })
    }

    /// Ends the stream that carries the call's messages to the caller, leaving the call
    /// running: the caller reconnects and receives the rest where the stream left off. Returns
    /// whether there was such a stream to end (by default, none).
    fn close_stream(&self) -> bool {
        false
    }
}

/// The error of a request the caller cannot answer.
pub(crate) fn unsupported(what: &str) -> ToolError {
    ToolError::new(
        ErrorKind::UNSUPPORTED,
        format!("the caller of this tool offers no {what}"),
    )
}

/// The schema of `T` as an elicitation asks for it: every subschema inline (elicitation allows
/// no `$ref`), without `$schema` or a title.
pub(crate) fn elicitation_schema<T: schemars::JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("title");
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_elicitation_schema_is_inline_and_untitled() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        enum Colour {
            Red,
            Green,
        }
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Answer {
            colour: Colour,
            /// How many
            count: u8,
        }
        let schema = elicitation_schema::<Answer>();
        assert!(schema.get("$defs").is_none() && schema.get("$schema").is_none());
        assert!(schema.get("title").is_none());
        assert_eq!(
            schema["properties"]["colour"]["enum"],
            json!(["Red", "Green"])
        );
        assert_eq!(schema["properties"]["count"]["description"], "How many");
    }

    #[test]
    fn levels_are_ordered_by_severity_and_named_as_mcp_names_them() {
        assert!(LogLevel::Debug < LogLevel::Info && LogLevel::Error < LogLevel::Emergency);
        assert_eq!(serde_json::to_value(LogLevel::Warning).unwrap(), "warning");
        assert_eq!(LogLevel::Notice.as_str(), "notice");
    }
}
