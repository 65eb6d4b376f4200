//! The browser console's forms for inputs beyond flat fields, in headless Chromium: the test
//! fixture's `itinerary` (an array of objects, an enum, a boolean) through `mcp-fixture serve`.
//! The demo app's console, callers and flows are tested in `demo-app/tests/app/console.rs`.

use std::process::Command;

#[test]
fn nested_inputs_as_forms_in_headless_chromium() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-fixture"));
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stderr(std::process::Stdio::null());
    let served = tool_test_support::Served::spawn(command);
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-forms-screenshots");
    tool_test_support::console_check(
        &["--forms", &served.base, "--shots", shots.to_str().unwrap()],
        &[
            "nested-form",
            "nested-violation-beside-its-field",
            "nested-result-as-a-table",
            "clean",
        ],
    );
}
