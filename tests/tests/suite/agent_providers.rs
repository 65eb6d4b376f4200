//! The agent's fidelity to each provider, against replies built with the providers' own SDKs
//! (`tests/fixtures/agent/`, made by `tests/python/agent_fixtures.py`): refusals and safety
//! stops end a run as refused, an empty answer says so, usage counts every token, fields a
//! request does not define are not sent back, and every API streams, a broken stream retried
//! while nothing was shown.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::agent::{
    Agent, Api, Budgets, Event, Model, ProviderError, RunError, RunErrorKind, RunOutput, Usage,
};
use tool_runtime::{Registry, tool};
use tool_test_support::fake_provider::{FakeProvider, Step, USAGE};

const KEY: &str = "sk-test-providers";
const REFUSAL: &str = "I can't help with that.";

/// Echo the text.
#[tool(annotations(read_only))]
async fn echo(
    /// What to echo
    text: String,
) -> String {
    text
}

fn registry() -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(echo::descriptor())
            .build()
            .unwrap(),
    )
}

/// One run of `api` (streaming if `stream`) against a fake answering with `script`: the fake,
/// the outcome and the events.
async fn run(
    api: Api,
    stream: bool,
    budgets: Option<Budgets>,
    script: Vec<Step>,
) -> (FakeProvider, Result<RunOutput, RunError>, Vec<Event>) {
    let fake = FakeProvider::start(api, KEY, script).await;
    let model = Model::new(
        api,
        "fake-model",
        fake.base_url.clone(),
        Some(tool_runtime::Secret::new(KEY.to_owned())),
    )
    .with_retries(2, Duration::from_millis(10))
    .with_stream(stream);
    let mut agent = Agent::builder(registry(), model);
    if let Some(budgets) = budgets {
        agent = agent.budgets(budgets);
    }
    let agent = agent.build().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let outcome = agent.run("echo hi").events(tx).await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (fake, outcome, events)
}

