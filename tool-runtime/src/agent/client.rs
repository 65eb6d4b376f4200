//! Sending a request to a provider: retries with backoff on 429, 5xx and lost connections
//! (honouring `Retry-After`), bounded bodies, and streamed replies read as server-sent events.

use std::fmt;
use std::time::{Duration, Instant};

use serde_json::Value;
use tracing::Instrument as _;
use tracing::field::Empty;

use super::model::Model;
use super::wire::{self, Fault, Reply, Request, ResponseInfo, Stream};

/// The most a reply (or one streamed event) may weigh.
const MAX_REPLY: usize = 32 << 20;

/// The longest `Retry-After` honoured; a provider asking for more fails the turn.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The longest wait between retries without a `Retry-After`.
const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// Why a model turn failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProviderError {
    /// The provider answered with an error status (after the retries, for 429 and 5xx).
    Status {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// No answer: the connection failed or the request timed out, or a stream broke off
    /// (after the retries).
    Transport(String),
    /// The provider reported an error in the middle of a streamed reply (after the retries,
    /// when no text had been shown yet).
    Stream(String),
    /// An answer that is not what the API promises.
    Malformed(String),
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProviderError::Status { status, message } => {
                write!(f, "the provider answered {status}: {message}")
            }
            ProviderError::Transport(e) => write!(f, "the provider could not be reached: {e}"),
            ProviderError::Stream(e) => write!(f, "the provider broke off its reply: {e}"),
            ProviderError::Malformed(e) => write!(f, "the provider's reply is malformed: {e}"),
        }
    }
}

impl std::error::Error for ProviderError {}

/// Sends `request` and reads the reply; `on_text` receives streamed text as it arrives.
/// Returns the reply and the number of retries.
///
/// The request, its retries included, is the span `chat {model}`, whose context every attempt
/// sends as `traceparent`.
pub(crate) async fn complete(
    http: &reqwest::Client,
    request: &Request<'_>,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<(Reply, u32), ProviderError> {
    let span = chat_span(request.model);
    let started = Instant::now();
    let mut info = ResponseInfo::default();
    let result = attempts(http, request, on_text, &span, &mut info)
        .instrument(span.clone())
        .await;
    if !span.is_disabled() {
        span.record("gen_ai.response.id", info.id.as_deref());
        span.record("gen_ai.response.model", info.model.as_deref());
        if let Ok((reply, _)) = &result {
            span.record("gen_ai.usage.input_tokens", count(reply.usage.input_tokens));
            span.record(
                "gen_ai.usage.output_tokens",
                count(reply.usage.output_tokens),
            );
        }
    }
    #[cfg(feature = "otel")]
    chat_ended(&span, request.model, &result, &info, started.elapsed());
    #[cfg(not(feature = "otel"))]
    let _ = started;
    result
}

/// A token count as a span field: an integer attribute (`tracing` records a `u64` as text).
pub(super) fn count(tokens: u64) -> i64 {
    i64::try_from(tokens).unwrap_or(i64::MAX)
}

/// The span of one model request, as the GenAI conventions' client span `chat {model}`.
fn chat_span(model: &Model) -> tracing::Span {
    let url = reqwest::Url::parse(&model.base_url).ok();
    let span = tracing::info_span!(
        target: "tool_runtime::agent",
        "chat",
        otel.name = Empty,
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = model.api.provider_name(),
        gen_ai.request.model = model.name.as_str(),
        gen_ai.response.id = Empty,
        gen_ai.response.model = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        server.address = url.as_ref().and_then(reqwest::Url::host_str),
        server.port = url
            .as_ref()
            .and_then(reqwest::Url::port_or_known_default)
            .map(i64::from),
    );
    if !span.is_disabled() {
        span.record("otel.name", format!("chat {}", model.name));
    }
    span
}

/// How a model request ended, on its span (the finish reasons, `error.type`) and in the
/// metrics `gen_ai.client.operation.duration` and `gen_ai.client.token.usage`.
#[cfg(feature = "otel")]
fn chat_ended(
    span: &tracing::Span,
    model: &Model,
    result: &Result<(Reply, u32), ProviderError>,
    info: &ResponseInfo,
    elapsed: Duration,
) {
    use crate::otel::{metrics, spans};
    if !info.finish_reasons.is_empty() {
        let reasons = info
            .finish_reasons
            .iter()
            .cloned()
            .map(Into::into)
            .collect();
        spans::attribute(
            span,
            "gen_ai.response.finish_reasons",
            opentelemetry::Value::Array(opentelemetry::Array::String(reasons)),
        );
    }
    let error = result.as_ref().err().map(ProviderError::kind);
    if let Some(kind) = &error {
        spans::failed(span, kind);
    }
    let usage = result.as_ref().ok().map(|(reply, _)| reply.usage);
    metrics::model_request(
        &metrics::ModelRequest {
            provider: model.api.provider_name(),
            model: &model.name,
            error: error.as_deref(),
            input_tokens: usage.map(|u| u.input_tokens),
            output_tokens: usage.map(|u| u.output_tokens),
        },
        elapsed,
    );
}

