//! Where a request stands among its call's rounds on protocol 2026-07-28, for `tools/call`,
//! `prompts/get` and `resources/read` alike: its request state opened, the view of its client
//! that keeps its questions, the input-required result of a round that asked, and the error of
//! one that needed what its client did not declare.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::{McpServer, input, peer};
use crate::tool::caller::Caller;

impl McpServer {
    /// What seals the request state of input-required results.
    fn request_states(&self) -> Arc<input::RequestStates> {
        Arc::clone(
            &self
                .inner
                .request_states
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Where a request of `method` on `target` with `args` stands among its call's rounds: on
    /// 2026-07-28, the round its request state continues (opened for this caller and request,
    /// or refused; a new one without) and the answers it brings, the earlier rounds' and its
    /// own `inputResponses` (an earlier round's answer is not asked again, so not replaced);
    /// before, none. Every round of a call runs under the first round's request id.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rounds(
        &self,
        context: &RequestContext<RoleServer>,
        caller: Caller,
        method: &str,
        target: &str,
        args: &Value,
        state: Option<&str>,
        responses: Option<&rmcp::model::InputResponses>,
    ) -> Result<(Caller, Option<input::Rounds>), ErrorData> {
        if !input::modern(context) {
            return Ok((caller, None));
        }
        let bound = input::Binding::new(caller.given_principal(), method, target, args);
        let mut round = match state {
            Some(sealed) => self.request_states().open(sealed, &bound)?,
            None => input::Round::default(),
        };
        let mut given = round.answers.clone();
        for (key, answer) in responses.into_iter().flatten() {
            given.entry(key.clone()).or_insert_with(|| answer.clone());
        }
        if round.call.is_empty() {
            round.call = caller
                .given_request_id()
                .map_or_else(crate::tool::caller::next_request_id, str::to_owned);
        }
        let caller = caller.request_id(round.call.clone());
        Ok((
            caller,
            Some(input::Rounds {
                bound,
                round,
                given,
            }),
        ))
    }

    /// The request's view of its client, for the tool, prompt or resource it runs: asking it
    /// with the request's answer when `rounds` are given.
    pub(super) fn call_peer(
        &self,
        context: &RequestContext<RoleServer>,
        rounds: Option<&input::Rounds>,
    ) -> Arc<peer::CallPeer> {
        let mut peer = peer::CallPeer::new(
            context,
            Arc::clone(&self.session.log_level),
            self.inner.stopping.get().cloned(),
        );
        if let Some(rounds) = rounds {
            peer = peer.answering(rounds.given.clone());
        }
        Arc::new(peer)
    }

    /// The input-required result of a run that `asked` what it had no answer for, carrying the
    /// answers it read and `confirm` on to the next round; `None` when it asked nothing more;
    /// the request's error when an answer was not of its question's kind.
    pub(super) fn asked_again(
        &self,
        rounds: &input::Rounds,
        asked: input::Asked,
        confirm: Option<String>,
    ) -> Result<Option<rmcp::model::InputRequiredResult>, ErrorData> {
        match asked {
            input::Asked::Answered => Ok(None),
            input::Asked::Malformed(e) => Err(e),
            input::Asked::Pending(questions, answers) => {
                let round = input::Round {
                    call: rounds.round.call.clone(),
                    answers,
                    confirm,
                };
                Ok(Some(self.ask_again(&rounds.bound, &round, questions)))
            }
        }
    }

    /// After a prompt or resource ran for a 2026-07-28 request: the input-required result of a
    /// round that asked, the request's error when it failed for a capability its client did
    /// not declare (or an answer was not of its question's kind), else `None`: its outcome
    /// stands.
    pub(super) fn after_round<T>(
        &self,
        rounds: Option<&input::Rounds>,
        peer: &peer::CallPeer,
        outcome: &Result<T, crate::ToolError>,
    ) -> Result<Option<rmcp::model::InputRequiredResult>, ErrorData> {
        let Some(rounds) = rounds else {
            return Ok(None);
        };
        if let Some(result) = self.asked_again(rounds, peer.asked(), None)? {
            return Ok(Some(result));
        }
        match outcome {
            Err(e) => undeclared(peer, e).map_or(Ok(None), Err),
            Ok(_) => Ok(None),
        }
    }

    /// The input-required result asking `questions`, whose sealed state carries `round` on.
    pub(super) fn ask_again(
        &self,
        bound: &input::Binding,
        round: &input::Round,
        questions: std::collections::BTreeMap<String, Value>,
    ) -> rmcp::model::InputRequiredResult {
        input::input_required(questions, self.request_states().seal(round, bound))
    }
}

/// On 2026-07-28, where capabilities come with each request: the request's error when its
/// item failed for want of a capability the request did not declare (`-32021`, which the SDK
/// answers with HTTP 400), naming each in `requiredCapabilities`.
pub(super) fn undeclared(peer: &peer::CallPeer, error: &crate::ToolError) -> Option<ErrorData> {
    if *error.kind() != crate::ErrorKind::UNSUPPORTED {
        return None;
    }
    let refused = peer.refused();
    if refused.is_empty() {
        return None;
    }
    let required: serde_json::Map<String, Value> = refused
        .iter()
        .map(|capability| ((*capability).to_owned(), serde_json::json!({})))
        .collect();
    Some(ErrorData::new(
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "this request needs the client capabilities {}, which its _meta does not declare",
            refused.join(", ")
        ),
        Some(serde_json::json!({"requiredCapabilities": required})),
    ))
}
