//! Any words after a tool's subcommand (split at NUL bytes): clap parses them or says why, and
//! what the CLI makes of them is a JSON object that the pipeline then answers without a panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tool_runtime::{Caller, Registry, Source};

fuzz_target!(|bytes: &[u8]| {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    let registry = REGISTRY.get_or_init(|| tool_fuzz::builder().build().expect("a registry"));
    let text = String::from_utf8_lossy(bytes);
    let argv = ["app", "kinds"]
        .into_iter()
        .map(str::to_owned)
        .chain(text.split('\0').map(str::to_owned));
    let Ok(args) = tool_runtime::app::cli::arguments_of(registry, "kinds", argv) else {
        return;
    };
    assert!(args.is_object(), "{args}");
    let envelope =
        tool_fuzz::runtime().block_on(registry.call("kinds", args, Caller::new(Source::Cli)));
    assert!(
        envelope.error().is_none_or(|e| e.kind() != "internal"),
        "{envelope:?}"
    );
});
