//! Input-required results (protocol 2026-07-28): a request whose tool, prompt or resource asks
//! its client for something (elicitation, sampling, the roots) ends with the questions, keyed by
//! name, and a sealed request state; the client makes the request again with the answers and
//! the state, and the item runs again from the top with every answer so far given back.
//!
//! The state is sealed (HMAC-SHA256, through the SDK's codec) with a key every replica shares,
//! and bound to the caller, the method, its target and a digest of its arguments, with an
//! expiry: any replica can take the next round, and a state altered, expired, or brought back by
//! another caller or for another request is refused. It is signed, not encrypted: it carries
//! only what the client itself sent (its earlier answers), the request id of the first round and
//! a confirmation token, which stays single-use in its store.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    InputRequiredResult, ProtocolVersion, RequestStateCodec, RequestStateError, SealOptions,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::input::{expected, read, wire};
use crate::tool::peer::{InputRequest, InputResponse};

/// Whether the request speaks `2026-07-28` or later: it stands alone, and asks with its answer.
pub(super) fn modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// How long a request state stays good: as long as a confirmation token.
const LIFETIME: Duration = crate::layers::confirm::TOKEN_LIFETIME;

/// What a request state carries from one round to the next.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Round {
    /// The request id of the first round: every round of the call is audited under it.
    pub(super) call: String,
    /// The answers of the earlier rounds, by question.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub(super) answers: Map<String, Value>,
    /// The confirmation token an accepted confirmation redeems.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) confirm: Option<String>,
}

/// Seals and opens request states.
pub(super) struct RequestStates {
    codec: RequestStateCodec,
}

impl RequestStates {
    /// States sealed with `key`, at least 32 bytes, the same on every replica.
    pub(super) fn new(key: Vec<u8>) -> Result<Self, RequestStateError> {
        Ok(Self {
            codec: RequestStateCodec::try_new(key)?,
        })
    }

    /// States sealed with a key of this process's own: good on this replica only.
    pub(super) fn random() -> Self {
        let mut key = vec![0_u8; RequestStateCodec::MIN_KEY_LENGTH];
        // Without the OS's randomness the key is all zeroes: still an HMAC key nobody was told,
        // but guessable, so say so.
        if getrandom::fill(&mut key).is_err() {
            tracing::error!("no randomness for the MCP request-state key; configure one");
        }
        Self::new(key).expect("a key of the minimum length")
    }

    /// `round` sealed for the request `bound` describes.
    pub(super) fn seal(&self, round: &Round, bound: &Binding) -> String {
        let payload = serde_json::to_vec(round).expect("a round serializes");
        self.codec.seal_with(
            &payload,
            &SealOptions::new().associated_data(&bound.0).ttl(LIFETIME),
        )
    }

    /// The round `sealed` carries, if it was sealed here for the request `bound` describes and
    /// has not expired; otherwise the JSON-RPC error the request is answered with.
    pub(super) fn open(&self, sealed: &str, bound: &Binding) -> Result<Round, ErrorData> {
        let refused = |why: &dyn std::fmt::Display| {
            ErrorData::invalid_params(
                format!(
                    "the requestState was refused ({why}): it is not one this server issued for \
                     this caller and this request, or it expired; make the request again without \
                     it to be asked again"
                ),
                None,
            )
        };
        let payload = self
            .codec
            .open_with(sealed, &bound.0)
            .map_err(|e| refused(&e))?;
        serde_json::from_slice(&payload).map_err(|e| refused(&e))
    }
}

/// What a request state is bound to: the caller, the method, its target (a tool's or a prompt's
/// name, a resource's URI) and a digest of its arguments.
pub(super) struct Binding(Vec<u8>);

impl Binding {
    pub(super) fn new(principal: Option<&str>, method: &str, target: &str, args: &Value) -> Self {
        let mut bytes = Vec::with_capacity(64 + target.len());
        for part in [principal.unwrap_or(""), method, target] {
            bytes.extend_from_slice(&(part.len() as u64).to_be_bytes());
            bytes.extend_from_slice(part.as_bytes());
        }
        bytes.push(u8::from(principal.is_some()));
        bytes.extend_from_slice(&crate::layers::confirm::digest(args));
        Self(bytes)
    }
}

/// A 2026-07-28 request's place in its call's rounds: what its state is bound to, the round
/// it continues, and the answers it brings.
pub(super) struct Rounds {
    pub(super) bound: Binding,
    pub(super) round: Round,
    pub(super) given: Map<String, Value>,
}

/// One run's questions and answers, on a request whose client answers with the request made
/// again: the answers given (the earlier rounds' and this request's `inputResponses`), those the
/// run read, and the questions it asked that have none yet.
#[derive(Default)]
pub(super) struct Asking {
    given: Map<String, Value>,
    used: Mutex<Map<String, Value>>,
    pending: Mutex<BTreeMap<String, Value>>,
    malformed: Mutex<Option<String>>,
}

/// How a run's questions ended.
pub(super) enum Asked {
    /// It asked nothing it had no answer for.
    Answered,
    /// An answer it read was not of its question's kind: the request's JSON-RPC error.
    Malformed(ErrorData),
    /// Questions without answers, and the answers read so far: the round's result.
    Pending(BTreeMap<String, Value>, Map<String, Value>),
}

