//! Integration tests of tool-runtime, the macro and the demo app; see `tests/` and `ui/`.
//! This library holds what several test files share.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The Python interpreter that has the `jsonschema` package.
///
/// # Panics
///
/// See [`python_with`].
#[must_use]
pub fn python_with_jsonschema() -> PathBuf {
    python_with("jsonschema")
}

/// The Python interpreter that can `import {modules}` (comma-separated): `TOOL_TESTS_PYTHON`, else the workspace's
/// `.venv` (made by `tests/run.sh` from `tests/python/requirements.txt`).
///
/// # Panics
///
/// When neither can, saying how to set it up: a test that needs an independent checker never
/// passes without it.
#[must_use]
pub fn python_with(modules: &str) -> PathBuf {
    let candidates: Vec<PathBuf> = std::env::var_os("TOOL_TESTS_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python")])
        .collect();
    for python in &candidates {
        let ok = Command::new(python)
            .args(["-c", &format!("import {modules}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return python.clone();
        }
    }
    panic!(
        "this test needs Python with `{modules}` (tried {candidates:?}).\n\
         Run the tests with `bash tests/run.sh`, which makes .venv and installs it, or\n\
         `pip install -r tests/python/requirements.txt` and set TOOL_TESTS_PYTHON=/path/to/python"
    );
}

/// Serves `app` on a free port of 127.0.0.1 until the test ends; returns `http://127.0.0.1:PORT`.
pub async fn serve_on_loopback(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let base = format!("http://{}", listener.local_addr().expect("bound"));
    tokio::spawn(tool_runtime::http::serve(
        listener,
        app,
        std::future::pending(),
        std::time::Duration::from_secs(1),
    ));
    base
}
