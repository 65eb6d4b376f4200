//! Every outcome of the call pipeline, through `Registry::call`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_runtime::layers::hooks::{CallHook, CallObserver, CompletedCall, HookPoint, Permit};
use tool_runtime::prelude::*;
use tool_runtime::registry::BuildProblem;
use tool_runtime::tool::{PendingCall, ProgressSink, ProgressUpdate, ToolMeta};

/// Add two integers.
#[tool(annotations(read_only))]
async fn add(
    /// First term
    a: i64,
    /// Second term
    b: i64,
) -> i64 {
    a + b
}

#[derive(Debug)]
enum PaymentError {
    Declined,
    Busy,
}

impl From<PaymentError> for ToolError {
    fn from(e: PaymentError) -> Self {
        match e {
            PaymentError::Declined => {
                ToolError::new("card_declined", "the card was declined").with_status(402)
            }
            PaymentError::Busy => ToolError::new("processor_busy", "try again shortly")
                .with_status(503)
                .with_retryable(true),
        }
    }
}

/// Charge a card.
#[tool]
async fn charge(
    /// Whether the processor is busy
    busy: bool,
) -> Result<u32, PaymentError> {
    Err(if busy {
        PaymentError::Busy
    } else {
        PaymentError::Declined
    })
}

/// Panic.
#[tool]
async fn boom() -> u32 {
    panic!("secret internal detail")
}

/// Sleep for a while.
#[tool(timeout = "50ms")]
async fn slow(
    /// Milliseconds to sleep
    ms: u64,
    ctx: &CallContext,
) -> u64 {
    let token = ctx.cancellation().clone();
    OBSERVED_TOKENS
        .lock()
        .unwrap()
        .insert(ctx.request_id().to_owned(), token);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ms
}

/// The token each `slow` call saw, by request id: tests run concurrently and several call `slow`.
static OBSERVED_TOKENS: Mutex<BTreeMap<String, CancellationToken>> = Mutex::new(BTreeMap::new());

/// Wipe everything.
#[tool(annotations(destructive))]
async fn wipe() -> bool {
    true
}

#[derive(Serialize, schemars::JsonSchema)]
struct Who {
    source: String,
    principal: Option<String>,
    roles: Vec<String>,
    request_id: String,
}

/// Erase everything.
#[tool(annotations(destructive), dry_run)]
async fn erase(ctx: &CallContext) -> String {
    if ctx.dry_run() {
        "would erase"
    } else {
        "erased"
    }
    .to_owned()
}

/// Report the caller.
#[tool(name = "who-am-i")]
async fn whoami(ctx: CallContext) -> Who {
    Who {
        source: ctx.source().to_string(),
        principal: ctx.principal().map(str::to_owned),
        roles: ctx.roles().to_vec(),
        request_id: ctx.request_id().to_owned(),
    }
}

/// Work in three steps, reporting progress.
#[tool]
async fn steps(ctx: &CallContext) -> u32 {
    for i in 1..=3 {
        ctx.progress(f64::from(i), Some(3.0), Some("working"));
    }
    3
}

struct Counter(AtomicUsize);

/// Count calls.
#[tool]
async fn bump(counter: State<Counter>) -> usize {
    counter.0.fetch_add(1, Ordering::SeqCst) + 1
}

/// Count calls twice.
#[tool]
async fn bump_twice(counter: State<Counter>) -> usize {
    counter.0.fetch_add(2, Ordering::SeqCst) + 2
}

/// A tool made at run time, as a toolset would.
struct Echo;

impl Tool for Echo {
    fn meta(&self) -> ToolMeta {
        ToolMeta::new("echo", "Return the text.")
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string", "maxLength": 5}},
               "required": ["text"], "additionalProperties": false})
    }
    fn output_schema(&self) -> Value {
        json!({"type": "string"})
    }
    fn call(&self, args: Value, _ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move { Ok(args["text"].clone()) })
    }
}

fn builder() -> tool_runtime::registry::RegistryBuilder {
    registry_builder()
        .state(Counter(AtomicUsize::new(0)))
        .tool(Echo)
}

fn registry() -> Registry {
    builder().build().expect("registry builds")
}

fn caller() -> Caller {
    Caller::new(Source::Internal)
}

#[tokio::test]
async fn success_is_an_ok_envelope() {
    let r = registry();
    let began = std::time::Instant::now();
    let env = r
        .call("add", json!({"a": 2, "b": 3}), caller().request_id("req-7"))
        .await;
    let elapsed_ms = began.elapsed().as_secs_f64() * 1000.0;
    let j = env.to_json();
    assert_eq!(j["status"], "ok");
    assert_eq!(j["result"], 5);
    assert_eq!(j["tool"], "add");
    assert_eq!(j["meta"]["request_id"], "req-7");
    // In milliseconds, within the time the call took as seen from here.
    let duration = j["meta"]["duration_ms"].as_f64().unwrap();
    assert!(duration <= elapsed_ms + 0.001, "{duration} vs {elapsed_ms}");
    assert_eq!(env.http_status(), 200);
}

