//! Change notifications every replica hears: [`RedisNotifier`], Redis's publish/subscribe.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use tokio::sync::broadcast;

use super::Redis;
use crate::tool::error::ToolError;
use crate::tool::notify::{Change, Notifier};

/// The longest wait before subscribing again after the subscription was lost.
const MAX_RETRY: Duration = Duration::from_secs(5);

/// A [`Notifier`] shared by every replica through Redis's publish/subscribe, on the channel
/// `{prefix}changes`: a change published on one replica reaches the subscribers of all of
/// them (this one included, through Redis). Made by [`Redis::notifier`]; it subscribes to the
/// channel when its first subscriber (an MCP session) comes.
///
/// A change published while Redis cannot be reached is delivered to this replica's
/// subscribers only, and logged. While the subscription is lost, it is made again (after
/// 50 ms, doubling up to 5 s); changes published meanwhile are missed, as Redis's
/// publish/subscribe keeps nothing.
#[derive(Clone)]
pub struct RedisNotifier {
    inner: Arc<Inner>,
}

struct Inner {
    redis: Redis,
    channel: String,
    local: broadcast::Sender<Change>,
    /// The task that listens, started by the first subscriber.
    listener: Listener,
}

/// The task that listens to a channel: started once, stopped when dropped.
#[derive(Default)]
pub(super) struct Listener(std::sync::OnceLock<tokio::task::AbortHandle>);

impl Listener {
    /// Runs the task `listen` makes, unless one runs already. Must be called within a Tokio
    /// runtime.
    pub(super) fn start<F>(&self, listen: impl FnOnce() -> F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.0.get_or_init(|| tokio::spawn(listen()).abort_handle());
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(listener) = self.0.get() {
            listener.abort();
        }
    }
}

impl std::fmt::Debug for RedisNotifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisNotifier")
            .field("channel", &self.inner.channel)
            .finish_non_exhaustive()
    }
}

impl RedisNotifier {
    /// A notifier on the channel `{prefix}changes`; it listens from its first subscriber on.
    pub(super) fn new(redis: Redis) -> Self {
        Self {
            inner: Arc::new(Inner {
                channel: redis.key("changes"),
                redis,
                local: broadcast::channel(1024).0,
                listener: Listener::default(),
            }),
        }
    }
}

/// Subscribes to `channel` and passes every change heard to `local`.
async fn listen(redis: Redis, channel: String, local: broadcast::Sender<Change>) {
    subscribed(redis, channel, "change notifications", move |payload| {
        match serde_json::from_str::<Change>(payload) {
            Ok(change) => {
                let _ = local.send(change);
            }
            Err(e) => {
                tracing::warn!(target: "tool_runtime::redis", error = %e, "an unreadable change notification was ignored");
            }
        }
    })
    .await;
}

/// Publishes `payload` on `channel`; `what` names the operation in errors.
pub(super) async fn publish(
    redis: &Redis,
    what: &str,
    channel: &str,
    payload: String,
) -> Result<(), ToolError> {
    let channel = channel.to_owned();
    redis
        .run(what, |mut c| async move {
            ::redis::cmd("PUBLISH")
                .arg(&channel)
                .arg(&payload)
                .query_async::<i64>(&mut c)
                .await
        })
        .await
        .map(drop)
}

/// Subscribes to `channel` and hands every message heard to `heard`, subscribing again
/// whenever the subscription is lost (after 50 ms, doubling up to 5 s); `what` names the
/// messages in the log. Runs until aborted.
pub(super) async fn subscribed(
    redis: Redis,
    channel: String,
    what: &'static str,
    mut heard: impl FnMut(&str) + Send,
) {
    let mut wait = Duration::from_millis(50);
    loop {
        let subscribed = async {
            let (client, _) = redis.options.client().map_err(|e| e.message().to_owned())?;
            let mut pubsub = client.get_async_pubsub().await.map_err(|e| e.to_string())?;
            pubsub
                .subscribe(&channel)
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(pubsub)
        };
        match subscribed.await {
            Ok(pubsub) => {
                wait = Duration::from_millis(50);
                let mut messages = pubsub.into_on_message();
                while let Some(message) = messages.next().await {
                    if let Ok(payload) = message.get_payload::<String>() {
                        heard(&payload);
                    }
                }
                tracing::warn!(target: "tool_runtime::redis", location = %redis.location(), what, "a subscription was lost; subscribing again");
            }
            Err(e) => {
                tracing::warn!(target: "tool_runtime::redis", location = %redis.location(), what, error = %redis.options.scrub(&e), "cannot subscribe");
            }
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(MAX_RETRY);
    }
}

impl Notifier for RedisNotifier {
    fn publish(&self, change: Change) {
        let inner = Arc::clone(&self.inner);
        let Ok(payload) = serde_json::to_string(&change) else {
            return;
        };
        // Publishing waits for Redis; callers (a tool) do not.
        tokio::spawn(async move {
            let sent = publish(&inner.redis, "PUBLISH", &inner.channel, payload).await;
            if let Err(e) = sent {
                tracing::warn!(target: "tool_runtime::redis", error = %e, "a change reached this replica's subscribers only");
                let _ = inner.local.send(change);
            }
        });
    }

    /// Must be called within a Tokio runtime: the first subscriber starts the listener.
    fn subscribe(&self) -> broadcast::Receiver<Change> {
        let receiver = self.inner.local.subscribe();
        let inner = &self.inner;
        inner.listener.start(|| {
            listen(
                inner.redis.clone(),
                inner.channel.clone(),
                inner.local.clone(),
            )
        });
        receiver
    }
}
