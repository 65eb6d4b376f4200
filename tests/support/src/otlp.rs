//! An OTLP/HTTP receiver on loopback for the tests that export traces and metrics: start one,
//! point the exporter at [`OtlpReceiver::endpoint`] (`OTEL_EXPORTER_OTLP_ENDPOINT`), then read
//! what arrived as flat [`ReceivedSpan`]s and [`ReceivedPoint`]s. It serves `POST /v1/traces`
//! and `POST /v1/metrics`, decodes the bodies with `opentelemetry-proto`'s generated types and
//! answers `200` with an empty export response; a body it cannot take is answered `415` (any
//! `Content-Encoding`, a type other than `application/x-protobuf`) or `400` (not the export
//! request's protobuf) and recorded in [`OtlpReceiver::decode_failures`]. A receiver may also
//! hold its answers, until released ([`OtlpReceiver::holding`]) or for good
//! ([`OtlpReceiver::hanging`]), having recorded what it was sent.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use opentelemetry_proto::tonic::collector::metrics::v1 as metrics_service;
use opentelemetry_proto::tonic::collector::trace::v1 as trace_service;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{NumberDataPoint, metric, number_data_point};
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::{Span, status::StatusCode as SpanStatus};
use prost::Message as _;
use serde_json::Value;

use metrics_service::ExportMetricsServiceRequest;
use trace_service::ExportTraceServiceRequest;

/// A span as received, flattened for assertions.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedSpan {
    /// 32 lower-case hex digits.
    pub trace_id: String,
    /// 16 lower-case hex digits.
    pub span_id: String,
    /// 16 lower-case hex digits; empty for a root span.
    pub parent_span_id: String,
    /// The span's name.
    pub name: String,
    /// `internal`, `server`, `client`, `producer`, `consumer` or `unspecified`.
    pub kind: &'static str,
    /// Strings, integers, doubles and booleans as JSON, arrays as arrays, key-value lists as
    /// objects, bytes as lower-case hex.
    pub attributes: BTreeMap<String, Value>,
    /// Each event's name and attributes, in order.
    pub events: Vec<(String, BTreeMap<String, Value>)>,
    /// Each link's trace id and span id.
    pub links: Vec<(String, String)>,
    /// `unset`, `ok` or `error`.
    pub status: &'static str,
    /// The status's description.
    pub status_message: String,
    /// The resource attribute `service.name` (empty without one).
    pub service_name: String,
    /// The instrumentation scope's name.
    pub scope: String,
}

/// A data point of a sum, gauge or histogram as received (exponential histograms and
/// summaries, which the SDK sends only when configured to, are left out).
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedPoint {
    /// The metric's name.
    pub name: String,
    /// The metric's unit.
    pub unit: String,
    /// `sum`, `gauge` or `histogram`.
    pub kind: &'static str,
    /// The point's attributes, as [`ReceivedSpan::attributes`].
    pub attributes: BTreeMap<String, Value>,
    /// A sum's or gauge's value; a histogram's count.
    pub value: f64,
    /// A histogram's sum; `None` for sums and gauges.
    pub sum: Option<f64>,
}

#[derive(Debug, Default)]
struct Received {
    traces: Vec<ExportTraceServiceRequest>,
    metrics: Vec<ExportMetricsServiceRequest>,
    bodies: Vec<Vec<u8>>,
    trace_requests: usize,
    metric_requests: usize,
    answered: usize,
    failures: Vec<String>,
}

/// What the receiver got, and whether it answers (`true` once released).
#[derive(Debug)]
struct Collector {
    received: Mutex<Received>,
    released: tokio::sync::watch::Sender<bool>,
}

type Shared = Arc<Collector>;

fn lock(received: &Collector) -> MutexGuard<'_, Received> {
    received
        .received
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// An OTLP/HTTP receiver on a free port of 127.0.0.1, serving until the test's runtime ends.
#[derive(Debug, Clone)]
pub struct OtlpReceiver {
    endpoint: String,
    received: Shared,
    /// Whether [`release`](Self::release) may answer what is held.
    releasable: bool,
}

impl OtlpReceiver {
    /// Starts a receiver, on the current tokio runtime, that answers every export.
    pub async fn start() -> OtlpReceiver {
        Self::serve(true, false).await
    }

    /// Starts a collector that never answers: it reads each request whole, records and counts
    /// it as [`start`](Self::start)'s does, then holds the connection open without a response.
    pub async fn hanging() -> OtlpReceiver {
        Self::serve(false, false).await
    }

