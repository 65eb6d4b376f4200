//! The agent loop against local fake providers (`tool_test_support::fake_provider`), one per wire
//! format, each checking every request against its API's contract.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tool_runtime::agent::{
    Agent, Api, Budgets, Event, Message, Model, RunContext, RunErrorKind, Tiers,
};
use tool_runtime::layers::hooks::{CallObserver, CompletedCall};
use tool_runtime::layers::policy::DenyDestructive;
use tool_runtime::llm::{self, Target};
use tool_runtime::{CallContext, Caller, Registry, Source, State, tool};
use tool_test_support::fake_provider::{FakeProvider, Step, USAGE};

const KEY: &str = "sk-test-0123456789-secret";

/// Add two integers; `b` between 0 and 100.
#[tool(annotations(read_only))]
async fn agent_add(
    /// First
    a: i64,
    /// Second
    #[arg(range(min = 0, max = 100))]
    b: i64,
) -> i64 {
    a + b
}

/// The weather in a city.
#[tool(annotations(read_only))]
async fn agent_weather(
    /// The city
    city: String,
) -> Value {
    json!({"city": city, "celsius": 21})
}

/// Counts how many probes run at once.
#[derive(Default)]
struct Probes {
    now: AtomicUsize,
    most: AtomicUsize,
}

/// Takes a while, for counting concurrent calls.
#[tool(annotations(read_only))]
async fn agent_probe(probes: State<Probes>, n: u32) -> u32 {
    let now = probes.now.fetch_add(1, Ordering::SeqCst) + 1;
    probes.most.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(60)).await;
    probes.now.fetch_sub(1, Ordering::SeqCst);
    n
}

/// Sleeps far longer than any test.
#[tool(timeout = "150ms")]
async fn agent_sleep(
    /// Seconds
    seconds: u64,
) -> u64 {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    seconds
}

/// Sleeps for half a minute.
#[tool(timeout = "60s")]
async fn agent_wait() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "woke".to_owned()
}

/// Wipe every note.
#[tool(annotations(destructive))]
async fn agent_wipe(
    /// Which notebook
    notebook: String,
) -> String {
    format!("wiped {notebook}")
}

/// Which conversation is this?
#[tool(annotations(read_only))]
async fn agent_whoami(ctx: &CallContext) -> Value {
    let context = ctx.extension::<RunContext>();
    json!({
        "chat": context.as_ref().and_then(|c| c.chat_id.clone()),
        "user": context.as_ref().and_then(|c| c.user.clone()),
        "principal": ctx.principal(),
        "source": ctx.source().as_str(),
    })
}

/// The calls the pipeline saw, as the audit would record them.
#[derive(Default, Clone)]
struct Seen(Arc<Mutex<Vec<(String, String, Value)>>>);

impl CallObserver for Seen {
    fn observe<'a>(&'a self, call: CompletedCall<'a>) -> BoxFuture<'a, ()> {
        let outcome = match call.envelope.error() {
            Some(e) => e.kind().to_string(),
            None => "ok".to_owned(),
        };
        self.0.lock().unwrap().push((
            call.envelope.tool.clone(),
            format!("{}:{outcome}", call.ctx.source()),
            call.args.clone(),
        ));
        Box::pin(async {})
    }
}

impl Seen {
    /// The outcome of every call seen, as `source:type`, in the order seen.
    fn outcomes(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(_, o, _)| o.clone())
            .collect()
    }
}

fn registry_builder() -> tool_runtime::registry::RegistryBuilder {
    Registry::builder()
        .without_inventory()
        .tool(agent_add::descriptor())
        .tool(agent_weather::descriptor())
        .tool(agent_probe::descriptor())
        .tool(agent_sleep::descriptor())
        .tool(agent_wait::descriptor())
        .tool(agent_wipe::descriptor())
        .tool(agent_whoami::descriptor())
}

fn registry(seen: &Seen) -> Arc<Registry> {
    Arc::new(
        registry_builder()
            .observer(seen.clone())
            .state(Probes::default())
            .build()
            .unwrap(),
    )
}

fn model(api: Api, fake: &FakeProvider) -> Model {
    Model::new(
        api,
        "fake-model",
        fake.base_url.clone(),
        Some(tool_runtime::Secret::new(KEY.to_owned())),
    )
    .with_retries(2, Duration::from_millis(10))
}

async fn fake(api: Api, script: Vec<Step>) -> FakeProvider {
    FakeProvider::start(api, KEY, script).await
}

fn results(transcript: &tool_runtime::agent::Transcript) -> Vec<(String, bool, Value)> {
    transcript
        .results()
        .map(|r| (r.name.clone(), r.is_error, r.content.clone()))
        .collect()
}

