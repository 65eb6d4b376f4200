//! `demo-app agent` with telemetry on, against a fake OpenAI server and an OTLP receiver: one
//! trace for the run, its model requests and its tool calls, and the trace context sent to the
//! provider.

use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::agent::Api;
use tool_test_support::fake_provider::{FakeProvider, Step, USAGE};
use tool_test_support::otlp::{OtlpReceiver, ReceivedSpan, children, dump, find};

use super::agent::{KEY, demo, output};

const PROMPT: &str = "list the devices of home and of every workspace";

#[tokio::test(flavor = "multi_thread")]
async fn a_run_is_one_trace_of_model_requests_and_parallel_tool_calls() {
    let dir = tool_test_support::TempDir::new("demo-otel-agent");
    let receiver = OtlpReceiver::start().await;
    let fake = FakeProvider::start(
        Api::OpenAiChat,
        KEY,
        vec![
            Step::calls(&[
                ("device_list", r#"{"workspace":"home"}"#),
                ("device_list", r#"{"workspace":null}"#),
            ]),
            Step::text("No devices anywhere."),
        ],
    )
    .await;
    let mut cmd = demo(&dir.join("demo.db"), Some(&fake));
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "500")
        .args(["agent", PROMPT]);
    let out = output(cmd, None).await;
    fake.assert_clean();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");

    let complete = |spans: &[ReceivedSpan]| {
        let named = |prefix: &str| spans.iter().filter(|s| s.name.starts_with(prefix)).count();
        named("invoke_agent") == 1 && named("chat ") == 2 && named("execute_tool ") == 2
    };
    let spans = receiver
        .wait_for_spans(complete, Duration::from_secs(20))
        .await;
    let all = dump(&spans);

    // The run: named after the agent, in-process, with the totals of both requests.
    let run = find(&spans, "invoke_agent demo-app");
    assert_run(run, &all);
    let attribute = |span: &ReceivedSpan, key: &str| span.attributes.get(key).cloned();

    // Under it: the two model requests, then the two tool calls of the first reply, all in
    // the run's trace.
    let under_run = children(&spans, run);
    let chats: Vec<&ReceivedSpan> = under_run
        .iter()
        .copied()
        .filter(|s| s.name == "chat gpt-4.1-mini")
        .collect();
    let tools: Vec<&ReceivedSpan> = under_run
        .iter()
        .copied()
        .filter(|s| s.name == "execute_tool device_list")
        .collect();
    assert_eq!((chats.len(), tools.len()), (2, 2), "{all}");
    assert!(
        spans.iter().all(|s| s.trace_id == run.trace_id),
        "one trace: {all}"
    );
    for chat in &chats {
        assert_chat(chat, &all);
    }
    let mut replies: Vec<(Option<Value>, Option<Value>)> = chats
        .iter()
        .map(|c| {
            (
                attribute(c, "gen_ai.response.id"),
                attribute(c, "gen_ai.response.finish_reasons"),
            )
        })
        .collect();
    replies.sort_by_key(|(id, _)| id.as_ref().map(ToString::to_string));
    assert_eq!(
        replies,
        [
            (Some(json!("chatcmpl-1")), Some(json!(["tool_calls"]))),
            (Some(json!("chatcmpl-2")), Some(json!(["stop"]))),
        ],
        "{all}"
    );
    // The calls ran after the first reply, at once, each with the id the model gave it.
    let mut ids: Vec<String> = tools
        .iter()
        .map(|t| {
            assert_eq!(attribute(t, "gen_ai.tool.name"), Some(json!("device_list")));
            assert_eq!(t.status, "unset", "{all}");
            attribute(t, "gen_ai.tool.call.id")
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| panic!("no gen_ai.tool.call.id: {all}"))
        })
        .collect();
    ids.sort();
    let asked = fake.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str().map(str::to_owned))
        .collect::<Vec<_>>();
    let mut asked = asked;
    asked.sort();
    assert_eq!(ids, asked, "{all}");

    // Every request to the provider carried its chat span's context.
    let mut chat_ids: Vec<String> = chats.iter().map(|c| c.span_id.clone()).collect();
    chat_ids.sort();
    assert_eq!(traceparent_parents(&fake, &run.trace_id), chat_ids, "{all}");

    // Nothing of the conversation or the key went out.
    let text = receiver.everything_as_text();
    assert!(!text.contains(KEY), "the key was exported");
    assert!(!text.contains(PROMPT), "the prompt was exported");
    assert!(!text.contains("\"home\""), "an argument was exported");

    // The request metrics: two requests of 100 input and 20 output tokens each.
    wait_for_model_metrics(&receiver).await;
}

