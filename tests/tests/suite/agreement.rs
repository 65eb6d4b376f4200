//! The schema is the contract: for many valid and invalid inputs per tool, the runtime's
//! validator and an independent one (Python `jsonschema`) must give the same verdict, and every
//! input the runtime accepts must run without an argument error.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Map, Value, json};
use tool_runtime::{Caller, Registry, Source};

/// A valid call of each tool, the seed of the mutations.
fn seeds() -> Vec<(&'static str, Value)> {
    vec![
        ("device_add", json!({})),
        (
            "device_pair",
            json!({"code": "123456", "device_name": "phone"}),
        ),
        ("device_list", json!({})),
        (
            "device_revoke",
            json!({"device_id": "dev_0123456789abcdef"}),
        ),
        ("ticket_open", json!({"title": "broken", "priority": "low"})),
        ("ticket_list", json!({})),
    ]
}

/// Values that probe types, bounds, lengths and patterns.
fn probes(prop: &Value) -> Vec<Value> {
    let mut out = vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(2.0),
        json!(""),
        json!("x"),
        json!("5"),
        json!("true"),
        json!([]),
        json!(["a"]),
        json!([1]),
        json!({}),
        json!({"a": "b"}),
        json!({"a": 1}),
        json!(4_294_967_296_u64),
        json!(18_446_744_073_709_551_615_u64),
        json!(-9_223_372_036_854_775_808_i64),
        json!(1e20),
        json!("1234"),
        json!("123"),
        json!("12345678901"),
        json!("12a456"),
        json!("dev_0123456789abcdef"),
        json!("dev_0123456789ABCDEF"),
        json!("dev_ffffffffffffffff"),
        json!("dev_0000000000000000x"),
        json!("low"),
        json!("very-high"),
        json!("VeryHigh"),
        json!({"street": "Main 1", "zip-code": "123"}),
        json!({"street": "Main 1", "zip": "123"}),
        json!({"name": "a", "parts": [{"name": "b"}]}),
        json!({"name": "a", "parts": [{"nam": "b"}]}),
        // Unknown fields below the top level: refused at every depth.
        json!({"name": "a", "age": 3}),
        json!({"name": "a", "parts": [{"name": "b", "age": 3}]}),
        json!({"street": "Main 1", "zip-code": "123", "floor": 2}),
        json!(["a", "b", "c", "d", "e", "f"]),
        json!("a".repeat(65)),
        json!("a".repeat(101)),
    ];
    for key in ["minimum", "maximum", "minLength", "maxLength"] {
        if let Some(n) = prop.get(key).and_then(Value::as_f64) {
            for d in [-1.0, 0.0, 1.0] {
                let v = n + d;
                if key.ends_with("Length") {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    out.push(json!("7".repeat(v.max(0.0) as usize)));
                } else if v.fract() == 0.0 && v.abs() < 9e15 {
                    #[allow(clippy::cast_possible_truncation)]
                    out.push(json!(v as i64));
                } else {
                    out.push(json!(v));
                }
            }
        }
    }
    out
}

fn instances(schema: &Value, seed: &Value) -> Vec<Value> {
    let mut out = vec![seed.clone(), json!([]), json!("x"), json!(1), Value::Null];
    let mut extra = seed.clone();
    extra["unexpected_field"] = json!(1);
    out.push(extra);
    let empty = Map::new();
    let props = schema["properties"].as_object().unwrap_or(&empty);
    for (name, prop) in props {
        let mut without = seed.clone();
        without.as_object_mut().unwrap().remove(name);
        out.push(without);
        for probe in probes(prop) {
            let mut with = seed.clone();
            with[name] = probe;
            out.push(with);
        }
    }
    out
}

#[tokio::test]
async fn runtime_and_python_jsonschema_agree() {
    let python = tool_test_support::python_with_jsonschema();
    let demo = demo_app::registry(&demo_app::Stores::in_memory().unwrap()).unwrap();
    let down = Registry::builder()
        .without_inventory()
        .tool(downstream::ticket_open::descriptor())
        .tool(downstream::ticket_list::descriptor())
        .state(downstream::Inbox::default())
        .build()
        .unwrap();
    let registry_of = |name: &str| {
        if name.starts_with("ticket") {
            &down
        } else {
            &demo
        }
    };

    let mut cases = Vec::new();
    for (tool, seed) in seeds() {
        let entry = registry_of(tool).get(tool).unwrap();
        let xs = instances(entry.input_schema(), &seed);
        let ours: Vec<bool> = xs
            .iter()
            .map(|x| entry.check_arguments(x).is_ok())
            .collect();
        cases.push((tool, entry.input_schema().clone(), xs, ours));
        // Output schemas must be valid 2020-12 schemas too; no instance to judge.
        cases.push((tool, entry.output_schema().clone(), Vec::new(), Vec::new()));
    }

    let doc = json!({"cases": cases.iter().map(|(_, s, xs, _)| json!({"schema": s, "instances": xs})).collect::<Vec<_>>()});
    let mut child = Command::new(&python)
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/python/judge.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(doc.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the judge failed (an emitted schema is not a valid 2020-12 schema?):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let theirs: Value = serde_json::from_slice(&output.stdout).unwrap();

    let mut disagreements = Vec::new();
    for ((tool, _, xs, ours), theirs) in cases.iter().zip(theirs["verdicts"].as_array().unwrap()) {
        let theirs: Vec<bool> = serde_json::from_value(theirs.clone()).unwrap();
        if xs.is_empty() {
            continue;
        }
        let accepted = ours.iter().filter(|v| **v).count();
        let rejected = ours.len() - accepted;
        assert!(
            accepted >= 3 && rejected >= 20,
            "{tool}: too few of one kind ({accepted} valid, {rejected} invalid)"
        );
        for ((x, a), b) in xs.iter().zip(ours).zip(&theirs) {
            if a != b {
                disagreements.push(format!("{tool}: {x} runtime={a} python={b}"));
            }
        }
        // Everything the schema accepts, the tool's Rust types accept.
        let reg = registry_of(tool);
        for (x, ok) in xs.iter().zip(ours) {
            if *ok {
                let env = reg
                    .call(tool, x.clone(), Caller::new(Source::Internal).confirm(true))
                    .await;
                if let Some(e) = env.error() {
                    assert!(
                        !matches!(e.kind().as_str(), "invalid_arguments" | "internal"),
                        "{tool}: schema accepted {x} but the call failed: {e}"
                    );
                }
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "verdicts differ:\n{}",
        disagreements.join("\n")
    );
}