fn kinds(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn stop(events: &[Event]) -> String {
    match events.last() {
        Some(Event::Finished { stop, .. }) => stop.clone(),
        other => panic!("the last event is not `finished`: {other:?}"),
    }
}

#[tokio::test]
async fn refusals_and_safety_stops_end_the_run_as_refused() {
    // (API, streamed, fixture, what the model said, the reason, a blocked prompt)
    let cases = [
        (
            Api::OpenAiChat,
            false,
            "openai-chat-refusal",
            REFUSAL,
            "refusal",
            false,
        ),
        (
            Api::OpenAiChat,
            true,
            "openai-chat-refusal-stream",
            REFUSAL,
            "refusal",
            false,
        ),
        (
            Api::OpenAiResponses,
            false,
            "openai-responses-refusal",
            REFUSAL,
            "refusal",
            false,
        ),
        (
            Api::OpenAiResponses,
            true,
            "openai-responses-refusal-stream",
            REFUSAL,
            "refusal",
            false,
        ),
        (
            Api::Anthropic,
            false,
            "anthropic-refusal",
            REFUSAL,
            "refusal",
            false,
        ),
        (
            Api::Anthropic,
            true,
            "anthropic-refusal-stream",
            REFUSAL,
            "refusal",
            false,
        ),
        (Api::Gemini, false, "gemini-safety", "", "SAFETY", false),
        (
            Api::Gemini,
            true,
            "gemini-safety-stream",
            "Sure, ",
            "SAFETY",
            false,
        ),
        (
            Api::Gemini,
            false,
            "gemini-prompt-blocked",
            "",
            "PROHIBITED_CONTENT",
            true,
        ),
    ];
    for (api, stream, fixture, said, reason, blocked) in cases {
        let (fake, outcome, events) = run(api, stream, None, vec![Step::fixture(fixture)]).await;
        fake.assert_clean();
        let refused = Refused {
            fixture,
            said,
            reason,
            blocked,
            rated: api == Api::Gemini,
        };
        refused.check(&outcome.expect_err(fixture), &events);
    }
}

/// What a refusal fixture must end as.
struct Refused {
    fixture: &'static str,
    said: &'static str,
    reason: &'static str,
    blocked: bool,
    /// Whether safety ratings came with it.
    rated: bool,
}

impl Refused {
    fn check(&self, error: &RunError, events: &[Event]) {
        let fixture = self.fixture;
        let RunErrorKind::Refused(refusal) = &error.kind else {
            panic!("{fixture}: ended as {:?}", error.kind);
        };
        assert_eq!(
            (
                refusal.text.as_str(),
                refusal.reason.as_str(),
                refusal.prompt_blocked
            ),
            (self.said, self.reason, self.blocked),
            "{fixture}"
        );
        assert_eq!(error.kind.name(), "refused");
        let message = error.to_string();
        assert!(message.contains(self.reason), "{fixture}: {message}");
        if self.rated {
            // The ratings that blocked it are named.
            assert!(
                message.contains("HARM_CATEGORY_DANGEROUS_CONTENT HIGH"),
                "{fixture}: {message}"
            );
            assert!(refusal.safety_ratings.is_some(), "{fixture}");
        }
        assert!(kinds(events).contains(&"refused".to_owned()), "{fixture}");
        assert_eq!(stop(events), "refused", "{fixture}");
        // What the model said stays in the conversation; a stop with nothing said adds nothing.
        let last = error.transcript.messages.last().unwrap();
        let kept = serde_json::to_value(last).unwrap();
        if self.said.is_empty() {
            assert_eq!(kept["role"], "user", "{fixture}");
        } else {
            assert_eq!(
                (kept["role"].as_str(), kept["text"].as_str()),
                (Some("assistant"), Some(self.said)),
                "{fixture}"
            );
        }
    }
}

#[tokio::test]
async fn an_empty_answer_is_an_answer_that_says_so() {
    for (api, fixture) in [
        (Api::OpenAiChat, "openai-chat-empty"),
        (Api::Anthropic, "anthropic-empty"),
    ] {
        let (fake, outcome, events) = run(api, false, None, vec![Step::fixture(fixture)]).await;
        fake.assert_clean();
        assert_eq!(outcome.expect(fixture).answer, "");
        assert_eq!(stop(&events), "empty_answer", "{fixture}");
    }
    let (_, outcome, events) = run(Api::Anthropic, false, None, vec![Step::text("Done.")]).await;
    assert_eq!(outcome.unwrap().answer, "Done.");
    assert_eq!(stop(&events), "answered");
}

#[tokio::test]
async fn usage_counts_cached_and_reasoning_tokens_and_budgets_apply_to_all() {
    let (_, outcome, _) = run(
        Api::Anthropic,
        false,
        None,
        vec![Step::fixture("anthropic-cache-usage")],
    )
    .await;
    // Anthropic's `input_tokens` leaves out what was read from and written to the cache.
    assert_eq!(
        outcome.unwrap().transcript.usage,
        Usage {
            input_tokens: 194,
            output_tokens: 9,
            cache_read_tokens: 64,
            cache_write_tokens: 10,
            reasoning_tokens: 0,
        }
    );
    // The other APIs count them inside their totals; the breakdown is reported.
    let (reply_in, reply_out) = USAGE;
    for (api, first) in [
        (Api::OpenAiChat, (50, 12, 32, 8, 5)),
        (Api::OpenAiResponses, (50, 12, 32, 8, 5)),
        (Api::Gemini, (53, 12, 32, 0, 5)),
    ] {
        let fixture = format!("{}-call-stream", api_name(api));
        let script = vec![Step::fixture(&fixture), Step::text("Echoed.")];
        let (_, outcome, _) = run(api, true, None, script).await;
        let transcript = outcome.expect(&fixture).transcript;
        let (input, output, read, written, reasoning) = first;
        assert_eq!(
            transcript.turns[0].usage,
            Usage {
                input_tokens: input,
                output_tokens: output,
                cache_read_tokens: read,
                cache_write_tokens: written,
                reasoning_tokens: reasoning,
            },
            "{fixture}"
        );
        assert_eq!(
            transcript.usage.total(),
            input + output + reply_in + reply_out
        );
    }
    // A token budget counts the cached tokens: the first turn's 194 + 9 are over 150, so its
    // call is answered as over budget and the run ends there.
    let mut over = tool_test_support::fake_provider::fixture("anthropic-cache-usage");
    over["reply"]["content"] = json!([{"type": "tool_use", "id": "call_fix_budget", "name": "echo", "input": {"text": "hi"}}]);
    over["reply"]["stop_reason"] = json!("tool_use");
    let budgets = Budgets::default().max_tokens(Some(150));
    let (_, outcome, _) = run(
        Api::Anthropic,
        false,
        Some(budgets),
        vec![Step::Fixture(over)],
    )
    .await;
    let error = outcome.unwrap_err();
    assert_eq!(error.kind.name(), "max_tokens");
}

fn api_name(api: Api) -> &'static str {
    match api {
        Api::OpenAiChat => "openai-chat",
        Api::OpenAiResponses => "openai-responses",
        Api::Anthropic => "anthropic",
        _ => "gemini",
    }
}

