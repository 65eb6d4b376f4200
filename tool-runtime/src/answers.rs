//! Answers that reach another replica. A client answers a request its MCP session's server sent
//! it mid-call (elicitation, sampling, a roots listing) with a `POST` that the load balancer
//! routes on the session id, which names the replica that made the session, not the one whose
//! call waits. The two differ once a session has moved and come back: its replica stopped,
//! another restored the session and served a call that asked its client something, then the
//! first replica was back before the answer. An [`AnswerRelay`] offers such an answer to every
//! replica; the one that sent the request takes it, and the call goes on there.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use futures_util::future::BoxFuture;
use rmcp::model::ClientJsonRpcMessage;

/// How one `/mcp` takes an answer offered by a replica: given the session id and the answer,
/// it says whether it sent that session's client the request answered and took the answer.
pub type AnswerTaker = dyn Fn(&str, &ClientJsonRpcMessage) -> bool + Send + Sync;

/// Carries a client's answer between the replicas of a deployment, from the replica the answer
/// reached to the one that sent the request it answers
/// ([`ServerOptions::mcp_answer_relay`](crate::http::ServerOptions::mcp_answer_relay)).
/// [`MemoryAnswerRelay`] joins servers in one process; across processes, one over Redis
/// ([`Redis::answer_relay`](crate::redis::Redis::answer_relay), feature `redis`).
///
/// `/mcp` offers an answer only when it did not send the request itself, and answers the
/// client `202` if a replica took it, else `400`, as a server without a relay answers any
/// answer to a request it never sent.
pub trait AnswerRelay: Send + Sync + 'static {
    /// Offers `answer`, which session `session`'s client sent to a request this replica did
    /// not send, to every replica's takers (this one's included). Resolves to whether one took
    /// it; a relay that cannot tell within a few seconds, or cannot reach the others, says no.
    fn offer(&self, session: &str, answer: &ClientJsonRpcMessage) -> BoxFuture<'static, bool>;

    /// Adds the way this process takes offered answers, for as long as `taker` lives.
    fn take_with(&self, taker: Weak<AnswerTaker>);
}

/// An [`AnswerRelay`] between the servers of one process (tests, a router mounting `/mcp`
/// twice), beside a [`MemorySessionStore`](crate::mcp::MemorySessionStore); clones share the
/// takers.
///
/// ```
/// # #[cfg(feature = "http")] {
/// use std::sync::Arc;
/// use tool_runtime::http::ServerOptions;
/// use tool_runtime::mcp::{MemoryAnswerRelay, MemorySessionStore};
///
/// let (store, relay) = (Arc::new(MemorySessionStore::default()), Arc::new(MemoryAnswerRelay::default()));
/// let a = ServerOptions::default().mcp_session_store(store.clone()).mcp_answer_relay(relay.clone());
/// let b = ServerOptions::default().mcp_session_store(store).mcp_answer_relay(relay);
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemoryAnswerRelay(Arc<Takers>);

impl AnswerRelay for MemoryAnswerRelay {
    fn offer(&self, session: &str, answer: &ClientJsonRpcMessage) -> BoxFuture<'static, bool> {
        let taken = self.0.take(session, answer);
        Box::pin(std::future::ready(taken))
    }

    fn take_with(&self, taker: Weak<AnswerTaker>) {
        self.0.add(taker);
    }
}

/// The takers of one process, each held weakly.
#[derive(Default)]
pub(crate) struct Takers(Mutex<Vec<Weak<AnswerTaker>>>);

impl std::fmt::Debug for Takers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Takers")
            .field("count", &self.live().len())
            .finish()
    }
}

impl Takers {
    pub(crate) fn add(&self, taker: Weak<AnswerTaker>) {
        let mut takers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        takers.retain(|t| t.strong_count() > 0);
        takers.push(taker);
    }

    /// Whether one of them took `answer` of session `session`.
    pub(crate) fn take(&self, session: &str, answer: &ClientJsonRpcMessage) -> bool {
        self.live().iter().any(|take| take(session, answer))
    }

    /// The takers still alive, outside the lock (a taker may offer in turn).
    fn live(&self) -> Vec<Arc<AnswerTaker>> {
        let takers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        takers.iter().filter_map(Weak::upgrade).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(id: i64) -> ClientJsonRpcMessage {
        serde_json::from_value(serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}}))
            .unwrap()
    }

    #[tokio::test]
    async fn an_offer_is_taken_by_a_live_taker_that_sent_the_request_only() {
        let relay = MemoryAnswerRelay::default();
        assert!(!relay.offer("s", &answer(1)).await, "no taker yet");
        let asked: Arc<AnswerTaker> = Arc::new(|session, answer| {
            session == "s"
                && matches!(answer, rmcp::model::JsonRpcMessage::Response(r) if r.id == rmcp::model::RequestId::Number(1))
        });
        relay.clone().take_with(Arc::downgrade(&asked));
        assert!(relay.offer("s", &answer(1)).await);
        assert!(!relay.offer("s", &answer(2)).await, "another request");
        assert!(!relay.offer("t", &answer(1)).await, "another session");
        drop(asked);
        assert!(
            !relay.offer("s", &answer(1)).await,
            "a taker gone takes nothing"
        );
    }
}
