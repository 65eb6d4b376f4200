//! Destructive tools confirmed through the MCP client: form elicitation, or on 2026-07-28 an
//! `InputRequiredResult` answered with the retried call.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::peer;
use crate::tool::{Answer, Ask, Confirmation};

/// The key of the confirmation question in an `InputRequiredResult` (protocol 2026-07-28).
pub(super) const CONFIRM_INPUT: &str = "confirm";

/// The user behind an MCP client: asked through form elicitation when the client declares it
/// (on 2026-07-28 the question goes back with the result, and the answer comes with the
/// retried call); never, otherwise.
pub(super) struct Elicit {
    /// The call's view of its client, which asks the question.
    pub(super) peer: Arc<peer::CallPeer>,
    /// The answer a 2026-07-28 client sent with its retried call.
    pub(super) answered: Option<bool>,
    /// Whether the question is asked inline, as an `InputRequiredResult`.
    pub(super) inline: bool,
}

impl Ask for Elicit {
    fn ask<'a>(&'a self, confirmation: &'a Confirmation) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            match self.answered {
                Some(false) => return Answer::No,
                // The accept came without the token of this call (none, expired, used, or
                // issued for other arguments or another caller): it confirms nothing.
                Some(true) => {
                    return Answer::Unasked(Some(
                        "the answer did not come with the request state of this call's question; call again to be asked"
                            .to_owned(),
                    ));
                }
                None => {}
            }
            if !self.peer.can_elicit() {
                return Answer::Unasked(Some(
                    "this client cannot ask its user (no elicitation capability), so destructive tools are refused"
                        .to_owned(),
                ));
            }
            // 2026-07-28: the question goes back as the call's answer, and the user's comes
            // with the retried call.
            if self.inline {
                return Answer::Deferred;
            }
            // A form with no fields: the question alone, answered by accepting or not.
            let form = json!({"type": "object", "properties": {}});
            match crate::tool::peer::Peer::elicit(&*self.peer, confirmation.question.clone(), form)
                .await
            {
                Ok(crate::tool::peer::Elicited::Accepted(_)) => Answer::Yes,
                Ok(_) => Answer::No,
                Err(e) => Answer::Unasked(Some(format!("asking the user failed: {}", e.message()))),
            }
        })
    }
}

/// The question of `confirmation` as the `inputRequests` of a 2026-07-28 input-required
/// result; its token goes in the request state the client sends back with its answer.
pub(super) fn question(confirmation: &Confirmation) -> BTreeMap<String, Value> {
    let request = json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": confirmation.question,
            "requestedSchema": {"type": "object", "properties": {}},
        }
    });
    BTreeMap::from([(CONFIRM_INPUT.to_owned(), request)])
}
