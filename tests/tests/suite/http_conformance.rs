//! The demo app's HTTP API against independent checkers: the OpenAPI document validates with
//! `openapi-spec-validator`, and `schemathesis` fuzzes every operation without finding a
//! response outside the documented ones or an unplanned 5xx.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use tool_runtime::http::{self, ServerOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_api_passes_openapi_spec_validator_and_schemathesis() {
    let python = tool_test_support::python_with("schemathesis, openapi_spec_validator");
    let dir = tool_test_support::TempDir::new("conformance");

    let stores = demo_app::Stores::sqlite(dir.join("demo.db")).unwrap();
    let registry = Arc::new(demo_app::registry(&stores).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(
        listener,
        http::router(registry, ServerOptions::default()),
        async {
            let _ = stopped.await;
        },
        &http::ServerOptions::default().grace(Duration::from_secs(5)),
    ));

    let doc = reqwest::get(format!("{base}/openapi.json"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let doc_path = dir.join("openapi.json");
    std::fs::write(&doc_path, doc).unwrap();
    let validator = run(
        &python,
        &["-m", "openapi_spec_validator", doc_path.to_str().unwrap()],
    )
    .await;
    assert!(
        validator.0,
        "openapi-spec-validator rejected the document:\n{}",
        validator.1
    );

    let schemathesis = python.parent().unwrap().join("schemathesis");
    let url = format!("{base}/openapi.json");
    let fuzz = run(
        &schemathesis,
        &[
            "run",
            &url,
            "--checks",
            "all",
            // A valid call may still fail by design (an unknown pairing code, an unconfirmed
            // destructive call), so "valid input must give 2xx" does not hold for tools.
            "--exclude-checks",
            "positive_data_acceptance",
            "--max-examples",
            "40",
            "--seed",
            "7",
            "--generation-database",
            "none",
            "--no-color",
        ],
    )
    .await;
    let _ = stop.send(());
    let _ = server.await;
    assert!(fuzz.0, "schemathesis found problems:\n{}", fuzz.1);
}

async fn run(program: &Path, args: &[&str]) -> (bool, String) {
    let program = program.to_owned();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let out = Command::new(&program)
            .args(&args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    })
    .await
    .unwrap()
}