#[tokio::test]
async fn unknown_tool_suggests_near_names() {
    let r = registry();
    let env = r.call("ad", json!({}), caller()).await;
    let e = env.error().unwrap();
    assert_eq!(e.kind(), "unknown_tool");
    assert_eq!(e.status(), 404);
    assert!(e.message().contains("`add`"), "{}", e.message());
    let env = r.call("zzzzzzzz", json!({}), caller()).await;
    assert_eq!(env.error().unwrap().message(), "no tool named `zzzzzzzz`");
}

/// A listing is a request of the one entry too: the tools a caller may see, hidden ones left
/// out by the rule a call of them meets.
#[tokio::test]
async fn a_listing_of_tools_is_a_request_of_the_one_entry() {
    use tool_runtime::layers::policy::ToolFilter;
    use tool_runtime::registry::ListTools;
    let r = builder()
        .policy(ToolFilter::new().for_everyone(Vec::<String>::new(), ["add", "tool:echo*"]))
        .build()
        .unwrap();
    let listed: Vec<String> = r
        .handle(ListTools, caller())
        .await
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert!(!listed.is_empty());
    assert!(
        !listed.iter().any(|n| n == "add" || n.starts_with("echo")),
        "{listed:?}"
    );
    let visible: Vec<String> = r
        .visible(&caller())
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(listed, visible);
    let env = r.call("add", json!({"a": 1, "b": 2}), caller()).await;
    assert_eq!(env.error().unwrap().kind(), "unknown_tool");
}

#[tokio::test]
async fn invalid_arguments_list_every_violation() {
    let r = registry();
    let env = r.call("add", json!({"a": "5", "c": 1}), caller()).await;
    let e = env.error().unwrap();
    assert_eq!(e.kind(), "invalid_arguments");
    assert_eq!(e.status(), 422);
    let v = e.violations();
    assert!(
        v.iter()
            .any(|v| v.path == "/a" && v.message.contains("integer")),
        "{v:?}"
    );
    assert!(
        v.iter()
            .any(|v| v.path == "/c" && v.message == "unknown field `c`; the fields are `a`, `b`"),
        "{v:?}"
    );
    assert!(
        v.iter().any(|v| v.message.contains("\"b\"")),
        "missing b: {v:?}"
    );
    // Not an object at all.
    let env = r.call("add", json!([1, 2]), caller()).await;
    assert_eq!(env.error().unwrap().kind(), "invalid_arguments");
    // Integral floats are integers, as JSON Schema says.
    let env = r.call("add", json!({"a": 2.0, "b": 1}), caller()).await;
    assert_eq!(env.result(), Some(&json!(3)));
    // Out of the type's range is a schema violation, not a decode failure.
    let env = r.call("add", json!({"a": 1e19, "b": 1}), caller()).await;
    assert_eq!(env.error().unwrap().violations()[0].path, "/a");
}

#[tokio::test]
async fn unknown_fields_can_be_ignored_by_option() {
    let r = builder().ignore_unknown_fields(true).build().unwrap();
    let env = r
        .call("add", json!({"a": 1, "b": 1, "extra": true}), caller())
        .await;
    assert_eq!(env.result(), Some(&json!(2)));
}

#[tokio::test]
async fn a_tools_own_error_keeps_its_type_status_and_retryability() {
    let r = registry();
    let e = r.call("charge", json!({"busy": false}), caller()).await;
    let e = e.error().unwrap();
    assert_eq!(
        (e.kind().as_str(), e.status(), e.is_retryable()),
        ("card_declined", 402, false)
    );
    let e = r.call("charge", json!({"busy": true}), caller()).await;
    let e = e.error().unwrap();
    assert_eq!(
        (e.kind().as_str(), e.status(), e.is_retryable()),
        ("processor_busy", 503, true)
    );
}

#[tokio::test]
async fn a_panicking_tool_is_internal_and_the_registry_goes_on() {
    let r = registry();
    let env = r.call("boom", json!({}), caller()).await;
    let e = env.error().unwrap();
    assert_eq!(e.kind(), "internal");
    assert_eq!(e.status(), 500);
    assert!(
        !env.to_json().to_string().contains("secret"),
        "panic message leaked"
    );
    let env = r.call("add", json!({"a": 1, "b": 1}), caller()).await;
    assert!(env.is_ok());
}

#[tokio::test]
async fn a_dynamic_tool_panicking_before_its_future_is_internal_too() {
    // `Tool::call` itself panics, before there is a future to isolate.
    let early = Dynamic("early", || panic!("secret detail"));
    let r = builder().tool(early).build().unwrap();
    let env = r.call("early", json!({}), caller()).await;
    let e = env.error().unwrap();
    assert_eq!((e.kind().as_str(), e.status()), ("internal", 500));
    assert!(!env.to_json().to_string().contains("secret"));
    let env = r.call("add", json!({"a": 1, "b": 1}), caller()).await;
    assert!(env.is_ok());
}

