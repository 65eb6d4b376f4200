//! A request body through the HTTP front end's fast path (a borrowed tree, validated and decoded
//! without a `serde_json::Value`) and through the `Value` path: the same status and the same
//! envelope, every message and violation included, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    let (fast, reference) = tool_fuzz::routers();
    tool_fuzz::runtime().block_on(async {
        let a = tool_fuzz::post(fast, body).await;
        let b = tool_fuzz::post(reference, body).await;
        assert_eq!(
            a,
            b,
            "the two paths disagree on {:?}",
            String::from_utf8_lossy(body)
        );
    });
});
