//! How a front end puts a question to the person behind its caller: the [`Ask`] a [`Caller`]
//! carries, as it carries progress and the peer, and the [`Answer`].
//!
//! [`Caller`]: crate::Caller

use futures_util::future::BoxFuture;

use super::error::Confirmation;

/// How a front end puts a [`Confirmation`] to the person behind its caller (the CLI on a
/// terminal, MCP through elicitation, the agent through its host's callback). A caller that
/// carries one ([`Caller::asking`](crate::Caller::asking)) is asked when a call needs
/// confirmation: on a yes the token is redeemed in a second run of the pipeline.
pub trait Ask: Send + Sync {
    /// The user's answer to `confirmation`.
    fn ask<'a>(&'a self, confirmation: &'a Confirmation) -> BoxFuture<'a, Answer>;
}

/// An answer to a [`Confirmation`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Answer {
    /// Run the call: its token is redeemed in a second pipeline run.
    Yes,
    /// Do not run it: the call ends as `confirmation_declined`.
    No,
    /// The user cannot be asked here (no terminal, a client without elicitation): the call
    /// ends as the `confirmation_required` error itself, with this hint in its details when
    /// there is one.
    Unasked(Option<String>),
    /// The question goes back to the caller with the call's answer, and the user's answer
    /// comes with the call made again (MCP's input-required result): the call ends as the
    /// `confirmation_required` error, and its answer carries the question
    /// ([`Called::question`](crate::registry::Called::question)).
    Deferred,
}