#[tokio::test]
async fn a_slow_tool_times_out_and_is_cancelled() {
    let r = registry();
    let env = r
        .call(
            "slow",
            json!({"ms": 5_000}),
            caller().request_id("times-out"),
        )
        .await;
    let e = env.error().unwrap();
    assert_eq!(e.kind(), "timeout");
    assert_eq!(e.status(), 504);
    assert!(e.message().contains("50ms"), "{}", e.message());
    let token = OBSERVED_TOKENS
        .lock()
        .unwrap()
        .remove("times-out")
        .expect("tool ran");
    assert!(token.is_cancelled());
    let env = r.call("slow", json!({"ms": 1}), caller()).await;
    assert_eq!(env.result(), Some(&json!(1)));
}

/// A dynamic tool without arguments named `.0` whose calls run `.1`.
struct Dynamic(
    &'static str,
    fn() -> BoxFuture<'static, Result<Value, ToolError>>,
);

impl Tool for Dynamic {
    fn meta(&self) -> ToolMeta {
        ToolMeta::new(self.0, "A dynamic tool of this test.")
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "additionalProperties": false})
    }
    fn output_schema(&self) -> Value {
        json!({})
    }
    fn call(&self, _: Value, _: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        (self.1)()
    }
}

#[tokio::test]
async fn the_registry_default_timeout_applies_to_tools_without_one() {
    // `slow` sets its own 50ms; the default governs the rest, shown with a dynamic tool.
    let hang = Dynamic("hang", || Box::pin(std::future::pending()));
    let r = builder()
        .tool(hang)
        .default_timeout(Duration::from_millis(20))
        .build()
        .unwrap();
    let env = r.call("hang", json!({}), caller()).await;
    assert_eq!(env.error().unwrap().kind(), "timeout");
}

#[tokio::test]
async fn the_time_limit_counts_from_the_start_of_the_call() {
    // 80 ms of work in the first poll, then 80 ms of waiting: 160 ms against a 100 ms limit. A
    // tool that finishes on its first poll runs without a timer; the timer of one that does not
    // must still count from the start, not from after that poll (180 ms).
    let slow_start = Dynamic("slow_start", || {
        Box::pin(async {
            std::thread::sleep(Duration::from_millis(80));
            tokio::time::sleep(Duration::from_millis(80)).await;
            Ok(json!("finished"))
        })
    });
    let r = builder()
        .tool(slow_start)
        .default_timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let env = r.call("slow_start", json!({}), caller()).await;
    assert_eq!(
        env.error().map(|e| e.kind().as_str()),
        Some("timeout"),
        "{env:?}"
    );
}

#[tokio::test]
async fn a_caller_that_goes_away_cancels_the_call() {
    let r = registry();
    let token = CancellationToken::new();
    let t2 = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        t2.cancel();
    });
    let env = r
        .call("slow", json!({"ms": 40}), caller().cancellation(token))
        .await;
    assert_eq!(env.error().unwrap().kind(), "cancelled");
}

#[tokio::test]
async fn destructive_tools_need_confirmation() {
    let r = registry();
    let env = r.call("wipe", json!({}), caller()).await;
    let e = env.error().unwrap();
    assert_eq!(e.kind(), "confirmation_required");
    assert_eq!(e.status(), 409);
    assert!(e.message().contains("wipe everything"), "{}", e.message());
    let env = r.call("wipe", json!({}), caller().confirm(true)).await;
    assert_eq!(env.result(), Some(&json!(true)));
}

/// Shred a file.
#[tool(
    annotations(destructive),
    confirm = "Shred {path} for good ({passes} passes)?"
)]
async fn shred(path: String, passes: u8) -> String {
    format!("{path} {passes}")
}

#[tokio::test]
async fn a_tool_words_its_own_question() {
    let r = Registry::builder()
        .without_inventory()
        .tool(shred::descriptor())
        .build()
        .unwrap();
    let env = r
        .call("shred", json!({"path": "/tmp/a", "passes": 3}), caller())
        .await;
    let question = &env.error().unwrap().confirmation().unwrap().question;
    assert_eq!(question, "Shred /tmp/a for good (3 passes)?");
}

/// Answers every question the same way, and remembers what it was asked.
struct Answering(tool_runtime::tool::Answer, Mutex<Vec<String>>);

impl tool_runtime::tool::Ask for Answering {
    fn ask<'a>(
        &'a self,
        confirmation: &'a tool_runtime::tool::Confirmation,
    ) -> futures_util::future::BoxFuture<'a, tool_runtime::tool::Answer> {
        self.1.lock().unwrap().push(confirmation.question.clone());
        let answer = self.0.clone();
        Box::pin(async move { answer })
    }
}

