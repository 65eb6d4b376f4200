//! One operation through each seam, measured the same way for every engine behind it: one
//! rate charge through a `RateLimiter`, one confirmation token put and taken through a
//! `ConfirmationStore`.
//!
//! Shared as a `#[path]` module by `benches/pipeline.rs` (the in-process engines) and
//! `benches/redis.rs` (the same beside Redis's), so both time exactly the same calls.

use std::hint::black_box;
use std::time::Duration;

use criterion::BenchmarkGroup;
use criterion::measurement::WallTime;
use serde_json::json;
use tool_runtime::layers::confirm::{ConfirmationStore, TokenBinding};
use tool_runtime::layers::limits::RateLimiter;
use tool_runtime::tool::Rate;

/// One charge through `limiter` (at a rate no run reaches, so every charge is counted and
/// allowed), benchmarked as `rate charge: {name}` in `group`.
pub fn bench_limiter(
    group: &mut BenchmarkGroup<'_, WallTime>,
    rt: &tokio::runtime::Runtime,
    name: &str,
    limiter: &dyn RateLimiter,
) {
    let rate = Rate {
        count: u32::MAX,
        per: Duration::from_secs(1),
    };
    group.bench_function(format!("rate charge: {name}"), |b| {
        b.to_async(rt).iter(|| async {
            black_box(limiter.charge("add", Some("bench"), rate).await.unwrap())
        });
    });
}

/// One confirmation token put, then taken, through `store`, benchmarked as
/// `confirmation put + take: {name}` in `group`.
pub fn bench_store(
    group: &mut BenchmarkGroup<'_, WallTime>,
    rt: &tokio::runtime::Runtime,
    name: &str,
    store: &dyn ConfirmationStore,
) {
    let binding: TokenBinding = serde_json::from_value(json!({
        "tool": "device_revoke",
        "arguments": "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef",
        "principal": "bench"
    }))
    .unwrap();
    let ttl = Duration::from_secs(300);
    group.bench_function(format!("confirmation put + take: {name}"), |b| {
        b.to_async(rt).iter(|| async {
            let token = "c1-00112233445566778899aabbccddeeff";
            store.put(token, &binding, ttl).await.unwrap();
            black_box(store.take(token).await.unwrap())
        });
    });
}
