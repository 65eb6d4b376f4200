//! The events of `/mcp`'s event streams, kept so that a client whose stream broke off can
//! resume it with `Last-Event-ID`: [`MemoryEventStore`], bounded, behind the MCP SDK's
//! [`EventStore`] seam.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::JsonRpcMessage;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::store::{
    EventId, EventStore, EventStoreError, EventStream,
};
use tokio::sync::watch;

/// The events of `/mcp`'s event streams in memory, kept while a client could resume them: a
/// stream under way, and a finished one (its last message a response or an error) for
/// [`keep_finished_for`](Self::keep_finished_for) after it finished, long enough for a client
/// that missed its end to come back. Bounded besides: at most so many events a stream, so many
/// streams and so many bytes (the messages' JSON) in all; past a bound, finished streams go
/// first, oldest first, then the oldest events of the others.
/// [`ServerOptions`](crate::http::ServerOptions) has one by default; clones share the events.
///
/// Each event gets an id no client can guess (a random key of its stream and a sequence
/// number), as the id is all a resuming client presents. A replay yields the events of that
/// event's stream after it and then, while the stream is not finished, the ones stored later,
/// as they come. A replay from an id not kept (never given, or dropped) fails: the SDK then
/// answers the `GET` with an empty stream, and the client has lost what it missed.
///
/// The events are this process's: replicas behind a load balancer that does not send a
/// session's requests to one replica need a store they share.
///
/// ```
/// # #[cfg(feature = "http")] {
/// use std::sync::Arc;
/// use std::time::Duration;
/// use tool_runtime::http::ServerOptions;
/// use tool_runtime::mcp::MemoryEventStore;
///
/// let events = MemoryEventStore::default()
///     .keep_finished_for(Duration::from_secs(60))
///     .max_events_per_stream(64)
///     .max_bytes(4 << 20);
/// let options = ServerOptions::default().mcp_event_store(Arc::new(events));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct MemoryEventStore(Arc<Mutex<Events>>);

/// What [`MemoryEventStore`] keeps.
#[derive(Debug)]
struct Events {
    max_per_stream: usize,
    max_streams: usize,
    max_bytes: usize,
    keep_finished: Duration,
    /// The streams by their key (the part of an event id before `-`).
    streams: HashMap<Arc<str>, Log>,
    /// The key of each stream, by the SDK's stream id.
    keys: HashMap<String, Arc<str>>,
    /// Every event kept, oldest first: its sequence number and its stream's key.
    order: BTreeMap<u64, Arc<str>>,
    /// The streams that finished, in the order they did, with when. An entry whose stream
    /// went on or was dropped since is passed over.
    finished: VecDeque<(Instant, Arc<str>)>,
    bytes: usize,
    next: u64,
}

/// One stream's events.
#[derive(Debug)]
struct Log {
    stream_id: String,
    events: VecDeque<Stored>,
    /// When the last event, a response or an error, was stored: a replay that has delivered
    /// it ends.
    finished: Option<Instant>,
    /// Wakes the replays following this stream, made by the first; dropped with the stream,
    /// which ends them.
    changed: Option<watch::Sender<()>>,
}

#[derive(Debug)]
struct Stored {
    seq: u64,
    bytes: usize,
    event: ServerSseMessage,
}

/// What a bound or an expiry dropped, freed once the lock is let go.
type Dropped = Vec<Stored>;

impl Default for MemoryEventStore {
    /// Finished streams kept [`DEFAULT_KEEP_FINISHED`](Self::DEFAULT_KEEP_FINISHED);
    /// [`DEFAULT_EVENTS_PER_STREAM`](Self::DEFAULT_EVENTS_PER_STREAM) events a stream,
    /// [`DEFAULT_STREAMS`](Self::DEFAULT_STREAMS) streams,
    /// [`DEFAULT_BYTES`](Self::DEFAULT_BYTES) bytes.
    fn default() -> Self {
        Self(Arc::new(Mutex::new(Events {
            max_per_stream: Self::DEFAULT_EVENTS_PER_STREAM,
            max_streams: Self::DEFAULT_STREAMS,
            max_bytes: Self::DEFAULT_BYTES,
            keep_finished: Self::DEFAULT_KEEP_FINISHED,
            streams: HashMap::new(),
            keys: HashMap::new(),
            order: BTreeMap::new(),
            finished: VecDeque::new(),
            bytes: 0,
            next: 0,
        })))
    }
}

