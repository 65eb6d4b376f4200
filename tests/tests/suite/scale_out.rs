//! The seams a deployment of several replicas plugs into: the rate limiter every charge goes
//! through, and the store confirmation tokens live in, each given to the registry when it is
//! built; the in-memory defaults and what they promise.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tool_runtime::ErrorKind;
use tool_runtime::http::{self, ServerOptions};
use tool_runtime::layers::confirm::{ConfirmationStore, MemoryConfirmationStore, TokenBinding};
use tool_runtime::layers::hooks::{CallObserver, CompletedCall};
use tool_runtime::layers::limits::{Charge, MemoryRateLimiter, RateLimiter};
use tool_runtime::prelude::*;
use tool_runtime::registry::RegistryBuilder;
use tool_runtime::tool::Rate;

/// Ping.
#[tool(rate = "2/min")]
async fn ping(
    /// How many times
    times: Option<u32>,
) -> bool {
    times.is_none()
}

/// Count to a number.
#[tool]
async fn count(
    /// The number
    to: u32,
) -> u32 {
    to
}

/// Erase a disk.
#[tool(annotations(destructive))]
async fn disk_erase(
    /// The disk
    disk: String,
) -> String {
    format!("erased {disk}")
}

/// How often `disk_wipe`'s preview ran.
static PREVIEWS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Wipe a disk, saying first what would be wiped.
#[tool(annotations(destructive), dry_run)]
async fn disk_wipe(
    /// The disk
    disk: String,
    ctx: CallContext,
) -> String {
    if ctx.dry_run() {
        PREVIEWS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        return format!("would wipe {disk}");
    }
    format!("wiped {disk}")
}

fn builder() -> RegistryBuilder {
    Registry::builder()
        .without_inventory()
        .tool(ping::descriptor())
        .tool(count::descriptor())
        .tool(disk_erase::descriptor())
        .tool(disk_wipe::descriptor())
}

fn who(name: &str) -> Caller {
    Caller::new(Source::Http).principal(name)
}

fn per_minute(count: u32) -> Rate {
    Rate {
        count,
        per: Duration::from_secs(60),
    }
}

/// One charge: the tool, the principal, the rate.
type Charged = (String, Option<String>, Rate);

/// A limiter that records every charge and lets every call through.
#[derive(Clone, Default)]
struct Recording(Arc<Mutex<Vec<Charged>>>);

impl RateLimiter for Recording {
    fn charge<'a>(
        &'a self,
        tool: &'a str,
        principal: Option<&'a str>,
        rate: Rate,
    ) -> BoxFuture<'a, Result<Charge, ToolError>> {
        self.0
            .lock()
            .unwrap()
            .push((tool.to_owned(), principal.map(str::to_owned), rate));
        Box::pin(async { Ok(Charge::Allowed) })
    }
}

impl Recording {
    fn take(&self) -> Vec<Charged> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A store (or a limiter) whose backend cannot be reached.
struct Down;

fn down() -> ToolError {
    ToolError::new(ErrorKind::UNAVAILABLE, "the shared store cannot be reached")
}

impl RateLimiter for Down {
    fn charge<'a>(
        &'a self,
        _: &'a str,
        _: Option<&'a str>,
        _: Rate,
    ) -> BoxFuture<'a, Result<Charge, ToolError>> {
        Box::pin(async { Err(down()) })
    }
}

/// A confirmation store that keeps tokens but fails to give them back, or fails to keep them.
struct Failing {
    put: bool,
}

impl ConfirmationStore for Failing {
    fn put<'a>(
        &'a self,
        _: &'a str,
        _: &'a TokenBinding,
        _: Duration,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        let put = self.put;
        Box::pin(async move { if put { Ok(()) } else { Err(down()) } })
    }

    fn take<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<TokenBinding>, ToolError>> {
        Box::pin(async { Err(down()) })
    }
}

/// Every finished call's tool, outcome, and whether its tool started.
#[derive(Clone, Default)]
struct Ends(Arc<Mutex<Vec<(String, String, bool)>>>);

