//! Any JSON value as a tool's arguments, through the pipeline's validator: no panic, an answer
//! for every value (the time limit of each run is libFuzzer's `-timeout`), and a refusal that
//! names at least one violation with a JSON pointer.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tool_runtime::{Caller, Registry, Source};

fuzz_target!(|bytes: &[u8]| {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    let registry = REGISTRY.get_or_init(|| tool_fuzz::builder().build().expect("a registry"));
    let Ok(args) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return;
    };
    let envelope =
        tool_fuzz::runtime().block_on(registry.call("kinds", args, Caller::new(Source::Internal)));
    if let Some(e) = envelope.error() {
        if e.kind() == "invalid_arguments" {
            assert!(!e.violations().is_empty(), "{e:?}");
            for v in e.violations() {
                assert!(v.path.is_empty() || v.path.starts_with('/'), "{v:?}");
            }
        } else {
            assert_eq!(e.kind(), "invalid_request", "{e:?}");
        }
    }
});