impl MemoryEventStore {
    /// How long a finished stream is kept by default: 10 seconds, three times the `retry`
    /// the SDK tells clients to wait before they reconnect.
    pub const DEFAULT_KEEP_FINISHED: Duration = Duration::from_secs(10);
    /// The events kept of each stream by default: 256.
    pub const DEFAULT_EVENTS_PER_STREAM: usize = 256;
    /// The streams kept by default: 1,024 (a stream is a call's, or a session's
    /// notifications). Those under way are kept before those finished, so the bound shortens
    /// how long a finished stream stays only under more than 100 calls a second.
    pub const DEFAULT_STREAMS: usize = 1024;
    /// The bytes of messages kept by default: 16 MiB.
    pub const DEFAULT_BYTES: usize = 16 << 20;

    /// How long a stream is kept once finished, for a client that missed its end to resume
    /// it; a stream under way is kept while it goes on.
    #[must_use]
    pub fn keep_finished_for(self, keep: Duration) -> Self {
        self.events().keep_finished = keep;
        self
    }

    /// The most events kept of one stream (at least 1); its oldest are dropped beyond it.
    #[must_use]
    pub fn max_events_per_stream(self, max: usize) -> Self {
        self.events().max_per_stream = max.max(1);
        self
    }

    /// The most streams kept (at least 1); beyond it, the finished stream that finished first
    /// is dropped whole, or, with none finished, the stream with the oldest event.
    #[must_use]
    pub fn max_streams(self, max: usize) -> Self {
        self.events().max_streams = max.max(1);
        self
    }

    /// The most bytes of messages (their JSON) kept in all; beyond it, finished streams are
    /// dropped first, then the oldest events.
    #[must_use]
    pub fn max_bytes(self, max: usize) -> Self {
        self.events().max_bytes = max;
        self
    }

    /// The number of events kept.
    #[must_use]
    pub fn len(&self) -> usize {
        self.events().order.len()
    }

    /// Whether no event is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn events(&self) -> std::sync::MutexGuard<'_, Events> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn store(&self, stream_id: &str, event: &ServerSseMessage) -> EventId {
        // The copy and its size are made before the lock is taken, and what the bounds drop
        // is freed after it is let go: the lock is held for the bookkeeping alone.
        let mut event = event.clone();
        let bytes = size(&event);
        let finishes = matches!(
            event.message.as_deref(),
            Some(JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_))
        );
        let now = Instant::now();
        let mut dropped = Dropped::new();
        let id = {
            let mut events = self.events();
            let events = &mut *events;
            events.expire(now, &mut dropped);
            let key = if let Some(key) = events.keys.get(stream_id) {
                key.clone()
            } else {
                let key: Arc<str> = super::random_id().into();
                events.keys.insert(stream_id.to_owned(), key.clone());
                events.streams.insert(
                    key.clone(),
                    Log {
                        stream_id: stream_id.to_owned(),
                        events: VecDeque::new(),
                        finished: None,
                        changed: None,
                    },
                );
                key
            };
            let seq = events.next;
            events.next += 1;
            let id = format!("{key}-{seq}");
            event.event_id = Some(id.clone());
            let log = events.streams.get_mut(&key).expect("the stream just found");
            log.finished = finishes.then_some(now);
            log.events.push_back(Stored { seq, bytes, event });
            if let Some(changed) = &log.changed {
                changed.send_replace(());
            }
            if finishes {
                events.finished.push_back((now, key.clone()));
            }
            events.order.insert(seq, key.clone());
            events.bytes += bytes;
            events.bound(&key, &mut dropped);
            id
        };
        drop(dropped);
        id
    }

    /// The events of `last`'s stream after it, then those stored later while the stream is
    /// unfinished; `None` when `last` is not kept.
    fn replay(&self, last: &str) -> Option<EventStream> {
        let (key, seq) = last.rsplit_once('-')?;
        let seq: u64 = seq.parse().ok()?;
        let mut dropped = Dropped::new();
        let changes = {
            let mut events = self.events();
            events.expire(Instant::now(), &mut dropped);
            let log = events.streams.get_mut(key)?;
            log.events.binary_search_by_key(&seq, |s| s.seq).ok()?;
            log.changed
                .get_or_insert_with(|| watch::Sender::new(()))
                .subscribe()
        };
        drop(dropped);
        let follow = Follow {
            store: self.clone(),
            key: key.to_owned(),
            after: seq,
            changes,
            pending: VecDeque::new(),
        };
        Some(Box::pin(futures_util::stream::unfold(follow, Follow::next)))
    }
}

