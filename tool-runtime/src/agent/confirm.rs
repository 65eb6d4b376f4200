//! The agent's confirmation callback as the pipeline's [`Ask`]: a destructive call asked of
//! the run's host, told to the run's events first.

use futures_util::future::BoxFuture;

use super::ConfirmFn;
use super::transcript::Event;
use crate::tool::{Answer, Ask, Confirmation};
use tokio::sync::mpsc;

/// The agent's [`confirm`](super::AgentBuilder::confirm) callback as the pipeline's [`Ask`]:
/// without one no one can be asked, and a destructive call ends as the
/// `confirmation_required` it is, as on every front end that cannot ask.
pub(super) struct ConfirmCallback {
    /// The host's callback, if it gave one.
    pub(super) confirm: Option<ConfirmFn>,
    /// Where the run's events go, if anyone follows them.
    pub(super) events: Option<mpsc::UnboundedSender<Event>>,
    pub(super) call_id: String,
}

impl Ask for ConfirmCallback {
    fn ask<'a>(&'a self, confirmation: &'a Confirmation) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let Some(confirm) = self.confirm.as_ref() else {
                return Answer::Unasked(Some(NO_ONE_TO_ASK.to_owned()));
            };
            if let Some(events) = &self.events {
                let _ = events.send(Event::ConfirmationRequested {
                    id: self.call_id.clone(),
                    question: confirmation.question.clone(),
                });
            }
            if confirm(confirmation.clone()).await {
                Answer::Yes
            } else {
                Answer::No
            }
        })
    }
}

/// The hint a destructive call gets where the host has no confirmation callback.
const NO_ONE_TO_ASK: &str =
    "no one can confirm calls in this run: the call was not run; tell the user what it would do";
