//! `POST /agent`: one agent run, its events streamed as server-sent events.
//!
//! The body: `{"prompt": "...", "history": [...], "tier": "fast", "chat_id": "..."}` (only
//! `prompt` required; `history` is the `messages` of an earlier run's transcript). The answer
//! is `text/event-stream`, one event per [`Event`](crate::agent::Event) named by its `type`
//! (`turn_started`, `text_delta`, `tool_call_started`, `tool_call_finished`, `usage`,
//! `model_switched`, `finished`) with the event as JSON data, then a `transcript` event with
//! the run's whole transcript (its `messages` continue the conversation). The run acts for the
//! authenticated caller (principal and roles); closing the connection cancels it.

use std::convert::Infallible;

use axum::extract::{Request, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use futures_util::stream::{self, Stream};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::agent::{Agent, Message, RunContext};
use crate::http::ServerOptions;
use crate::http::body;
use crate::http::front::context_of;
use crate::http::response::error_response;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentRequest {
    prompt: String,
    #[serde(default)]
    history: Vec<Message>,
    tier: Option<String>,
    chat_id: Option<String>,
}

/// What the route needs: the agent, and the body limits of the HTTP routes beside it.
struct Route {
    agent: Option<Agent>,
    body_limit: usize,
    max_depth: usize,
}

/// `POST /agent` running `agent`, reading bodies within the limits of `options`.
pub(super) fn route(agent: Option<Agent>, options: &ServerOptions) -> MethodRouter {
    let route = Route {
        agent,
        body_limit: options.requests.body_limit,
        max_depth: options.requests.max_depth,
    };
    post(run_agent).with_state(std::sync::Arc::new(route))
}

async fn run_agent(State(route): State<std::sync::Arc<Route>>, mut request: Request) -> Response {
    let front = context_of(&mut request);
    let Some(agent) = route.agent.clone() else {
        return error_response(
            None,
            body::invalid_request("no agent is configured on this server"),
            &front.id,
        );
    };
    let (parts, body_stream) = request.into_parts();
    let object = match body::json_object(
        &parts.headers,
        body_stream,
        route.body_limit,
        route.max_depth,
        false,
    )
    .await
    {
        Ok(o) => o,
        Err(e) => return error_response(None, e, &front.id),
    };
    let asked: AgentRequest = match serde_json::from_value(Value::Object(object)) {
        Ok(a) => a,
        Err(e) => {
            return error_response(
                None,
                body::invalid_request(format!(
                    "{e}; send {{\"prompt\": \"...\", \"history\": [...], \"tier\": \"...\", \"chat_id\": \"...\"}}"
                )),
                &front.id,
            );
        }
    };
    let mut context = RunContext::new("http");
    if let Some(chat) = asked.chat_id {
        context = context.chat_id(chat);
    }
    let mut run = agent.run(asked.prompt).history(asked.history);
    if let Some(who) = front.identity {
        context = context.user(who.principal.clone());
        run = run
            .principal(who.principal)
            .roles(who.roles)
            .scopes(who.scopes);
    }
    run = run.context(context);
    if let Some(tier) = asked.tier {
        run = run.tier(tier);
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = tokio_util::sync::CancellationToken::new();
    let run = run.events(tx).cancellation(cancel.clone());
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    // In the request's span: the run's `invoke_agent` continues the request's trace.
    let spawned = async move {
        let transcript = match run.await {
            Ok(output) => output.transcript,
            Err(e) => *e.transcript,
        };
        let _ = done_tx.send(transcript);
    };
    tokio::spawn(tracing::Instrument::instrument(spawned, front.span.clone()));
    Sse::new(events(rx, done_rx, cancel.drop_guard()))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// The run's events, then its transcript. Holds `guard`: when the client goes away the stream
/// is dropped and the run cancelled.
fn events(
    rx: tokio::sync::mpsc::UnboundedReceiver<crate::agent::Event>,
    done: tokio::sync::oneshot::Receiver<crate::agent::Transcript>,
    guard: tokio_util::sync::DropGuard,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let state = (rx, Some(done), guard);
    stream::unfold(state, |(mut rx, done, guard)| async move {
        if let Some(event) = rx.recv().await {
            let data = serde_json::to_value(&event).unwrap_or(Value::Null);
            let name = data["type"].as_str().unwrap_or("event").to_owned();
            let sse = SseEvent::default().event(name).data(data.to_string());
            return Some((Ok(sse), (rx, done, guard)));
        }
        let transcript = done?.await.ok()?;
        let data = json!(transcript).to_string();
        let sse = SseEvent::default().event("transcript").data(data);
        Some((Ok(sse), (rx, None, guard)))
    })
}
