//! Traces and metrics through OpenTelemetry (feature `otel`).
//!
#![doc = include_str!("../../docs/otel.md")]

mod context;
mod export;
#[cfg(feature = "cli")]
mod log;
pub(crate) mod metrics;
pub mod names;
pub(crate) mod spans;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{FilterExt, LevelFilter, Targets, filter_fn};
use tracing_subscriber::registry::LookupSpan;

#[cfg_attr(
    not(all(
        feature = "http",
        feature = "mcp-client",
        feature = "agent",
        feature = "cli"
    )),
    allow(unused_imports)
)]
pub(crate) use context::{adopt, from_headers, from_meta, into_headers, into_meta, trace_id};
#[cfg(feature = "cli")]
pub(crate) use log::WithTraceIds;

/// Whose trace context a server takes as the parent of its spans.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum InboundTrace {
    /// Every caller's `traceparent`: its trace is continued and its sampled flag honoured.
    #[default]
    Accept,
    /// Only an authenticated caller's; others start a trace of their own (a caller could
    /// otherwise force every request it sends to be sampled, or graft it onto another trace).
    Authenticated,
    /// No caller's: every request starts a trace.
    Ignore,
}

/// How telemetry is set up. The standard variables win over what is set here:
/// `OTEL_SDK_DISABLED`, `OTEL_EXPORTER_OTLP_ENDPOINT` (and the per-signal
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `..._METRICS_ENDPOINT`), `OTEL_EXPORTER_OTLP_HEADERS`,
/// `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
/// `OTEL_TRACES_SAMPLER` (and `_ARG`), `OTEL_METRIC_EXPORT_INTERVAL`.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct TelemetryOptions {
    enabled: Option<bool>,
    service_name: Option<String>,
    endpoint: Option<String>,
    capture_content: bool,
    inbound: InboundTrace,
    export_timeout: Option<Duration>,
}

impl TelemetryOptions {
    /// Options from the environment alone: telemetry is on when an OTLP endpoint is named.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// On without an endpoint (spans are made, trace ids logged and audited, metrics served at
    /// `GET /metrics`, nothing exported), or off even with one.
    #[must_use]
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.enabled = Some(enabled);
        self
    }

    /// The `service.name` of the resource, unless `OTEL_SERVICE_NAME` is set. By default, the
    /// application's name.
    #[must_use]
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// The OTLP/HTTP endpoint, such as `http://collector:4318`, unless
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` is set; traces go to `/v1/traces`, metrics to `/v1/metrics`.
    #[must_use]
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Records calls' arguments and results on their spans (`gen_ai.tool.call.arguments`,
    /// `gen_ai.tool.call.result`), [`Secret`](crate::Secret) values redacted as in the audit.
    /// Off by default: they may hold personal data.
    #[must_use]
    pub fn capture_content(mut self, capture: bool) -> Self {
        self.capture_content = capture;
        self
    }

    /// Whose inbound trace context is continued ([`InboundTrace::Accept`] by default).
    #[must_use]
    pub fn inbound(mut self, inbound: InboundTrace) -> Self {
        self.inbound = inbound;
        self
    }

    /// How long one export may take before it is given up, unless
    /// `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds) is set; 10 seconds by default.
    #[must_use]
    pub fn export_timeout(mut self, timeout: Duration) -> Self {
        self.export_timeout = Some(timeout);
        self
    }
}

/// Telemetry that could not be set up: a variable or option that does not read.
#[derive(Debug)]
pub struct TelemetryError(String);

impl std::fmt::Display for TelemetryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenTelemetry: {}", self.0)
    }
}

impl std::error::Error for TelemetryError {}

/// Telemetry installed for the process: the tracer and meter providers, the exporters behind
/// them, and the registry `GET /metrics` renders. One per process, as the log subscriber is.
#[derive(Debug)]
pub struct Telemetry {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    registry: prometheus::Registry,
    instruments: metrics::Instruments,
    capture_content: bool,
    #[cfg_attr(not(any(feature = "http", feature = "mcp")), allow(dead_code))]
    inbound: InboundTrace,
    exporting: bool,
    shut: AtomicBool,
}

static INSTALLED: OnceLock<Telemetry> = OnceLock::new();

