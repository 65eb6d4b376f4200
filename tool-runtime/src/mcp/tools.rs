//! Tools over MCP: `tools/list` for the request's caller, described once per registry version,
//! and `tools/call` through the pipeline, with the confirmation of a destructive tool and the
//! rounds of 2026-07-28.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResponse, Tool};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::confirm::{self, CONFIRM_INPUT, Elicit};
use super::results::{content, failure, protocol_error, success};
use super::{McpServer, caller_of, describe, input, peer, rounds, tasks};
use crate::registry::task::Started;
use crate::registry::{CallTool, RegisteredTool};
use crate::task::TaskDetach;
use crate::tool::caller::Caller;

impl McpServer {
    /// The `tools/list` entries `caller` sees: [`Registry::visible`](crate::Registry::visible), described for MCP.
    #[must_use]
    pub fn list(&self, caller: &Caller) -> Vec<Tool> {
        let registry = &self.inner.registry;
        self.described(registry.version(), &registry.visible(caller))
    }

    /// `tools`, described for MCP from the descriptions kept for registry version `version`.
    fn described(
        &self,
        version: u64,
        tools: &[impl std::ops::Deref<Target = RegisteredTool>],
    ) -> Vec<Tool> {
        let mut cache = self
            .inner
            .descriptions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.0 != version {
            *cache = (version, HashMap::new());
        }
        tools
            .iter()
            .map(|t| {
                cache
                    .1
                    .entry(t.name().to_owned())
                    .or_insert_with(|| describe(t))
                    .clone()
            })
            .collect()
    }

    /// The tool `name` as `tools/list` describes it, if the caller of the `/mcp` request being
    /// served may see it: asked on every 2026-07-28 `tools/call`, so from the kept descriptions.
    #[cfg(feature = "http")]
    pub(super) fn visible_described(&self, name: &str) -> Option<Tool> {
        let caller = super::sessions::caller()?;
        let registry = &self.inner.registry;
        let version = registry.version();
        let tool = registry.visible_tool(name, &caller)?;
        self.described(version, &[tool]).pop()
    }

