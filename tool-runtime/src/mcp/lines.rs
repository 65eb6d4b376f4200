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
    /// The part of a line read so far, and whether it is over [`MAX_LINE`]. Kept here rather
    /// than in `next_line`: the SDK races `receive` against its other work and drops the
    /// future when that wins, and a line that arrived in two reads must not lose its start.
    line: Vec<u8>,
    too_long: bool,
    /// Answers to bad messages still being written, waited for at the end of the stream.
    answering: Vec<tokio::task::JoinHandle<()>>,
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
            line: Vec::new(),
            too_long: false,
            answering: Vec::new(),
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

    /// Answers a bad message. Written by a task of its own, so that the answer is whole even if
    /// the `receive` future that found the message is dropped (see the `line` field).
    fn answer_error(&mut self, id: &Value, code: i64, message: &str) {
        let error =
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        let write = Arc::clone(&self.write);
        self.answering.retain(|task| !task.is_finished());
        self.answering.push(tokio::spawn(async move {
            if let Err(e) = Self::write_line(&write, &error).await {
                tracing::debug!(target: "tool_runtime::mcp", error = %e, "could not answer a bad message");
            }
        }));
    }

    /// The next line, without its newline; `None` at the end of the stream; `Some(Err)` for a
    /// line over [`MAX_LINE`] (skipped).
    async fn next_line(&mut self) -> Option<Result<Vec<u8>, ()>> {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(b) => b,
                Err(e) => {
                    tracing::debug!(target: "tool_runtime::mcp", error = %e, "reading stdin failed");
                    return None;
                }
            };
            if available.is_empty() {
                // The end: the answers on their way go out before the SDK hears of it.
                while let Some(task) = self.answering.last_mut() {
                    let _ = task.await;
                    self.answering.pop();
                }
                let (line, too_long) = (std::mem::take(&mut self.line), self.too_long);
                self.too_long = false;
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
            if !self.too_long {
                if self.line.len() + chunk.len() > MAX_LINE {
                    self.too_long = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let used = done.unwrap_or(available.len());
            self.read.consume(used);
            if done.is_some() {
                let line = std::mem::take(&mut self.line);
                let too_long = std::mem::replace(&mut self.too_long, false);
                return Some(if too_long { Err(()) } else { Ok(line) });
            }
        }
    }

    /// The next message for the SDK, answering and passing over every line that is not one.
    async fn next_message(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let Ok(line) = self.next_line().await? else {
                self.answer_error(
                    &Value::Null,
                    -32700,
                    &format!("parse error: the line is longer than {MAX_LINE} bytes"),
                );
                continue;
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            // A well-formed message is read straight into the SDK's type; only a line that
            // is not one is read again as JSON, to answer it as precisely as it deserves.
            let parsed = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(&line) {
                Ok(message) => Ok(message),
                Err(_) => classify(&line),
            };
            let message = match parsed {
                Ok(message) => message,
                Err(Some(refusal)) => {
                    self.answer_error(&refusal.id, refusal.code, &refusal.message);
                    continue;
                }
                Err(None) => continue,
            };
            match message {
                rmcp::model::JsonRpcMessage::Request(request) => {
                    if let rmcp::model::ClientRequest::CustomRequest(custom) = &request.request
                        && METHODS.contains(&custom.method.as_str())
                    {
                        let message = format!("invalid params for `{}`", custom.method);
                        let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
                        self.answer_error(&id, -32602, &message);
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
                other if !self.started => {
                    tracing::debug!(target: "tool_runtime::mcp", "passed over a message before the first request: {other:?}");
                }
                other => return Some(other),
            }
        }
    }
}

/// The answer a bad line gets.
struct Refusal {
    /// The line's own id, or `null` when it has no usable one.
    id: Value,
    /// The JSON-RPC error code.
    code: i64,
    message: String,
}

/// A line the SDK's type does not read directly: the message after all (read through a JSON
/// value, which tolerates what a direct read does not, such as a repeated key), or the answer
/// it gets, or `None` when it is passed over unanswered (an invalid notification).
fn classify(line: &[u8]) -> Result<RxJsonRpcMessage<RoleServer>, Option<Refusal>> {
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Err(Some(Refusal {
                id: Value::Null,
                code: -32700,
                message: format!("parse error: the line is not JSON: {e}"),
            }));
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
    serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value).map_err(|e| {
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
            return None;
        }
        Some(Refusal { id, code, message })
    })
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rmcp::transport::Transport;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::Lines;

    /// The SDK drops a `receive` future whenever something else it waits for comes first: a
    /// line that arrived in two reads, or a bad line being answered, loses nothing by it.
    #[tokio::test]
    async fn a_dropped_receive_loses_no_part_of_a_line() {
        let (mut client, server) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server);
        let mut lines = Lines::new(read, write);
        client
            .write_all(br#"{"jsonrpc":"2.0","id":7,"method":"pi"#)
            .await
            .unwrap();
        // The first half is read, then the future waits for the rest, and is dropped.
        let waited = tokio::time::timeout(Duration::from_millis(50), lines.receive()).await;
        assert!(waited.is_err(), "no whole line yet");
        client.write_all(b"ng\"}\nnot json\n").await.unwrap();
        let message = lines.receive();
        let got = tokio::time::timeout(Duration::from_secs(5), message)
            .await
            .expect("the line, whole")
            .expect("a message");
        let value = serde_json::to_value(&got).unwrap();
        assert_eq!(
            (value["id"].as_i64(), value["method"].as_str()),
            (Some(7), Some("ping"))
        );
        // A bad line's answer is written even though the receive that found it is dropped.
        let waited = tokio::time::timeout(Duration::from_millis(50), lines.receive()).await;
        assert!(waited.is_err());
        let mut answers = BufReader::new(client).lines();
        let answer = tokio::time::timeout(Duration::from_secs(5), answers.next_line())
            .await
            .expect("an answer")
            .unwrap()
            .unwrap();
        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
    }
}
