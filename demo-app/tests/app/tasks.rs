//! The demo's long call as a task: `device_export` over HTTP with `Prefer: respond-async`,
//! answered at once with its location, asking there whether to include revoked devices, and
//! read there once done.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_test_support::{Served, TempDir};

async fn call(served: &Served, tool: &str, args: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/tools/{tool}", served.base))
        .header("x-confirm", "true")
        .json(&args)
        .send()
        .await
        .unwrap()
}

/// The task at `location` once its status is no longer `from`.
async fn after(served: &Served, location: &str, from: &str) -> Value {
    let started = Instant::now();
    loop {
        let task: Value = reqwest::get(format!("{}{location}", served.base))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if task["status"] != from {
            return task;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{task}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_device_export_runs_as_a_task_asks_its_question_and_is_read_at_its_location() {
    let dir = TempDir::new("demo-tasks");
    let mut command = Command::new(env!("CARGO_BIN_EXE_demo-app"));
    command
        .arg("--db")
        .arg(dir.path().join("demo.db"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env_remove("RUST_LOG")
        .env_remove("DEMO_APP_CONFIG")
        .stderr(Stdio::null());
    let served = Served::spawn(command);
    let mut ids = Vec::new();
    for name in ["ann's phone", "bo, tablet", "cy \"laptop\""] {
        let code: Value = call(&served, "device_add", json!({}))
            .await
            .json()
            .await
            .unwrap();
        let paired: Value = call(
            &served,
            "device_pair",
            json!({"code": code["result"]["code"], "device_name": name}),
        )
        .await
        .json()
        .await
        .unwrap();
        ids.push(paired["result"]["device_id"].as_str().unwrap().to_owned());
    }
    let revoked = call(&served, "device_revoke", json!({"device_id": ids[0]})).await;
    assert_eq!(revoked.status(), 200);
    // Without the preference: a call, in full, asking no one (there is no one to ask).
    let now: Value = call(&served, "device_export", json!({"pace_ms": 0}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(now["result"]["devices"], 2, "{now}");
    // With it: a task, paced a device at a time.
    let r = reqwest::Client::new()
        .post(format!("{}/tools/device_export", served.base))
        .header("prefer", "respond-async")
        .json(&json!({"page_size": 1, "pace_ms": 100}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    let asking = after(&served, &location, "working").await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    assert!(
        asking["questions"]["include_revoked"].is_object(),
        "{asking}"
    );
    let answered = reqwest::Client::new()
        .post(format!("{}{location}/input", served.base))
        .json(
            &json!({"include_revoked": {"action": "accept", "content": {"include_revoked": true}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 202);
    let done = loop {
        let task = after(&served, &location, "input_required").await;
        if task["status"] != "working" {
            break task;
        }
    };
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["outcome"]["result"];
    assert_eq!(result["devices"], 3);
    assert_eq!(result["include_revoked"], true);
    let csv = result["csv"].as_str().unwrap();
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(csv.contains("\"bo, tablet\""), "{csv}");
    assert!(csv.contains("\"cy \"\"laptop\"\"\""), "{csv}");
}

/// Runs FastMCP's client (`tests/python/fastmcp_task_client.py`) against `url` with `args`.
pub(crate) fn fastmcp(url: &str, args: &[&str]) -> std::process::Output {
    let python = tool_test_support::python_with("fastmcp, fastmcp_tasks");
    Command::new(python)
        .arg(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/python/fastmcp_task_client.py"),
        )
        .args(["--url", url])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn fastmcps_client_runs_the_device_export_as_a_task_and_answers_its_question() {
    let dir = TempDir::new("demo-fastmcp");
    let mut command = Command::new(env!("CARGO_BIN_EXE_demo-app"));
    command
        .arg("--db")
        .arg(dir.path().join("demo.db"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env_remove("RUST_LOG")
        .env_remove("DEMO_APP_CONFIG")
        .stderr(Stdio::null());
    let served = Served::spawn(command);
    let out = fastmcp(
        &format!("{}/mcp", served.base),
        &[
            "--tool",
            "device_export",
            "--args",
            r#"{"page_size": 1, "pace_ms": 20}"#,
            "--answer",
            r#"{"include_revoked": true}"#,
        ],
    );
    println!("{}", String::from_utf8_lossy(&out.stdout));
    tool_test_support::expect_checks(
        &out,
        &[
            "started",
            "asked include_revoked",
            "answered",
            "status",
            "result {\"csv\"",
        ],
    );
}
