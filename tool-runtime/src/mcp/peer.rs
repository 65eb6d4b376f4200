//! The MCP client as a tool's [`Peer`]: its progress reports and log messages become
//! notifications to the client, its sampling and elicitation requests become requests to it.

// MCP logging (`logging/setLevel`, `notifications/message`) is deprecated from protocol
// 2026-07-28 on (SEP-2577), but clients of 2025-11-25 and before use it.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use rmcp::model::{
    ElicitRequestParams, ElicitationAction, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer as RmcpPeer, RequestContext, RoleServer};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tracing::Instrument as _;

use crate::tool::caller::{ProgressSink, ProgressUpdate};
use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::peer::{
    Elicited, InputRequest, InputResponse, LogLevel, Peer, Root, Sample, Sampled,
};

use super::input::{Asked, Asking};
use crate::tool::input::{sampled, sampling_request};

/// The lowest level a session's client hears, as set by `logging/setLevel`; `info` until then.
#[derive(Debug)]
pub(super) struct SessionLevel(AtomicU8);

impl Default for SessionLevel {
    fn default() -> Self {
        Self(AtomicU8::new(LogLevel::Info as u8))
    }
}

impl SessionLevel {
    pub(super) fn set(&self, level: LoggingLevel) {
        self.0.store(ours(level) as u8, Ordering::Relaxed);
    }

    fn lets_through(&self, level: LogLevel) -> bool {
        level as u8 >= self.0.load(Ordering::Relaxed)
    }
}

/// The lowest level of log messages a call's client hears: its session's
/// (`logging/setLevel`), or on 2026-07-28 the request's own `_meta` log level, without which
/// it hears none.
enum Heard {
    Session(Arc<SessionLevel>),
    Request(Option<LogLevel>),
}

impl Heard {
    fn lets_through(&self, level: LogLevel) -> bool {
        match self {
            Heard::Session(session) => session.lets_through(level),
            Heard::Request(lowest) => lowest.is_some_and(|lowest| level >= lowest),
        }
    }
}

/// What goes out to the client while a call runs, in the order the tool sent it.
enum Outbound {
    Progress(ProgressUpdate),
    Log(LogLevel, Value),
}

/// One call's view of its MCP client. Notifications go out through a forwarding task, started
/// on the first one, so that they keep their order; [`finish`](Self::finish) waits for it so
/// that none trails the response.
pub(super) struct CallPeer {
    peer: RmcpPeer<RoleServer>,
    progress_token: Option<ProgressToken>,
    level: Heard,
    can_sample: bool,
    can_elicit: bool,
    can_list_roots: bool,
    /// The capabilities a request of the call needed and the client had not declared.
    refused: Mutex<Vec<&'static str>>,
    /// On a request whose client answers with the request made again (2026-07-28): the
    /// answers given, and the questions asked that have none.
    asking: Option<Asking>,
    queue: Mutex<Option<UnboundedSender<Outbound>>>,
    forwarder: Mutex<Option<tokio::task::JoinHandle<()>>>,
    finished: std::sync::atomic::AtomicBool,
    /// Ends the request's event stream, over HTTP with an event store.
    close: Option<tokio_util::sync::CancellationToken>,
    /// Cancelled when the HTTP server stops accepting connections, over HTTP.
    stopping: Option<tokio_util::sync::CancellationToken>,
}

impl CallPeer {
    pub(super) fn new(
        context: &RequestContext<RoleServer>,
        level: Arc<SessionLevel>,
        stopping: Option<tokio_util::sync::CancellationToken>,
    ) -> Self {
        // The request's own capabilities (2026-07-28 clients send them with every request),
        // else the session's, borrowed rather than cloned: this runs on every call.
        let flags = |c: &rmcp::model::ClientCapabilities| {
            (c.sampling.is_some(), can_elicit(Some(c)), c.roots.is_some())
        };
        let (can_sample, can_elicit, can_list_roots) = match context.meta.client_capabilities() {
            Some(c) => flags(&c),
            None => context
                .peer
                .peer_info()
                .map_or((false, false, false), |i| flags(&i.capabilities)),
        };
        Self {
            peer: context.peer.clone(),
            progress_token: context.meta.get_progress_token(),
            level: if super::input::modern(context) {
                Heard::Request(context.meta.log_level().map(ours))
            } else {
                Heard::Session(level)
            },
            can_sample,
            can_elicit,
            can_list_roots,
            refused: Mutex::default(),
            asking: None,
            queue: Mutex::default(),
            forwarder: Mutex::default(),
            finished: std::sync::atomic::AtomicBool::new(false),
            close: stream_closer(context),
            stopping,
        }
    }