    /// Starts a collector that holds its answers: it reads, records and counts each request as
    /// [`start`](Self::start)'s does, and answers none until [`release`](Self::release) (an
    /// exporter waiting for an answer waits until then, or until its own time-out).
    pub async fn holding() -> OtlpReceiver {
        Self::serve(false, true).await
    }

    async fn serve(released: bool, releasable: bool) -> OtlpReceiver {
        let received = Arc::new(Collector {
            received: Mutex::default(),
            released: tokio::sync::watch::Sender::new(released),
        });
        let app = axum::Router::new()
            .route("/v1/traces", axum::routing::post(traces))
            .route("/v1/metrics", axum::routing::post(metrics))
            .layer(axum::extract::DefaultBodyLimit::disable())
            .with_state(received.clone());
        let endpoint = crate::serve_on_loopback(app).await;
        OtlpReceiver {
            endpoint,
            received,
            releasable,
        }
    }

    /// A [`holding`](Self::holding) receiver answers every request it holds, and from then on
    /// each as it comes.
    ///
    /// # Panics
    ///
    /// On any other receiver.
    pub fn release(&self) {
        assert!(self.releasable, "only a holding receiver is released");
        self.received.released.send_replace(true);
    }

    /// Requests answered so far, on `/v1/traces` and `/v1/metrics` (a held request is not).
    #[must_use]
    pub fn answered(&self) -> usize {
        lock(&self.received).answered
    }

    /// `http://127.0.0.1:PORT`, the value for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    #[must_use]
    pub fn endpoint(&self) -> String {
        self.endpoint.clone()
    }

    /// Every span received so far, in the order received.
    #[must_use]
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        let received = lock(&self.received);
        let mut spans = Vec::new();
        for resource_spans in received.traces.iter().flat_map(|r| &r.resource_spans) {
            let resource = resource_spans.resource.as_ref();
            let service = resource
                .map(|r| attributes(&r.attributes))
                .unwrap_or_default();
            let service = service.get("service.name").and_then(Value::as_str);
            for scope_spans in &resource_spans.scope_spans {
                let scope = scope_spans.scope.as_ref().map(|s| s.name.as_str());
                spans.extend(scope_spans.spans.iter().map(|span| {
                    flatten(span, service.unwrap_or_default(), scope.unwrap_or_default())
                }));
            }
        }
        spans
    }

    /// The spans once `pred` holds of them, checked every 50 ms.
    ///
    /// # Panics
    ///
    /// When `timeout` passes first, with a dump of every span received.
    pub async fn wait_for_spans(
        &self,
        pred: impl Fn(&[ReceivedSpan]) -> bool,
        timeout: Duration,
    ) -> Vec<ReceivedSpan> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if pred(&spans) {
                return spans;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the spans expected did not arrive within {timeout:?} ({} trace requests, decode failures {:?}); received:\n{}",
                self.trace_requests(),
                self.decode_failures(),
                dump(&spans)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Every data point of every metrics request received, in the order received (with
    /// cumulative temporality, a metric's current value is its last point).
    #[must_use]
    pub fn metric_points(&self) -> Vec<ReceivedPoint> {
        let received = lock(&self.received);
        let resources = received.metrics.iter().flat_map(|r| &r.resource_metrics);
        let all = resources
            .flat_map(|r| &r.scope_metrics)
            .flat_map(|s| &s.metrics);
        let mut points = Vec::new();
        for m in all {
            let (kind, rows): (_, Vec<_>) = match &m.data {
                Some(metric::Data::Sum(s)) => ("sum", s.data_points.iter().map(number).collect()),
                Some(metric::Data::Gauge(g)) => {
                    ("gauge", g.data_points.iter().map(number).collect())
                }
                Some(metric::Data::Histogram(h)) => {
                    let rows = h.data_points.iter();
                    (
                        "histogram",
                        rows.map(|p| (&p.attributes, count(p.count), p.sum))
                            .collect(),
                    )
                }
                _ => continue,
            };
            points.extend(rows.into_iter().map(|(kvs, value, sum)| ReceivedPoint {
                name: m.name.clone(),
                unit: m.unit.clone(),
                kind,
                attributes: attributes(kvs),
                value,
                sum,
            }));
        }
        points
    }

    /// Every request body received, traces and metrics, including those refused.
    #[must_use]
    pub fn raw_bodies(&self) -> Vec<Vec<u8>> {
        lock(&self.received).bodies.clone()
    }

    /// Every decoded request rendered with `{:?}`, so that a search for a string covers every
    /// field and attribute value, whatever its kind.
    #[must_use]
    pub fn everything_as_text(&self) -> String {
        let received = lock(&self.received);
        let traces = received.traces.iter().map(|r| format!("{r:?}"));
        let metrics = received.metrics.iter().map(|r| format!("{r:?}"));
        traces.chain(metrics).collect::<Vec<_>>().join("\n")
    }

    /// Requests received on `/v1/traces`, answered or not.
    #[must_use]
    pub fn trace_requests(&self) -> usize {
        lock(&self.received).trace_requests
    }

    /// Requests received on `/v1/metrics`, answered or not.
    #[must_use]
    pub fn metric_requests(&self) -> usize {
        lock(&self.received).metric_requests
    }

    /// Why each refused request was refused, after its signal's name.
    #[must_use]
    pub fn decode_failures(&self) -> Vec<String> {
        lock(&self.received).failures.clone()
    }
}

/// A port of 127.0.0.1 with nothing listening on it (bound, then released).
///
/// # Panics
///
/// If no port can be bound.
#[must_use]
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("bound").port()
}