#[tokio::test]
async fn reply_fields_no_request_defines_are_not_sent_back() {
    for (api, fixture, field) in [
        (Api::Anthropic, "anthropic-unknown-field", "future_field"),
        (Api::Gemini, "gemini-unknown-field", "futureField"),
    ] {
        let script = vec![Step::fixture(fixture), Step::text("Echoed.")];
        let (fake, outcome, _) = run(api, false, None, script).await;
        // The fake checks the call and (Gemini) its thought signature came back.
        fake.assert_clean();
        assert_eq!(outcome.expect(fixture).answer, "Echoed.");
        let sent = fake.requests()[1].to_string();
        assert!(!sent.contains(field), "{fixture}: sent back {sent}");
        assert!(
            sent.contains("Let me."),
            "{fixture}: the reply's text is kept: {sent}"
        );
    }
}

#[tokio::test]
async fn a_streamed_tool_call_turn_works_on_every_api() {
    for api in [
        Api::OpenAiChat,
        Api::OpenAiResponses,
        Api::Anthropic,
        Api::Gemini,
    ] {
        let fixture = format!("{}-call-stream", api_name(api));
        let script = vec![Step::fixture(&fixture), Step::text("Echoed.")];
        let (fake, outcome, events) = run(api, true, None, script).await;
        fake.assert_clean();
        let output = outcome.expect(&fixture);
        assert_eq!(output.answer, "Echoed.", "{fixture}");
        let result = output
            .transcript
            .results()
            .next()
            .expect("a call ran")
            .clone();
        assert_eq!(
            (result.name.as_str(), &result.content),
            ("echo", &json!("hi"))
        );
        let deltas: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                Event::TextDelta { text } => Some(text.clone()),
                _ => None,
            })
            .collect();
        assert!(
            deltas.len() >= 7,
            "{fixture}: text arrives as it is written: {deltas:?}"
        );
        assert_eq!(deltas.concat(), "Let me.Echoed.", "{fixture}");
        let first = &fake.requests()[0];
        match api {
            Api::Gemini => {}
            _ => assert_eq!(first["stream"], json!(true), "{fixture}"),
        }
        if api == Api::Anthropic {
            // Thinking goes back with its signature, and the call with its whole input.
            let sent = &fake.requests()[1]["messages"][1]["content"];
            assert_eq!(
                sent[0],
                json!({"type": "thinking", "thinking": "Echo it.", "signature": "sig-anthropic"})
            );
            assert_eq!(sent[2]["input"], json!({"text": "hi"}));
        }
    }
}

