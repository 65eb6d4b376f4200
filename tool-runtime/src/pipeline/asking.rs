//! Asking the person behind a caller to confirm a destructive call, for the front ends that
//! can: call, ask through the front end's [`Ask`], redeem the token on a yes.

use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::layers::confirm::{Answer, Ask};
use crate::tool::context::Caller;
use crate::tool::envelope::Envelope;
use crate::tool::error::ToolError;

use super::{Input, Pipeline, cancelled};

impl Pipeline {
    /// See [`Registry::call_asking`](crate::Registry::call_asking).
    pub(crate) async fn call_asking<A: Ask>(
        &self,
        catalog: &Catalog,
        name: &str,
        args: Value,
        caller: Caller,
        ask: &A,
    ) -> Envelope {
        let call = |args, caller: Caller| {
            let ctx = caller.into_context(catalog.state.clone());
            self.call(catalog, name, Input::Value(args), ctx)
        };
        let mut first = call(args.clone(), caller.clone()).await;
        let Some(confirmation) = first.error().and_then(ToolError::confirmation) else {
            return first;
        };
        let answer = match caller.cancellation_token() {
            Some(cancel) => tokio::select! {
                answer = ask.ask(confirmation) => answer,
                () = cancel.cancelled() => {
                    first.outcome = Err(cancelled());
                    return first;
                }
            },
            None => ask.ask(confirmation).await,
        };
        match answer {
            Answer::Yes => {
                let token = confirmation.token.clone();
                call(args, caller.confirmation(token)).await
            }
            Answer::No => {
                first.outcome = Err(crate::layers::confirm::declined(name));
                first
            }
            Answer::Unasked(hint) => {
                if let (Some(hint), Err(e)) = (hint, &mut first.outcome) {
                    let mut details = e.details().cloned().unwrap_or_else(|| json!({}));
                    details["hint"] = Value::String(hint);
                    *e = e.clone().with_details(details);
                }
                first
            }
        }
    }
}
