//! `RedisAnswerRelay`: a client's answer carried through Redis's publish/subscribe to the
//! replica that sent the request it answers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use futures_util::future::BoxFuture;
use rmcp::model::ClientJsonRpcMessage;
use tokio::sync::oneshot;

use super::Redis;
use super::notify::{Listener, publish, subscribed};
use crate::answers::{AnswerRelay, AnswerTaker, Takers};

/// The longest an offer waits for a replica to say it took the answer.
const OFFER_WAIT: Duration = Duration::from_secs(2);

/// An [`AnswerRelay`] through Redis's publish/subscribe, on the channel `{prefix}mcp-answers`:
/// an offer is published there, every replica's `/mcp` hears it, and the one that sent the
/// request answered takes the answer and publishes that it did. Made by
/// [`Redis::answer_relay`]; [`ServerOptions::redis`](crate::http::ServerOptions::redis) sets
/// it. It listens from the moment `/mcp` opens or restores a session, or offers an answer.
///
/// An offer waits at most two seconds to hear that a replica took it. Offers published while
/// a replica's subscription is lost (Redis unreachable) are missed by it, as Redis keeps
/// nothing: the client is answered `400` and the call that asked waits, as without a relay.
#[derive(Clone)]
pub struct RedisAnswerRelay {
    inner: Arc<Inner>,
}

struct Inner {
    redis: Redis,
    channel: String,
    takers: Takers,
    /// The offers of this replica waiting to hear that one was taken, by nonce.
    waiting: Mutex<HashMap<String, oneshot::Sender<()>>>,
    /// The task that listens, started by the first taker or offer.
    listener: Listener,
}

impl std::fmt::Debug for RedisAnswerRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisAnswerRelay")
            .field("channel", &self.inner.channel)
            .finish_non_exhaustive()
    }
}

/// What the replicas say on the channel.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Said {
    /// An answer that reached a replica that did not send its request.
    Offer {
        nonce: String,
        session: String,
        answer: Box<ClientJsonRpcMessage>,
    },
    /// The offer with this nonce was taken.
    Taken { nonce: String },
}

impl RedisAnswerRelay {
    /// A relay on the channel `{prefix}mcp-answers`; it listens from its first taker on.
    pub(super) fn new(redis: Redis) -> Self {
        Self {
            inner: Arc::new(Inner {
                channel: redis.key("mcp-answers"),
                redis,
                takers: Takers::default(),
                waiting: Mutex::default(),
                listener: Listener::default(),
            }),
        }
    }

    /// Starts the listener, once. Must be called within a Tokio runtime.
    fn listen(&self) {
        self.inner.listener.start(|| {
            let inner = Arc::downgrade(&self.inner);
            let (redis, channel) = (self.inner.redis.clone(), self.inner.channel.clone());
            subscribed(redis, channel, "relayed MCP answers", move |payload| {
                heard(&inner, payload);
            })
        });
    }
}

/// One message of the channel: an offer this replica's takers may take, or word that an offer
/// of this replica was taken.
fn heard(inner: &Weak<Inner>, payload: &str) {
    let Some(inner) = inner.upgrade() else {
        return;
    };
    match serde_json::from_str::<Said>(payload) {
        Ok(Said::Offer {
            nonce,
            session,
            answer,
        }) => {
            if inner.takers.take(&session, &answer) {
                tokio::spawn(async move { inner.publish(&Said::Taken { nonce }).await });
            }
        }
        Ok(Said::Taken { nonce }) => {
            let waiting = inner
                .waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&nonce);
            if let Some(waiting) = waiting {
                let _ = waiting.send(());
            }
        }
        Err(e) => {
            tracing::warn!(target: "tool_runtime::redis", error = %e, "an unreadable relayed MCP answer was ignored");
        }
    }
}

impl Inner {
    /// Publishes `said` on the channel; whether Redis took it.
    async fn publish(&self, said: &Said) -> bool {
        let Ok(payload) = serde_json::to_string(said) else {
            return false;
        };
        let sent = publish(
            &self.redis,
            "relaying an MCP answer",
            &self.channel,
            payload,
        )
        .await;
        if let Err(e) = &sent {
            tracing::warn!(target: "tool_runtime::redis", error = %e, "an MCP answer was not relayed");
        }
        sent.is_ok()
    }
}

/// An offer's place among those waiting, given up when the offer ends however it ends.
struct Waiting<'a> {
    inner: &'a Inner,
    nonce: String,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.inner
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.nonce);
    }
}

impl AnswerRelay for RedisAnswerRelay {
    /// Must be called within a Tokio runtime: it starts the listener if none runs.
    fn offer(&self, session: &str, answer: &ClientJsonRpcMessage) -> BoxFuture<'static, bool> {
        self.listen();
        let mut random = [0u8; 16];
        if getrandom::fill(&mut random).is_err() {
            tracing::warn!(target: "tool_runtime::redis", "no randomness for an offer's nonce: an MCP answer was not relayed");
            return Box::pin(std::future::ready(false));
        }
        let nonce = crate::tool::hex(&random);
        let inner = Arc::clone(&self.inner);
        let said = Said::Offer {
            nonce: nonce.clone(),
            session: session.to_owned(),
            answer: Box::new(answer.clone()),
        };
        Box::pin(async move {
            let (tx, taken) = oneshot::channel();
            let waiting = Waiting {
                inner: &inner,
                nonce,
            };
            inner
                .waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(waiting.nonce.clone(), tx);
            let taken = inner.publish(&said).await
                && matches!(tokio::time::timeout(OFFER_WAIT, taken).await, Ok(Ok(())));
            drop(waiting);
            taken
        })
    }

    /// Must be called within a Tokio runtime: it starts the listener if none runs.
    fn take_with(&self, taker: Weak<AnswerTaker>) {
        self.inner.takers.add(taker);
        self.listen();
    }
}