impl ProviderError {
    /// The error's kind, as `error.type`: the HTTP status, or `transport`, `stream`,
    /// `malformed`.
    #[cfg(feature = "otel")]
    fn kind(&self) -> String {
        match self {
            ProviderError::Status { status, .. } => status.to_string(),
            ProviderError::Transport(_) => "transport".to_owned(),
            ProviderError::Stream(_) => "stream".to_owned(),
            ProviderError::Malformed(_) => "malformed".to_owned(),
        }
    }
}

/// [`complete`]'s attempts, under `span`; what the reply says of itself goes to `info` when
/// the span is recorded.
async fn attempts(
    http: &reqwest::Client,
    request: &Request<'_>,
    on_text: &mut (dyn FnMut(&str) + Send),
    span: &tracing::Span,
    info: &mut ResponseInfo,
) -> Result<(Reply, u32), ProviderError> {
    let model = request.model;
    let body = serde_json::to_vec(&wire::body(request))
        .map_err(|e| ProviderError::Malformed(e.to_string()))?;
    let url = wire::url(model);
    // The trace context, the same for every attempt: they are one operation.
    #[cfg_attr(not(feature = "otel"), allow(unused_mut))]
    let mut trace = reqwest::header::HeaderMap::new();
    #[cfg(feature = "otel")]
    crate::otel::into_headers(span, &mut trace);
    let mut info = (!span.is_disabled()).then_some(info);
    let mut attempt = 0_u32;
    loop {
        let wait = match send(http, model, &url, &body, &trace).await {
            Ok(response) if response.status().is_success() => {
                let mut shown = false;
                let mut show = |text: &str| {
                    shown = true;
                    on_text(text);
                };
                match read(response, model, &mut show, info.as_deref_mut()).await {
                    Ok(reply) => return Ok((reply, attempt)),
                    // A stream that fails before any text was shown is retried like a request
                    // that failed; once text is out, the turn fails.
                    Err((e, retryable)) => {
                        if !retryable || shown || attempt >= model.max_retries {
                            return Err(e);
                        }
                        tracing::info!(target: "tool_runtime::agent", model = %model, error = %e, "the stream failed");
                        backoff(model.retry_base, attempt)
                    }
                }
            }
            Ok(response) => {
                let status = response.status().as_u16();
                let retry_after = retry_after(response.headers());
                let message = match read_bounded(response, model.timeout).await {
                    Ok(bytes) => wire::error_message(&bytes),
                    Err(e) => e,
                };
                let retryable = status == 429 || status >= 500;
                if !retryable || attempt >= model.max_retries {
                    return Err(ProviderError::Status { status, message });
                }
                match retry_after {
                    Some(wait) if wait > MAX_RETRY_AFTER => {
                        return Err(ProviderError::Status {
                            status,
                            message: format!(
                                "{message} (asked to retry after {} s)",
                                wait.as_secs()
                            ),
                        });
                    }
                    Some(wait) => wait,
                    None => backoff(model.retry_base, attempt),
                }
            }
            Err(e) => {
                if attempt >= model.max_retries {
                    return Err(ProviderError::Transport(e));
                }
                backoff(model.retry_base, attempt)
            }
        };
        attempt += 1;
        tracing::info!(
            target: "tool_runtime::agent",
            model = %model,
            attempt,
            wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            "retrying the model request",
        );
        tokio::time::sleep(wait).await;
    }
}

async fn send(
    http: &reqwest::Client,
    model: &Model,
    url: &str,
    body: &[u8],
    trace: &reqwest::header::HeaderMap,
) -> Result<reqwest::Response, String> {
    let mut builder = http
        .post(url)
        .timeout(model.timeout)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .headers(trace.clone());
    for (name, value, sensitive) in wire::headers(model) {
        builder = builder.header(name, header_value(&value, sensitive)?);
    }
    builder
        .body(body.to_vec())
        .send()
        .await
        .map_err(|e| describe(&e, model.timeout))
}

fn header_value(value: &str, sensitive: bool) -> Result<reqwest::header::HeaderValue, String> {
    let mut v = reqwest::header::HeaderValue::from_str(value)
        .map_err(|_| "a header value (a key?) has characters HTTP does not allow".to_owned())?;
    v.set_sensitive(sensitive);
    Ok(v)
}