    /// `request`'s answer, unless the server stops accepting connections first: the client's
    /// answer comes in a request of its own, which then reaches another replica or none, so
    /// the question fails at once rather than at the end of the grace period, and the caller
    /// hears so instead of waiting on a stream that is cut.
    async fn answer<T>(
        &self,
        what: &str,
        request: impl Future<Output = Result<T, rmcp::service::ServiceError>>,
    ) -> Result<T, ToolError> {
        let stopped = || {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!(
                    "the server is shutting down and can no longer receive the answer to its \
                     {what} request; call again"
                ),
            )
        };
        match &self.stopping {
            Some(stopping) if stopping.is_cancelled() => Err(stopped()),
            Some(stopping) => tokio::select! {
                answer = request => answer.map_err(|e| failed(what, &e)),
                () = stopping.cancelled() => Err(stopped()),
            },
            None => request.await.map_err(|e| failed(what, &e)),
        }
    }

    /// The call's requests go back to the client with the call's answer, as an input-required
    /// result, and come back answered in `given` (2026-07-28): none goes out as a request of
    /// the server's own.
    pub(super) fn answering(mut self, given: Map<String, Value>) -> Self {
        self.asking = Some(Asking::new(given));
        self
    }

    /// How the call's questions ended, when they go back with its answer.
    pub(super) fn asked(&self) -> Asked {
        self.asking.as_ref().map_or(Asked::Answered, Asking::finish)
    }

    /// The capabilities the call asked for that its client had not declared, each once.
    pub(super) fn refused(&self) -> Vec<&'static str> {
        self.refused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// `what`, which the client did not declare, refused.
    fn refuse(&self, what: &'static str) -> ToolError {
        let mut refused = self
            .refused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !refused.contains(&what) {
            refused.push(what);
        }
        unsupported(what)
    }

    /// Whether the client answers form elicitations.
    pub(super) fn can_elicit(&self) -> bool {
        self.can_elicit
    }

    /// Whether the request asked for progress reports.
    pub(super) fn wants_progress(&self) -> bool {
        self.progress_token.is_some()
    }

    fn send(&self, item: Outbound) {
        if self.finished.load(Ordering::Relaxed) {
            return;
        }
        let mut queue = self
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let tx = queue.get_or_insert_with(|| {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let peer = self.peer.clone();
            let token = self.progress_token.clone();
            let task = tokio::spawn(
                async move {
                    while let Some(item) = rx.recv().await {
                        let _ = match item {
                            Outbound::Progress(update) => match &token {
                                Some(token) => peer.notify_progress(progress(token, update)).await,
                                None => Ok(()),
                            },
                            Outbound::Log(level, data) => {
                                peer.notify_logging_message(LoggingMessageNotificationParam::new(
                                    theirs(level),
                                    data,
                                ))
                                .await
                            }
                        };
                    }
                }
                // In the span of whoever reported first: the call's.
                .in_current_span(),
            );
            *self
                .forwarder
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(task);
            tx
        });
        let _ = tx.send(item);
    }

    /// Ends the call's notifications: later ones are dropped, and those sent go out first
    /// (waiting at most a second for a slow client).
    pub(super) async fn finish(&self) {
        self.finished.store(true, Ordering::Relaxed);
        drop(
            self.queue
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take(),
        );
        let task = self
            .forwarder
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
        }
    }
}

impl ProgressSink for CallPeer {
    fn report(&self, update: ProgressUpdate) {
        if self.progress_token.is_some() {
            self.send(Outbound::Progress(update));
        }
    }
}

/// What ends the event stream of an HTTP request, when its events are kept.
fn stream_closer(
    context: &RequestContext<RoleServer>,
) -> Option<tokio_util::sync::CancellationToken> {
    #[cfg(feature = "http")]
    {
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<super::streamable::CloseStream>())
            .map(|c| c.0.clone())
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = context;
        None
    }
}

impl Peer for CallPeer {
    fn close_stream(&self) -> bool {
        self.close.as_ref().is_some_and(|close| {
            close.cancel();
            true
        })
    }

    fn log(&self, level: LogLevel, data: Value) {
        if self.level.lets_through(level) {
            self.send(Outbound::Log(level, data));
        }
    }

