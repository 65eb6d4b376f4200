//! One `tool.call` span per call, with tool, source and request id.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_runtime::prelude::*;

/// Add two integers.
#[tool]
async fn add(
    /// First term
    a: i64,
    /// Second term
    b: i64,
) -> i64 {
    a + b
}

fn registry() -> Registry {
    registry_builder().build().unwrap()
}

fn caller() -> Caller {
    Caller::new(Source::Internal)
}

#[test]
fn one_span_per_call() {
    use std::fmt::Write;
    use tracing_subscriber::layer::SubscriberExt;

    #[derive(Clone, Default)]
    struct Spans(Arc<Mutex<Vec<String>>>);
    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Spans {
        fn on_new_span(
            &self,
            attrs: &tracing::span::Attributes<'_>,
            _: &tracing::span::Id,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            struct V(String);
            impl tracing::field::Visit for V {
                fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                    let _ = write!(self.0, " {}={v:?}", f.name());
                }
                fn record_str(&mut self, f: &tracing::field::Field, v: &str) {
                    let _ = write!(self.0, " {}={v}", f.name());
                }
            }
            let mut v = V(attrs.metadata().name().to_owned());
            attrs.record(&mut v);
            self.0.lock().unwrap().push(v.0);
        }
    }
    crate::secrets::seen();
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    let r = registry();
    tracing::subscriber::with_default(subscriber, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(r.call(
            "add",
            json!({"a": 1, "b": 2}),
            caller().request_id("span-1"),
        ));
    });
    let spans = spans.0.lock().unwrap().clone();
    assert_eq!(
        spans,
        ["tool.call tool=add source=internal request_id=span-1"]
    );
}

/// The tools of this file, and no others: the test binary holds other files' tools too.
fn registry_builder() -> tool_runtime::registry::RegistryBuilder {
    tool_runtime::Registry::builder()
        .without_inventory()
        .tool(add::descriptor())
}