/// The spans whose parent is `parent`.
#[must_use]
pub fn children<'a>(spans: &'a [ReceivedSpan], parent: &ReceivedSpan) -> Vec<&'a ReceivedSpan> {
    let is_child =
        |s: &&ReceivedSpan| s.trace_id == parent.trace_id && s.parent_span_id == parent.span_id;
    spans.iter().filter(is_child).collect()
}

/// The first span named `name`.
///
/// # Panics
///
/// When there is none, naming every span there is.
#[must_use]
pub fn find<'a>(spans: &'a [ReceivedSpan], name: &str) -> &'a ReceivedSpan {
    spans.iter().find(|s| s.name == name).unwrap_or_else(|| {
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
        panic!("no span named {name:?}; received {names:?}")
    })
}

/// The spans for an assertion's message: name, kind, status, ids, service and scope, then
/// attributes and events.
#[must_use]
pub fn dump(spans: &[ReceivedSpan]) -> String {
    let mut out = String::new();
    for s in spans {
        let (json, parent) = (serde_json::to_string(&s.attributes), &s.parent_span_id);
        let _ = writeln!(
            out,
            "{} [{}, {} {:?}] span {} parent {parent:?} trace {} ({}, {})\n    {}",
            s.name,
            s.kind,
            s.status,
            s.status_message,
            s.span_id,
            s.trace_id,
            s.service_name,
            s.scope,
            json.unwrap_or_default(),
        );
        for (name, attributes) in &s.events {
            let json = serde_json::to_string(attributes).unwrap_or_default();
            let _ = writeln!(out, "    event {name} {json}");
        }
    }
    out
}

#[derive(Debug, Clone, Copy)]
enum Signal {
    Traces,
    Metrics,
}

async fn traces(State(received): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    receive(&received, Signal::Traces, &headers, &body).await
}

async fn metrics(State(received): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    receive(&received, Signal::Metrics, &headers, &body).await
}

async fn receive(
    collector: &Collector,
    signal: Signal,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let outcome = {
        let mut r = lock(collector);
        r.bodies.push(body.to_vec());
        match signal {
            Signal::Traces => r.trace_requests += 1,
            Signal::Metrics => r.metric_requests += 1,
        }
        let outcome = record(&mut r, signal, headers, body);
        if let Err((_, why)) = &outcome {
            r.failures.push(format!("{signal:?}: {why}"));
        }
        outcome
    };
    // Held until released; a hanging receiver's sender is never set, and lives as long as it.
    let mut released = collector.released.subscribe();
    if released.wait_for(|released| *released).await.is_err() {
        return std::future::pending().await;
    }
    lock(collector).answered += 1;
    let answer = match (outcome, signal) {
        (Err(refusal), _) => return refusal.into_response(),
        (Ok(()), Signal::Traces) => {
            trace_service::ExportTraceServiceResponse::default().encode_to_vec()
        }
        (Ok(()), Signal::Metrics) => {
            metrics_service::ExportMetricsServiceResponse::default().encode_to_vec()
        }
    };
    ([(header::CONTENT_TYPE, "application/x-protobuf")], answer).into_response()
}