    fn ask(
        &self,
        key: &str,
        request: InputRequest,
    ) -> BoxFuture<'_, Result<InputResponse, ToolError>> {
        let Some(asking) = &self.asking else {
            return Box::pin(async move {
                Ok(match request {
                    InputRequest::Sample(sample) => {
                        InputResponse::Sampled(self.sample(sample).await?)
                    }
                    InputRequest::Elicit { message, schema } => {
                        InputResponse::Elicited(self.elicit(message, schema).await?)
                    }
                    _ => InputResponse::Roots(self.list_roots().await?),
                })
            });
        };
        // Only what the request declared it can answer is asked: the rest is refused at once,
        // as on a session, and the tool may go on without it.
        let (able, what) = match &request {
            InputRequest::Sample(_) => (self.can_sample, "sampling"),
            InputRequest::Elicit { .. } => (self.can_elicit, "elicitation"),
            _ => (self.can_list_roots, "roots"),
        };
        let answer = if able {
            asking.ask(key, &request)
        } else {
            Err(self.refuse(what))
        };
        Box::pin(std::future::ready(answer))
    }

    fn list_roots(&self) -> BoxFuture<'_, Result<Vec<Root>, ToolError>> {
        Box::pin(async move {
            if !self.can_list_roots {
                return Err(self.refuse("roots"));
            }
            let answer = self.answer("roots", self.peer.list_roots()).await?;
            Ok(answer
                .roots
                .into_iter()
                .map(|r| Root {
                    uri: r.uri,
                    name: r.name,
                })
                .collect())
        })
    }

    fn sample(&self, request: Sample) -> BoxFuture<'_, Result<Sampled, ToolError>> {
        Box::pin(async move {
            if !self.can_sample {
                return Err(self.refuse("sampling"));
            }
            let params =
                serde_json::from_value(sampling_request(&request)).map_err(ToolError::internal)?;
            let answer = self
                .answer("sampling", self.peer.create_message(params))
                .await?;
            let answer = serde_json::to_value(answer).map_err(ToolError::internal)?;
            Ok(sampled(&answer))
        })
    }

    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicited<Map<String, Value>>, ToolError>> {
        Box::pin(async move {
            if !self.can_elicit {
                return Err(self.refuse("elicitation"));
            }
            let params: ElicitRequestParams = serde_json::from_value(json!({
                "mode": "form",
                "message": message,
                "requestedSchema": schema,
            }))
            .map_err(|e| {
                ToolError::new(
                    ErrorKind::INVALID_REQUEST,
                    format!("the elicitation's form is not one MCP can ask: {e}"),
                )
            })?;
            let answer = self
                .answer("elicitation", self.peer.create_elicitation(params))
                .await?;
            Ok(match answer.action {
                ElicitationAction::Accept => Elicited::Accepted(match answer.content {
                    Some(Value::Object(content)) => content,
                    _ => Map::new(),
                }),
                ElicitationAction::Decline => Elicited::Declined,
                _ => Elicited::Cancelled,
            })
        })
    }
}

/// Whether a client with these capabilities can answer form elicitations (a bare
/// `elicitation: {}` means form, as before modes existed).
pub(super) fn can_elicit(capabilities: Option<&rmcp::model::ClientCapabilities>) -> bool {
    capabilities.is_some_and(|c| {
        c.elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    })
}

/// Whether the client of this request opens URLs for its user (URL elicitation).
pub(super) fn opens_urls(context: &RequestContext<RoleServer>) -> bool {
    let url = |c: &rmcp::model::ClientCapabilities| {
        c.elicitation.as_ref().is_some_and(|e| e.url.is_some())
    };
    match context.meta.client_capabilities() {
        Some(c) => url(&c),
        None => context
            .peer
            .peer_info()
            .is_some_and(|i| url(&i.capabilities)),
    }
}

fn unsupported(what: &str) -> ToolError {
    ToolError::new(
        ErrorKind::UNSUPPORTED,
        format!("this MCP client does not offer {what} (it did not declare the capability)"),
    )
}

fn failed(what: &str, e: &rmcp::service::ServiceError) -> ToolError {
    ToolError::new(
        ErrorKind::UNAVAILABLE,
        format!("the MCP client did not answer the {what} request: {e}"),
    )
}

fn progress(token: &ProgressToken, update: ProgressUpdate) -> ProgressNotificationParam {
    let mut param = ProgressNotificationParam::new(token.clone(), update.progress);
    if let Some(total) = update.total {
        param = param.with_total(total);
    }
    if let Some(message) = update.message {
        param = param.with_message(message);
    }
    param
}

pub(crate) fn theirs(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

pub(crate) fn ours(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}
