//! `cargo bench -p tool-tests --bench redis` (needs `redis-server`, Debian package
//! `redis-server`)
//!
//! What sharing the state of several replicas costs a call: one rate-limit charge, and one
//! confirmation token's put + take, through the registry's default engines
//! (`MemoryRateLimiter`, `MemoryConfirmationStore`) and through Redis's (`RedisRateLimiter`,
//! `RedisConfirmationStore`, on one multiplexed connection to a `redis-server` of the bench's
//! own on loopback), side by side in one run.
//!
//! Results and the machine they came from are recorded in BENCHMARKS.md.

use criterion::{Criterion, criterion_group, criterion_main};
use tool_runtime::layers::confirm::{ConfirmationStore, MemoryConfirmationStore};
use tool_runtime::layers::limits::{MemoryRateLimiter, RateLimiter};
use tool_runtime::redis::{Redis, RedisOptions};
use tool_test_support::redis::RedisServer;

#[path = "common/seams.rs"]
mod seams;

fn shared_state(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = RedisServer::start();
    let redis = rt
        .block_on(Redis::connect(RedisOptions::new(server.url())))
        .unwrap();

    let limiters: [(&str, Box<dyn RateLimiter>); 2] = [
        ("MemoryRateLimiter", Box::new(MemoryRateLimiter::new())),
        ("RedisRateLimiter", Box::new(redis.rate_limiter())),
    ];
    let stores: [(&str, Box<dyn ConfirmationStore>); 2] = [
        (
            "MemoryConfirmationStore",
            Box::new(MemoryConfirmationStore::new()),
        ),
        (
            "RedisConfirmationStore",
            Box::new(redis.confirmation_store()),
        ),
    ];
    let mut group = c.benchmark_group("redis");
    for (name, limiter) in &limiters {
        seams::bench_limiter(&mut group, &rt, name, limiter.as_ref());
    }
    for (name, store) in &stores {
        seams::bench_store(&mut group, &rt, name, store.as_ref());
    }
    group.finish();
}

criterion_group!(benches, shared_state);
criterion_main!(benches);
