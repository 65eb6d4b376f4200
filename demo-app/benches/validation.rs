//! `cargo bench -p demo-app --bench validation`
//!
//! The schema validator against the `jsonschema` crate, side by side in one run: on a
//! two-integer tool's input schema (the pipeline benchmark's tool) and on the demo's largest
//! (`schedule_task`: an enum, optional values, patterns and lengths); for a valid value, for an
//! invalid one with every violation collected, and the compilation of each schema.
//! BENCHMARKS.md records the medians.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tool_runtime::__private::validator::Validator;
use tool_runtime::Tool;

/// Add two integers.
#[tool_runtime::tool(annotations(read_only))]
async fn add(
    /// The first term
    a: i64,
    /// The second term
    b: i64,
) -> i64 {
    a + b
}

/// The input schema of the `#[tool]` named `name` in this binary (the demo's, and `add`).
fn input_schema_of(name: &str) -> Value {
    // The demo's tools are linked through the crate.
    let _ = demo_app::registry_builder;
    tool_runtime::__private::inventory::iter::<tool_runtime::__private::ToolRegistration>
        .into_iter()
        .find(|r| r.0.meta().name == name)
        .map_or_else(|| panic!("no tool `{name}`"), |r| r.0.input_schema())
}

fn jsonschema_of(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
        .expect("compiles")
}

fn validation(c: &mut Criterion) {
    let cases = [
        (
            "two_integer",
            input_schema_of("add"),
            json!({"a": 2, "b": 3}),
            json!({"a": "2", "c": 1}),
        ),
        (
            "schedule_task",
            input_schema_of("schedule_task"),
            json!({"prompt": "Summarise the news", "schedule_type": "cron",
                   "schedule_value": "0 9 * * 1-5", "tier": "fast", "channel": "daily-news"}),
            json!({"prompt": "", "schedule_type": "weekly", "schedule_value": 3,
                   "channel": "Daily News", "extra": true}),
        ),
    ];
    let mut group = c.benchmark_group("validation");
    for (name, schema, valid, invalid) in &cases {
        let ours = Validator::new(schema).expect("compiles");
        let theirs = jsonschema_of(schema);
        assert!(ours.is_valid(valid) && theirs.is_valid(valid), "{name}");
        assert!(
            !ours.is_valid(invalid) && !theirs.is_valid(invalid),
            "{name}"
        );
        group.bench_function(format!("{name}: valid, ours"), |b| {
            b.iter(|| ours.is_valid(black_box(valid)));
        });
        group.bench_function(format!("{name}: valid, jsonschema"), |b| {
            b.iter(|| theirs.is_valid(black_box(valid)));
        });
        group.bench_function(format!("{name}: every error, ours"), |b| {
            b.iter(|| ours.errors(black_box(invalid)).len());
        });
        group.bench_function(format!("{name}: every error, jsonschema"), |b| {
            b.iter(|| theirs.iter_errors(black_box(invalid)).count());
        });
        group.bench_function(format!("{name}: compile, ours"), |b| {
            b.iter(|| Validator::new(black_box(schema)).is_ok());
        });
        group.bench_function(format!("{name}: compile, jsonschema"), |b| {
            b.iter(|| jsonschema_of(black_box(schema)));
        });
    }
    group.finish();
}

criterion_group!(benches, validation);
criterion_main!(benches);
