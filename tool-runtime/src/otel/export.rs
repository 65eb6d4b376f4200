//! OTLP over HTTP/protobuf through the workspace's reqwest, and the health of the export: a
//! collector that cannot be reached is logged once (until it answers again) and every span it
//! did not take is counted in `tool_runtime.telemetry.exported` with `error.type`.
//!
//! The SDK exports from threads of its own (the batch span processor's, the periodic metric
//! reader's) with a blocking executor, where reqwest's async client finds no reactor; so each
//! request is spawned onto the tokio runtime the telemetry was installed from, and its handle
//! awaited from the SDK's thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use opentelemetry::KeyValue;
use opentelemetry::metrics::Counter;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

use super::names;

/// The most of a collector's answer that is read: answers are a few bytes of protobuf.
const MAX_ANSWER: usize = 64 * 1024;

/// The OTLP exporters' HTTP client: the workspace's reqwest client on the application's tokio
/// runtime, each request bounded by the export timeout.
#[derive(Debug, Clone)]
pub(super) struct OtlpClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
    timeout: Duration,
}

impl OtlpClient {
    pub(super) fn new(runtime: tokio::runtime::Handle, timeout: Duration) -> Self {
        Self {
            client: reqwest::Client::new(),
            runtime,
            timeout,
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for OtlpClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (client, timeout) = (self.client.clone(), self.timeout);
        let request = reqwest::Request::try_from(request)?;
        let sent = self.runtime.spawn(async move {
            tokio::time::timeout(timeout, async move {
                let mut answer = client.execute(request).await?;
                let mut response = Response::builder().status(answer.status());
                let mut body = Vec::new();
                while let Some(chunk) = answer.chunk().await? {
                    if body.len() + chunk.len() > MAX_ANSWER {
                        break;
                    }
                    body.extend_from_slice(&chunk);
                }
                response = response.header("content-length", body.len());
                Ok::<_, HttpError>(response.body(Bytes::from(body))?)
            })
            .await
            .map_err(|_| format!("no answer within {timeout:?}"))?
        });
        sent.await?
    }
}

/// Whether the export to the collector is failing, shared by the span and metric exporters:
/// the first failure is logged, then nothing until an export succeeds again.
#[derive(Debug)]
pub(super) struct Health {
    failing: AtomicBool,
    /// Set once the meter provider exists (its own exporter is watched too).
    pub(super) exported: OnceLock<Counter<u64>>,
    endpoint: String,
}

impl Health {
    pub(super) fn new(endpoint: String) -> Arc<Self> {
        Arc::new(Self {
            failing: AtomicBool::new(false),
            exported: OnceLock::new(),
            endpoint,
        })
    }

    fn count(&self, spans: u64, attributes: &[KeyValue]) {
        if let Some(exported) = self.exported.get().filter(|_| spans > 0) {
            exported.add(spans, attributes);
        }
    }

    fn outcome(&self, signal: &'static str, spans: usize, result: &OTelSdkResult) {
        let count = u64::try_from(spans).unwrap_or(u64::MAX);
        match result {
            Ok(()) => {
                self.count(count, &[KeyValue::new("signal", signal)]);
                if self.failing.swap(false, Ordering::Relaxed) {
                    tracing::warn!(
                        target: "tool_runtime::otel",
                        endpoint = %self.endpoint,
                        "the OpenTelemetry collector takes exports again"
                    );
                }
            }
            Err(error) => {
                self.count(
                    count,
                    &[
                        KeyValue::new("signal", signal),
                        KeyValue::new(names::ERROR_TYPE, "export_failed"),
                    ],
                );
                if !self.failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        target: "tool_runtime::otel",
                        endpoint = %self.endpoint,
                        %error,
                        "cannot export to the OpenTelemetry collector: telemetry is dropped (counted \
                         in tool_runtime.telemetry.exported) until it takes exports again; calls \
                         are not affected"
                    );
                }
            }
        }
    }
}

/// A span exporter whose outcomes [`Health`] sees.
#[derive(Debug)]
pub(super) struct WatchedSpans<E> {
    pub(super) inner: E,
    pub(super) health: Arc<Health>,
}

impl<E: SpanExporter> SpanExporter for WatchedSpans<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len();
        let result = self.inner.export(batch).await;
        self.health.outcome("traces", spans, &result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.inner.set_resource(resource);
    }
}

/// A metric exporter whose outcomes [`Health`] sees.
#[derive(Debug)]
pub(super) struct WatchedMetrics<E> {
    pub(super) inner: E,
    pub(super) health: Arc<Health>,
}

impl<E: PushMetricExporter> PushMetricExporter for WatchedMetrics<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let result = self.inner.export(metrics).await;
        self.health.outcome("metrics", 0, &result);
        result
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}