/// The telemetry installed for the process, if any.
pub(crate) fn installed() -> Option<&'static Telemetry> {
    INSTALLED.get()
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Telemetry {
    /// Sets telemetry up for the process from `options` and the standard variables, unless it
    /// is off (`OTEL_SDK_DISABLED=true`, or no endpoint and not [enabled](TelemetryOptions::enabled)):
    /// `None` then. `default_name` is the `service.name` when nothing else names it. Installed
    /// once: later calls return the first installation.
    ///
    /// Call it from inside the tokio runtime the application runs on: exports are sent from it.
    /// Then add [`layer`](Self::layer) to the log subscriber.
    pub fn install(
        options: &TelemetryOptions,
        default_name: &str,
    ) -> Result<Option<&'static Telemetry>, TelemetryError> {
        if let Some(installed) = installed() {
            return Ok(Some(installed));
        }
        if env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let endpoint_env = ["", "_TRACES", "_METRICS"]
            .iter()
            .any(|signal| env(&format!("OTEL_EXPORTER_OTLP{signal}_ENDPOINT")).is_some());
        let exporting = endpoint_env || options.endpoint.is_some();
        if !options.enabled.unwrap_or(exporting) {
            return Ok(None);
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            TelemetryError("install it from inside the application's tokio runtime".into())
        })?;
        let mut resource = Resource::builder();
        if env("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name(
                options
                    .service_name
                    .clone()
                    .unwrap_or_else(|| default_name.to_owned()),
            );
        }
        let resource = resource.build();
        let timeout = match env("OTEL_EXPORTER_OTLP_TIMEOUT") {
            Some(ms) => Duration::from_millis(ms.trim().parse().map_err(|_| {
                TelemetryError(format!(
                    "OTEL_EXPORTER_OTLP_TIMEOUT is `{ms}`; write a number of milliseconds"
                ))
            })?),
            None => options.export_timeout.unwrap_or(Duration::from_secs(10)),
        };
        let client = export::OtlpClient::new(runtime, timeout);
        // The endpoint of `options`, where no variable names one.
        let signal_endpoint = |path: &str| {
            options
                .endpoint
                .as_deref()
                .filter(|_| !endpoint_env)
                .map(|base| format!("{}/{path}", base.trim_end_matches('/')))
        };

        let (meters, traces, health, registry) = providers(
            exporting.then_some(&client),
            &signal_endpoint,
            timeout,
            resource,
        )?;
        let meter_provider = meters.build();
        let instruments = metrics::Instruments::new(&meter_provider.meter("tool-runtime"));
        let _ = health.exported.set(instruments.exported.clone());
        let tracer_provider = traces.build();
        opentelemetry::global::set_tracer_provider(tracer_provider.clone());
        let telemetry = Telemetry {
            tracer_provider,
            meter_provider,
            registry,
            instruments,
            capture_content: options.capture_content,
            inbound: options.inbound,
            exporting,
            shut: AtomicBool::new(false),
        };
        // A race lost to another installation keeps the first; this one is shut down unused.
        let _ = INSTALLED.set(telemetry);
        Ok(installed())
    }

    /// The tracing layer that turns spans into OpenTelemetry spans, with a filter of its own:
    /// every `info` span and event whatever `RUST_LOG` says, but none of the MCP SDK's (they
    /// carry protocol messages verbatim) or of the HTTP stack's, nor the log's line of a call's
    /// error.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        let targets = Targets::new().with_default(LevelFilter::INFO).with_targets(
            [
                "rmcp",
                "opentelemetry",
                "opentelemetry_sdk",
                "hyper",
                "h2",
                "reqwest",
                "tower",
            ]
            .map(|target| (target, LevelFilter::OFF)),
        );
        // A call's end is on its span (`error.type`, the status); the log's event of it quotes
        // the error's message, which may quote the arguments.
        let filter = targets.and(filter_fn(|meta| {
            !(meta.is_event() && meta.target() == "tool_runtime::call")
        }));
        tracing_opentelemetry::layer()
            .with_tracer(self.tracer())
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_level(false)
            .with_tracked_inactivity(false)
            .with_filter(filter)
    }

    fn tracer(&self) -> SdkTracer {
        self.tracer_provider.tracer("tool-runtime")
    }

    /// Every metric in the Prometheus text format (version 0.0.4), as `GET /metrics` serves it.
    #[must_use]
    pub fn prometheus_text(&self) -> String {
        let mut text = String::new();
        let encoder = prometheus::TextEncoder::new();
        if let Err(e) = encoder.encode_utf8(&self.registry.gather(), &mut text) {
            tracing::warn!(target: "tool_runtime::otel", "cannot render the metrics: {e}");
        }
        text
    }

    /// Whether calls' arguments and results go on their spans.
    pub(crate) fn capture_content(&self) -> bool {
        self.capture_content
    }

    /// Whose inbound trace context is continued.
    #[cfg_attr(not(any(feature = "http", feature = "mcp")), allow(dead_code))]
    pub(crate) fn inbound(&self) -> InboundTrace {
        self.inbound
    }

    /// Exports the spans and metrics recorded so far, within `within`, and goes on.
    pub async fn flush(&self, within: Duration) {
        if !self.exporting || self.shut.load(Ordering::Acquire) {
            return;
        }
        let (traces, meters) = (self.tracer_provider.clone(), self.meter_provider.clone());
        let flushed =
            tokio::task::spawn_blocking(move || traces.force_flush().and(meters.force_flush()));
        if let Ok(Ok(Err(e))) = tokio::time::timeout(within, flushed).await {
            tracing::debug!(target: "tool_runtime::otel", "telemetry not all flushed: {e}");
        }
    }

    /// Exports what is pending and stops the exporters, within `within`; once (later calls
    /// return at once). Spans and metrics recorded after it are dropped.
    pub async fn shutdown(&self, within: Duration) {
        if self.shut.swap(true, Ordering::AcqRel) || !self.exporting {
            return;
        }
        let (traces, meters) = (self.tracer_provider.clone(), self.meter_provider.clone());
        // The SDK's calls block until its threads answer; its exporters send through this
        // runtime, which must keep running meanwhile.
        let flushed = tokio::task::spawn_blocking(move || {
            let traces = traces.shutdown_with_timeout(within);
            let meters = meters.shutdown_with_timeout(within);
            traces.and(meters)
        });
        match tokio::time::timeout(within, flushed).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => {
                tracing::warn!(target: "tool_runtime::otel", "telemetry not all exported at shutdown: {e}");
            }
            Ok(Err(e)) => {
                tracing::warn!(target: "tool_runtime::otel", "telemetry shutdown failed: {e}");
            }
            Err(_) => tracing::warn!(
                target: "tool_runtime::otel",
                "telemetry not all exported within {within:?} at shutdown"
            ),
        }
    }
}

