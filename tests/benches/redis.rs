//! `cargo bench -p tool-tests --bench redis` (needs `redis-server`, Debian package
//! `redis-server`)
//!
//! One rate-limit charge and one confirmation token's put + take, against a local
//! `redis-server` on loopback (`tool_runtime::redis`) and in this process (a governor keyed
//! limiter, as the pipeline's own, and a locked map of tokens), side by side in one run: what
//! sharing the state of several replicas costs a call.

use std::collections::HashMap;
use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::future::BoxFuture;
use governor::{DefaultKeyedRateLimiter, Quota};
use tool_runtime::ToolError;
use tool_runtime::confirm::{ConfirmationStore, TokenBinding};
use tool_runtime::limits::{Charge, Rate, RateLimiter};
use tool_runtime::redis::{Redis, RedisOptions};
use tool_test_support::redis::RedisServer;

/// The in-process limiter: one governor keyed limiter, as the pipeline keeps per tool.
struct Memory(DefaultKeyedRateLimiter<String>);

impl RateLimiter for Memory {
    fn charge<'a>(
        &'a self,
        _tool: &'a str,
        principal: Option<&'a str>,
        _rate: Rate,
    ) -> BoxFuture<'a, Result<Charge, ToolError>> {
        let key = principal.unwrap_or_default().to_owned();
        let charge = match self.0.check_key(&key) {
            Ok(()) => Charge::Allowed,
            Err(_) => Charge::RetryAfter(Duration::ZERO),
        };
        Box::pin(std::future::ready(Ok(charge)))
    }
}

/// The in-process tokens: a locked map.
#[derive(Default)]
struct Tokens(Mutex<HashMap<String, TokenBinding>>);

impl ConfirmationStore for Tokens {
    fn put<'a>(
        &'a self,
        token: &'a str,
        binding: &'a TokenBinding,
        _ttl: Duration,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        self.0
            .lock()
            .unwrap()
            .insert(token.to_owned(), binding.clone());
        Box::pin(std::future::ready(Ok(())))
    }

    fn take<'a>(
        &'a self,
        token: &'a str,
    ) -> BoxFuture<'a, Result<Option<TokenBinding>, ToolError>> {
        let binding = self.0.lock().unwrap().remove(token);
        Box::pin(std::future::ready(Ok(binding)))
    }
}

fn shared_state(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = RedisServer::start();
    let redis = rt
        .block_on(Redis::connect(RedisOptions::new(server.url())))
        .unwrap();
    // High enough that no charge is refused during a run.
    let rate = Rate::parse("1000000/s").unwrap();
    let quota = Quota::per_second(NonZeroU32::new(1_000_000).unwrap());
    let limiters: [(&str, Box<dyn RateLimiter>); 2] = [
        (
            "memory",
            Box::new(Memory(governor::RateLimiter::keyed(quota))),
        ),
        ("redis", Box::new(redis.rate_limiter())),
    ];
    let mut group = c.benchmark_group("rate_limit_charge");
    for (name, limiter) in &limiters {
        group.bench_function(*name, |b| {
            b.to_async(&rt).iter(|| async {
                black_box(limiter.charge("add", Some("alice"), rate).await.unwrap())
            });
        });
    }
    group.finish();

    let binding: TokenBinding = serde_json::from_value(serde_json::json!(
        {"tool": "device_revoke", "arguments": "ab12", "principal": "alice"}
    ))
    .unwrap();
    let stores: [(&str, Box<dyn ConfirmationStore>); 2] = [
        ("memory", Box::new(Tokens::default())),
        ("redis", Box::new(redis.confirmation_store())),
    ];
    let mut group = c.benchmark_group("confirmation_token_put_take");
    for (name, store) in &stores {
        group.bench_function(*name, |b| {
            b.to_async(&rt).iter(|| async {
                let ttl = Duration::from_secs(60);
                store.put("c1-bench", &binding, ttl).await.unwrap();
                black_box(store.take("c1-bench").await.unwrap())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, shared_state);
criterion_main!(benches);
