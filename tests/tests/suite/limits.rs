//! Rate and concurrency limits: `#[tool(rate = ...)]`, `#[tool(concurrency = ...)]`, and their
//! overrides when the registry is built.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tool_runtime::prelude::*;
use tool_runtime::tool::Rate;

/// Ping.
#[tool(rate = "2/min")]
async fn ping() -> bool {
    true
}

/// Work alone for a while.
#[tool(concurrency = 1)]
async fn single(
    /// Milliseconds
    ms: u64,
) -> u64 {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ms
}

/// Wipe a volume (its dry run says what would go).
#[tool(annotations(destructive), dry_run, rate = "2/min", concurrency = 1)]
async fn wipe(ctx: CallContext) -> String {
    WIPE_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    if ctx.dry_run() {
        tokio::time::sleep(Duration::from_millis(300)).await;
        "would wipe 3 files".into()
    } else {
        "wiped".into()
    }
}

static WIPE_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn who(name: &str) -> Caller {
    Caller::new(Source::Http).principal(name)
}

#[tokio::test]
async fn rate_limits_are_per_principal_with_a_retry_after() {
    let r = registry_builder().build().unwrap();
    assert_eq!(
        r.get("ping").unwrap().meta().options.rate,
        Some(Rate {
            count: 2,
            per: Duration::from_secs(60)
        })
    );
    for _ in 0..2 {
        assert!(r.call("ping", json!({}), who("alice")).await.is_ok());
    }
    let env = r.call("ping", json!({}), who("alice")).await;
    let e = env.error().unwrap();
    assert_eq!(
        (e.kind().as_str(), e.status(), e.is_retryable()),
        ("rate_limited", 429, true)
    );
    let wait = e.details().unwrap()["retry_after"].as_f64().unwrap();
    assert!(wait > 0.0 && wait <= 30.0, "{wait}");
    // Another principal has its own bucket.
    assert!(r.call("ping", json!({}), who("bob")).await.is_ok());
}

/// Calls refused for their arguments take from the bucket too: bad calls cannot be sent (and
/// validated, and audited) faster than good ones.
#[tokio::test]
async fn calls_refused_for_their_arguments_count_against_the_rate_limit() {
    let r = registry_builder().build().unwrap();
    let bad = json!({"huge": "x".repeat(10_000)});
    for _ in 0..2 {
        let env = r.call("ping", bad.clone(), who("carol")).await;
        assert_eq!(env.error().unwrap().kind(), "invalid_arguments");
    }
    let env = r.call("ping", bad, who("carol")).await;
    assert_eq!(env.error().unwrap().kind(), "rate_limited");
    let env = r.call("ping", json!({}), who("carol")).await;
    assert_eq!(env.error().unwrap().kind(), "rate_limited");
}

#[tokio::test]
async fn limits_can_be_overridden_when_the_registry_is_built() {
    let r = registry_builder().rate_limit("ping", None).build().unwrap();
    for _ in 0..5 {
        assert!(r.call("ping", json!({}), who("alice")).await.is_ok());
    }
    let r = registry_builder()
        .rate_limit("single", Rate::parse("1/h"))
        .build()
        .unwrap();
    assert!(r.call("single", json!({"ms": 1}), who("a")).await.is_ok());
    assert_eq!(
        r.call("single", json!({"ms": 1}), who("a"))
            .await
            .error()
            .unwrap()
            .kind(),
        "rate_limited"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_limits_queue_then_refuse() {
    let r = Arc::new(registry_builder().concurrency_queue(1).build().unwrap());
    let spawn = |ms: u64| {
        let r = Arc::clone(&r);
        tokio::spawn(async move {
            r.call("single", json!({"ms": ms}), Caller::new(Source::Internal))
                .await
        })
    };
    let running = spawn(300);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let queued = spawn(1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let refused = r
        .call("single", json!({"ms": 1}), Caller::new(Source::Internal))
        .await;
    let e = refused.error().unwrap();
    assert_eq!((e.kind().as_str(), e.status()), ("unavailable", 503));
    assert!(running.await.unwrap().is_ok());
    assert!(
        queued.await.unwrap().is_ok(),
        "the queued call ran once a slot was free"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_leaves_the_queue_frees_its_place() {
    let r = Arc::new(registry_builder().concurrency_queue(1).build().unwrap());
    let r2 = Arc::clone(&r);
    let running = tokio::spawn(async move {
        r2.call("single", json!({"ms": 300}), Caller::new(Source::Internal))
            .await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let r3 = Arc::clone(&r);
    let leaver = tokio::spawn(async move {
        r3.call("single", json!({"ms": 1}), Caller::new(Source::Internal))
            .await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    leaver.abort();
    let _ = leaver.await;
    let r4 = Arc::clone(&r);
    let next = tokio::spawn(async move {
        r4.call("single", json!({"ms": 1}), Caller::new(Source::Internal))
            .await
    });
    assert!(
        next.await.unwrap().is_ok(),
        "the place in the queue was free again"
    );
    assert!(running.await.unwrap().is_ok());
}

#[tokio::test]
async fn over_http_a_rate_limit_is_429_with_retry_after() {
    use tool_runtime::http::{self, ServerOptions};
    let r = Arc::new(registry_builder().build().unwrap());
    let base =
        tool_test_support::serve_on_loopback(http::router(r, ServerOptions::default())).await;
    let url = format!("{base}/tools/ping");
    let client = reqwest::Client::new();
    for _ in 0..2 {
        assert_eq!(client.post(&url).send().await.unwrap().status(), 200);
    }
    let limited = client.post(&url).send().await.unwrap();
    assert_eq!(limited.status(), 429);
    let after: u64 = limited.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=30).contains(&after), "{after}");
}

/// The tools of this file, and no others: the test binary holds other files' tools too.
/// An unconfirmed call of a destructive tool runs its dry run for the question's preview: tool
/// code, so charged to the rate limit and held to the concurrency limit like any call.
#[tokio::test]
async fn the_preview_of_an_unconfirmed_call_is_charged_and_limited_like_a_call() {
    let r = Arc::new(registry_builder().concurrency_queue(0).build().unwrap());
    // Two at once: the second finds the one slot taken, with no room to wait.
    let (first, second) = tokio::join!(
        r.call("wipe", json!({}), who("dave")),
        r.call("wipe", json!({}), who("dave"))
    );
    let kinds = [
        first.error().unwrap().kind(),
        second.error().unwrap().kind(),
    ];
    assert!(
        kinds.contains(&&ErrorKind::CONFIRMATION_REQUIRED)
            && kinds.contains(&&ErrorKind::UNAVAILABLE),
        "{first:?} {second:?}"
    );
    let asked = if first.error().unwrap().confirmation().is_some() {
        &first
    } else {
        &second
    };
    let preview = asked
        .error()
        .unwrap()
        .confirmation()
        .unwrap()
        .preview
        .clone();
    assert_eq!(preview, Some(json!("would wipe 3 files")));
    // Two previews ran or tried: the rate of two a minute is spent, and the third is refused
    // before any tool code runs.
    let runs = WIPE_RUNS.load(std::sync::atomic::Ordering::SeqCst);
    let third = r.call("wipe", json!({}), who("dave")).await;
    assert_eq!(third.error().unwrap().kind(), "rate_limited", "{third:?}");
    assert_eq!(WIPE_RUNS.load(std::sync::atomic::Ordering::SeqCst), runs);
}

fn registry_builder() -> tool_runtime::registry::RegistryBuilder {
    tool_runtime::Registry::builder()
        .without_inventory()
        .tool(ping::descriptor())
        .tool(single::descriptor())
        .tool(wipe::descriptor())
}
