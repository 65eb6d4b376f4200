//! The browser console's forms for inputs beyond flat fields, in headless Chromium: the test
//! fixture's `itinerary` (an array of objects, an enum, a boolean) through `mcp-fixture serve`;
//! violations placed by keyword and property, the command line it shows run as shown, and a
//! call after the server stopped.
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
    // The last step stops the server (by its pid) and calls again.
    let pid = served.child.id().to_string();
    tool_test_support::console_check(
        &[
            "--forms",
            &served.base,
            "--forms-pid",
            &pid,
            "--forms-cli",
            env!("CARGO_BIN_EXE_mcp-fixture"),
            "--shots",
            shots.to_str().unwrap(),
        ],
        &[
            "nested-form",
            "nested-violation-beside-its-field",
            "missing-fields-beside-their-fields",
            "violations-placed-by-keyword-and-property",
            "nested-result-as-a-table",
            "command-is-the-tools-subcommand",
            "server-stopped-shows-an-error",
            "clean",
        ],
    );
}