#[tokio::test]
async fn a_broken_stream_is_retried_until_text_was_shown() {
    // Cut after the thinking began: nothing shown yet, so it is asked again.
    let script = vec![
        Step::cut("anthropic-call-stream", 4),
        Step::fixture("anthropic-call-stream"),
        Step::text("Echoed."),
    ];
    let (fake, outcome, _) = run(Api::Anthropic, true, None, script).await;
    fake.assert_clean();
    let output = outcome.unwrap();
    assert_eq!(
        (output.answer.as_str(), output.transcript.turns[0].retries),
        ("Echoed.", 1)
    );

    // An error event before any text: the same.
    let error_event = json!({"api": "openai-responses", "events": [
        {"type": "error", "code": "server_error", "message": "overloaded", "param": null, "sequence_number": 0}
    ]});
    let script = vec![
        Step::Fixture(error_event.clone()),
        Step::fixture("openai-responses-call-stream"),
        Step::text("Echoed."),
    ];
    let (fake, outcome, _) = run(Api::OpenAiResponses, true, None, script).await;
    fake.assert_clean();
    assert_eq!(outcome.unwrap().transcript.turns[0].retries, 1);

    // Retried no more than the model's retries allow, then a clear error.
    let script = vec![Step::Fixture(error_event.clone()); 3];
    let (_, outcome, _) = run(Api::OpenAiResponses, true, None, script).await;
    let error = outcome.unwrap_err();
    assert!(
        matches!(&error.kind, RunErrorKind::Provider(ProviderError::Stream(m)) if m == "overloaded"),
        "{:?}",
        error.kind
    );

    // Cut after text was shown: the turn fails, with what happened.
    let (_, outcome, events) = run(
        Api::OpenAiChat,
        true,
        None,
        vec![Step::cut("openai-chat-call-stream", 4)],
    )
    .await;
    let error = outcome.unwrap_err();
    assert!(
        matches!(&error.kind, RunErrorKind::Provider(ProviderError::Transport(m)) if m.contains("ended before")),
        "{:?}",
        error.kind
    );
    assert!(kinds(&events).contains(&"text_delta".to_owned()));
    assert_eq!(stop(&events), "provider");
}

