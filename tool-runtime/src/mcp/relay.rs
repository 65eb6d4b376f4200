//! The client side of a mounted MCP server ([`RemoteServer`](super::RemoteServer)): what the
//! server asks of us while one of its tools runs goes on to whoever called that tool. Its
//! elicitations and sampling requests are asked of the caller's [`Peer`](crate::tool::peer::Peer),
//! its log messages and progress reach the caller as the tool's own. We never answer for the
//! caller.
//!
//! A server's request names no call (MCP ties it to one only through the transport), so it goes
//! to the one call in flight on that session. With several in flight it cannot be told whose it
//! is: an elicitation is then cancelled and a sampling request refused, rather than shown to
//! the wrong caller, and log messages go to `tracing` only. Progress names its request's
//! progress token, but the SDK's client puts a token of its own on every request and does not
//! tell it before the request is sent, so progress is matched the same way.

// MCP logging is deprecated from protocol 2026-07-28 on (SEP-2577); servers of 2025-11-25 use it.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    FormElicitationCapability, Implementation, LoggingMessageNotificationParam,
    ProgressNotificationParam, SamplingCapability, SamplingMessage,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::{Map, Value, json};
use tracing::Instrument as _;

use crate::tool::context::CallContext;
use crate::tool::peer::{Elicited, Role, Sample};

/// The calls in flight on one server's session.
#[derive(Default)]
pub(super) struct InFlight {
    next: AtomicU64,
    calls: Mutex<Vec<(u64, CallContext, tracing::Span)>>,
}

impl InFlight {
    /// Notes a call, and the span of its request, until the returned guard is dropped.
    pub(super) fn enter(self: &Arc<Self>, ctx: CallContext, span: tracing::Span) -> Entered {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((id, ctx, span));
        Entered {
            calls: Arc::clone(self),
            id,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, CallContext, tracing::Span)>> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The call a request of the server belongs to, the only one in flight, with the span of
    /// its request: what is passed on for it is done in that span.
    fn only(&self) -> Option<(CallContext, tracing::Span)> {
        match self.lock().as_slice() {
            [(_, ctx, span)] => Some((ctx.clone(), span.clone())),
            _ => None,
        }
    }
}

/// A call noted in flight; dropping it ends the note.
pub(super) struct Entered {
    calls: Arc<InFlight>,
    id: u64,
}

impl Drop for Entered {
    fn drop(&mut self) {
        self.calls.lock().retain(|(i, _, _)| *i != self.id);
    }
}

/// What the client answers the server: our name and capabilities; tool-list changes, log
/// messages, progress, elicitation and sampling passed on.
pub(super) struct Handler {
    pub(super) server: String,
    pub(super) changed: tokio::sync::broadcast::Sender<()>,
    /// Where the server's resource updates and its resource and prompt list changes go.
    pub(super) items: tokio::sync::broadcast::Sender<crate::tool::notify::Change>,
    pub(super) calls: Arc<InFlight>,
}

impl Handler {
    fn caller(&self, what: &str) -> Result<(CallContext, tracing::Span), rmcp::ErrorData> {
        self.calls.only().ok_or_else(|| {
            tracing::warn!(target: "tool_runtime::mcp", server = %self.server, "{what} from the MCP server refused: it belongs to no single call in flight");
            rmcp::ErrorData::invalid_request(
                format!("{what} is answered only while exactly one call is in flight to this server"),
                None,
            )
        })
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::default());
        capabilities.elicitation = Some(elicitation);
        capabilities.sampling = Some(SamplingCapability::default());
        capabilities.roots = Some(rmcp::model::RootsCapabilities::default());
        // A tool the server runs as a task is followed to its end (`remote_call`).
        capabilities.extensions = Some(rmcp::model::ExtensionCapabilities::from([(
            rmcp::model::TASKS_EXTENSION_ID.to_owned(),
            rmcp::model::JsonObject::new(),
        )]));
        let mut config = ClientConfig::new(
            capabilities,
            Implementation::new("tool-runtime", env!("CARGO_PKG_VERSION")),
        );
        // The newest version the `initialize` handshake offers: 2026-07-28 is agreed through
        // `server/discover` instead, and a server asked for it in `initialize` may refuse.
        config.protocol_version = rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE;
        config
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self
            .items
            .send(crate::tool::notify::Change::ResourceUpdated(params.uri));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self
            .items
            .send(crate::tool::notify::Change::ResourcesChanged);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.items.send(crate::tool::notify::Change::PromptsChanged);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some((ctx, span)) = self.calls.only() {
            let _in = span.enter();
            ctx.progress(params.progress, params.total, params.message.as_deref());
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        match self.calls.only() {
            Some((ctx, span)) => {
                let _in = span.enter();
                ctx.log(super::peer::ours(params.level), params.data);
            }
            None => {
                tracing::info!(target: "tool_runtime::mcp", server = %self.server, data = %params.data, "MCP server log");
            }
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let Some((ctx, span)) = self.calls.only() else {
            tracing::warn!(target: "tool_runtime::mcp", server = %self.server, "an elicitation from the MCP server cancelled: it belongs to no single call in flight");
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        };
        elicit(&ctx, span, request).await
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let (ctx, span) = self.caller("a roots request")?;
        roots(&ctx, span).await
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, rmcp::ErrorData> {
        let (ctx, span) = self.caller("a sampling request")?;
        sample(&ctx, span, &params).await
    }
}

/// `request`, an elicitation from the server, asked of the caller of the call `ctx` belongs to.
async fn elicit(
    ctx: &CallContext,
    span: tracing::Span,
    request: ElicitRequestParams,
) -> Result<ElicitResult, rmcp::ErrorData> {
    let request = serde_json::to_value(request).unwrap_or_default();
    if request.get("mode").and_then(Value::as_str) == Some("url") {
        // Only form elicitation is declared; a URL one is not ours to open.
        return Ok(ElicitResult::new(ElicitationAction::Decline));
    }
    let message = request["message"].as_str().unwrap_or_default().to_owned();
    let schema = request
        .get("requestedSchema")
        .cloned()
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    match ctx
        .elicit_with(message, schema.clone())
        .instrument(span)
        .await
    {
        Ok(Elicited::Accepted(mut content)) => {
            with_defaults(&schema, &mut content);
            Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
        }
        Ok(Elicited::Declined) => Ok(ElicitResult::new(ElicitationAction::Decline)),
        Ok(Elicited::Cancelled) => Ok(ElicitResult::new(ElicitationAction::Cancel)),
        Err(e) => Err(cannot_answer(&e)),
    }
}

/// The roots of the caller of the call `ctx` belongs to.
async fn roots(
    ctx: &CallContext,
    span: tracing::Span,
) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
    let roots = ctx
        .roots()
        .instrument(span)
        .await
        .map_err(|e| cannot_answer(&e))?;
    Ok(rmcp::model::ListRootsResult::new(
        roots
            .into_iter()
            .map(|r| {
                let mut root = rmcp::model::Root::new(r.uri);
                root.name = r.name;
                root
            })
            .collect(),
    ))
}

/// `params`, a sampling request from the server, asked of the caller's model.
async fn sample(
    ctx: &CallContext,
    span: tracing::Span,
    params: &CreateMessageRequestParams,
) -> Result<CreateMessageResult, rmcp::ErrorData> {
    let request = sample_of(params).ok_or_else(|| {
        rmcp::ErrorData::invalid_params("only text messages can be sampled", None)
    })?;
    let answer = ctx
        .sample(request)
        .instrument(span)
        .await
        .map_err(|e| cannot_answer(&e))?;
    let mut result =
        CreateMessageResult::new(SamplingMessage::assistant_text(answer.text), answer.model);
    result.stop_reason = answer.stop_reason;
    Ok(result)
}

/// The answer to `request`, one of the questions a server's input-required result or task
/// asks, from the caller of the call `ctx` belongs to, in the form `inputResponses` takes.
pub(super) async fn answer(
    ctx: &CallContext,
    span: tracing::Span,
    request: rmcp::model::InputRequest,
) -> Result<Value, rmcp::ErrorData> {
    use rmcp::model::InputRequest;
    let answered = match request {
        InputRequest::Elicitation(r) => serde_json::to_value(elicit(ctx, span, r.params).await?),
        InputRequest::CreateMessage(r) => serde_json::to_value(sample(ctx, span, &r.params).await?),
        InputRequest::ListRoots(_) => serde_json::to_value(roots(ctx, span).await?),
        _ => {
            return Err(rmcp::ErrorData::invalid_request(
                "a kind of question this client does not answer",
                None,
            ));
        }
    };
    answered.map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))
}

