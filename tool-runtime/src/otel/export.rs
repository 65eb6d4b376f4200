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
    traces: Endpoint,
    metrics: Endpoint,
}

/// A signal's endpoint as configured, and as the log shows it.
#[derive(Debug)]
struct Endpoint {
    url: String,
    shown: String,
}

impl Endpoint {
    fn new(url: String) -> Self {
        let shown = shown(&url);
        Self { url, shown }
    }
}

/// `url` without what may be a secret: its user name and password, query and fragment
/// (`https://collector:4318/v1/traces` of `https://key:secret@collector:4318/v1/traces?k=v`).
fn shown(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.to_string()
        }
        Err(_) if url.is_empty() => String::new(),
        Err(_) => "(an endpoint that is not a URL)".to_owned(),
    }
}

impl Health {
    /// The health of exports of traces to `traces` and metrics to `metrics` (the URLs as
    /// configured; the log shows them without credentials).
    pub(super) fn new(traces: String, metrics: String) -> Arc<Self> {
        Arc::new(Self {
            failing: AtomicBool::new(false),
            exported: OnceLock::new(),
            traces: Endpoint::new(traces),
            metrics: Endpoint::new(metrics),
        })
    }

    fn count(&self, spans: u64, attributes: &[KeyValue]) {
        if let Some(exported) = self.exported.get().filter(|_| spans > 0) {
            exported.add(spans, attributes);
        }
    }

    fn outcome(&self, signal: &'static str, spans: usize, result: &OTelSdkResult) {
        let count = u64::try_from(spans).unwrap_or(u64::MAX);
        let endpoint = if signal == "metrics" {
            &self.metrics
        } else {
            &self.traces
        };
        match result {
            Ok(()) => {
                self.count(count, &[KeyValue::new("signal", signal)]);
                if self.failing.swap(false, Ordering::Relaxed) {
                    tracing::warn!(
                        target: "tool_runtime::otel",
                        endpoint = endpoint.shown,
                        signal,
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
                    // The client's error may quote the URL it was sending to.
                    let mut error = error.to_string();
                    for endpoint in [&self.traces, &self.metrics] {
                        if !endpoint.url.is_empty() {
                            error = error.replace(&endpoint.url, &endpoint.shown);
                        }
                    }
                    tracing::warn!(
                        target: "tool_runtime::otel",
                        endpoint = endpoint.shown,
                        signal,
                        error,
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use opentelemetry_sdk::error::OTelSdkError;

    use super::*;

    #[test]
    fn an_endpoint_is_shown_without_credentials_query_or_fragment() {
        assert_eq!(
            shown("https://key:s3cret@collector.example:4318/v1/traces?token=t0k#f"),
            "https://collector.example:4318/v1/traces"
        );
        assert_eq!(
            shown("http://collector:4318/v1/metrics"),
            "http://collector:4318/v1/metrics"
        );
        assert_eq!(shown("not a url s3cret"), "(an endpoint that is not a URL)");
    }

    /// What the log says while `f` runs.
    fn logged(f: impl FnOnce()) -> String {
        #[derive(Clone, Default)]
        struct Sink(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Sink {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let sink = Sink::default();
        let writer = sink.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        String::from_utf8(sink.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn a_failing_export_logs_its_own_signal_endpoint_without_secrets() {
        let traces = "https://k:trace-secret@collector:4318/v1/traces".to_owned();
        let metrics = "https://k:metric-secret@metrics.example:4318/v1/metrics?key=query-secret";
        let health = Health::new(traces, metrics.to_owned());
        let failed = Err(OTelSdkError::InternalFailure(format!(
            "error sending request for url ({metrics})"
        )));
        let log = logged(|| health.outcome("metrics", 0, &failed));
        assert!(
            log.contains("https://metrics.example:4318/v1/metrics"),
            "{log}"
        );
        assert!(
            log.contains("signal=\"metrics\"") || log.contains("signal=metrics"),
            "{log}"
        );
        for secret in [
            "trace-secret",
            "metric-secret",
            "query-secret",
            "collector:4318",
        ] {
            assert!(!log.contains(secret), "{secret} in {log}");
        }
        // Once, until an export succeeds; then the recovery names the endpoint alike.
        assert!(logged(|| health.outcome("metrics", 0, &failed)).is_empty());
        let log = logged(|| health.outcome("metrics", 0, &Ok(())));
        assert!(
            log.contains("takes exports again") && !log.contains("secret"),
            "{log}"
        );
    }
}