/// What a stream answer looks like to a client: the fixtures' events with their names.
#[tokio::test]
async fn fixture_streams_are_server_sent_events_in_small_pieces() {
    let fake = FakeProvider::start(
        Api::Anthropic,
        KEY,
        vec![Step::fixture("anthropic-refusal-stream")],
    )
    .await;
    let response = reqwest::Client::new()
        .post(format!("{}/v1/messages", fake.base_url))
        .header("x-api-key", KEY)
        .header("anthropic-version", "2023-06-01")
        .json(
            &json!({"model": "fake-model", "max_tokens": 10, "stream": true,
                      "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}),
        )
        .send()
        .await
        .unwrap();
    let mut response = response;
    let mut reads = 0;
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        reads += 1;
        body.extend_from_slice(&chunk);
    }
    let body = String::from_utf8(body).unwrap();
    assert!(body.starts_with("event: message_start\ndata: {"), "{body}");
    assert!(reads > 10, "{reads} reads");
    let _: Value =
        serde_json::from_str(body.lines().find_map(|l| l.strip_prefix("data: ")).unwrap()).unwrap();
}

/// The key and base URL come from the variables each provider's SDK reads, in its order.
#[tokio::test]
async fn keys_and_base_urls_come_from_the_sdks_environment_names() {
    // (API, the environment, the header that must carry the key)
    type Env = &'static [(&'static str, &'static str)];
    let cases: [(Api, Env, &str); 5] = [
        (Api::Anthropic, &[("ANTHROPIC_API_KEY", KEY)], "x-api-key"),
        (
            Api::Anthropic,
            &[("ANTHROPIC_AUTH_TOKEN", KEY)],
            "authorization",
        ),
        // Both: the API key, as the SDK does.
        (
            Api::Anthropic,
            &[
                ("ANTHROPIC_API_KEY", KEY),
                ("ANTHROPIC_AUTH_TOKEN", "other"),
            ],
            "x-api-key",
        ),
        (Api::Gemini, &[("GEMINI_API_KEY", KEY)], "x-goog-api-key"),
        // Both: GOOGLE_API_KEY, as google-genai does.
        (
            Api::Gemini,
            &[("GOOGLE_API_KEY", KEY), ("GEMINI_API_KEY", "other")],
            "x-goog-api-key",
        ),
    ];
    for (api, vars, header) in cases {
        let fake = FakeProvider::start(api, KEY, vec![Step::text("Hi.")]).await;
        let base = api.base_url_var();
        let env = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
                .or_else(|| (name == base).then(|| fake.base_url.clone()))
        };
        let model = Model::from_lookup(api, "fake-model", None, env).unwrap();
        assert_eq!(model.base_url(), fake.base_url);
        let agent = Agent::builder(registry(), model).build().unwrap();
        assert_eq!(agent.run("hi").await.unwrap().answer, "Hi.", "{vars:?}");
        fake.assert_clean();
        let sent = &fake.headers()[0];
        assert!(sent.contains_key(header), "{vars:?}: {sent:?}");
        let other = if header == "authorization" {
            "x-api-key"
        } else {
            "authorization"
        };
        assert!(!sent.contains_key(other), "{vars:?}: {sent:?}");
    }
    // GOOGLE_API_KEY alone, and the base URL from GOOGLE_GEMINI_BASE_URL only.
    let env = |name: &str| (name == "GOOGLE_API_KEY").then(|| KEY.to_owned());
    let model = Model::from_lookup(Api::Gemini, "m", None, env).unwrap();
    assert_eq!(
        model.base_url(),
        "https://generativelanguage.googleapis.com"
    );
    let env = |name: &str| match name {
        "GEMINI_API_KEY" => Some(KEY.to_owned()),
        "GEMINI_BASE_URL" => Some("http://not-read".to_owned()),
        _ => None,
    };
    let model = Model::from_lookup(Api::Gemini, "m", None, env).unwrap();
    assert_eq!(
        model.base_url(),
        "https://generativelanguage.googleapis.com"
    );
    // No key: the error names every variable read.
    let error = Model::from_lookup(Api::Anthropic, "m", None, |_: &str| None).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"),
        "{error}"
    );
    assert_eq!(
        tool_runtime::agent::detect_api(|n: &str| (n == "GOOGLE_API_KEY").then(String::new)),
        Ok(Api::Gemini)
    );
}