impl Events {
    /// Drops the streams that finished longer ago than they are kept.
    fn expire(&mut self, now: Instant, dropped: &mut Dropped) {
        while let Some((at, _)) = self.finished.front() {
            if now.saturating_duration_since(*at) < self.keep_finished {
                break;
            }
            self.drop_first_finished(dropped);
        }
    }

    /// Drops the stream that finished first, if it is still kept and finished then; whether
    /// there was an entry to look at.
    fn drop_first_finished(&mut self, dropped: &mut Dropped) -> bool {
        let Some((at, key)) = self.finished.pop_front() else {
            return false;
        };
        if self
            .streams
            .get(&key)
            .is_some_and(|log| log.finished == Some(at))
        {
            self.drop_stream(&key, dropped);
        }
        true
    }

    /// Drops streams and events until every bound holds; `key` is the stream just written to.
    fn bound(&mut self, key: &str, dropped: &mut Dropped) {
        if let Some(log) = self.streams.get_mut(key) {
            while log.events.len() > self.max_per_stream {
                let Some(event) = log.events.pop_front() else {
                    break;
                };
                self.order.remove(&event.seq);
                self.bytes -= event.bytes;
                dropped.push(event);
            }
        }
        while self.streams.len() > self.max_streams || self.bytes > self.max_bytes {
            if self.drop_first_finished(dropped) {
                continue;
            }
            if self.streams.len() > self.max_streams {
                let Some(oldest) = self.order.values().next().cloned() else {
                    break;
                };
                self.drop_stream(&oldest, dropped);
                continue;
            }
            let Some((seq, oldest)) = self.order.pop_first() else {
                break;
            };
            let log = self
                .streams
                .get_mut(&oldest)
                .expect("every event kept has its stream");
            let event = log
                .events
                .pop_front()
                .expect("a stream's oldest event is its first");
            debug_assert_eq!(event.seq, seq);
            self.bytes -= event.bytes;
            dropped.push(event);
            if log.events.is_empty() {
                self.drop_stream(&oldest, dropped);
            }
        }
    }

    fn drop_stream(&mut self, key: &str, dropped: &mut Dropped) {
        if let Some(log) = self.streams.remove(key) {
            self.keys.remove(&log.stream_id);
            for event in log.events {
                self.order.remove(&event.seq);
                self.bytes -= event.bytes;
                dropped.push(event);
            }
        }
    }
}

/// A replay under way.
struct Follow {
    store: MemoryEventStore,
    key: String,
    after: u64,
    changes: watch::Receiver<()>,
    pending: VecDeque<ServerSseMessage>,
}

impl Follow {
    async fn next(mut self) -> Option<(ServerSseMessage, Self)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((event, self));
            }
            let finished = {
                let events = self.store.events();
                // A stream dropped (for room, or long finished) ends its replays.
                let log = events.streams.get(self.key.as_str())?;
                self.changes.borrow_and_update();
                let start = log.events.partition_point(|s| s.seq <= self.after);
                self.pending
                    .extend(log.events.range(start..).map(|s| s.event.clone()));
                if let Some(last) = log.events.back() {
                    self.after = self.after.max(last.seq);
                }
                log.finished.is_some()
            };
            if self.pending.is_empty() {
                if finished {
                    return None;
                }
                self.changes.changed().await.ok()?;
            }
        }
    }
}

/// The bytes of an event's message as JSON, and a little for its id.
fn size(event: &ServerSseMessage) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(64);
    if let Some(message) = &event.message {
        let _ = serde_json::to_writer(&mut count, message.as_ref());
    }
    count.0
}

/// A replay from an event id that is not kept.
#[derive(Debug)]
struct UnknownEventId(String);

impl std::fmt::Display for UnknownEventId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no event {:?} is kept: it was never given, or was dropped for room",
            self.0
        )
    }
}

impl std::error::Error for UnknownEventId {}

/// The future the SDK's (`async_trait`) store methods return.
type StoreFuture<'a, T> =
    std::pin::Pin<Box<dyn Future<Output = Result<T, EventStoreError>> + Send + 'a>>;

impl EventStore for MemoryEventStore {
    fn store_event<'a, 'b, 'c, 'f>(
        &'a self,
        stream_id: &'b str,
        event: &'c ServerSseMessage,
    ) -> StoreFuture<'f, EventId>
    where
        'a: 'f,
        'b: 'f,
        'c: 'f,
        Self: 'f,
    {
        let id = self.store(stream_id, event);
        Box::pin(std::future::ready(Ok(id)))
    }