    pub(super) async fn call(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.take().unwrap_or_default());
        // 2026-07-28: a call asks its client with its answer, and the answers come with the
        // call made again, with the state of the rounds before.
        let (caller, rounds) = self.rounds(
            &context,
            caller_of(&context),
            "tools/call",
            &request.name,
            &args,
            request.request_state.as_deref(),
            request.input_responses.as_ref(),
        )?;
        // Progress reports and log messages go out in order, before the response.
        let peer = self.call_peer(&context, rounds.as_ref());
        let response = self
            .call_with(&request.name, args, caller, rounds, &context, &peer)
            .await;
        peer.finish().await;
        response
    }

    async fn call_with(
        &self,
        name: &str,
        args: Value,
        caller: Caller,
        rounds: Option<input::Rounds>,
        context: &RequestContext<RoleServer>,
        peer: &Arc<peer::CallPeer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let registry = &self.inner.registry;
        let principal = caller.given_principal().map(str::to_owned);
        let mut caller = caller
            .cancellation(context.ct.clone())
            .peer(Arc::clone(peer) as _);
        if peer.wants_progress() {
            caller = caller.progress(Arc::clone(peer) as _);
        }
        // 2026-07-28: the answer to the confirmation comes back with the retried call, and the
        // token it confirms in the request state. An accept redeems that token and nothing
        // else: without it, or with one issued for another call, the call is refused.
        let answered = rounds
            .as_ref()
            .and_then(|r| r.given.get(CONFIRM_INPUT))
            .map(|answer| answer.get("action").and_then(Value::as_str) == Some("accept"));
        let token = rounds.as_ref().and_then(|r| r.round.confirm.clone());
        let confirmed = answered == Some(true) && token.is_some();
        if confirmed && let Some(token) = token {
            caller = caller.confirmation(token);
        }
        let task = self.runs_as_task(name, &caller, context, confirmed)?;
        if task == Some(TaskDetach::Start) {
            return self.start_task(name, args, caller).await;
        }
        let caller = caller.asking(Arc::new(Elicit {
            peer: Arc::clone(peer),
            answered,
            inline: rounds.is_some() && answered.is_none(),
        }));
        // The arguments a confirmed call's next token is bound to, should it ask.
        let kept = confirmed.then(|| args.clone());
        let finished = if task == Some(TaskDetach::Explicit) {
            match registry.handle_detachable(name, args, caller).await {
                Started::Answered(answer) => answer,
                Started::Task(task) => return Ok(tasks::created(&task)),
            }
        } else {
            registry.handle(CallTool::new(name, args), caller).await
        };
        if let Some(rounds) = &rounds {
            if let Some(question) = finished.question() {
                let round = input::Round {
                    call: rounds.round.call.clone(),
                    answers: serde_json::Map::new(),
                    confirm: Some(question.token.clone()),
                };
                return Ok(self
                    .ask_again(&rounds.bound, &round, confirm::question(question))
                    .into());
            }
            let asked = peer.asked();
            // A confirmed call that asks is confirmed for its next round too, by a token of
            // its own: each round redeems one, once.
            let confirm = match (&asked, &kept) {
                (input::Asked::Pending(..), Some(args)) => match registry
                    .confirmation_token(name, args, principal.as_deref())
                    .await
                {
                    Ok(token) => Some(token),
                    Err(e) => return Ok(failure(&e).into()),
                },
                _ => None,
            };
            // The confirmation's answer goes on with its token, as every answer so far does.
            let asked = match (asked, &confirm) {
                (input::Asked::Pending(questions, mut answers), Some(_)) => {
                    if let Some(accept) = rounds.given.get(CONFIRM_INPUT) {
                        answers.insert(CONFIRM_INPUT.to_owned(), accept.clone());
                    }
                    input::Asked::Pending(questions, answers)
                }
                (asked, _) => asked,
            };
            if let Some(result) = self.asked_again(rounds, asked, confirm)? {
                return Ok(result.into());
            }
            if let Err(e) = &finished.envelope.outcome
                && let Some(error) = rounds::undeclared(peer, e)
            {
                return Err(error);
            }
        }
        if let Some(sent) =
            self.sent_to_connect(rounds.as_ref(), &finished.envelope.outcome, context)
        {
            return sent;
        }
        match (finished.envelope.outcome, finished.tool) {
            (Ok(value), Some(tool)) if tool.meta().content => Ok(content(&value).into()),
            (Ok(value), tool) => {
                let wrapped =
                    tool.is_some_and(|t| crate::schema::walk::wraps_output(t.output_schema()));
                Ok(success(value, wrapped).into())
            }
            (Err(e), tool) => match e.kind().jsonrpc_code() {
                // The pipeline's "no such tool" (a tool's own error of that type comes with its
                // tool): a protocol error.
                Some(code) if tool.is_none() => Err(protocol_error(name, &e, code)),
                _ => Ok(failure(&e).into()),
            },
        }
    }
}

impl McpServer {
    /// A call that needs the caller's account elsewhere, to a client that opens URLs: sent to
    /// the page where they connect it. On 2026-07-28 it is asked once, as a URL elicitation in
    /// an input-required result, and the call made again goes through if they did; before, it
    /// is the error `-32042` with that URL elicitation. `None` for any other outcome or client
    /// (a tool error then names the page).
    fn sent_to_connect(
        &self,
        rounds: Option<&input::Rounds>,
        outcome: &Result<Value, crate::ToolError>,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        let Err(e) = outcome else {
            return None;
        };
        if *e.kind() != crate::ErrorKind::AUTHORIZATION_REQUIRED || !peer::opens_urls(context) {
            return None;
        }
        let Some(rounds) = rounds else {
            return super::results::url_required(e).map(Err);
        };
        if rounds.given.contains_key(CONNECT_INPUT) {
            return None;
        }
        let question = connect_question(e)?;
        let round = input::Round {
            call: rounds.round.call.clone(),
            answers: rounds.round.answers.clone(),
            confirm: None,
        };
        Some(Ok(self.ask_again(&rounds.bound, &round, question).into()))
    }
}

/// The name of the question that sends a caller to connect an account (2026-07-28).
const CONNECT_INPUT: &str = "connect_account";

/// The URL elicitation of an `authorization_required` error, as the one question of an
/// input-required result.
fn connect_question(e: &crate::ToolError) -> Option<std::collections::BTreeMap<String, Value>> {
    let details = e.details()?;
    let request = serde_json::json!({
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "message": e.message(),
            "url": details["url"].as_str()?,
            "elicitationId": details["elicitation_id"].as_str()?,
        }
    });
    Some(std::collections::BTreeMap::from([(
        CONNECT_INPUT.to_owned(),
        request,
    )]))
}
