//! One log line per HTTP request (target `tool_runtime::http`, message `request`), on every
//! route: the call routes, which do the front layer's work themselves, as well as the others.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use serde_json::json;
use tool_runtime::http::{self, ServerOptions};
use tower::ServiceExt;
use tracing_subscriber::layer::SubscriberExt;

#[path = "../../benches/common/add.rs"]
#[expect(dead_code)] // Reason: the benches' fixture; this test serves its tool only.
mod add;

type Line = BTreeMap<String, String>;

#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<Line>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Lines {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct V(Line);
        impl tracing::field::Visit for V {
            fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                self.0.insert(f.name().to_owned(), format!("{v:?}"));
            }
            fn record_str(&mut self, f: &tracing::field::Field, v: &str) {
                self.0.insert(f.name().to_owned(), v.to_owned());
            }
        }
        if event.metadata().target() != "tool_runtime::http" {
            return;
        }
        let mut v = V(Line::new());
        event.record(&mut v);
        self.0.lock().unwrap().push(v.0);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn one_line_per_request_on_every_route() {
    crate::secrets::seen();
    let lines = Lines::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(lines.clone()));
    let app = http::router(add::registry(), ServerOptions::default());
    let began = std::time::Instant::now();
    let requests = [
        ("POST", "/tools/add", r#"{"a": 1, "b": 2}"#, 200),
        ("POST", "/tools/add", r#"{"a": "one"}"#, 422),
        ("POST", "/tools/ad%64", r#"{"a": 1, "b": 2}"#, 200),
        ("GET", "/tools/add", "", 200),
        ("PUT", "/tools/add", "", 405),
        (
            "POST",
            "/invoke",
            r#"{"tool": "add", "params": {"a": 1, "b": 2}}"#,
            200,
        ),
        ("GET", "/healthz", "", 200),
        ("GET", "/nope", "", 404),
    ];
    let mut ids = Vec::new();
    for (method, path, body, status) in requests {
        let request = axum::http::Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), status, "{method} {path}");
        ids.push(
            response.headers()["x-request-id"]
                .to_str()
                .unwrap()
                .to_owned(),
        );
    }
    let lines = lines.0.lock().unwrap().clone();
    assert_eq!(lines.len(), requests.len(), "{lines:#?}");
    for (line, ((method, path, _, status), id)) in lines.iter().zip(requests.iter().zip(&ids)) {
        let expected = json!({
            "message": "request",
            "method": method,
            "path": path,
            "status": status.to_string(),
            "request_id": id,
        });
        let mut seen = serde_json::to_value(line).unwrap();
        // In milliseconds, within the time all the requests took.
        let duration: f64 = seen["duration_ms"].as_str().unwrap().parse().unwrap();
        let elapsed_ms = began.elapsed().as_secs_f64() * 1000.0;
        assert!(duration <= elapsed_ms, "{duration} vs {elapsed_ms}");
        seen.as_object_mut().unwrap().remove("duration_ms");
        assert_eq!(seen, expected);
    }
}
