//! A call by a caller, and the question put to the person behind it when the call needs
//! confirmation and the caller carries an [`Ask`](crate::tool::Ask): call, ask, redeem the
//! token on a yes.

use std::future::Future;

use futures_util::future::Either;
use tokio_util::sync::CancellationToken;

use crate::catalog::Catalog;
use crate::tool::Answer;
use crate::tool::caller::Caller;
use crate::tool::error::ToolError;

use super::{Called, Input, Pipeline, cancelled};

impl Pipeline {
    /// Calls the tool `name` of `catalog` with `input` for `caller`, asking the person behind
    /// the caller when the call needs confirmation and the caller can ask.
    pub(crate) fn call_by<'a>(
        &'a self,
        catalog: &'a Catalog,
        name: &'a str,
        input: Input<'a>,
        caller: Caller,
    ) -> impl Future<Output = Called> + Send + 'a {
        // Only a tool that needs confirmation can be asked about: any other call runs once,
        // with no copy of its arguments and caller kept for a second attempt, and its future
        // is the pipeline's alone.
        let ask = caller.ask().filter(|_| {
            catalog
                .get(name)
                .is_some_and(|t| t.meta().annotations.needs_confirmation())
        });
        match ask.cloned() {
            None => Either::Left(self.call(catalog, name, input, catalog.context(caller))),
            Some(ask) => Either::Right(Box::pin(self.call_asking(
                catalog,
                name,
                input.into_value(),
                caller,
                ask,
            ))),
        }
    }

    /// A call that needs confirmation by a caller that can ask: called, asked, and called again
    /// with the token on a yes.
    async fn call_asking(
        &self,
        catalog: &Catalog,
        name: &str,
        args: serde_json::Value,
        caller: Caller,
        ask: std::sync::Arc<dyn crate::tool::Ask>,
    ) -> Called {
        let call = |args, caller: Caller| {
            self.call(catalog, name, Input::Value(args), catalog.context(caller))
        };
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
            Answer::Deferred => {
                first.question = Some(confirmation.clone());
                first
            }
        }
    }
}