#[tokio::test]
async fn a_caller_that_asks_is_asked_redeems_declines_or_leaves_the_question_standing() {
    use tool_runtime::registry::CallTool;
    use tool_runtime::tool::Answer;
    let r = registry();
    let ask = |answer| Arc::new(Answering(answer, Mutex::default()));

    // The typed confirmation is what the JSON details say.
    let env = r.call("wipe", json!({}), caller()).await;
    let e = env.error().unwrap();
    let c = e.confirmation().expect("a confirmation");
    assert_eq!(c.question, "Run wipe?");
    assert_eq!(e.details().unwrap()["token"], json!(c.token));
    assert_eq!(c.expires_in, tool_runtime::layers::confirm::TOKEN_LIFETIME);
    assert!(
        r.call("add", json!({"a": 1}), caller())
            .await
            .error()
            .unwrap()
            .confirmation()
            .is_none()
    );

    let yes = ask(Answer::Yes);
    let env = r
        .call("wipe", json!({}), caller().asking(yes.clone()))
        .await;
    assert_eq!(env.result(), Some(&json!(true)));
    assert_eq!(*yes.1.lock().unwrap(), ["Run wipe?"]);

    let no = ask(Answer::No);
    let env = r.call("wipe", json!({}), caller().asking(no)).await;
    assert_eq!(env.error().unwrap().kind(), "confirmation_declined");
    assert_eq!(env.error().unwrap().status(), 409);

    let unasked = ask(Answer::Unasked(Some("no one to ask".into())));
    let env = r.call("wipe", json!({}), caller().asking(unasked)).await;
    let e = env.error().unwrap();
    assert_eq!(e.kind(), "confirmation_required");
    assert_eq!(e.details().unwrap()["hint"], "no one to ask");
    assert!(e.confirmation().is_some(), "the token stays for the caller");

    // Deferred: the question comes back with the answer, for the front end to put.
    let deferred = ask(Answer::Deferred);
    let called = r
        .handle(CallTool::new("wipe", json!({})), caller().asking(deferred))
        .await;
    let e = called.envelope.error().unwrap();
    assert_eq!(e.kind(), "confirmation_required");
    let question = called.question().expect("the question deferred");
    assert_eq!(question.question, "Run wipe?");
    assert_eq!(Some(question), e.confirmation());
    // A caller that cannot ask gets no question to put.
    let called = r.handle(CallTool::new("wipe", json!({})), caller()).await;
    assert!(called.question().is_none());

    // A tool that needs no confirmation is never asked about.
    let env = r
        .call("add", json!({"a": 1, "b": 2}), caller().asking(yes.clone()))
        .await;
    assert!(env.is_ok(), "{env:?}");
    assert_eq!(yes.1.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn the_context_carries_the_caller() {
    let r = registry();
    let env = r
        .call(
            "who-am-i",
            json!({}),
            Caller::new(Source::Http)
                .principal("alice")
                .roles(["admin"])
                .request_id("abc"),
        )
        .await;
    assert_eq!(
        env.result(),
        Some(
            &json!({"source": "http", "principal": "alice", "roles": ["admin"], "request_id": "abc"})
        )
    );
    // Injected parameters are in no schema.
    let tool_schema = r.get("who-am-i").unwrap();
    let schema = tool_schema.input_schema();
    assert_eq!(schema["properties"], json!({}));
}

#[tokio::test]
async fn state_is_injected() {
    let r = registry();
    let first = r.call("bump", json!({}), caller()).await;
    let second = r.call("bump", json!({}), caller()).await;
    assert_eq!(first.result(), Some(&json!(1)));
    assert_eq!(second.result(), Some(&json!(2)));
    assert_eq!(
        r.get("bump").unwrap().input_schema()["properties"],
        json!({})
    );
}

/// A hand-made tool whose parameter names a model provider would refuse.
struct Unportable;

impl Tool for Unportable {
    fn meta(&self) -> ToolMeta {
        ToolMeta::new(
            "unportable",
            "A tool with a parameter name that is not portable.",
        )
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"dévice": {"type": "string"}, "ok": {}},
               "additionalProperties": false})
    }
    fn output_schema(&self) -> Value {
        json!({})
    }
    fn call(&self, _: Value, _: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async { Ok(Value::Null) })
    }
}

/// A `#[tool]`'s parameter names are checked when it compiles (trybuild `bad_param_name`); a
/// hand-made tool's, from its schema, when the registry is built.
#[test]
fn a_hand_made_tool_with_an_unportable_parameter_name_is_refused_at_build() {
    let err = builder().tool(Unportable).build().unwrap_err();
    assert_eq!(err.problems.len(), 1, "{err}");
    assert!(
        matches!(&err.problems[0], BuildProblem::InvalidParamName { tool, param, .. }
            if tool == "unportable" && param == "dévice"),
        "{err}"
    );
}

#[test]
fn missing_state_is_reported_at_build_naming_tool_and_type() {
    let err = registry_builder().build().unwrap_err();
    assert!(err.problems.contains(&BuildProblem::MissingState {
        type_name: std::any::type_name::<Counter>(),
        items: vec!["tool `bump`".into()],
        arc_registered: false,
    }));
    let text = err.to_string();
    assert!(
        text.contains("tool `bump`")
            && text.contains("pipeline::Counter")
            && text.contains("app!().state(value)"),
        "{text}"
    );
    // An `Arc<Counter>` where a `Counter` is needed: said so.
    let err = registry_builder()
        .state::<Arc<Counter>>(Arc::new(Counter(AtomicUsize::new(0))))
        .build()
        .unwrap_err();
    let text = err.to_string();
    let counter = std::any::type_name::<Counter>();
    assert!(
        text.contains(&format!(
            "an `Arc<{counter}>` was registered: register the `{counter}` itself"
        )),
        "{text}"
    );
}