/// Waits until the metrics say: two model requests, of [`USAGE`] tokens each.
async fn wait_for_model_metrics(receiver: &OtlpReceiver) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let points = receiver.metric_points();
        let tokens = |kind: &str| {
            points
                .iter()
                .rfind(|p| {
                    p.name == "gen_ai.client.token.usage"
                        && p.attributes.get("gen_ai.token.type") == Some(&json!(kind))
                        && p.attributes.get("gen_ai.provider.name") == Some(&json!("openai"))
                })
                .and_then(|p| Some((p.value, p.sum?)))
        };
        let duration = points
            .iter()
            .rfind(|p| p.name == "gen_ai.client.operation.duration")
            .map(|p| p.value);
        #[allow(clippy::cast_precision_loss)]
        let expected = (
            Some((2.0, 2.0 * USAGE.0 as f64)),
            Some((2.0, 2.0 * USAGE.1 as f64)),
            Some(2.0),
        );
        if (tokens("input"), tokens("output"), duration) == expected {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "metrics: {:?}",
            points
                .iter()
                .filter(|p| p.name.starts_with("gen_ai."))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The parent span ids of the `traceparent` headers the fake received, sorted, each checked
/// to be of `trace_id` and sampled.
fn traceparent_parents(fake: &FakeProvider, trace_id: &str) -> Vec<String> {
    let headers = fake.headers();
    assert_eq!(headers.len(), 2);
    let mut sent: Vec<String> = headers
        .iter()
        .map(|h| {
            let value = h
                .get("traceparent")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_else(|| panic!("no traceparent in {h:?}"));
            let parts: Vec<&str> = value.split('-').collect();
            assert_eq!(parts.len(), 4, "{value}");
            assert_eq!(parts[0], "00", "{value}");
            assert_eq!(parts[1], trace_id, "{value}");
            assert_eq!(parts[3], "01", "{value}");
            parts[2].to_owned()
        })
        .collect();
    sent.sort();
    sent
}

/// What every `chat` span of the run holds: the request, the reply's model and usage, the
/// server.
fn assert_chat(chat: &ReceivedSpan, all: &str) {
    let attribute = |key: &str| chat.attributes.get(key).cloned();
    assert_eq!(chat.kind, "client", "{all}");
    assert_eq!(attribute("gen_ai.operation.name"), Some(json!("chat")));
    assert_eq!(attribute("gen_ai.provider.name"), Some(json!("openai")));
    assert_eq!(
        attribute("gen_ai.request.model"),
        Some(json!("gpt-4.1-mini"))
    );
    assert_eq!(
        attribute("gen_ai.usage.input_tokens"),
        Some(json!(USAGE.0)),
        "{all}"
    );
    assert_eq!(
        attribute("gen_ai.usage.output_tokens"),
        Some(json!(USAGE.1)),
        "{all}"
    );
    assert_eq!(
        attribute("server.address"),
        Some(json!("127.0.0.1")),
        "{all}"
    );
    assert!(
        attribute("server.port").is_some_and(|p| p.as_i64().is_some()),
        "{all}"
    );
    assert_eq!(
        attribute("gen_ai.response.model"),
        Some(json!("fake")),
        "{all}"
    );
}

/// What the run's span holds: the agent, its provider and model, the totals of both requests.
fn assert_run(run: &ReceivedSpan, all: &str) {
    let attribute = |key: &str| run.attributes.get(key).cloned();
    assert_eq!(run.kind, "internal", "{all}");
    assert_eq!(run.status, "unset", "{all}");
    assert_eq!(
        attribute("gen_ai.operation.name"),
        Some(json!("invoke_agent"))
    );
    assert_eq!(attribute("gen_ai.agent.name"), Some(json!("demo-app")));
    assert_eq!(attribute("gen_ai.provider.name"), Some(json!("openai")));
    assert_eq!(
        attribute("gen_ai.request.model"),
        Some(json!("gpt-4.1-mini")),
        "{all}"
    );
    assert_eq!(
        attribute("gen_ai.usage.input_tokens"),
        Some(json!(2 * USAGE.0)),
        "{all}"
    );
    assert_eq!(
        attribute("gen_ai.usage.output_tokens"),
        Some(json!(2 * USAGE.1)),
        "{all}"
    );
}