/// `switch_model` is a tool like the others: lowered for each provider by `llm`, its arguments
/// validated by the pipeline against its schema.
#[tokio::test]
async fn switch_model_is_lowered_and_validated_like_every_tool() {
    use tool_runtime::agent::Tiers;
    let fast = FakeProvider::start(
        Api::OpenAiChat,
        KEY,
        vec![
            Step::calls(&[("switch_model", r#"{"tier":"nope"}"#)]),
            Step::calls(&[("switch_model", r#"{"tier":"expert"}"#)]),
        ],
    )
    .await;
    let expert = FakeProvider::start(Api::Gemini, KEY, vec![Step::text("Done.")]).await;
    let model = |api, fake: &FakeProvider| {
        Model::new(
            api,
            "fake-model",
            fake.base_url.clone(),
            Some(tool_runtime::Secret::new(KEY.to_owned())),
        )
    };
    let tiers = Tiers::new("fast", model(Api::OpenAiChat, &fast))
        .tier("expert", model(Api::Gemini, &expert));
    let agent = Agent::builder(registry(), tiers).build().unwrap();
    let output = agent.run("hard one").await.unwrap();
    fast.assert_clean();
    expert.assert_clean();
    assert_eq!(
        (output.answer.as_str(), output.tier.as_str()),
        ("Done.", "expert")
    );

    // A tier that does not exist: the pipeline's `invalid_arguments`, naming the ones that do.
    let first = output.transcript.results().next().unwrap();
    assert!(first.is_error);
    assert_eq!(first.content["type"], "invalid_arguments");
    assert!(
        first.content.to_string().contains("expert"),
        "{}",
        first.content
    );

    // Offered as `llm` lowers it: strict for OpenAI, a function declaration for Gemini.
    let offered = |tools: &Value| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t.to_string().contains("switch_model"))
            .cloned()
            .unwrap()
    };
    let openai = offered(&fast.requests()[0]["tools"]);
    assert_eq!(openai["function"]["strict"], true, "{openai}");
    assert_eq!(
        openai["function"]["parameters"]["additionalProperties"],
        false
    );
    assert_eq!(
        openai["function"]["parameters"]["properties"]["tier"]["enum"],
        json!(["expert", "fast"])
    );
    let gemini = offered(&expert.requests()[0]["tools"][0]["functionDeclarations"]);
    assert_eq!(gemini["name"], "switch_model");
    assert!(
        gemini["parameters"]["properties"]["tier"].is_object(),
        "{gemini}"
    );
}

/// A model on `fake`'s API with the test key, retried at most `retries` times.
fn fake_model(api: Api, fake: &FakeProvider, retries: u32) -> Model {
    Model::new(
        api,
        "fake-model",
        fake.base_url.clone(),
        Some(tool_runtime::Secret::new(KEY.to_owned())),
    )
    .with_retries(retries, Duration::from_millis(10))
}

/// `Model::with_max_output_tokens` goes in every request, in each API's own field.
#[tokio::test]
async fn max_output_tokens_go_in_each_apis_own_field() {
    let cases = [
        (Api::OpenAiChat, "/max_completion_tokens"),
        (Api::OpenAiResponses, "/max_output_tokens"),
        (Api::Anthropic, "/max_tokens"),
        (Api::Gemini, "/generationConfig/maxOutputTokens"),
        (Api::OpenAiCompatible, "/max_tokens"),
    ];
    for (api, field) in cases {
        for stream in [false, true] {
            let fake = FakeProvider::start(api, KEY, vec![Step::text("Done.")]).await;
            let model = fake_model(api, &fake, 0)
                .with_stream(stream)
                .with_max_output_tokens(321);
            let agent = Agent::builder(registry(), model).build().unwrap();
            let output = agent.run("hi").await.unwrap();
            fake.assert_clean();
            assert_eq!(output.answer, "Done.");
            let body = &fake.requests()[0];
            assert_eq!(body.pointer(field), Some(&json!(321)), "{api}: {body}");
        }
    }
}

/// `Model::with_timeout` bounds each request: a provider slower than that fails the run with
/// an error naming the timeout, once the retries are spent, instead of waiting for it.
#[tokio::test]
async fn a_provider_slower_than_the_models_timeout_fails_the_run() {
    for api in [
        Api::OpenAiChat,
        Api::OpenAiResponses,
        Api::Anthropic,
        Api::Gemini,
        Api::OpenAiCompatible,
    ] {
        let slow = vec![Step::Pause(Duration::from_secs(5)), Step::text("late")];
        let fake = FakeProvider::start(api, KEY, slow).await;
        let model = fake_model(api, &fake, 0).with_timeout(Duration::from_millis(200));
        let agent = Agent::builder(registry(), model).build().unwrap();
        let started = std::time::Instant::now();
        let error = agent.run("hi").await.unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{api}: {:?}",
            started.elapsed()
        );
        let RunErrorKind::Provider(ProviderError::Transport(message)) = &error.kind else {
            panic!("{api}: not a transport error: {error}");
        };
        assert!(message.contains("timeout of 200ms"), "{api}: {message}");
    }
}