/// Two items that take one missing type: one line naming both.
#[test]
fn missing_state_is_said_once_per_type() {
    let err = Registry::builder()
        .without_inventory()
        .tool(bump::descriptor())
        .tool(bump_twice::descriptor())
        .build()
        .unwrap_err();
    assert_eq!(err.problems.len(), 1, "{err}");
    let text = err.to_string();
    assert!(
        text.contains("which tool `bump`, tool `bump_twice` take as State<"),
        "{text}"
    );
}

#[test]
fn duplicate_names_are_refused_naming_both_definitions() {
    struct FakeAdd;
    impl Tool for FakeAdd {
        fn meta(&self) -> ToolMeta {
            let mut m = ToolMeta::new("add", "Not the real add.");
            m.options.defined_at = "a toolset".into();
            m
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn output_schema(&self) -> Value {
            json!({})
        }
        fn call(&self, _: Value, _: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
            Box::pin(async { Ok(Value::Null) })
        }
    }
    let err = builder().tool(FakeAdd).build().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("two tools are named `add`"), "{text}");
    assert!(
        text.contains("suite::pipeline at ") && text.contains("tests/suite/pipeline.rs"),
        "{text}"
    );
    assert!(text.contains("a toolset"), "{text}");
}

#[test]
fn explicit_registration_works_without_inventory() {
    let r = Registry::builder()
        .without_inventory()
        .tool(add::descriptor())
        .build()
        .unwrap();
    assert_eq!(r.names(), ["add"]);
}

#[tokio::test]
async fn dynamic_tools_pass_the_same_pipeline() {
    let r = registry();
    assert_eq!(
        r.call("echo", json!({"text": "hi"}), caller())
            .await
            .result(),
        Some(&json!("hi"))
    );
    let env = r.call("echo", json!({"text": "too long"}), caller()).await;
    assert_eq!(env.error().unwrap().violations()[0].path, "/text");
    let listed = r.names();
    assert!(listed.windows(2).all(|w| w[0] < w[1]), "sorted: {listed:?}");
    assert!(listed.iter().any(|n| n == "echo") && listed.iter().any(|n| n == "add"));
}

struct DenyCharge;
impl CallHook for DenyCharge {
    fn point(&self) -> HookPoint {
        HookPoint::Policy
    }
    fn before<'a>(&'a self, call: &'a mut PendingCall) -> BoxFuture<'a, Result<Permit, ToolError>> {
        Box::pin(async move {
            if call.meta().name == "charge" && call.context().principal() != Some("admin") {
                return Err(ToolError::new("forbidden", "only admin may charge"));
            }
            Ok(Permit::none())
        })
    }
}

/// Rewrites `add`'s `b`: to 100 when `a` is 1, to a string (invalid) when `a` is 2.
struct RewriteAdd;
impl CallHook for RewriteAdd {
    fn point(&self) -> HookPoint {
        HookPoint::Guard
    }
    fn before<'a>(&'a self, call: &'a mut PendingCall) -> BoxFuture<'a, Result<Permit, ToolError>> {
        Box::pin(async move {
            if call.meta().name == "add" {
                let mut args = call.args().clone();
                match args["a"].as_i64() {
                    Some(1) => args["b"] = json!(100),
                    Some(2) => args["b"] = json!("not a number"),
                    _ => {}
                }
                call.set_args(args);
            }
            Ok(Permit::none())
        })
    }
}

#[derive(Default, Clone)]
struct Recorder(Arc<Mutex<Vec<(String, String)>>>);
impl CallObserver for Recorder {
    fn observe<'a>(&'a self, call: CompletedCall<'a>) -> BoxFuture<'a, ()> {
        let kind = call
            .envelope
            .error()
            .map_or("ok", |e| e.kind().as_str())
            .to_owned();
        self.0
            .lock()
            .unwrap()
            .push((call.envelope.tool.clone(), kind));
        Box::pin(async {})
    }
}

#[tokio::test]
async fn hooks_deny_rewrite_and_observers_see_every_call() {
    let recorder = Recorder::default();
    let r = builder()
        .hook(DenyCharge)
        .hook(RewriteAdd)
        .observer(recorder.clone())
        .build()
        .unwrap();
    let env = r.call("charge", json!({"busy": false}), caller()).await;
    assert_eq!(env.error().unwrap().kind(), "forbidden");
    let env = r
        .call(
            "charge",
            json!({"busy": false}),
            caller().principal("admin"),
        )
        .await;
    assert_eq!(env.error().unwrap().kind(), "card_declined");
    let env = r.call("add", json!({"a": 1, "b": 1}), caller()).await;
    assert_eq!(env.result(), Some(&json!(101)));
    let env = r.call("add", json!({"a": 2, "b": 1}), caller()).await;
    assert_eq!(env.error().unwrap().violations()[0].path, "/b");
    r.call("nope", json!({}), caller()).await;
    let seen = recorder.0.lock().unwrap().clone();
    let expected: Vec<(String, String)> = [
        ("charge", "forbidden"),
        ("charge", "card_declined"),
        ("add", "ok"),
        ("add", "invalid_arguments"),
        ("nope", "unknown_tool"),
    ]
    .iter()
    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
    .collect();
    assert_eq!(seen, expected);
}

