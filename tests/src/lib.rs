//! Integration tests of tool-runtime, the macro and the demo app; see `tests/` and `ui/`.
//! This library holds what several test files share.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The Python interpreter that has the `jsonschema` package: `TOOL_TESTS_PYTHON`, else the
/// workspace's `.venv` (made by `tests/run.sh`).
///
/// # Panics
///
/// When neither has `jsonschema`, saying how to set it up: a test that needs the independent
/// judge never passes without it.
#[must_use]
pub fn python_with_jsonschema() -> PathBuf {
    let candidates: Vec<PathBuf> = std::env::var_os("TOOL_TESTS_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python")])
        .collect();
    for python in &candidates {
        let ok = Command::new(python)
            .args(["-c", "import jsonschema"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return python.clone();
        }
    }
    panic!(
        "this test needs Python with the `jsonschema` package (tried {candidates:?}).\n\
         Run the tests with `bash tests/run.sh`, which makes .venv and installs it, or\n\
         `pip install -r tests/python/requirements.txt` and set TOOL_TESTS_PYTHON=/path/to/python"
    );
}
