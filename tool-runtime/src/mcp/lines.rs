//! MCP over newline-delimited JSON-RPC (stdio), read by us before the SDK sees a message, so
//! that no line a peer sends can end the server or go unanswered:
//!
//! - a line that is not JSON gets `-32700` (parse error) with `"id": null`;
//! - JSON that is not a JSON-RPC message gets `-32600` (invalid request), with its `id` if it
//!   has a usable one, else `"id": null`;
//! - a request for a method the protocol defines, with parameters of the wrong shape (such as
//!   `tools/call` with `{"name": 5}`), gets `-32602` (invalid params), not "method not found";
//! - until the SDK has started a session, notifications, responses and errors are passed over
//!   (logged): there is nothing they can refer to, and the SDK would end the session on them.
//!   A session has started once the SDK answers a request other than `ping` or
//!   `server/discover` (which it answers before any session) with a result: a request it
//!   refuses, such as one for an unknown method before `initialize`, starts nothing.

use std::sync::Arc;

use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// The longest line read (4 MiB); a longer one is answered `-32700` and skipped.
const MAX_LINE: usize = 4 * 1024 * 1024;

/// The methods a client may call: a request for one of these that does not parse has bad
/// params.
const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
];

/// A server transport over a byte stream of JSON lines.
pub(crate) struct Lines<R, W> {
    read: BufReader<R>,
    write: Arc<tokio::sync::Mutex<W>>,
    /// Whether the SDK has started a session (before it, only requests are passed on).
    started: bool,
    /// Before that: the requests passed on whose answer may start one.
    opening: Vec<rmcp::model::RequestId>,
}

/// The most requests awaiting an answer before a session starts that are remembered; past it,
/// the oldest is forgotten (the SDK answers requests before a session one at a time).
const MAX_OPENING: usize = 64;

impl<R, W> Lines<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(crate) fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::new(read),
            write: Arc::new(tokio::sync::Mutex::new(write)),
            started: false,
            opening: Vec::new(),
        }
    }

    async fn write_line(
        write: &tokio::sync::Mutex<W>,
        value: &impl serde::Serialize,
    ) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let mut w = write.lock().await;
        w.write_all(&line).await?;
        w.flush().await
    }

    async fn answer_error(&mut self, id: Value, code: i64, message: String) {
        let error =
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        if let Err(e) = Self::write_line(&self.write, &error).await {
            tracing::debug!(target: "tool_runtime::mcp", error = %e, "could not answer a bad message");
        }
    }

    /// The next line, without its newline; `None` at the end of the stream; `Some(Err)` for a
    /// line over [`MAX_LINE`] (skipped).
    async fn next_line(&mut self) -> Option<Result<Vec<u8>, ()>> {
        let mut line = Vec::new();
        let mut too_long = false;
        loop {
            let available = match self.read.fill_buf().await {
                Ok(b) => b,
                Err(e) => {
                    tracing::debug!(target: "tool_runtime::mcp", error = %e, "reading stdin failed");
                    return None;
                }
            };
            if available.is_empty() {
                return (!line.is_empty() || too_long).then_some(if too_long {
                    Err(())
                } else {
                    Ok(line)
                });
            }
            let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            if !too_long {
                if line.len() + chunk.len() > MAX_LINE {
                    too_long = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(chunk);
                }
            }
            let used = done.unwrap_or(available.len());
            self.read.consume(used);
            if done.is_some() {
                return Some(if too_long { Err(()) } else { Ok(line) });
            }
        }
    }

    /// The next message for the SDK, answering and passing over every line that is not one.
    async fn next_message(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let Ok(line) = self.next_line().await? else {
                self.answer_error(
                    Value::Null,
                    -32700,
                    format!("parse error: the line is longer than {MAX_LINE} bytes"),
                )
                .await;
                continue;
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let value: Value = match serde_json::from_slice(&line) {
                Ok(v) => v,
                Err(e) => {
                    self.answer_error(
                        Value::Null,
                        -32700,
                        format!("parse error: the line is not JSON: {e}"),
                    )
                    .await;
                    continue;
                }
            };
            let id = match value.get("id") {
                Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
                _ => Value::Null,
            };
            let method = value
                .get("method")
                .and_then(Value::as_str)
                .map(str::to_owned);
            match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
                Ok(rmcp::model::JsonRpcMessage::Request(request)) => {
                    if let rmcp::model::ClientRequest::CustomRequest(custom) = &request.request
                        && METHODS.contains(&custom.method.as_str())
                    {
                        let message = format!("invalid params for `{}`", custom.method);
                        self.answer_error(id, -32602, message).await;
                        continue;
                    }
                    if !self.started
                        && !matches!(
                            request.request,
                            rmcp::model::ClientRequest::PingRequest(_)
                                | rmcp::model::ClientRequest::DiscoverRequest(_)
                        )
                    {
                        if self.opening.len() == MAX_OPENING {
                            self.opening.remove(0);
                        }
                        self.opening.push(request.id.clone());
                    }
                    return Some(rmcp::model::JsonRpcMessage::Request(request));
                }
                Ok(other) if !self.started => {
                    tracing::debug!(target: "tool_runtime::mcp", "passed over a message before the first request: {other:?}");
                }
                Ok(other) => return Some(other),
                Err(e) => {
                    let (code, message) = match &method {
                        Some(m) if METHODS.contains(&m.as_str()) => {
                            (-32602, format!("invalid params for `{m}`: {e}"))
                        }
                        _ => (
                            -32600,
                            format!("invalid request: not a JSON-RPC 2.0 message: {e}"),
                        ),
                    };
                    // A notification (no id) is never answered.
                    if id.is_null() && method.is_some() {
                        tracing::debug!(target: "tool_runtime::mcp", "passed over an invalid notification: {message}");
                        continue;
                    }
                    self.answer_error(id, code, message).await;
                }
            }
        }
    }
}

impl<R, W> rmcp::transport::Transport<RoleServer> for Lines<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if !self.started {
            match &item {
                rmcp::model::JsonRpcMessage::Response(r) if self.opening.contains(&r.id) => {
                    self.started = true;
                    self.opening = Vec::new();
                }
                rmcp::model::JsonRpcMessage::Error(e) => {
                    self.opening.retain(|id| Some(id) != e.id.as_ref());
                }
                _ => {}
            }
        }
        let write = Arc::clone(&self.write);
        async move { Self::write_line(&write, &item).await }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.next_message()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
    }
}