    fn replay_events_after<'a, 'b, 'f>(
        &'a self,
        last_event_id: &'b str,
    ) -> StoreFuture<'f, EventStream>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        let replay = self
            .replay(last_event_id)
            .ok_or_else(|| UnknownEventId(last_event_id.to_owned()).into());
        Box::pin(std::future::ready(replay))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures_util::StreamExt;
    use rmcp::model::ServerJsonRpcMessage;
    use serde_json::json;

    use super::*;

    fn message(value: serde_json::Value) -> ServerSseMessage {
        ServerSseMessage::from_message(
            serde_json::from_value::<ServerJsonRpcMessage>(value).expect("a server message"),
        )
    }

    fn note(n: u32) -> ServerSseMessage {
        message(json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": n}}))
    }

    fn answer() -> ServerSseMessage {
        message(json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
    }

    fn failure() -> ServerSseMessage {
        message(json!({"jsonrpc": "2.0", "id": 1,
            "error": {"code": -32603, "message": "no"}}))
    }

    /// What the messages of a finished replay were: the logged numbers, `R` for a response,
    /// `E` for an error, `P` for a priming event.
    async fn replayed(store: &MemoryEventStore, after: &str) -> Vec<String> {
        let stream = store.replay_events_after(after).await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), stream.collect::<Vec<_>>())
            .await
            .expect("a finished stream's replay ends")
            .into_iter()
            .map(|e| {
                assert!(e.event_id.is_some(), "a replayed event keeps its id");
                match e.message.as_deref() {
                    None => "P".to_owned(),
                    Some(JsonRpcMessage::Response(_)) => "R".to_owned(),
                    Some(JsonRpcMessage::Error(_)) => "E".to_owned(),
                    Some(m) => serde_json::to_value(m).unwrap()["params"]["data"].to_string(),
                }
            })
            .collect()
    }

    async fn put(store: &MemoryEventStore, stream: &str, event: &ServerSseMessage) -> String {
        store.store_event(stream, event).await.unwrap()
    }

    #[tokio::test]
    async fn a_replay_yields_the_events_of_its_stream_after_the_id() {
        let store = MemoryEventStore::default();
        let primed = put(
            &store,
            "a",
            &ServerSseMessage::retry(Duration::from_secs(1)),
        )
        .await;
        let one = put(&store, "a", &note(1)).await;
        put(&store, "b", &note(100)).await;
        put(&store, "a", &note(2)).await;
        put(&store, "a", &answer()).await;
        assert_eq!(replayed(&store, &primed).await, ["1", "2", "R"]);
        assert_eq!(replayed(&store, &one).await, ["2", "R"]);
        assert_ne!(primed, one, "every event has an id of its own");
        assert_eq!(store.len(), 5);
    }

    #[tokio::test]
    async fn an_error_finishes_a_stream_too() {
        let store = MemoryEventStore::default();
        let one = put(&store, "a", &note(1)).await;
        put(&store, "a", &failure()).await;
        assert_eq!(replayed(&store, &one).await, ["E"]);
    }

    #[tokio::test]
    async fn an_unfinished_stream_is_followed_until_its_answer() {
        let store = MemoryEventStore::default();
        let one = put(&store, "a", &note(1)).await;
        put(&store, "a", &note(2)).await;
        let mut stream = store.replay_events_after(&one).await.unwrap();
        let first = stream.next().await.unwrap();
        assert!(first.event_id.is_some());
        let writer = {
            let store = store.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                put(&store, "b", &note(100)).await;
                put(&store, "a", &note(3)).await;
                put(&store, "a", &answer()).await;
            })
        };
        let rest: Vec<_> = tokio::time::timeout(Duration::from_secs(5), stream.collect::<Vec<_>>())
            .await
            .expect("the replay ends with the stream's answer");
        writer.await.unwrap();
        assert_eq!(rest.len(), 2, "{rest:?}");
        assert!(matches!(
            rest[1].message.as_deref(),
            Some(JsonRpcMessage::Response(_))
        ));
    }

    #[tokio::test]
    async fn an_id_never_given_is_unknown() {
        let store = MemoryEventStore::default();
        put(&store, "a", &note(1)).await;
        for id in ["", "nonsense", "0", "ffff-0", "-0"] {
            let error = store.replay_events_after(id).await.err().expect(id);
            assert!(error.is::<UnknownEventId>(), "{id}: {error}");
        }
        // Another stream's key with this stream's number.
        let a = put(&store, "a", &note(2)).await;
        let b = put(&store, "b", &note(3)).await;
        let (key_b, _) = b.rsplit_once('-').unwrap();
        let (_, seq_a) = a.rsplit_once('-').unwrap();
        assert!(
            store
                .replay_events_after(&format!("{key_b}-{seq_a}"))
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn a_stream_keeps_its_newest_events_and_the_dropped_ids_are_unknown() {
        let store = MemoryEventStore::default().max_events_per_stream(3);
        let mut ids = Vec::new();
        for n in 0..5 {
            ids.push(put(&store, "a", &note(n)).await);
        }
        put(&store, "a", &answer()).await;
        assert_eq!(store.len(), 3);
        for dropped in &ids[..3] {
            let error = store.replay_events_after(dropped).await.err().unwrap();
            assert!(error.is::<UnknownEventId>());
        }
        assert_eq!(replayed(&store, &ids[3]).await, ["4", "R"]);
    }

    #[tokio::test]
    async fn beyond_the_streams_bound_the_oldest_stream_goes_whole() {
        let store = MemoryEventStore::default().max_streams(2);
        let a = put(&store, "a", &note(1)).await;
        put(&store, "a", &answer()).await;
        let b = put(&store, "b", &note(2)).await;
        put(&store, "b", &answer()).await;
        let c = put(&store, "c", &note(3)).await;
        put(&store, "c", &answer()).await;
        assert!(store.replay_events_after(&a).await.is_err());
        assert_eq!(replayed(&store, &b).await, ["R"]);
        assert_eq!(replayed(&store, &c).await, ["R"]);
        assert_eq!(store.len(), 4);
        // A stream dropped and written again starts afresh, under a key of its own.
        let again = put(&store, "a", &note(4)).await;
        assert_ne!(
            again.rsplit_once('-').unwrap().0,
            a.rsplit_once('-').unwrap().0
        );
    }

    #[tokio::test]
    async fn a_finished_stream_is_kept_for_a_while_and_a_stream_under_way_while_it_goes_on() {
        let store = MemoryEventStore::default().keep_finished_for(Duration::from_millis(200));
        let done = put(&store, "a", &note(1)).await;
        put(&store, "a", &answer()).await;
        let going = put(&store, "b", &note(2)).await;
        assert_eq!(replayed(&store, &done).await, ["R"]);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let error = store.replay_events_after(&done).await.err().unwrap();
        assert!(error.is::<UnknownEventId>(), "{error}");
        assert_eq!(store.len(), 1, "the finished stream's events are freed");
        put(&store, "b", &answer()).await;
        assert_eq!(replayed(&store, &going).await, ["R"]);
    }

    #[tokio::test]
    async fn beyond_the_streams_bound_finished_streams_go_before_those_under_way() {
        let store = MemoryEventStore::default().max_streams(2);
        let going = put(&store, "a", &note(1)).await;
        let done = put(&store, "b", &note(2)).await;
        put(&store, "b", &answer()).await;
        put(&store, "c", &note(3)).await;
        assert!(store.replay_events_after(&done).await.is_err());
        put(&store, "a", &answer()).await;
        assert_eq!(replayed(&store, &going).await, ["R"]);
    }

    #[tokio::test]
    async fn beyond_the_bytes_bound_the_oldest_events_go_first() {
        let one = size(&{
            let mut e = note(1);
            e.event_id = Some("x".into());
            e
        });
        let store = MemoryEventStore::default().max_bytes(one * 3);
        let a1 = put(&store, "a", &note(1)).await;
        let a2 = put(&store, "a", &note(2)).await;
        put(&store, "b", &note(3)).await;
        put(&store, "a", &note(4)).await;
        assert_eq!(store.len(), 3);
        assert!(store.replay_events_after(&a1).await.is_err());
        let mut stream = store.replay_events_after(&a2).await.unwrap();
        let next = stream.next().await.unwrap();
        assert_eq!(
            serde_json::to_value(next.message.as_deref().unwrap()).unwrap()["params"]["data"],
            4
        );
    }

    #[tokio::test]
    async fn a_replay_of_a_stream_dropped_for_room_ends() {
        let store = MemoryEventStore::default().max_streams(1);
        let a = put(&store, "a", &note(1)).await;
        put(&store, "a", &note(2)).await;
        let stream = store.replay_events_after(&a).await.unwrap();
        put(&store, "b", &note(3)).await;
        let events = tokio::time::timeout(Duration::from_secs(5), stream.collect::<Vec<_>>())
            .await
            .expect("the replay ends with its stream");
        assert!(events.is_empty(), "{events:?}");
    }

    #[test]
    fn clones_share_the_events() {
        let store = MemoryEventStore::default();
        let clone = store.clone();
        store.store("a", &note(1));
        assert_eq!(clone.len(), 1);
        assert!(!clone.is_empty());
    }
}
