//! Output caps: text cut with a marker, lists cut when the tool allows it, anything else
//! refused; `meta.truncated` says so.

use serde_json::{Value, json};
use tool_runtime::prelude::*;

/// Write `n` letters.
#[tool(max_output = "1KiB")]
async fn essay(
    /// Letters
    n: usize,
) -> String {
    "a".repeat(n)
}

/// List `n` rows.
#[tool(max_output = "1KiB", truncate_output)]
async fn rows(
    /// Rows
    n: usize,
) -> Vec<Value> {
    (0..n).map(|i| json!({"row": i})).collect()
}

/// A document of `n` letters.
#[tool(max_output = "1KiB")]
async fn document(
    /// Letters
    n: usize,
) -> Value {
    json!({"body": "a".repeat(n)})
}

/// Echo, under the registry's default cap.
#[tool]
async fn echo_text(
    /// Text
    text: String,
) -> String {
    text
}

fn caller() -> Caller {
    Caller::new(Source::Internal)
}

#[tokio::test]
async fn results_over_their_cap_are_cut_or_refused() {
    let r = registry_builder().max_output(64).build().unwrap();

    let small = r.call("essay", json!({"n": 10}), caller()).await.to_json();
    assert!(small["meta"].get("truncated").is_none(), "{small}");

    let env = r.call("essay", json!({"n": 5000}), caller()).await;
    let text = env.result().unwrap().as_str().unwrap().to_owned();
    assert!(
        text.len() <= 1024 && text.ends_with("[truncated: 5002 bytes, limit 1024]"),
        "{text}"
    );
    assert_eq!(env.to_json()["meta"]["truncated"], true);

    let env = r.call("rows", json!({"n": 500}), caller()).await;
    let kept = env.result().unwrap().as_array().unwrap().len();
    assert!(kept > 10 && kept < 500, "{kept}");
    assert_eq!(env.to_json()["meta"]["truncated"], true);

    let env = r.call("document", json!({"n": 5000}), caller()).await;
    let e = env.error().unwrap();
    assert_eq!((e.kind().as_str(), e.status()), ("output_too_large", 500));
    assert!(
        e.message().contains("over its limit of 1024"),
        "{}",
        e.message()
    );

    // Tools without their own cap get the registry's.
    let env = r
        .call("echo_text", json!({"text": "b".repeat(100)}), caller())
        .await;
    assert_eq!(env.to_json()["meta"]["truncated"], true);
    assert!(env.result().unwrap().as_str().unwrap().len() <= 64);
}

#[tokio::test]
async fn over_http_the_envelope_says_truncated() {
    use tool_runtime::http::{self, ServerOptions};
    let r = std::sync::Arc::new(registry_builder().build().unwrap());
    let base =
        tool_test_support::serve_on_loopback(http::router(r, ServerOptions::default())).await;
    let client = reqwest::Client::new();
    let cut: Value = client
        .post(format!("{base}/tools/essay"))
        .json(&json!({"n": 5000}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(cut["meta"]["truncated"], true);
    let refused = client
        .post(format!("{base}/tools/document"))
        .json(&json!({"n": 5000}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 500);
    assert_eq!(
        refused.json::<Value>().await.unwrap()["error"]["type"],
        "output_too_large"
    );
}

/// The tools of this file, and no others: the test binary holds other files' tools too.
fn registry_builder() -> tool_runtime::registry::RegistryBuilder {
    tool_runtime::Registry::builder()
        .without_inventory()
        .tool(essay::descriptor())
        .tool(rows::descriptor())
        .tool(document::descriptor())
        .tool(echo_text::descriptor())
}