impl Asking {
    pub(super) fn new(given: Map<String, Value>) -> Self {
        Self {
            given,
            ..Self::default()
        }
    }

    /// The answer given to `request` under `key`; else the question is kept for the round's
    /// result and the run is told that input is required.
    pub(super) fn ask(
        &self,
        key: &str,
        request: &InputRequest,
    ) -> Result<InputResponse, ToolError> {
        if let Some(answer) = self.given.get(key) {
            let Some(response) = read(request, answer) else {
                let message = format!("inputResponses.{key} is not {}", expected(request));
                self.malformed
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get_or_insert_with(|| message.clone());
                return Err(ToolError::new(ErrorKind::INVALID_REQUEST, message));
            };
            self.used
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(key.to_owned(), answer.clone());
            return Ok(response);
        }
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key.to_owned(), wire(request));
        Err(ToolError::new(
            ErrorKind::INPUT_REQUIRED,
            format!("the call asked its client for `{key}`; it runs again with the answer"),
        ))
    }

    /// How the run's questions ended.
    pub(super) fn finish(&self) -> Asked {
        if let Some(message) = take(&self.malformed) {
            return Asked::Malformed(ErrorData::invalid_params(message, None));
        }
        let pending: BTreeMap<String, Value> = take(&self.pending);
        if pending.is_empty() {
            Asked::Answered
        } else {
            Asked::Pending(pending, take(&self.used))
        }
    }
}

/// The input-required result asking `questions`, with the sealed `state`.
pub(super) fn input_required(
    questions: BTreeMap<String, Value>,
    state: String,
) -> InputRequiredResult {
    let requests = questions
        .into_iter()
        .map(|(key, request)| {
            let request = serde_json::from_value(request).expect("an input request rmcp reads");
            (key, request)
        })
        .collect();
    InputRequiredResult::new(Some(requests), Some(state))
}

/// What `m` holds, leaving it empty.
fn take<T: Default>(m: &Mutex<T>) -> T {
    std::mem::take(&mut *m.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::peer::Elicited;
    use serde_json::json;

    fn states() -> RequestStates {
        RequestStates::new(b"0123456789abcdef0123456789abcdef".to_vec()).unwrap()
    }

    #[test]
    fn a_state_opens_only_for_its_own_caller_request_and_arguments() {
        let states = states();
        let bound = |who: Option<&str>, args: Value| Binding::new(who, "tools/call", "t", &args);
        let round = Round {
            call: "r1".into(),
            answers: Map::from_iter([("q".to_owned(), json!({"action": "decline"}))]),
            confirm: None,
        };
        let sealed = states.seal(&round, &bound(Some("alice"), json!({"a": 1})));
        let opened = states
            .open(&sealed, &bound(Some("alice"), json!({"a": 1})))
            .unwrap();
        assert_eq!(opened.call, "r1");
        assert_eq!(opened.answers["q"], json!({"action": "decline"}));
        for other in [
            bound(Some("bob"), json!({"a": 1})),
            bound(None, json!({"a": 1})),
            bound(Some("alice"), json!({"a": 2})),
            Binding::new(Some("alice"), "prompts/get", "t", &json!({"a": 1})),
        ] {
            assert!(states.open(&sealed, &other).is_err());
        }
        let altered = format!("{sealed}x");
        assert!(
            states
                .open(&altered, &bound(Some("alice"), json!({"a": 1})))
                .is_err()
        );
        assert!(
            RequestStates::random()
                .open(&sealed, &bound(Some("alice"), json!({"a": 1})))
                .is_err(),
            "another key"
        );
    }

    #[test]
    fn answers_are_read_by_the_kind_of_their_question() {
        let asking = Asking::new(Map::from_iter([
            (
                "name".to_owned(),
                json!({"action": "accept", "content": {"name": "Ann"}}),
            ),
            (
                "roots".to_owned(),
                json!({"roots": [{"uri": "file:///w", "name": "w"}]}),
            ),
            ("bad".to_owned(), json!(12345)),
            ("extra".to_owned(), json!({"action": "accept"})),
        ]));
        let elicit = InputRequest::Elicit {
            message: "Name?".into(),
            schema: json!({"type": "object"}),
        };
        assert!(matches!(
            asking.ask("name", &elicit),
            Ok(InputResponse::Elicited(Elicited::Accepted(c))) if c["name"] == "Ann"
        ));
        assert!(matches!(
            asking.ask("roots", &InputRequest::ListRoots),
            Ok(InputResponse::Roots(r)) if r[0].uri == "file:///w"
        ));
        let pending = asking.ask("colour", &elicit).unwrap_err();
        assert_eq!(pending.kind(), &ErrorKind::INPUT_REQUIRED);
        let Asked::Pending(questions, used) = asking.finish() else {
            panic!("a question without an answer");
        };
        assert_eq!(questions["colour"]["method"], "elicitation/create");
        assert_eq!(
            used.keys().collect::<Vec<_>>(),
            ["name", "roots"],
            "only the answers read are carried on"
        );
        let bad = Asking::new(Map::from_iter([("bad".to_owned(), json!(12345))]));
        assert!(bad.ask("bad", &elicit).is_err());
        assert!(matches!(bad.finish(), Asked::Malformed(_)));
    }
}
