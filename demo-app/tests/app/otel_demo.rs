//! `[otel]` in `demo-app.toml`: with an endpoint there and no `OTEL_*` variable naming one,
//! `serve` exports its spans to it under the configured service name; a scheduled run is a
//! trace of its own.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::agent::Api;
use tool_test_support::fake_provider::{FakeProvider, Step};
use tool_test_support::otlp::{OtlpReceiver, ReceivedSpan, dump};
use tool_test_support::{Served, TempDir};

const KEY: &str = "sk-otel-test-key-0042";

/// `demo-app --db DIR/d.db ARGS` in `dir`, reading its `demo-app.toml`, with no `OTEL_*`
/// variable naming where telemetry goes.
fn demo(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_demo-app"));
    cmd.current_dir(dir)
        .arg("--db")
        .arg(dir.join("d.db"))
        .args(args)
        .env_remove("DEMO_APP_CONFIG")
        .env_remove("DEMO_APP_DB")
        .env_remove("RUST_LOG")
        .env_remove("OTEL_SDK_DISABLED")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_SERVICE_NAME")
        // Only how soon spans are sent, not where.
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .stderr(Stdio::null());
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configuration_names_the_collector_and_the_service() {
    let receiver = OtlpReceiver::start().await;
    let dir = TempDir::new("otel-config");
    std::fs::write(
        dir.join("demo-app.toml"),
        format!(
            "[otel]\nendpoint = \"{}\"\nservice_name = \"pairing-demo\"\nexport_timeout = \"5s\"\n",
            receiver.endpoint()
        ),
    )
    .unwrap();
    let cmd = demo(dir.path(), &["serve", "--addr", "127.0.0.1:0"]);
    let served = tokio::task::spawn_blocking(move || Served::spawn(cmd))
        .await
        .unwrap();
    let response = reqwest::Client::new()
        .post(format!("{}/tools/device_list", served.base))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
    let spans = receiver
        .wait_for_spans(
            |spans| spans.iter().any(|s| s.name == "execute_tool device_list"),
            Duration::from_secs(20),
        )
        .await;
    let call = spans
        .iter()
        .find(|s| s.name == "execute_tool device_list")
        .unwrap();
    assert_eq!(call.service_name, "pairing-demo");
    assert!(
        spans.iter().all(|s| s.service_name == "pairing-demo"),
        "{}",
        dump(&spans)
    );
    drop(served);
}

/// Each scheduled run is a root span of its own, named by its task; the answer the run
/// delivers to the log channel stays out of what is exported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_run_is_a_trace_of_its_own() {
    let receiver = OtlpReceiver::start().await;
    let dir = TempDir::new("otel-scheduler");
    std::fs::write(
        dir.join("demo-app.toml"),
        format!(
            "[otel]\nendpoint = \"{}\"\n[scheduler]\ntick = \"200ms\"\n\
             [agent]\nprovider = \"openai\"\nmodel = \"gpt-test\"\n",
            receiver.endpoint()
        ),
    )
    .unwrap();
    let schedule = [
        "--json",
        "schedule-task",
        "--prompt",
        "Report the garden's state",
        "--schedule-type",
        "interval",
        "--schedule-value",
        "1s",
    ];
    let mut cmd = demo(dir.path(), &schedule);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let task: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = task["result"]["task_id"].as_str().unwrap().to_owned();
    let answer = "the tomatoes need water";
    let script = (0..10).map(|_| Step::text(answer)).collect();
    let fake = FakeProvider::start(Api::OpenAiChat, KEY, script).await;
    let mut cmd = demo(dir.path(), &["serve", "--addr", "127.0.0.1:0"]);
    cmd.env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", &fake.base_url);
    let served = tokio::task::spawn_blocking(move || Served::spawn(cmd))
        .await
        .unwrap();
    let runs_of = |spans: &[ReceivedSpan]| -> Vec<ReceivedSpan> {
        (spans.iter())
            .filter(|s| {
                s.name == "scheduled_task" && s.attributes.get("task.id") == Some(&json!(id))
            })
            .cloned()
            .collect()
    };
    let spans = receiver
        .wait_for_spans(|spans| runs_of(spans).len() >= 2, Duration::from_secs(20))
        .await;
    drop(served);
    let runs = runs_of(&spans);
    assert!(
        runs.iter().all(|run| run.parent_span_id.is_empty()),
        "{}",
        dump(&spans)
    );
    assert_ne!(runs[0].trace_id, runs[1].trace_id, "{}", dump(&spans));
    let delivered = runs[0].events.iter().find(|(name, _)| name == "task ran");
    assert_eq!(
        delivered.map(|(_, attributes)| &attributes["outcome"]),
        Some(&json!("delivered")),
        "{}",
        dump(&spans)
    );
    assert!(
        !receiver.everything_as_text().contains(answer),
        "the answer was exported: {}",
        dump(&spans)
    );
}
