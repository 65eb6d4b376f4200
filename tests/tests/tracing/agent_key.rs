//! A model provider's API key appears in no log line (at TRACE, the HTTP client's own
//! included), transcript, event, error or `Debug` output of the agent.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use tool_runtime::agent::{Agent, Api, Model};
use tool_runtime::{Registry, Secret};
use tool_test_support::fake_provider::{FakeProvider, Step};

const KEY: &str = "sk-ant-api03-never-shown-0123456789";

#[tokio::test]
async fn the_api_key_is_never_shown() {
    let seen = crate::secrets::seen();
    let registry = Arc::new(Registry::builder().without_inventory().build().unwrap());
    let mut shown = String::new();
    for api in [Api::Anthropic, Api::OpenAiChat, Api::Gemini] {
        let fake = FakeProvider::start(
            api,
            KEY,
            vec![
                Step::Status {
                    status: 429,
                    retry_after: Some("0".to_owned()),
                },
                Step::text("hello"),
                Step::Status {
                    status: 401,
                    retry_after: None,
                },
            ],
        )
        .await;
        let model = Model::new(
            api,
            "fake-model",
            fake.base_url.clone(),
            Some(Secret::new(KEY.to_owned())),
        )
        .with_retries(1, Duration::from_millis(1));
        let _ = write!(shown, "{model:?} {model}");
        let agent = Agent::builder(registry.clone(), model).build().unwrap();
        let _ = write!(shown, "{agent:?}");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let ok = agent.run("hi").events(tx).await.unwrap();
        shown.push_str(&serde_json::to_string(&ok).unwrap());
        let _ = write!(shown, "{ok:?}");
        while let Ok(event) = rx.try_recv() {
            shown.push_str(&serde_json::to_string(&event).unwrap());
        }
        let e = agent.run("again").await.unwrap_err();
        let _ = write!(shown, "{e} {e:?}");
        assert!(e.to_string().contains("401"), "{e}");
        fake.assert_clean();
        // The key did reach the provider.
        let headers = fake.headers();
        assert!(format!("{:?}", headers[0]).contains(KEY));
    }
    let logs = String::from_utf8_lossy(&seen.0.lock().unwrap()).into_owned();
    assert!(
        logs.contains("retrying the model request"),
        "the retries were logged"
    );
    assert!(!logs.contains(KEY), "a log line has the key");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(!shown.contains("never-shown"), "{shown}");
}
