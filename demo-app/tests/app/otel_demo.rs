//! `[otel]` in `demo-app.toml`: with an endpoint there and no `OTEL_*` variable naming one,
//! `serve` exports its spans to it under the configured service name.

use std::process::{Command, Stdio};
use std::time::Duration;

use tool_test_support::otlp::OtlpReceiver;
use tool_test_support::{Served, TempDir};

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
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_demo-app"));
    cmd.current_dir(dir.path())
        .arg("--db")
        .arg(dir.join("d.db"))
        .args(["serve", "--addr", "127.0.0.1:0"])
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
        tool_test_support::otlp::dump(&spans)
    );
    drop(served);
}