/// A transport error in words, with its cause (reqwest's own message is only the first step).
/// What went wrong with a request; a timeout names the model's time limit
/// ([`Model::with_timeout`]), the one setting that ends it.
fn describe(e: &reqwest::Error, timeout: Duration) -> String {
    use std::error::Error as _;
    let mut text = if e.is_timeout() {
        format!("no complete answer within the model's timeout of {timeout:?}")
    } else {
        e.to_string()
    };
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Reads a reply, streamed or whole. An error says whether the request may be retried: a
/// stream the provider broke off, or that reported an error, may; a reply that is not what the
/// API promises may not. With `info`, what the reply says of itself goes there.
async fn read(
    response: reqwest::Response,
    model: &Model,
    on_text: &mut (dyn FnMut(&str) + Send),
    mut info: Option<&mut ResponseInfo>,
) -> Result<Reply, (ProviderError, bool)> {
    if !wire::streams(model) {
        let bytes = read_bounded(response, model.timeout)
            .await
            .map_err(|e| (ProviderError::Transport(e), true))?;
        let body: Value = serde_json::from_slice(&bytes)
            .map_err(|e| (ProviderError::Malformed(format!("not JSON ({e})")), false))?;
        if let Some(info) = info {
            info.note(model.api, &body);
        }
        let reply =
            wire::parse(model.api, &body).map_err(|e| (ProviderError::Malformed(e), false))?;
        if !reply.text.is_empty() {
            on_text(&reply.text);
        }
        return Ok(reply);
    }
    let mut response = response;
    let mut events = SseDecoder::default();
    let mut stream = Stream::new(model.api);
    let mut data = Vec::new();
    let broken = |e: String| (ProviderError::Transport(e), true);
    loop {
        let chunk = response
            .chunk()
            .await
            .map_err(|e| broken(describe(&e, model.timeout)))?;
        let Some(chunk) = chunk else { break };
        events
            .feed(&chunk, &mut data)
            .map_err(|e| (ProviderError::Malformed(e), false))?;
        for event in data.drain(..) {
            if let Some(info) = info.as_deref_mut()
                && let Ok(value) = serde_json::from_str::<Value>(&event)
            {
                info.note(model.api, &value);
            }
            match stream.event(&event) {
                Ok(Some(text)) => on_text(&text),
                Ok(None) => {}
                Err(Fault::Provider(message)) => {
                    return Err((ProviderError::Stream(message), true));
                }
                Err(Fault::Malformed(e)) => return Err((ProviderError::Malformed(e), false)),
            }
        }
        if stream.is_done() {
            break;
        }
    }
    if !stream.is_done() {
        return Err(broken(
            "the stream ended before the reply was complete".to_owned(),
        ));
    }
    stream
        .finish()
        .map_err(|e| (ProviderError::Malformed(e), false))
}

async fn read_bounded(
    mut response: reqwest::Response,
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| describe(&e, timeout))? {
        if bytes.len() + chunk.len() > MAX_REPLY {
            return Err(format!("the reply is larger than {} MiB", MAX_REPLY >> 20));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// The wait a provider asked for: `retry-after-ms` (OpenAI), else `retry-after` in seconds.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| number("retry-after").map(Duration::from_secs_f64))
}

/// `base` doubled per attempt, capped, with up to a quarter of jitter so clients that failed
/// together do not retry together.
fn backoff(base: Duration, attempt: u32) -> Duration {
    let wait = base.saturating_mul(1 << attempt.min(16)).min(MAX_BACKOFF);
    let mut random = [0_u8; 2];
    let jitter = if getrandom::fill(&mut random).is_ok() {
        f64::from(u16::from_le_bytes(random)) / f64::from(u16::MAX)
    } else {
        0.5
    };
    wait.mul_f64(0.75 + jitter / 4.0)
}

/// Server-sent events, as the WHATWG specification reads them: lines ending in LF or CRLF,
/// `data:` fields joined by newlines, an event dispatched at a blank line, comments and other
/// fields ignored.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    line: Vec<u8>,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    /// Feeds bytes; complete events' data go to `out`.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<String>) -> Result<(), String> {
        for &b in bytes {
            if b != b'\n' {
                self.line.push(b);
                if self.line.len() + self.data.len() > MAX_REPLY {
                    return Err(format!("an event is larger than {} MiB", MAX_REPLY >> 20));
                }
                continue;
            }
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            let line = std::mem::take(&mut self.line);
            let line = String::from_utf8(line).map_err(|_| "an event is not UTF-8".to_owned())?;
            if line.is_empty() {
                if self.has_data {
                    out.push(std::mem::take(&mut self.data));
                    self.has_data = false;
                }
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((&line, ""));
            if field == "data" {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value.strip_prefix(' ').unwrap_or(value));
                self.has_data = true;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_split_at_blank_lines_whatever_the_chunks() {
        let stream = b": keep-alive\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nevent: x\ndata:[DONE]\n\n";
        for cut in 0..stream.len() {
            let mut d = SseDecoder::default();
            let mut out = Vec::new();
            d.feed(&stream[..cut], &mut out).unwrap();
            d.feed(&stream[cut..], &mut out).unwrap();
            assert_eq!(out, ["{\"a\":\n1}", "[DONE]"], "cut at {cut}");
        }
    }

    #[test]
    fn retry_after_reads_milliseconds_first() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        h.clear();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn backoff_doubles_and_stays_bounded() {
        let base = Duration::from_millis(100);
        let first = backoff(base, 0);
        assert!(first >= Duration::from_millis(75) && first <= Duration::from_millis(100));
        let third = backoff(base, 2);
        assert!(third >= Duration::from_millis(300) && third <= Duration::from_millis(400));
        assert!(backoff(base, 40) <= MAX_BACKOFF);
    }
}
