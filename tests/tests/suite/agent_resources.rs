//! The agent's opt-in resource tools: a model whose API knows only tools lists and reads the
//! application's resources, each read through the pipeline on the run's caller's behalf.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tool_runtime::agent::{Agent, Api, Model};
use tool_runtime::resource::{Resource, ResourceBody, ResourceMeta};
use tool_runtime::{CallContext, Registry, ToolError};
use tool_test_support::fake_provider::{FakeProvider, Step};

const KEY: &str = "sk-test-0123456789-secret";

/// A static resource, and one only operators may see.
struct Note {
    uri: &'static str,
    text: &'static str,
    roles: &'static [&'static str],
}

impl Resource for Note {
    fn meta(&self) -> ResourceMeta {
        let mut meta = ResourceMeta::new(self.uri.replace("://", "-"), self.uri, "A note.");
        meta.options.roles = self.roles.iter().map(|r| (*r).into()).collect();
        meta
    }

    fn read(
        &self,
        _uri: String,
        _values: BTreeMap<String, String>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        Box::pin(async move { Ok(ResourceBody::Text(self.text.to_owned())) })
    }
}

fn model(fake: &FakeProvider) -> Model {
    Model::new(
        Api::OpenAiChat,
        "fake-model",
        fake.base_url.clone(),
        Some(tool_runtime::Secret::new(KEY.to_owned())),
    )
    .with_retries(2, Duration::from_millis(10))
}

#[tokio::test]
async fn a_model_lists_and_reads_resources_only_when_offered() {
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .resource(Note {
                uri: "notes://welcome",
                text: "Hello, reader.",
                roles: &[],
            })
            .resource(Note {
                uri: "notes://secret",
                text: "operators only",
                roles: &["operator"],
            })
            .policy(tool_runtime::layers::policy::RequireRoles)
            .build()
            .unwrap(),
    );
    let fake = FakeProvider::start(
        Api::OpenAiChat,
        KEY,
        vec![
            Step::calls(&[("list_resources", "{}")]),
            Step::calls(&[
                ("read_resource", r#"{"uri":"notes://welcome"}"#),
                ("read_resource", r#"{"uri":"notes://secret"}"#),
            ]),
            Step::text("It says hello."),
        ],
    )
    .await;
    let agent = Agent::builder(Arc::clone(&registry), model(&fake))
        .resources(true)
        .build()
        .unwrap();
    let output = agent.run("what does the welcome note say?").await.unwrap();
    fake.assert_clean();
    assert_eq!(output.answer, "It says hello.");
    let offered = fake.requests()[0]["tools"].to_string();
    assert!(
        offered.contains("list_resources") && offered.contains("read_resource"),
        "{offered}"
    );
    let results: Vec<_> = output.transcript.results().collect();
    let listing = results[0].content.to_string();
    assert!(listing.contains("notes://welcome"), "{listing}");
    assert!(
        !listing.contains("notes://secret"),
        "a hidden resource was listed: {listing}"
    );
    assert!(!results[1].is_error);
    assert_eq!(results[1].content["contents"][0]["text"], "Hello, reader.");
    // The hidden one is refused as one that does not exist.
    assert!(results[2].is_error);
    assert_eq!(
        results[2].content["type"], "not_found",
        "{}",
        results[2].content
    );

    // Without the opt-in, the model is offered no resource tool.
    let plain = FakeProvider::start(Api::OpenAiChat, KEY, vec![Step::text("no tools")]).await;
    let agent = Agent::builder(registry, model(&plain)).build().unwrap();
    agent.run("hi").await.unwrap();
    let offered = plain.requests()[0]["tools"].to_string();
    assert!(!offered.contains("read_resource"), "{offered}");
}