impl Ends {
    fn take(&self) -> Vec<(String, String, bool)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl CallObserver for Ends {
    fn observe<'a>(&'a self, call: CompletedCall<'a>) -> BoxFuture<'a, ()> {
        let outcome = call
            .envelope
            .error()
            .map_or_else(|| "ok".to_owned(), |e| e.kind().to_string());
        let tool = call.meta.map(|m| m.name.to_string()).unwrap_or_default();
        self.0.lock().unwrap().push((tool, outcome, call.started));
        Box::pin(async {})
    }
}

#[tokio::test]
async fn every_rate_is_charged_through_the_registry_limiter() {
    let limiter = Recording::default();
    let r = builder()
        .rate_limiter(limiter.clone())
        .rate_limit("count", Some(per_minute(7)))
        .build()
        .unwrap();
    assert!(r.call("ping", json!({}), who("alice")).await.is_ok());
    assert!(r.call("count", json!({"to": 3}), who("bob")).await.is_ok());
    assert!(
        r.call("count", json!({"to": 3}), Caller::new(Source::Cli))
            .await
            .is_ok()
    );
    assert_eq!(
        limiter.take(),
        [
            ("ping".to_owned(), Some("alice".to_owned()), per_minute(2)),
            ("count".to_owned(), Some("bob".to_owned()), per_minute(7)),
            ("count".to_owned(), None, per_minute(7)),
        ]
    );
    // A tool without a rate is not charged; nor is an unknown tool.
    let r = builder().rate_limiter(limiter.clone()).build().unwrap();
    assert!(r.call("count", json!({"to": 1}), who("bob")).await.is_ok());
    let _ = r.call("nope", json!({}), who("bob")).await;
    assert_eq!(limiter.take(), []);
    // A builder override replaces the tool's own rate.
    let r = builder()
        .rate_limiter(limiter.clone())
        .rate_limit("ping", Some(per_minute(40)))
        .build()
        .unwrap();
    assert!(r.call("ping", json!({}), who("carol")).await.is_ok());
    assert_eq!(
        limiter.take(),
        [("ping".to_owned(), Some("carol".to_owned()), per_minute(40))]
    );
}

#[tokio::test]
async fn a_call_refused_for_its_arguments_is_charged_through_the_limiter() {
    let limiter = Recording::default();
    let r = builder().rate_limiter(limiter.clone()).build().unwrap();
    let env = r.call("ping", json!({"times": "x"}), who("dave")).await;
    assert_eq!(env.error().unwrap().kind(), "invalid_arguments");
    assert_eq!(
        limiter.take(),
        [("ping".to_owned(), Some("dave".to_owned()), per_minute(2))]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limiter_that_cannot_count_refuses_the_call_with_its_error() {
    let ends = Ends::default();
    let r = Arc::new(
        builder()
            .rate_limiter(Down)
            .observer(ends.clone())
            .build()
            .unwrap(),
    );
    let env = r.call("ping", json!({}), who("erin")).await;
    let e = env.error().unwrap();
    assert_eq!(
        (e.kind().as_str(), e.message()),
        ("unavailable", "the shared store cannot be reached")
    );
    // Invalid arguments too: the charge's error is the answer.
    let env = r.call("ping", json!({"times": "x"}), who("erin")).await;
    assert_eq!(env.error().unwrap().kind(), "unavailable");
    // A tool without a rate never asks the limiter.
    assert!(r.call("count", json!({"to": 1}), who("erin")).await.is_ok());
    assert_eq!(
        ends.take(),
        [
            ("ping".to_owned(), "unavailable".to_owned(), false),
            ("ping".to_owned(), "unavailable".to_owned(), false),
            ("count".to_owned(), "ok".to_owned(), true),
        ]
    );
    let base =
        tool_test_support::serve_on_loopback(http::router(r, ServerOptions::default())).await;
    let response = reqwest::Client::new()
        .post(format!("{base}/tools/ping"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "unavailable");
    assert_eq!(
        ends.take(),
        [("ping".to_owned(), "unavailable".to_owned(), false)],
        "the tool never ran"
    );
}

#[tokio::test]
async fn replicas_sharing_a_limiter_share_its_counts() {
    let limiter = Arc::new(MemoryRateLimiter::new());
    let a = builder().rate_limiter(limiter.clone()).build().unwrap();
    let b = builder().rate_limiter(limiter).build().unwrap();
    assert!(a.call("ping", json!({}), who("fay")).await.is_ok());
    assert!(b.call("ping", json!({}), who("fay")).await.is_ok());
    let env = a.call("ping", json!({}), who("fay")).await;
    let e = env.error().unwrap();
    assert_eq!(e.kind(), "rate_limited");
    assert!(e.retry_after().is_some_and(|d| d > Duration::ZERO));
    // Registries built without one count apart, as before.
    let c = builder().build().unwrap();
    assert!(c.call("ping", json!({}), who("fay")).await.is_ok());
}

#[tokio::test]
async fn the_memory_limiter_starts_a_tool_over_when_its_rate_changes() {
    let limiter = MemoryRateLimiter::new();
    let charge = |rate| limiter.charge("ping", Some("gus"), rate);
    assert_eq!(charge(per_minute(1)).await.unwrap(), Charge::Allowed);
    assert!(matches!(
        charge(per_minute(1)).await.unwrap(),
        Charge::RetryAfter(d) if d > Duration::from_secs(50) && d <= Duration::from_secs(60)
    ));
    // Another rate: new buckets.
    assert_eq!(charge(per_minute(2)).await.unwrap(), Charge::Allowed);
    assert_eq!(charge(per_minute(2)).await.unwrap(), Charge::Allowed);
    assert!(matches!(
        charge(per_minute(2)).await.unwrap(),
        Charge::RetryAfter(_)
    ));
    // Anonymous callers share one bucket per tool.
    assert_eq!(
        limiter.charge("ping", None, per_minute(1)).await.unwrap(),
        Charge::Allowed
    );
    assert!(matches!(
        limiter.charge("ping", None, per_minute(1)).await.unwrap(),
        Charge::RetryAfter(_)
    ));
}

fn token_of(env: &Envelope) -> String {
    let e = env.error().expect("an error");
    assert_eq!(e.kind(), "confirmation_required", "{}", e.message());
    e.confirmation().expect("a question").token.clone()
}

#[tokio::test]
async fn a_token_issued_by_one_replica_is_redeemed_by_another_once() {
    let tokens = Arc::new(MemoryConfirmationStore::new());
    let a = builder()
        .confirmation_store(tokens.clone())
        .build()
        .unwrap();
    let b = builder().confirmation_store(tokens).build().unwrap();
    let args = json!({"disk": "sda"});
    let token = token_of(&a.call("disk_erase", args.clone(), who("hal")).await);
    let env = b
        .call(
            "disk_erase",
            args.clone(),
            who("hal").confirmation(token.clone()),
        )
        .await;
    assert_eq!(env.result(), Some(&json!("erased sda")));
    let again = a
        .call("disk_erase", args, who("hal").confirmation(token))
        .await;
    let e = again.error().unwrap();
    assert_eq!(e.kind(), "confirmation_required");
    assert!(
        e.message()
            .contains("token sent is expired, used, or for another call"),
        "{}",
        e.message()
    );
    // Registries with a store each know only their own tokens.
    let (own_a, own_b) = (builder().build().unwrap(), builder().build().unwrap());
    let args = json!({"disk": "sdb"});
    let token = token_of(&own_a.call("disk_erase", args.clone(), who("hal")).await);
    let env = own_b
        .call("disk_erase", args, who("hal").confirmation(token))
        .await;
    assert_eq!(env.error().unwrap().kind(), "confirmation_required");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_token_from_one_router_confirms_on_another() {
    let tokens = Arc::new(MemoryConfirmationStore::new());
    let serve = |tokens: Arc<MemoryConfirmationStore>| async move {
        let registry = Arc::new(builder().confirmation_store(tokens).build().unwrap());
        tool_test_support::serve_on_loopback(http::router(registry, ServerOptions::default())).await
    };
    let (a, b) = (serve(tokens.clone()).await, serve(tokens).await);
    let http = reqwest::Client::new();
    let erase = |base: &str, token: Option<&str>| {
        let request = http
            .post(format!("{base}/tools/disk_erase"))
            .json(&json!({"disk": "sdc"}));
        match token {
            Some(token) => request.header("x-confirmation", token),
            None => request,
        }
    };
    let r = erase(&a, None).send().await.unwrap();
    assert_eq!(r.status(), 409);
    let body: Value = r.json().await.unwrap();
    let token = body["error"]["details"]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = erase(&b, Some(&token)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["result"], "erased sdc");
    let r = erase(&a, Some(&token)).send().await.unwrap();
    assert_eq!(r.status(), 409, "used once");
}

#[tokio::test]
async fn a_confirmation_store_that_fails_refuses_the_call_with_its_error() {
    let ends = Ends::default();
    let args = json!({"disk": "sdd"});
    // The token cannot be kept: no question, the store's error.
    let r = builder()
        .confirmation_store(Failing { put: false })
        .observer(ends.clone())
        .build()
        .unwrap();
    let env = r.call("disk_erase", args.clone(), who("ivy")).await;
    let e = env.error().unwrap();
    assert_eq!(
        (e.kind().as_str(), e.message(), e.status()),
        ("unavailable", "the shared store cannot be reached", 503)
    );
    // Nor does a dry-run preview run for a question that cannot be asked.
    let env = r.call("disk_wipe", args.clone(), who("ivy")).await;
    assert_eq!(env.error().unwrap().kind(), "unavailable");
    assert_eq!(PREVIEWS.load(std::sync::atomic::Ordering::SeqCst), 0);
    let wiped = ends.take();
    assert_eq!(wiped.len(), 2, "{wiped:?}");
    assert_eq!(
        wiped[1],
        ("disk_wipe".to_owned(), "unavailable".to_owned(), false)
    );
    // The token cannot be checked: the call does not run.
    let r = builder()
        .confirmation_store(Failing { put: true })
        .observer(ends.clone())
        .build()
        .unwrap();
    let token = token_of(&r.call("disk_erase", args.clone(), who("ivy")).await);
    let env = r
        .call("disk_erase", args.clone(), who("ivy").confirmation(token))
        .await;
    assert_eq!(env.error().unwrap().kind(), "unavailable");
    let unavailable = ("disk_erase".to_owned(), "unavailable".to_owned(), false);
    let asked = (
        "disk_erase".to_owned(),
        "confirmation_required".to_owned(),
        false,
    );
    assert_eq!(ends.take(), [asked, unavailable], "the tool never ran");
    // Confirmed up front, the store is not asked.
    let env = r.call("disk_erase", args, who("ivy").confirm(true)).await;
    assert!(env.is_ok());
}

#[tokio::test]
async fn tokens_expire_by_the_wall_clock() {
    let r = builder()
        .confirmation_lifetime(Duration::from_millis(50))
        .build()
        .unwrap();
    let args = json!({"disk": "sde"});
    let token = token_of(&r.call("disk_erase", args.clone(), who("jo")).await);
    tokio::time::sleep(Duration::from_millis(120)).await;
    let env = r
        .call("disk_erase", args, who("jo").confirmation(token))
        .await;
    let e = env.error().unwrap();
    assert_eq!(e.kind(), "confirmation_required");
    assert!(e.message().contains("expired, used"), "{}", e.message());

    let store = MemoryConfirmationStore::new();
    let binding: TokenBinding =
        serde_json::from_value(json!({"tool": "disk_erase", "arguments": "00", "principal": null}))
            .unwrap();
    store
        .put("c1-short", &binding, Duration::from_millis(20))
        .await
        .unwrap();
    store
        .put("c1-long", &binding, Duration::from_secs(60))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(store.take("c1-short").await.unwrap(), None);
    assert_eq!(store.take("c1-long").await.unwrap(), Some(binding.clone()));
    assert_eq!(store.take("c1-long").await.unwrap(), None, "taken once");
}

#[tokio::test]
async fn the_memory_store_forgets_the_oldest_tokens_past_its_bound() {
    let store = MemoryConfirmationStore::new().max_pending(2);
    let binding: TokenBinding = serde_json::from_value(
        json!({"tool": "disk_erase", "arguments": "00", "principal": "kim"}),
    )
    .unwrap();
    for (token, secs) in [("c1-a", 10), ("c1-b", 20), ("c1-c", 30)] {
        store
            .put(token, &binding, Duration::from_secs(secs))
            .await
            .unwrap();
    }
    assert_eq!(store.take("c1-a").await.unwrap(), None, "the oldest went");
    assert_eq!(store.take("c1-b").await.unwrap(), Some(binding.clone()));
    assert_eq!(store.take("c1-c").await.unwrap(), Some(binding));
}
