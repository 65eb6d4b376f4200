//! The agent loop's own cost per tool call, next to the OpenAI Agents SDK for Python running the
//! same scripted task against the same local fake Chat Completions server, in the same run.
//!
//! The server answers every request with one call of `add` until the conversation holds
//! `CALLS` results, then with the text `done`, and adds up the time its handler takes. For each
//! side: overhead per tool call = (wall time of the runs − the server's handler time) / tool
//! calls, which leaves the client's HTTP stack, JSON, the loop and the tool in. For ours, also
//! the loop alone: wall time − every model turn (request, HTTP, reply parsed) − every tool call.
//!
//! `cargo bench -p tool-tests --bench agent` (Python from `tests/run.sh`'s `.venv`, with
//! `openai-agents`; `AGENT_BENCH_RUNS` runs of `AGENT_BENCH_CALLS` calls, default 20 × 20).

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use tool_runtime::agent::{Agent, Api, Budgets, Model};
use tool_runtime::{Registry, Secret, tool};

/// Add two integers.
#[tool(annotations(read_only))]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[derive(Default)]
struct Server {
    calls: u32,
    nanos: AtomicU64,
    requests: AtomicU64,
}

async fn chat(State(server): State<Arc<Server>>, body: Bytes) -> impl IntoResponse {
    let started = Instant::now();
    let request: Value = serde_json::from_slice(&body).expect("JSON");
    let done = request["messages"].as_array().map_or(0, |m| {
        u32::try_from(m.iter().filter(|m| m["role"] == "tool").count()).unwrap_or(u32::MAX)
    });
    let message = if done < server.calls {
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": format!("call_{done}"), "type": "function",
            "function": {"name": "add", "arguments": format!("{{\"a\":{done},\"b\":1}}")}}]})
    } else {
        json!({"role": "assistant", "content": "done"})
    };
    let reply = serde_json::to_vec(&json!({
        "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "fake-model",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": if done < server.calls { "tool_calls" } else { "stop" }}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }))
    .expect("serialises");
    server.requests.fetch_add(1, Ordering::Relaxed);
    server.nanos.fetch_add(
        u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
    ([("content-type", "application/json")], reply)
}

fn env_number(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let calls = env_number("AGENT_BENCH_CALLS", 20);
    let runs = env_number("AGENT_BENCH_RUNS", 20);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let server = Arc::new(Server {
        calls,
        ..Server::default()
    });
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(chat))
        .with_state(server.clone());
    let base = runtime.block_on(tool_test_support::serve_on_loopback(app));
    let url = format!("{base}/v1");

    // Ours.
    let registry = Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(add::descriptor())
            .build()
            .expect("registry"),
    );
    let model = Model::new(
        Api::OpenAiChat,
        "fake-model",
        url.clone(),
        Some(Secret::new("sk-bench".to_owned())),
    );
    let agent = Agent::builder(registry, model)
        .system("Add numbers with the tool.")
        .budgets(
            Budgets::default()
                .max_turns(calls + 2)
                .max_tool_calls(calls + 1),
        )
        .build()
        .expect("agent");
    let (rust_wall, rust_server, rust_loop) = runtime.block_on(async {
        agent.run("go").await.expect("warm-up run");
        server.nanos.store(0, Ordering::Relaxed);
        let mut loop_only = Duration::ZERO;
        let started = Instant::now();
        for _ in 0..runs {
            let out = agent.run("go").await.expect("run");
            assert_eq!(out.answer, "done");
            assert_eq!(out.transcript.tool_calls, calls);
            let turns: Duration = out.transcript.turns.iter().map(|t| t.duration).sum();
            let tools: Duration = out.transcript.results().map(|r| r.duration).sum();
            loop_only += out.transcript.elapsed.saturating_sub(turns + tools);
        }
        let wall = started.elapsed();
        let server = Duration::from_nanos(server.nanos.load(Ordering::Relaxed));
        (wall, server, loop_only)
    });

    // The Python SDK, against the same server.
    let python = tool_test_support::python_with("agents");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/agent_bench.py");
    server.nanos.store(0, Ordering::Relaxed);
    let child = std::thread::spawn({
        let url = url.clone();
        move || {
            Command::new(python)
                .args([script, &url, &calls.to_string(), &runs.to_string()])
                .output()
                .expect("python runs")
        }
    });
    let output = child.join().expect("joined");
    assert!(
        output.status.success(),
        "agent_bench.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let py: Value = serde_json::from_slice(&output.stdout).expect("one JSON line");
    // The Python side's warm-up run is in the server's total; its share is taken out.
    let py_server_all = Duration::from_nanos(server.nanos.load(Ordering::Relaxed));
    let py_server = py_server_all.mul_f64(f64::from(runs) / f64::from(runs + 1));
    let py_wall = Duration::from_secs_f64(py["wall_s"].as_f64().expect("wall_s"));

    let total = f64::from(calls * runs);
    let per_call = |d: Duration| d.as_secs_f64() * 1e6 / total;
    let ours = per_call(rust_wall.saturating_sub(rust_server));
    let theirs = per_call(py_wall.saturating_sub(py_server));
    println!(
        "agent loop, {runs} runs of {calls} tool calls against a local fake Chat Completions server"
    );
    println!(
        "  ours:           {:>9.1} µs per tool call outside the server ({:.1} µs wall), loop alone {:.1} µs",
        ours,
        per_call(rust_wall),
        per_call(rust_loop)
    );
    println!(
        "  openai-agents:  {:>9.1} µs per tool call outside the server ({:.1} µs wall)",
        theirs,
        per_call(py_wall)
    );
    println!("  ratio:          {:>9.1}×", theirs / ours);
}