#[test]
fn every_schema_compiles() {
    assert_eq!(registry().warm_up(), Ok(()));
}

#[test]
fn a_schema_that_does_not_compile_is_reported() {
    struct Broken;
    impl Tool for Broken {
        fn meta(&self) -> ToolMeta {
            ToolMeta::new("broken", "A bad schema.")
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object", "properties": {"x": {"type": "string", "pattern": "("}}})
        }
        fn output_schema(&self) -> Value {
            json!({})
        }
        fn call(&self, _: Value, _: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
            Box::pin(async { Ok(Value::Null) })
        }
    }
    // A hand-made tool's schema is compiled when it is registered: refused, with the place.
    let Err(e) = builder().tool(Broken).build() else {
        panic!("a tool whose schema does not compile was registered");
    };
    let e = e.to_string();
    assert!(e.contains("tool `broken`"), "{e}");
    assert!(
        e.contains("`/properties/x/pattern`") && e.contains("never closed"),
        "{e}"
    );
    // And when it is added to a running registry.
    let r = builder().build().unwrap();
    let e = r.add_tool(Broken).unwrap_err().to_string();
    assert!(
        e.contains("the tools were not added") && e.contains("never closed"),
        "{e}"
    );
    assert!(r.get("broken").is_none());
}

#[derive(Default)]
struct Collect(Mutex<Vec<ProgressUpdate>>);
impl ProgressSink for Collect {
    fn report(&self, update: ProgressUpdate) {
        self.0.lock().unwrap().push(update);
    }
}

#[tokio::test]
async fn progress_reports_reach_the_callers_sink() {
    let r = registry();
    let sink = Arc::new(Collect::default());
    let env = r
        .call("steps", json!({}), caller().progress(sink.clone()))
        .await;
    assert!(env.is_ok());
    let seen: Vec<f64> = sink.0.lock().unwrap().iter().map(|u| u.progress).collect();
    assert_eq!(seen, [1.0, 2.0, 3.0]);
    // Without a sink, reporting is a no-op.
    assert!(r.call("steps", json!({}), caller()).await.is_ok());
}

#[tokio::test]
async fn a_time_out_does_not_cancel_the_callers_own_token() {
    let r = registry();
    let token = CancellationToken::new();
    let env = r
        .call(
            "slow",
            json!({"ms": 5_000}),
            caller().cancellation(token.clone()),
        )
        .await;
    assert_eq!(env.error().unwrap().kind(), "timeout");
    assert!(
        !token.is_cancelled(),
        "the caller's token belongs to the caller"
    );
}

#[tokio::test]
async fn dry_runs_preview_without_confirmation_and_only_where_supported() {
    let r = registry();
    let env = r.call("erase", json!({}), caller().dry_run(true)).await;
    assert_eq!(
        env.result(),
        Some(&json!("would erase")),
        "a dry run needs no confirmation"
    );
    let env = r.call("erase", json!({}), caller()).await;
    assert_eq!(env.error().unwrap().kind(), "confirmation_required");
    let env = r.call("erase", json!({}), caller().confirm(true)).await;
    assert_eq!(env.result(), Some(&json!("erased")));
    // A tool that never said it supports dry runs is not run at all.
    let env = r
        .call("wipe", json!({}), caller().dry_run(true).confirm(true))
        .await;
    let e = env.error().unwrap();
    assert_eq!(
        (e.kind().as_str(), e.status()),
        ("dry_run_unsupported", 400)
    );
    assert!(r.get("erase").unwrap().meta().dry_run);
    assert!(!r.get("wipe").unwrap().meta().dry_run);
}

/// The tools of this file, and no others: the test binary holds other files' tools too.
fn registry_builder() -> tool_runtime::registry::RegistryBuilder {
    tool_runtime::Registry::builder()
        .without_inventory()
        .tool(add::descriptor())
        .tool(charge::descriptor())
        .tool(boom::descriptor())
        .tool(slow::descriptor())
        .tool(wipe::descriptor())
        .tool(erase::descriptor())
        .tool(whoami::descriptor())
        .tool(steps::descriptor())
        .tool(bump::descriptor())
}

/// Sum on the blocking pool, reporting the thread and the caller.
#[tool]
fn sync_sum(
    /// Numbers to add
    numbers: Vec<i64>,
    counter: State<Counter>,
    ctx: &CallContext,
) -> Result<(i64, String, String, usize), String> {
    if numbers.len() > 3 {
        return Err(format!("{} numbers are too many", numbers.len()));
    }
    let thread = std::thread::current().name().unwrap_or("").to_owned();
    let seen = counter.0.fetch_add(1, Ordering::SeqCst) + 1;
    Ok((
        numbers.iter().sum(),
        thread,
        ctx.request_id().to_owned(),
        seen,
    ))
}

/// Panic on the blocking pool.
#[tool]
fn sync_boom() -> u8 {
    panic!("sync boom")
}

/// Read a file.
#[tool]
fn read_text(
    /// Its path
    path: String,
) -> Result<String, std::io::Error> {
    std::fs::read_to_string(path)
}

/// Refuse with a fixed message.
#[tool]
async fn refuse() -> Result<u8, &'static str> {
    Err("not today")
}

