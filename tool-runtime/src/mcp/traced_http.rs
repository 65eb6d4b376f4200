//! The mounted servers' streamable-HTTP client: the SDK's reqwest client, with each message's
//! trace context (the `traceparent` and `tracestate` its client span put in `params._meta`) also
//! sent as the W3C headers, so that the server's HTTP request span joins the call's trace too.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use serde_json::Value;
use sse_stream::Sse;

/// reqwest's client for the SDK's transport, sending trace context as headers.
#[derive(Clone, Default)]
pub(super) struct TracedClient(reqwest::Client);

impl TracedClient {
    /// `client`, its requests traced.
    #[cfg(feature = "mcp-oauth")]
    pub(super) fn new(client: reqwest::Client) -> Self {
        Self(client)
    }
}

/// `headers` with the trace context of `message`'s `_meta`, when telemetry is on.
fn with_trace_context(
    message: &ClientJsonRpcMessage,
    mut headers: HashMap<HeaderName, HeaderValue>,
) -> HashMap<HeaderName, HeaderValue> {
    if crate::otel::installed().is_none() {
        return headers;
    }
    let Ok(message) = serde_json::to_value(message) else {
        return headers;
    };
    if let Some(meta) = message.pointer("/params/_meta").and_then(Value::as_object) {
        for key in ["traceparent", "tracestate"] {
            if let Some(value) = meta.get(key).and_then(Value::as_str)
                && let Ok(value) = HeaderValue::from_str(value)
            {
                headers.insert(HeaderName::from_static(key), value);
            }
        }
    }
    headers
}

type Streamed = BoxStream<'static, Result<Sse, SseError>>;

impl StreamableHttpClient for TracedClient {
    type Error = reqwest::Error;

    fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>>>
    + Send
    + '_ {
        let headers = with_trace_context(&message, custom_headers);
        self.0
            .post_message(uri, message, session_id, auth_header, headers)
    }

    fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<Output = Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>>>
    + Send
    + '_ {
        let headers = with_trace_context(&message, custom_headers);
        self.0.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            headers,
            max_sse_event_size,
        )
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<(), StreamableHttpError<Self::Error>>> + Send + '_ {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
    }

    fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<Streamed, StreamableHttpError<Self::Error>>> + Send + '_ {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
    }

    fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<Output = Result<Streamed, StreamableHttpError<Self::Error>>> + Send + '_ {
        self.0.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        )
    }
}
