//! Asking the person behind a caller to confirm a destructive call, for the front ends that
//! can: call, ask through the front end's [`Ask`], redeem the token on a yes.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::catalog::Catalog;
use crate::layers::confirm::{Answer, Ask};
use crate::tool::caller::Caller;
use crate::tool::error::ToolError;

use super::{Called, Input, Pipeline, cancelled};

impl Pipeline {
    /// See [`Registry::call_asking`](crate::Registry::call_asking).
    pub(crate) async fn call_asking<A: Ask>(
        &self,
        catalog: &Catalog,
        name: &str,
        args: Value,
        caller: Caller,
        ask: &A,
    ) -> Called {
        let call = |args, caller: Caller| {
            self.call(catalog, name, Input::Value(args), catalog.context(caller))
        };
        // Only a tool that needs confirmation can be asked about: any other call runs once,
        // with no copy of its arguments and caller kept for a second attempt.
        let asks = catalog
            .get(name)
            .is_some_and(|t| t.meta().annotations.needs_confirmation());
        if !asks {
            return call(args, caller).await;
        }
        let mut first = call(args.clone(), caller.clone()).await;
        // Only the pipeline's own question about this tool: a tool's error that carries the
        // question of a call it made itself is its own outcome, not something to confirm here.
        let Some(confirmation) = first
            .envelope
            .error()
            .and_then(ToolError::confirmation)
            .filter(|c| c.tool == name)
        else {
            return first;
        };
        let cancel = caller.cancellation_token();
        let answer = match cancel {
            Some(cancel) => tokio::select! {
                biased;
                () = cancel.cancelled() => None,
                answer = ask.ask(confirmation) => Some(answer),
            },
            None => Some(ask.ask(confirmation).await),
        };
        // A caller gone while the user was asked, or right after the answer, runs nothing.
        let Some(answer) = answer.filter(|_| !cancel.is_some_and(CancellationToken::is_cancelled))
        else {
            first.envelope.outcome = Err(cancelled());
            return first;
        };
        match answer {
            Answer::Yes => {
                let token = confirmation.token.clone();
                call(args, caller.confirmation(token)).await
            }
            Answer::No => {
                first.envelope.outcome = Err(crate::layers::confirm::declined(name));
                first
            }
            Answer::Unasked(hint) => {
                if let Some(hint) = hint {
                    first.envelope.outcome = first.envelope.outcome.map_err(|e| e.with_hint(hint));
                }
                first
            }
        }
    }
}