/// `String`, `&'static str` and `std::io::Error` serve as a tool's error type: `tool_failed`
/// with the message, and io errors by their kind.
#[tokio::test]
async fn strings_and_io_errors_are_tool_errors() {
    let r = tool_runtime::Registry::builder()
        .without_inventory()
        .tool(read_text::descriptor())
        .tool(refuse::descriptor())
        .build()
        .unwrap();
    let missing = r
        .call("read_text", json!({"path": "/nonexistent/file"}), caller())
        .await;
    let error = missing.error().expect("an error");
    assert_eq!((error.kind().as_str(), error.status()), ("not_found", 404));
    assert!(error.message().contains("No such file"), "{error:?}");
    let dir = r.call("read_text", json!({"path": "/"}), caller()).await;
    assert_eq!(dir.error().expect("an error").kind(), "tool_failed");
    let refused = r.call("refuse", json!({}), caller()).await;
    let error = refused.error().expect("an error");
    assert_eq!(
        (error.kind().as_str(), error.message()),
        ("tool_failed", "not today")
    );
}

/// Read a file's first line, as `anyhow` code does.
#[tool]
async fn first_line(
    /// The file
    path: String,
) -> anyhow::Result<String> {
    use anyhow::Context as _;
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    let line = text.lines().next().context("the file is empty")?;
    if line == "locked" {
        anyhow::bail!(ToolError::new("locked", "the file is locked").with_retryable(true));
    }
    Ok(line.to_owned())
}

/// Count a file's bytes.
#[tool]
async fn byte_count(
    /// The file
    path: String,
) -> std::io::Result<u64> {
    Ok(std::fs::metadata(path)?.len())
}

/// `anyhow::Result<T>` serves too (feature `anyhow`): the context chain is the message, an io
/// error inside keeps its kind, a `ToolError` inside is returned as it is. Aliases such as
/// `std::io::Result<T>` work like the types they name.
#[tokio::test]
async fn anyhow_errors_and_result_aliases_are_tool_errors() {
    let r = tool_runtime::Registry::builder()
        .without_inventory()
        .tool(first_line::descriptor())
        .tool(byte_count::descriptor())
        .build()
        .unwrap();
    let dir = tool_test_support::TempDir::new("anyhow");
    let missing = dir.join("missing.txt");
    let env = r
        .call("first_line", json!({"path": missing}), caller())
        .await;
    let error = env.error().expect("an error");
    assert_eq!(error.kind(), "not_found");
    assert!(
        error
            .message()
            .starts_with(&format!("reading {}: ", missing.display())),
        "{error:?}"
    );

    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let env = r.call("first_line", json!({"path": empty}), caller()).await;
    let error = env.error().expect("an error");
    assert_eq!(
        (error.kind().as_str(), error.message()),
        ("tool_failed", "the file is empty")
    );

    let locked = dir.join("locked.txt");
    std::fs::write(&locked, "locked\n").unwrap();
    let env = r
        .call("first_line", json!({"path": locked}), caller())
        .await;
    let error = env.error().expect("an error");
    assert_eq!(
        (error.kind().as_str(), error.message()),
        ("locked", "the file is locked")
    );
    assert!(error.is_retryable());

    let env = r
        .call("byte_count", json!({"path": locked}), caller())
        .await;
    assert_eq!(env.result(), Some(&json!(7)));
    let env = r
        .call("byte_count", json!({"path": missing}), caller())
        .await;
    assert_eq!(env.error().expect("an error").kind(), "not_found");
}

/// A plain `fn` is a tool too: it runs on the blocking pool, with its arguments, injected state
/// and the context, and its panics and errors are answered like an async tool's.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_plain_fn_runs_on_the_blocking_pool() {
    let r = tool_runtime::Registry::builder()
        .without_inventory()
        .tool(sync_sum::descriptor())
        .tool(sync_boom::descriptor())
        .state(Counter(AtomicUsize::new(0)))
        .build()
        .unwrap();
    let env = r
        .call(
            "sync_sum",
            json!({"numbers": [1, 2, 3]}),
            caller().request_id("req-s"),
        )
        .await;
    let result = env.result().expect("ok").clone();
    assert_eq!(result[0], 6);
    assert_eq!(result[2], "req-s");
    assert_eq!(result[3], 1);
    let worker = std::thread::current().name().unwrap_or("").to_owned();
    assert_ne!(result[1], json!(worker), "ran on the runtime's own thread");

    let refused = r
        .call("sync_sum", json!({"numbers": [1, 2, 3, 4]}), caller())
        .await;
    let error = refused.error().expect("an error");
    assert_eq!(error.kind(), "tool_failed");
    assert!(error.message().contains("4 numbers"), "{error:?}");

    let panicked = r.call("sync_boom", json!({}), caller()).await;
    assert_eq!(panicked.error().expect("an error").kind(), "internal");
    // The registry goes on serving.
    let again = r.call("sync_sum", json!({}), caller()).await;
    assert_eq!(again.result().expect("ok")[3], 2);
}