/// The meter and tracer providers: metrics read for `GET /metrics` always, and with `client`,
/// both signals exported over OTLP/HTTP to `signal_endpoint`'s URL (or the variables').
fn providers(
    client: Option<&export::OtlpClient>,
    signal_endpoint: &dyn Fn(&str) -> Option<String>,
    timeout: Duration,
    resource: Resource,
) -> Result<
    (
        opentelemetry_sdk::metrics::MeterProviderBuilder,
        opentelemetry_sdk::trace::TracerProviderBuilder,
        std::sync::Arc<export::Health>,
        prometheus::Registry,
    ),
    TelemetryError,
> {
    let failed = |what: &str, e: &dyn std::fmt::Display| TelemetryError(format!("{what}: {e}"));
    // Each signal's URL, as the exporter finds it: the options', the signal's variable, or
    // the general variable with the signal's path.
    let url_of = |path: &str, variable: &str| {
        signal_endpoint(path)
            .or_else(|| env(variable))
            .or_else(|| {
                env("OTEL_EXPORTER_OTLP_ENDPOINT")
                    .map(|base| format!("{}/{path}", base.trim_end_matches('/')))
            })
            .unwrap_or_default()
    };
    let health = export::Health::new(
        url_of("v1/traces", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
        url_of("v1/metrics", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
    );

    let registry = prometheus::Registry::new();
    let prometheus = opentelemetry_prometheus::exporter()
        .with_registry(registry.clone())
        .build()
        .map_err(|e| failed("the Prometheus exporter", &e))?;
    let mut meters = SdkMeterProvider::builder()
        .with_resource(resource.clone())
        .with_reader(prometheus);
    let mut traces = SdkTracerProvider::builder().with_resource(resource);
    if let Some(client) = client {
        let mut metric_exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_http_client(client.clone())
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(timeout);
        if let Some(endpoint) = signal_endpoint("v1/metrics") {
            metric_exporter = metric_exporter.with_endpoint(endpoint);
        }
        let metric_exporter = export::WatchedMetrics {
            inner: metric_exporter
                .build()
                .map_err(|e| failed("the OTLP metric exporter", &e))?,
            health: health.clone(),
        };
        meters = meters.with_reader(PeriodicReader::builder(metric_exporter).build());
        let mut span_exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client.clone())
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(timeout);
        if let Some(endpoint) = signal_endpoint("v1/traces") {
            span_exporter = span_exporter.with_endpoint(endpoint);
        }
        traces = traces.with_batch_exporter(export::WatchedSpans {
            inner: span_exporter
                .build()
                .map_err(|e| failed("the OTLP span exporter", &e))?,
            health: health.clone(),
        });
    }
    Ok((meters, traces, health, registry))
}