fn cannot_answer(e: &crate::ToolError) -> rmcp::ErrorData {
    rmcp::ErrorData::invalid_request(format!("the caller cannot answer: {}", e.message()), None)
}

/// A server's sampling request as ours, when all its messages are text.
fn sample_of(params: &CreateMessageRequestParams) -> Option<Sample> {
    let value = serde_json::to_value(params).ok()?;
    let mut turns = Vec::new();
    for message in value["messages"].as_array()? {
        let role = match message["role"].as_str()? {
            "assistant" => Role::Assistant,
            _ => Role::User,
        };
        let content = &message["content"];
        let blocks = content
            .as_array()
            .map_or_else(|| vec![content], |a| a.iter().collect());
        let text: Vec<&str> = blocks
            .iter()
            .map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Option<_>>()?;
        turns.push((role, text.join("\n")));
    }
    let mut turns = turns.into_iter();
    let (first_role, first) = turns.next()?;
    if first_role != Role::User {
        return None;
    }
    let mut sample = Sample::new(first).max_tokens(params.max_tokens);
    for (role, text) in turns {
        sample = sample.turn(role, text);
    }
    if let Some(system) = &params.system_prompt {
        sample = sample.system(system.clone());
    }
    // The SDK's `f32` by its shortest decimal, so that 0.7 stays 0.7 (not 0.699999988...).
    if let Some(t) = params.temperature.and_then(|t| t.to_string().parse().ok()) {
        sample = sample.temperature(t);
    }
    Some(sample)
}

/// Fills in the `default` of each property of `schema` that `content` leaves out: what a client
/// does with an accepted form the user did not complete (the defaults are what the form showed).
fn with_defaults(schema: &Value, content: &mut Map<String, Value>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omitted_fields_take_their_defaults_and_given_ones_stay() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "nick": {"type": "string"},
        }});
        let mut content = json!({"age": 41}).as_object().cloned().unwrap();
        with_defaults(&schema, &mut content);
        assert_eq!(
            Value::Object(content),
            json!({"name": "John Doe", "age": 41})
        );
    }
}