/// A two-step task on every API: the model calls one tool, reads the result, calls another,
/// then answers. The tools sent are exactly the lowered specs of the visible tools.
#[tokio::test]
async fn a_two_step_task_on_every_api() {
    for api in Api::ALL {
        let seen = Seen::default();
        let registry = registry(&seen);
        let fake = fake(
            api,
            vec![
                Step::calls(&[("agent_weather", r#"{"city":"Oslo"}"#)]),
                Step::calls(&[("agent_add", r#"{"a":21,"b":2}"#)]),
                Step::text("It is 21 °C in Oslo; 21 + 2 = 23."),
            ],
        )
        .await;
        let caller = Caller::new(Source::Agent);
        let mut options = llm::Options::default();
        if api == Api::OpenAiCompatible {
            options.strict = false;
        }
        let (specs, _) = llm::specs(&registry.visible(&caller), api.target(), &options);
        fake.expect_tools(match api.target() {
            Target::Gemini => specs[0]["functionDeclarations"].clone(),
            _ => specs,
        });
        let agent = Agent::builder(registry, model(api, &fake))
            .system("You help.")
            .build()
            .unwrap();
        let output = agent
            .run("Weather in Oslo, and 21 + 2?")
            .await
            .unwrap_or_else(|e| panic!("{api}: {e}"));
        fake.assert_clean();
        assert_eq!(output.answer, "It is 21 °C in Oslo; 21 + 2 = 23.", "{api}");
        assert_eq!(
            results(&output.transcript),
            [
                (
                    "agent_weather".to_owned(),
                    false,
                    json!({"city": "Oslo", "celsius": 21})
                ),
                ("agent_add".to_owned(), false, json!(23)),
            ],
            "{api}"
        );
        let t = &output.transcript;
        assert_eq!(t.turns.len(), 3, "{api}");
        assert_eq!(t.tool_calls, 2, "{api}");
        assert_eq!(t.usage.input_tokens, 3 * USAGE.0, "{api}");
        assert_eq!(t.usage.output_tokens, 3 * USAGE.1, "{api}");
        // user, assistant (call), tool, assistant (call), tool, assistant (answer)
        assert_eq!(t.messages.len(), 6, "{api}");
        // Every call went through the pipeline as the agent.
        let seen = seen.0.lock().unwrap().clone();
        assert_eq!(
            seen.iter()
                .map(|(t, o, _)| format!("{t} {o}"))
                .collect::<Vec<_>>(),
            ["agent_weather agent:ok", "agent_add agent:ok"],
            "{api}"
        );
        // The system prompt reached the model in the API's own place.
        let first = &fake.requests()[0];
        let system = match api {
            Api::Anthropic => first["system"].clone(),
            Api::Gemini => first["systemInstruction"]["parts"][0]["text"].clone(),
            Api::OpenAiResponses => first["instructions"].clone(),
            _ => first["messages"][0]["content"].clone(),
        };
        assert_eq!(system, "You help.", "{api}");
    }
}

/// An agent over the test tools talking to a fresh fake of OpenAI Chat Completions.
async fn chat_agent(
    script: Vec<Step>,
    configure: impl FnOnce(tool_runtime::agent::AgentBuilder) -> tool_runtime::agent::AgentBuilder,
) -> (Agent, FakeProvider, Seen) {
    let seen = Seen::default();
    let fake = fake(Api::OpenAiChat, script).await;
    let agent = configure(Agent::builder(
        registry(&seen),
        model(Api::OpenAiChat, &fake),
    ))
    .build()
    .unwrap();
    (agent, fake, seen)
}

#[tokio::test]
async fn parallel_calls_run_within_the_bound_and_answer_in_order() {
    let fake = fake(
        Api::OpenAiChat,
        vec![
            Step::calls(&[
                ("agent_probe", r#"{"n":1}"#),
                ("agent_probe", r#"{"n":2}"#),
                ("agent_probe", r#"{"n":3}"#),
            ]),
            Step::text("done"),
        ],
    )
    .await;
    let probes = Arc::new(Probes::default());
    let registry = Arc::new(
        registry_builder()
            .state::<Probes>(probes.clone())
            .build()
            .unwrap(),
    );
    let agent = Agent::builder(registry, model(Api::OpenAiChat, &fake))
        .parallel(2)
        .build()
        .unwrap();
    let output = agent.run("probe three times").await.unwrap();
    fake.assert_clean();
    assert_eq!(
        probes.most.load(Ordering::SeqCst),
        2,
        "two at once, not three"
    );
    let contents: Vec<Value> = results(&output.transcript)
        .into_iter()
        .map(|r| r.2)
        .collect();
    assert_eq!(contents, [json!(1), json!(2), json!(3)]);
    // The results went back in the calls' order (the fake checks ids against the calls).
    let sent = &fake.requests()[1]["messages"];
    let ids: Vec<&str> = sent
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    let Message::Assistant { tool_calls, .. } = &output.transcript.messages[1] else {
        panic!("{:?}", output.transcript.messages[1]);
    };
    let calls: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, calls);
}

#[tokio::test]
async fn bad_calls_come_back_as_results_the_model_can_act_on() {
    let (agent, fake, seen) = chat_agent(
        vec![
            // Not JSON, an unknown tool, invalid arguments: three answers, no broken run.
            Step::calls(&[
                ("agent_add", r#"{"a": 1, "b": "#),
                ("agent_ad", r#"{"a":1,"b":2}"#),
                ("agent_add", r#"{"a":1,"b":500,"c":true}"#),
            ]),
            // Corrected.
            Step::calls(&[("agent_add", r#"{"a":1,"b":2}"#)]),
            Step::text("3"),
        ],
        |b| b,
    )
    .await;
    let output = agent.run("add 1 and 2").await.unwrap();
    fake.assert_clean();
    let r = results(&output.transcript);
    assert!(
        r[0].1 && r[0].2["type"] == "invalid_arguments",
        "{:?}",
        r[0]
    );
    assert!(
        r[0].2["message"]
            .as_str()
            .unwrap()
            .starts_with("the arguments are not JSON"),
        "{:?}",
        r[0]
    );
    assert_eq!(r[1].2["type"], "unknown_tool");
    assert!(
        r[1].2["message"].as_str().unwrap().contains("agent_add"),
        "{:?}",
        r[1]
    );
    assert_eq!(r[2].2["type"], "invalid_arguments");
    let violations = r[2].2["details"]["violations"].as_array().unwrap();
    assert_eq!(
        violations.len(),
        2,
        "every violation listed: {violations:?}"
    );
    assert_eq!(r[3], ("agent_add".to_owned(), false, json!(3)));
    // The tool results the model read are those texts.
    let sent = &fake.requests()[1]["messages"];
    let first_result = sent
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        first_result["content"]
            .as_str()
            .unwrap()
            .contains("not JSON")
    );
    // Every call was told to the observers; the one that was not JSON never ran, and is
    // recorded with the text the model sent.
    let seen = seen.0.lock().unwrap().clone();
    let outcomes: Vec<String> = seen.iter().map(|(t, o, _)| format!("{t} {o}")).collect();
    assert_eq!(
        outcomes,
        [
            "agent_add agent:invalid_arguments",
            "agent_ad agent:unknown_tool",
            "agent_add agent:invalid_arguments",
            "agent_add agent:ok"
        ]
    );
    assert_eq!(seen[0].2, json!(r#"{"a": 1, "b": "#));
}

/// Sign in.
#[tool]
async fn agent_login(
    /// The password
    password: tool_runtime::Secret<String>,
) -> bool {
    !password.expose().is_empty()
}

/// Runs `script` for principal `ann` under `budgets`, over the agent's tools and
/// `agent_login`, with a JSON-lines audit log: how the run ended, and the log's records.
async fn audited_run(
    name: &str,
    script: Vec<Step>,
    budgets: Budgets,
) -> (tool_runtime::agent::RunError, String) {
    let path = std::env::temp_dir().join(format!(
        "tool-tests-agent-audit-{name}-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    let registry = Arc::new(
        registry_builder()
            .tool(agent_login::descriptor())
            .audit(tool_runtime::layers::audit::JsonLinesAudit::open(&path).unwrap())
            .state(Probes::default())
            .build()
            .unwrap(),
    );
    let fake = fake(Api::OpenAiChat, script).await;
    let agent = Agent::builder(registry, model(Api::OpenAiChat, &fake))
        .budgets(budgets)
        .build()
        .unwrap();
    let e = agent.run("go").principal("ann").await.unwrap_err();
    fake.assert_clean();
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    (e, text)
}

fn records(log: &str) -> Vec<Value> {
    log.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The run's own refusals — arguments that are not JSON, a tool refused after too many invalid
/// arguments, calls past the tool-call budget — each leave one audit record with their error,
/// as the pipeline's do (an unknown tool); none has an intent, nothing ran.
#[tokio::test]
async fn every_refusal_of_the_run_leaves_one_audit_record() {
    let weather = ("agent_weather", r#"{"city":"Oslo"}"#);
    let script = vec![
        Step::calls(&[
            ("agent_ad", r#"{"a":1,"b":2}"#),
            ("agent_add", r#"{"a":"#),
            ("agent_login", r#"{"password": "hunter2-secret"#),
            ("agent_nope", r#"{"a":"#),
        ]),
        // `agent_add` got invalid arguments once, with no retry allowed.
        Step::calls(&[("agent_add", r#"{"a":1,"b":2}"#)]),
        // One call left in the budget.
        Step::calls(&[weather, weather]),
    ];
    let budgets = Budgets::default()
        .invalid_argument_retries(0)
        .max_tool_calls(6);
    let (e, log) = audited_run("refusals", script, budgets).await;
    assert_eq!(e.kind.name(), "max_tool_calls");
    assert!(!log.contains("hunter2"), "{log}");
    let records = records(&log);
    // Only the call that ran has an intent.
    let intents: Vec<&Value> = records.iter().filter(|r| r["event"] == "intent").collect();
    assert_eq!(intents.len(), 1, "{log}");
    assert_eq!(intents[0]["tool"], "agent_weather");
    let outcomes: Vec<&Value> = records.iter().filter(|r| r["event"] == "outcome").collect();
    let mut seen: Vec<(String, String, Value)> = outcomes
        .iter()
        .map(|r| {
            assert_eq!(r["source"], "agent", "{r}");
            assert_eq!(r["principal"], "ann", "{r}");
            (
                r["tool"].as_str().unwrap().to_owned(),
                r["outcome"].as_str().unwrap().to_owned(),
                r["arguments"].clone(),
            )
        })
        .collect();
    seen.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let expected = [
        ("agent_ad", "unknown_tool", json!({"a": 1, "b": 2})),
        // Not JSON: the text the model sent.
        ("agent_add", "invalid_arguments", json!(r#"{"a":"#)),
        // Refused after the retry cap.
        ("agent_add", "invalid_arguments", json!({"a": 1, "b": 2})),
        // Not JSON, for a tool with secrets: the text is not recorded.
        ("agent_login", "invalid_arguments", json!("[redacted]")),
        // Not JSON, for no tool: the name is the mistake the model hears of.
        ("agent_nope", "unknown_tool", json!(r#"{"a":"#)),
        ("agent_weather", "budget_exhausted", json!({"city": "Oslo"})),
        ("agent_weather", "ok", json!({"city": "Oslo"})),
    ];
    let mut expected: Vec<(String, String, Value)> = expected
        .into_iter()
        .map(|(t, o, a)| (t.to_owned(), o.to_owned(), a))
        .collect();
    expected.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(seen, expected, "{log}");
    // One record a call, each with a call id of its own (the intent shares its call's).
    let ids: std::collections::HashSet<&str> = outcomes
        .iter()
        .map(|r| r["call"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), outcomes.len());
    assert!(ids.contains(intents[0]["call"].as_str().unwrap()));
}

/// Once the token budget is used up (120 per turn, 100 allowed), the reply's call is refused,
/// and recorded.
#[tokio::test]
async fn a_call_past_the_token_budget_leaves_an_audit_record() {
    let weather = ("agent_weather", r#"{"city":"Oslo"}"#);
    let budgets = Budgets::default().max_tokens(Some(100));
    let (e, log) = audited_run("tokens", vec![Step::calls(&[weather])], budgets).await;
    assert_eq!(e.kind.name(), "max_tokens");
    let records = records(&log);
    assert_eq!(records.len(), 1, "{log}");
    assert_eq!(records[0]["event"], "outcome");
    assert_eq!(records[0]["tool"], "agent_weather");
    assert_eq!(records[0]["outcome"], "budget_exhausted");
    assert_eq!(records[0]["arguments"], json!({"city": "Oslo"}));
}

#[tokio::test]
async fn invalid_arguments_have_a_retry_budget_per_tool() {
    let bad = ("agent_add", r#"{"a":1,"b":-1}"#);
    let (agent, fake, seen) = chat_agent(
        vec![
            Step::calls(&[bad]),
            Step::calls(&[bad]),
            Step::calls(&[bad]),
            Step::calls(&[bad]),
            Step::text("I could not add them."),
        ],
        |b| b.budgets(Budgets::default().invalid_argument_retries(2)),
    )
    .await;
    let output = agent.run("add").await.unwrap();
    fake.assert_clean();
    let r = results(&output.transcript);
    assert_eq!(r.len(), 4);
    assert!(r.iter().all(|r| r.1 && r.2["type"] == "invalid_arguments"));
    assert!(
        r[3].2["message"]
            .as_str()
            .unwrap()
            .contains("is not run again"),
        "{:?}",
        r[3]
    );
    // Three reached the pipeline; the fourth was refused by the agent, and recorded too.
    let outcomes: Vec<String> = seen.outcomes();
    assert_eq!(outcomes, ["agent:invalid_arguments"; 4]);
}

#[tokio::test]
async fn a_model_that_keeps_calling_ends_at_a_budget_not_a_hang() {
    let call = ("agent_weather", r#"{"city":"Oslo"}"#);
    let (agent, fake, _) = chat_agent(vec![Step::calls(&[call]); 5], |b| {
        b.budgets(Budgets::default().max_turns(3))
    })
    .await;
    let e = agent.run("loop").await.unwrap_err();
    assert_eq!(
        e.kind,
        RunErrorKind::Budget(tool_runtime::agent::Budget::Turns)
    );
    assert_eq!(e.transcript.turns.len(), 3);
    assert_eq!(fake.requests().len(), 3);
    assert!(fake.violations().is_empty(), "{:?}", fake.violations());

    // Tool calls: the calls past the budget are answered, not run.
    let (agent, fake, seen) = chat_agent(
        vec![Step::calls(&[call, call]), Step::calls(&[call, call])],
        |b| b.budgets(Budgets::default().max_tool_calls(3)),
    )
    .await;
    let e = agent.run("loop").await.unwrap_err();
    fake.assert_clean();
    assert_eq!(e.kind.name(), "max_tool_calls");
    let r = results(&e.transcript);
    assert_eq!(r.len(), 4, "every call has a result");
    assert_eq!(r[3].2["type"], "budget_exhausted");
    // Three ran; the fourth was refused, and recorded.
    let mut outcomes: Vec<String> = seen.outcomes();
    outcomes.sort();
    assert_eq!(
        outcomes,
        ["agent:budget_exhausted", "agent:ok", "agent:ok", "agent:ok"]
    );

    // Tokens: 120 per turn, 200 allowed.
    let (agent, fake, seen) = chat_agent(vec![Step::calls(&[call]), Step::calls(&[call])], |b| {
        b.budgets(Budgets::default().max_tokens(Some(200)))
    })
    .await;
    let e = agent.run("loop").await.unwrap_err();
    fake.assert_clean();
    assert_eq!(e.kind.name(), "max_tokens");
    assert_eq!(e.transcript.usage.total(), 240);
    let outcomes: Vec<String> = seen.outcomes();
    assert_eq!(
        outcomes,
        ["agent:ok", "agent:budget_exhausted"],
        "the call after the budget did not run, and was recorded"
    );

    // Deadline: the model takes longer than the run may.
    let (agent, _fake, _) = chat_agent(
        vec![Step::Pause(Duration::from_secs(5)), Step::text("late")],
        |b| b.budgets(Budgets::default().deadline(Some(Duration::from_millis(200)))),
    )
    .await;
    let started = std::time::Instant::now();
    let e = agent.run("slow").await.unwrap_err();
    assert_eq!(e.kind.name(), "deadline");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_tool_time_out_is_a_result() {
    let (agent, fake, _) = chat_agent(
        vec![
            Step::calls(&[("agent_sleep", r#"{"seconds":60}"#)]),
            Step::text("it timed out"),
        ],
        |b| b,
    )
    .await;
    let output = agent.run("sleep").await.unwrap();
    fake.assert_clean();
    let r = results(&output.transcript);
    assert_eq!(r[0].2["type"], "timeout", "{:?}", r[0]);
}

#[tokio::test]
async fn destructive_tools_follow_policy_and_confirmation() {
    let wipe = ("agent_wipe", r#"{"notebook":"home"}"#);
    // A policy that keeps the agent away from destructive tools: not offered, refused if
    // called anyway.
    let seen = Seen::default();
    let fake = fake(
        Api::OpenAiChat,
        vec![Step::calls(&[wipe]), Step::text("not allowed")],
    )
    .await;
    let registry = Arc::new(
        registry_builder()
            .observer(seen.clone())
            .state(Probes::default())
            .policy(DenyDestructive::for_sources([Source::Agent]))
            .build()
            .unwrap(),
    );
    let agent = Agent::builder(registry, model(Api::OpenAiChat, &fake))
        .build()
        .unwrap();
    let output = agent.run("wipe home").await.unwrap();
    fake.assert_clean();
    let requests = fake.requests();
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(!offered.contains(&"agent_wipe"), "{offered:?}");
    assert_eq!(results(&output.transcript)[0].2["type"], "unknown_tool");

    // Confirmation asked and answered yes: the call runs once, confirmed.
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = asked.clone();
    let (agent, fake, seen) = chat_agent(vec![Step::calls(&[wipe]), Step::text("wiped")], |b| {
        b.confirm(move |request| {
            record.lock().unwrap().push(request.question.clone());
            async { true }
        })
    })
    .await;
    let output = agent.run("wipe home").await.unwrap();
    fake.assert_clean();
    assert_eq!(*asked.lock().unwrap(), ["Wipe agent home?"]);
    assert_eq!(
        results(&output.transcript)[0],
        ("agent_wipe".to_owned(), false, json!("wiped home"))
    );
    let outcomes: Vec<String> = seen.outcomes();
    assert_eq!(outcomes, ["agent:confirmation_required", "agent:ok"]);

    // Answered no: not run, and the model is told the user declined. No one to ask (no
    // callback): not run, and the model is told the call needs a confirmation it cannot get.
    for (answer, expected) in [
        (Some(false), "confirmation_declined"),
        (None, "confirmation_required"),
    ] {
        let (agent, fake, seen) = chat_agent(
            vec![Step::calls(&[wipe]), Step::text("ok, not wiped")],
            |b| match answer {
                Some(yes) => b.confirm(move |_| async move { yes }),
                None => b,
            },
        )
        .await;
        let output = agent.run("wipe home").await.unwrap();
        fake.assert_clean();
        let r = &results(&output.transcript)[0];
        assert!(r.1 && r.2["type"] == expected, "{r:?}");
        if answer.is_none() {
            let hint = r.2["details"]["hint"].as_str().unwrap_or_default();
            assert!(
                hint.starts_with("no one can confirm calls in this run"),
                "{r:?}"
            );
        }
        let outcomes: Vec<String> = seen.outcomes();
        assert_eq!(outcomes, ["agent:confirmation_required"]);
    }
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried() {
    let (agent, fake, _) = chat_agent(
        vec![
            Step::Status {
                status: 429,
                retry_after: Some("1".to_owned()),
            },
            Step::Status {
                status: 503,
                retry_after: None,
            },
            Step::text("fine"),
        ],
        |b| b,
    )
    .await;
    let started = std::time::Instant::now();
    let output = agent.run("hi").await.unwrap();
    fake.assert_clean();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After honoured"
    );
    assert_eq!(output.transcript.turns[0].retries, 2);
    assert_eq!(fake.requests().len(), 3);

    // Past the retries, the run ends with the provider's message; 4xx is not retried.
    let (agent, fake, _) = chat_agent(
        vec![Step::Status {
            status: 400,
            retry_after: None,
        }],
        |b| b,
    )
    .await;
    let e = agent.run("hi").await.unwrap_err();
    fake.assert_clean();
    assert_eq!(
        e.kind,
        RunErrorKind::Provider(tool_runtime::agent::ProviderError::Status {
            status: 400,
            message: "scripted 400".to_owned()
        })
    );
}

#[tokio::test]
async fn a_dead_or_garbled_provider_ends_the_run_with_a_clear_error() {
    let seen = Seen::default();
    // Nothing listens on port 1 (a privileged port no test binds). A port freed by this test
    // could be taken meanwhile by another test's server, which would then answer.
    let url = "http://127.0.0.1:1/v1".to_owned();
    let model =
        Model::new(Api::OpenAiChat, "m", url, None).with_retries(1, Duration::from_millis(5));
    let agent = Agent::builder(registry(&seen), model).build().unwrap();
    let e = agent.run("hi").await.unwrap_err();
    assert_eq!(e.kind.name(), "provider");
    assert!(e.to_string().contains("could not be reached"), "{e}");

    // 200 with a body that is not the API's.
    let app = axum::Router::new().fallback(|| async { "<html>proxy login</html>" });
    let base = tool_test_support::serve_on_loopback(app).await;
    let model = Model::new(Api::Anthropic, "m", base, None);
    let agent = Agent::builder(registry(&seen), model).build().unwrap();
    let e = agent.run("hi").await.unwrap_err();
    assert!(e.to_string().contains("malformed"), "{e}");
}

#[tokio::test]
async fn streamed_replies_make_the_same_transcript() {
    let script = || {
        vec![
            Step::Reply {
                text: "Let me look that up for you.".to_owned(),
                calls: vec![
                    (
                        "agent_weather".to_owned(),
                        r#"{"city":"Bergen"}"#.to_owned(),
                    ),
                    ("agent_add".to_owned(), r#"{"a":40,"b":2}"#.to_owned()),
                ],
            },
            Step::text("Bergen: 21 °C. And 42."),
        ]
    };
    let mut transcripts = Vec::new();
    for (api, stream) in [
        (Api::OpenAiChat, false),
        (Api::OpenAiChat, true),
        (Api::OpenAiCompatible, true),
    ] {
        let seen = Seen::default();
        let fake = fake(api, script()).await;
        let agent = Agent::builder(registry(&seen), model(api, &fake).with_stream(stream))
            .build()
            .unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let output = agent.run("weather and sum").events(tx).await.unwrap();
        fake.assert_clean();
        assert_eq!(fake.requests()[0]["stream"] == json!(true), stream);
        let mut events = Vec::new();
        while let Ok(e) = rx.try_recv() {
            events.push(e);
        }
        let deltas: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                Event::TextDelta { text } => Some(text.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            deltas.concat(),
            "Let me look that up for you.Bergen: 21 °C. And 42."
        );
        assert!(
            deltas.len() > 2 || !stream,
            "streamed in pieces: {deltas:?}"
        );
        let kinds: Vec<String> = events
            .iter()
            .map(|e| {
                serde_json::to_value(e).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        for k in [
            "turn_started",
            "tool_call_started",
            "tool_call_finished",
            "usage",
            "finished",
        ] {
            assert!(kinds.contains(&k.to_owned()), "{k} in {kinds:?}");
        }
        assert_eq!(kinds.last().unwrap(), "finished");
        let mut t = serde_json::to_value(&output.transcript).unwrap();
        for m in t["messages"].as_array_mut().unwrap() {
            for r in m["results"].as_array_mut().into_iter().flatten() {
                r["duration_ms"] = json!(0);
                r["envelope"]["meta"] = json!(null);
            }
            m["model"] = json!(null);
        }
        t["elapsed_ms"] = json!(0);
        t["turns"] = json!(null);
        transcripts.push(without_fake_numbers(&t.to_string()));
    }
    assert_eq!(transcripts[0], transcripts[1]);
    assert_eq!(transcripts[1], transcripts[2]);
}

/// `text` with each fake's number taken out of its call ids (`call_7_1_0` → `call_1_0`).
fn without_fake_numbers(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("call_") {
        out.push_str(&rest[..at + 5]);
        rest = &rest[at + 5..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && rest[digits..].starts_with('_') {
            rest = &rest[digits + 1..];
        }
    }
    out.push_str(rest);
    out
}

#[tokio::test]
async fn cancelling_a_run_cancels_its_tools_and_the_audit_says_so() {
    for drop_it in [false, true] {
        let (agent, _fake, seen) = chat_agent(
            vec![Step::calls(&[("agent_wait", "{}")]), Step::text("never")],
            |b| b,
        )
        .await;
        let cancel = tokio_util::sync::CancellationToken::new();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let run = agent.run("wait").events(tx).cancellation(cancel.clone());
        let handle = tokio::spawn(run.into_future());
        // Once the tool runs, cancel (or drop) the run.
        while let Some(e) = rx.recv().await {
            if matches!(e, Event::ToolCallStarted { .. }) {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        if drop_it {
            handle.abort();
        } else {
            cancel.cancel();
            let e = handle.await.unwrap().unwrap_err();
            assert_eq!(e.kind, RunErrorKind::Cancelled);
            let r = results(&e.transcript);
            assert_eq!(r[0].2["type"], "cancelled", "{r:?}");
        }
        // The audit has the cancelled call.
        let mut outcomes = Vec::new();
        for _ in 0..100 {
            outcomes = seen
                .0
                .lock()
                .unwrap()
                .iter()
                .map(|(t, o, _)| format!("{t} {o}"))
                .collect();
            if !outcomes.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            outcomes,
            ["agent_wait agent:cancelled"],
            "dropped: {drop_it}"
        );
    }
}

#[tokio::test]
async fn tiers_move_a_run_to_another_model() {
    let seen = Seen::default();
    let fast = fake(
        Api::OpenAiChat,
        vec![Step::calls(&[("switch_model", r#"{"tier":"expert"}"#)])],
    )
    .await;
    let expert = fake(
        Api::Anthropic,
        vec![
            Step::calls(&[("agent_add", r#"{"a":1,"b":1}"#)]),
            Step::text("2, thought through"),
            // The host starts the second run on the expert tier.
            Step::text("straight to the expert"),
        ],
    )
    .await;
    let tiers = Tiers::new("fast", model(Api::OpenAiChat, &fast))
        .tier("expert", model(Api::Anthropic, &expert));
    let agent = Agent::builder(registry(&seen), tiers)
        .system("Be brief.")
        .build()
        .unwrap();
    let output = agent.run("hard sum").await.unwrap();
    fast.assert_clean();
    assert_eq!(output.answer, "2, thought through");
    assert_eq!(output.tier, "expert");
    // Each model was told which one it is; the switch tool was offered.
    let system = fast.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.starts_with("Be brief.") && system.contains("openai:fake-model (tier `fast`)"),
        "{system}"
    );
    let offered = fast.requests()[0]["tools"].to_string();
    assert!(
        offered.contains("switch_model") && offered.contains("expert"),
        "{offered}"
    );
    let system = expert.requests()[0]["system"].as_str().unwrap().to_owned();
    assert!(
        system.contains("anthropic:fake-model (tier `expert`)"),
        "{system}"
    );
    // The conversation moved across APIs intact (the fake checked the Anthropic contract).
    let output = agent.run("again").tier("expert").await.unwrap();
    expert.assert_clean();
    assert_eq!(output.answer, "straight to the expert");
    let e = agent.run("x").tier("nope").await.unwrap_err();
    assert_eq!(e.kind, RunErrorKind::UnknownTier("nope".to_owned()));
}

#[tokio::test]
async fn each_run_carries_its_own_context() {
    let whoami = ("agent_whoami", "{}");
    let (agent, fake, _) = chat_agent(
        vec![
            Step::calls(&[whoami]),
            Step::calls(&[whoami]),
            Step::text("a"),
            Step::text("b"),
        ],
        |b| b,
    )
    .await;
    let one = agent
        .run("who am I?")
        .context(RunContext::new("telegram").chat_id("42").user("alice"))
        .principal("alice");
    let two = agent
        .run("who am I?")
        .context(RunContext::new("cli").chat_id("7").user("bob"));
    let (one, two) = tokio::join!(one.into_future(), two.into_future());
    fake.assert_clean();
    let mut seen: Vec<Value> = [one.unwrap(), two.unwrap()]
        .iter()
        .map(|o| results(&o.transcript)[0].2.clone())
        .collect();
    seen.sort_by_key(|v| v["chat"].as_str().unwrap().to_owned());
    assert_eq!(
        seen,
        [
            json!({"chat": "42", "user": "alice", "principal": "alice", "source": "agent"}),
            json!({"chat": "7", "user": "bob", "principal": null, "source": "agent"}),
        ]
    );
}

#[tokio::test]
async fn a_conversation_continues_from_its_history() {
    let (agent, fake, _) = chat_agent(
        vec![Step::text("Hello."), Step::text("You said hi.")],
        |b| b,
    )
    .await;
    let first = agent.run("hi").await.unwrap();
    let second = agent
        .run("what did I say?")
        .history(first.transcript.messages.clone())
        .await
        .unwrap();
    fake.assert_clean();
    assert_eq!(second.transcript.messages.len(), 4);
    assert_eq!(second.transcript.messages[0], Message::user("hi"),);
    let sent = &fake.requests()[1]["messages"];
    assert_eq!(sent.as_array().unwrap().len(), 3);
}

/// The fakes can fail: a request that breaks each API's contract is refused and recorded.
#[tokio::test]
async fn the_fakes_refuse_requests_that_break_the_contract() {
    let broken = [
        (
            Api::OpenAiChat,
            json!({"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "call_9", "type": "function", "function": {"name": "a", "arguments": "{}"}}]}]}),
        ),
        (
            Api::OpenAiResponses,
            json!({"model": "m", "store": false, "input": [{"type": "function_call_output", "call_id": "x", "output": "1"}]}),
        ),
        (
            Api::Anthropic,
            json!({"model": "m", "max_tokens": 5, "messages": [{"role": "assistant", "content": []}]}),
        ),
        (
            Api::Gemini,
            json!({"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]}]}),
        ),
    ];
    let http = reqwest::Client::new();
    for (api, body) in broken {
        let fake = fake(api, vec![Step::text("x")]).await;
        let m = model(api, &fake);
        let url = match api {
            Api::OpenAiChat => format!("{}/chat/completions", fake.base_url),
            Api::OpenAiResponses => format!("{}/responses", fake.base_url),
            Api::Anthropic => format!("{}/v1/messages", fake.base_url),
            _ => format!("{}/v1beta/models/fake-model:generateContent", fake.base_url),
        };
        let _ = m;
        let response = http
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{api}");
        let v = fake.violations();
        assert!(v.iter().any(|p| p.contains("API key")), "{api}: {v:?}");
        assert!(
            v.len() >= 2,
            "{api}: the contract itself was checked too: {v:?}"
        );
    }
}