/// Decodes and keeps one request, or says why it cannot.
fn record(
    r: &mut Received,
    signal: Signal,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(), (StatusCode, String)> {
    let unsupported = StatusCode::UNSUPPORTED_MEDIA_TYPE;
    if let Some(encoding) = headers.get(header::CONTENT_ENCODING) {
        return Err((unsupported, format!("Content-Encoding {encoding:?}")));
    }
    let content_type = headers.get(header::CONTENT_TYPE);
    if content_type.is_none_or(|t| t != "application/x-protobuf") {
        return Err((unsupported, format!("Content-Type {content_type:?}")));
    }
    let bad = |e: prost::DecodeError| (StatusCode::BAD_REQUEST, e.to_string());
    match signal {
        Signal::Traces => r
            .traces
            .push(ExportTraceServiceRequest::decode(body).map_err(bad)?),
        Signal::Metrics => r
            .metrics
            .push(ExportMetricsServiceRequest::decode(body).map_err(bad)?),
    }
    Ok(())
}

fn flatten(span: &Span, service_name: &str, scope: &str) -> ReceivedSpan {
    let status = span.status.clone().unwrap_or_default();
    ReceivedSpan {
        trace_id: hex(&span.trace_id),
        span_id: hex(&span.span_id),
        parent_span_id: hex(&span.parent_span_id),
        name: span.name.clone(),
        kind: match SpanKind::try_from(span.kind) {
            Ok(SpanKind::Internal) => "internal",
            Ok(SpanKind::Server) => "server",
            Ok(SpanKind::Client) => "client",
            Ok(SpanKind::Producer) => "producer",
            Ok(SpanKind::Consumer) => "consumer",
            Ok(SpanKind::Unspecified) | Err(_) => "unspecified",
        },
        attributes: attributes(&span.attributes),
        events: span
            .events
            .iter()
            .map(|e| (e.name.clone(), attributes(&e.attributes)))
            .collect(),
        links: span
            .links
            .iter()
            .map(|l| (hex(&l.trace_id), hex(&l.span_id)))
            .collect(),
        status: match SpanStatus::try_from(status.code) {
            Ok(SpanStatus::Ok) => "ok",
            Ok(SpanStatus::Error) => "error",
            Ok(SpanStatus::Unset) | Err(_) => "unset",
        },
        status_message: status.message,
        service_name: service_name.to_owned(),
        scope: scope.to_owned(),
    }
}

fn number(p: &NumberDataPoint) -> (&Vec<KeyValue>, f64, Option<f64>) {
    let value = match p.value {
        Some(number_data_point::Value::AsDouble(d)) => d,
        Some(number_data_point::Value::AsInt(i)) => count(i),
        None => f64::NAN,
    };
    (&p.attributes, value, None)
}

// Reason: the counts and integers of tests are far below 2^53, where f64 starts to round.
#[allow(clippy::cast_precision_loss)]
fn count(n: impl Into<i128>) -> f64 {
    n.into() as f64
}

fn attributes(kvs: &[KeyValue]) -> BTreeMap<String, Value> {
    kvs.iter()
        .map(|kv| (kv.key.clone(), any(kv.value.as_ref())))
        .collect()
}

fn any(value: Option<&AnyValue>) -> Value {
    use any_value::Value as V;
    match value.and_then(|v| v.value.as_ref()) {
        None => Value::Null,
        Some(V::StringValue(s)) => Value::from(s.as_str()),
        Some(V::BoolValue(b)) => Value::from(*b),
        Some(V::IntValue(i)) => Value::from(*i),
        Some(V::DoubleValue(d)) => Value::from(*d),
        Some(V::ArrayValue(a)) => a.values.iter().map(|v| any(Some(v))).collect(),
        Some(V::KvlistValue(l)) => Value::Object(attributes(&l.values).into_iter().collect()),
        Some(V::BytesValue(b)) => Value::from(hex(b)),
        Some(V::StringValueStrindex(i)) => Value::from(*i),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use any_value::Value as V;
    use opentelemetry_proto::tonic::common::v1::{ArrayValue, InstrumentationScope};
    use opentelemetry_proto::tonic::metrics::v1 as m;
    use opentelemetry_proto::tonic::resource::v1::Resource;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Status, span};
    use serde_json::json;

    use super::*;

    fn kv(key: &str, value: V) -> KeyValue {
        let value = Some(AnyValue { value: Some(value) });
        KeyValue {
            key: key.into(),
            value,
            ..KeyValue::default()
        }
    }

    const PROTOBUF: &[(&str, &str)] = &[("content-type", "application/x-protobuf")];

    async fn post(
        otlp: &OtlpReceiver,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> reqwest::Response {
        let mut request = reqwest::Client::new().post(format!("{}{path}", otlp.endpoint()));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(body).send().await.expect("an answer")
    }

    /// A server span and its client child with attributes of each kind, an event and a link.
    fn two_spans() -> Vec<u8> {
        let (trace_id, parent_id) = (vec![0xab; 16], vec![1; 8]);
        let parent = Span {
            trace_id: trace_id.clone(),
            span_id: parent_id.clone(),
            name: "parent".into(),
            kind: SpanKind::Server as i32,
            ..Span::default()
        };
        let array = V::ArrayValue(ArrayValue {
            values: vec![AnyValue {
                value: Some(V::IntValue(1)),
            }],
        });
        let child = Span {
            trace_id,
            span_id: vec![2; 8],
            parent_span_id: parent_id,
            name: "child".into(),
            kind: SpanKind::Client as i32,
            attributes: vec![
                kv("s", V::StringValue("secret-value".into())),
                kv("i", V::IntValue(-7)),
                kv("d", V::DoubleValue(1.5)),
                kv("b", V::BoolValue(true)),
                kv("a", array),
            ],
            events: vec![span::Event {
                name: "retry".into(),
                attributes: vec![kv("n", V::IntValue(2))],
                ..Default::default()
            }],
            links: vec![span::Link {
                trace_id: vec![0xcd; 16],
                span_id: vec![3; 8],
                ..Default::default()
            }],
            status: Some(Status {
                message: "boom".into(),
                code: SpanStatus::Error as i32,
            }),
            ..Span::default()
        };
        let scope = InstrumentationScope {
            name: "lib".into(),
            ..Default::default()
        };
        let resource = Resource {
            attributes: vec![kv("service.name", V::StringValue("svc".into()))],
            ..Default::default()
        };
        let resource_spans = ResourceSpans {
            resource: Some(resource),
            scope_spans: vec![ScopeSpans {
                scope: Some(scope),
                spans: vec![parent, child],
                ..Default::default()
            }],
            ..Default::default()
        };
        ExportTraceServiceRequest {
            resource_spans: vec![resource_spans],
        }
        .encode_to_vec()
    }

    #[tokio::test]
    async fn spans_arrive_flattened() {
        let otlp = OtlpReceiver::start().await;
        let answer = post(&otlp, "/v1/traces", PROTOBUF, two_spans()).await;
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.headers()["content-type"], "application/x-protobuf");
        assert!(answer.bytes().await.unwrap().is_empty());

        let spans = otlp
            .wait_for_spans(|s| s.len() == 2, Duration::from_secs(1))
            .await;
        let parent = find(&spans, "parent");
        assert_eq!(
            (parent.kind, parent.status, parent.parent_span_id.as_str()),
            ("server", "unset", "")
        );
        let child = children(&spans, parent)[0];
        let attributes = json!({"s": "secret-value", "i": -7, "d": 1.5, "b": true, "a": [1]});
        let expected = ReceivedSpan {
            trace_id: "ab".repeat(16),
            span_id: "0202020202020202".into(),
            parent_span_id: "0101010101010101".into(),
            name: "child".into(),
            kind: "client",
            attributes: serde_json::from_value(attributes).unwrap(),
            events: vec![("retry".into(), [("n".to_owned(), json!(2))].into())],
            links: vec![("cd".repeat(16), "0303030303030303".into())],
            status: "error",
            status_message: "boom".into(),
            service_name: "svc".into(),
            scope: "lib".into(),
        };
        assert_eq!(child, &expected);
        assert!(children(&spans, child).is_empty());
        assert_eq!((otlp.trace_requests(), otlp.metric_requests()), (1, 0));
        assert_eq!(otlp.raw_bodies(), [two_spans()]);
        assert!(otlp.everything_as_text().contains("secret-value"));
        assert!(otlp.decode_failures().is_empty());
    }

    #[tokio::test]
    async fn metric_points_arrive_flattened() {
        let otlp = OtlpReceiver::start().await;
        let point = m::NumberDataPoint {
            attributes: vec![kv("tool", V::StringValue("echo".into()))],
            value: Some(number_data_point::Value::AsInt(3)),
            ..Default::default()
        };
        let histogram = m::HistogramDataPoint {
            count: 4,
            sum: Some(0.5),
            ..Default::default()
        };
        let metrics = vec![
            m::Metric {
                name: "calls".into(),
                data: Some(metric::Data::Sum(m::Sum {
                    data_points: vec![point],
                    ..Default::default()
                })),
                ..Default::default()
            },
            m::Metric {
                name: "took".into(),
                unit: "s".into(),
                data: Some(metric::Data::Histogram(m::Histogram {
                    data_points: vec![histogram],
                    ..Default::default()
                })),
                ..Default::default()
            },
        ];
        let scope_metrics = vec![m::ScopeMetrics {
            metrics,
            ..Default::default()
        }];
        let resource_metrics = vec![m::ResourceMetrics {
            scope_metrics,
            ..Default::default()
        }];
        let body = ExportMetricsServiceRequest { resource_metrics }.encode_to_vec();
        let answer = post(&otlp, "/v1/metrics", PROTOBUF, body).await;
        assert_eq!(answer.status(), 200);
        let points = otlp.metric_points();
        let summary: Vec<_> = points
            .iter()
            .map(|p| (p.name.as_str(), p.unit.as_str(), p.kind, p.value, p.sum))
            .collect();
        assert_eq!(
            summary,
            [
                ("calls", "", "sum", 3.0, None),
                ("took", "s", "histogram", 4.0, Some(0.5))
            ]
        );
        assert_eq!(points[0].attributes["tool"], "echo");
        assert_eq!((otlp.trace_requests(), otlp.metric_requests()), (0, 1));
        assert!(otlp.decode_failures().is_empty());
    }

    #[tokio::test]
    async fn what_does_not_decode_is_refused_and_recorded() {
        let otlp = OtlpReceiver::start().await;
        let garbage = post(&otlp, "/v1/traces", PROTOBUF, b"not protobuf".to_vec()).await;
        assert_eq!(garbage.status(), 400);
        let json = post(
            &otlp,
            "/v1/traces",
            &[("content-type", "application/json")],
            b"{}".to_vec(),
        );
        assert_eq!(json.await.status(), 415);
        let gzip = [PROTOBUF[0], ("content-encoding", "gzip")];
        assert_eq!(
            post(&otlp, "/v1/traces", &gzip, two_spans()).await.status(),
            415
        );
        assert_eq!((otlp.trace_requests(), otlp.raw_bodies().len()), (3, 3));
        let failures = otlp.decode_failures();
        assert_eq!(failures.len(), 3, "{failures:?}");
        assert!(
            failures[1].contains("application/json") && failures[2].contains("gzip"),
            "{failures:?}"
        );
        assert!(otlp.spans().is_empty());
    }

    #[tokio::test]
    async fn a_hanging_collector_reads_but_never_answers() {
        let otlp = OtlpReceiver::hanging().await;
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(300))
            .build()
            .unwrap();
        let request = client.post(format!("{}/v1/traces", otlp.endpoint()));
        let request = request
            .header("content-type", "application/x-protobuf")
            .body(two_spans());
        let error = request.send().await.expect_err("no answer");
        assert!(error.is_timeout(), "{error:?}");
        assert_eq!(otlp.trace_requests(), 1);
    }

    #[tokio::test]
    async fn a_holding_collector_answers_once_released() {
        let otlp = OtlpReceiver::holding().await;
        let sender = otlp.clone();
        let held =
            tokio::spawn(async move { post(&sender, "/v1/traces", PROTOBUF, two_spans()).await });
        // Recorded at once, answered not before the release.
        otlp.wait_for_spans(|s| s.len() == 2, Duration::from_secs(5))
            .await;
        assert_eq!((otlp.trace_requests(), otlp.answered()), (1, 0));
        assert!(!held.is_finished());
        otlp.release();
        assert_eq!(held.await.unwrap().status(), 200);
        assert_eq!(otlp.answered(), 1);
        // Later requests are answered as they come.
        let answer = post(&otlp, "/v1/traces", PROTOBUF, two_spans()).await;
        assert_eq!(answer.status(), 200);
        assert_eq!((otlp.trace_requests(), otlp.answered()), (2, 2));
    }

    #[tokio::test]
    #[should_panic(expected = "the spans expected did not arrive")]
    async fn waiting_in_vain_panics() {
        let otlp = OtlpReceiver::start().await;
        otlp.wait_for_spans(|s| !s.is_empty(), Duration::from_millis(100))
            .await;
    }

    #[test]
    fn nothing_listens_on_a_closed_port() {
        assert!(std::net::TcpStream::connect(("127.0.0.1", closed_port())).is_err());
    }
}