/// Asks the caller's model, after a log message.
#[tool(annotations(read_only))]
async fn ask_model(ctx: &CallContext) -> Result<String, ToolError> {
    ctx.log(tool_runtime::tool::peer::LogLevel::Info, "asking");
    let answer = ctx
        .sample(tool_runtime::tool::peer::Sample::new("2 + 2?").max_tokens(5))
        .await?;
    Ok(answer.text)
}

/// Asks the user for a number.
#[tool(annotations(read_only))]
pub(crate) async fn ask_user(ctx: &CallContext) -> Result<String, ToolError> {
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    struct Pick {
        /// A number
        n: u8,
    }
    Ok(match ctx.elicit::<Pick>("Pick a number").await? {
        tool_runtime::tool::peer::Elicited::Accepted(p) => format!("picked {}", p.n),
        other => format!("{other:?}"),
    })
}

/// A picture and its caption.
#[tool(annotations(read_only))]
async fn picture() -> Vec<tool_runtime::Content> {
    vec![
        tool_runtime::Content::text("a dot"),
        tool_runtime::Content::image([1, 2, 3], "image/png"),
    ]
}

/// A caller's side that notes log messages and answers with fixed replies.
#[derive(Default)]
struct Replies {
    logs: Mutex<Vec<String>>,
    elicit_answer: Option<Value>,
}

impl tool_runtime::tool::peer::Peer for Replies {
    fn log(&self, level: tool_runtime::tool::peer::LogLevel, data: Value) {
        self.logs
            .lock()
            .unwrap()
            .push(format!("{}: {data}", level.as_str()));
    }

    fn sample(
        &self,
        request: tool_runtime::tool::peer::Sample,
    ) -> BoxFuture<'_, Result<tool_runtime::tool::peer::Sampled, ToolError>> {
        let text = format!(
            "{} → 4 (max {})",
            request.turns()[0].1,
            request.token_limit()
        );
        Box::pin(async move {
            Ok(tool_runtime::tool::peer::Sampled {
                text,
                model: "m".into(),
                stop_reason: None,
            })
        })
    }

    fn elicit(
        &self,
        _message: String,
        schema: Value,
    ) -> BoxFuture<
        '_,
        Result<tool_runtime::tool::peer::Elicited<serde_json::Map<String, Value>>, ToolError>,
    > {
        assert_eq!(schema["properties"]["n"]["description"], "A number");
        let answer = self.elicit_answer.clone();
        Box::pin(async move {
            Ok(match answer {
                Some(Value::Object(a)) => tool_runtime::tool::peer::Elicited::Accepted(a),
                _ => tool_runtime::tool::peer::Elicited::Declined,
            })
        })
    }
}

#[tokio::test]
async fn tools_ask_the_callers_side_and_without_one_are_told_it_is_unsupported() {
    let registry = Registry::builder()
        .without_inventory()
        .tool(ask_model::descriptor())
        .tool(ask_user::descriptor())
        .tool(picture::descriptor())
        .build()
        .unwrap();
    // Nobody to ask: `unsupported` (HTTP 501), naming what was asked.
    for (tool, what) in [("ask_model", "sampling"), ("ask_user", "elicitation")] {
        let e = registry
            .call(tool, json!({}), Caller::new(Source::Internal))
            .await
            .outcome
            .unwrap_err();
        assert_eq!(e.kind(), tool_runtime::ErrorKind::UNSUPPORTED);
        assert_eq!(e.kind().status(), 501);
        assert!(e.message().contains(what), "{}", e.message());
    }
    // A caller with a side: the tool's requests and log messages reach it.
    let replies = Arc::new(Replies {
        elicit_answer: Some(json!({"n": 7})),
        ..Replies::default()
    });
    let by = Caller::new(Source::Internal).peer(replies.clone());
    let answer = registry.call("ask_model", json!({}), by.clone()).await;
    assert_eq!(answer.result(), Some(&json!("2 + 2? → 4 (max 5)")));
    assert_eq!(*replies.logs.lock().unwrap(), ["info: \"asking\""]);
    let picked = registry.call("ask_user", json!({}), by).await;
    assert_eq!(picked.result(), Some(&json!("picked 7")));
    // An answer that does not fit the form is the client's error, not a panic.
    let wrong = Arc::new(Replies {
        elicit_answer: Some(json!({"n": "seven"})),
        ..Replies::default()
    });
    let e = registry
        .call(
            "ask_user",
            json!({}),
            Caller::new(Source::Internal).peer(wrong),
        )
        .await
        .outcome
        .unwrap_err();
    assert_eq!(e.kind(), tool_runtime::ErrorKind::INVALID_REQUEST);

    // Content blocks: known by the result's type, sent as MCP shapes them.
    let picture = registry.get("picture").unwrap();
    assert!(picture.meta().content);
    assert!(!registry.get("ask_model").unwrap().meta().content);
    let blocks = registry
        .call("picture", json!({}), Caller::new(Source::Internal))
        .await;
    assert_eq!(
        blocks.result(),
        Some(&json!([
            {"type": "text", "text": "a dot"},
            {"type": "image", "data": "AQID", "mimeType": "image/png"},
        ]))
    );
}
