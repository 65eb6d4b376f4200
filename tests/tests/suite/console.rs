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

/// `GET /whoami` says whether the server asks for a token (`auth_required`), who calls, and
/// whether the audit log is theirs to read: the console shows its sign-in from the first.
#[tokio::test]
async fn whoami_says_whether_the_server_requires_a_token_and_who_calls() {
    use std::sync::Arc;
    use tool_runtime::http::{Auth, ServerOptions};
    use tower::ServiceExt;
    let registry = Arc::new(
        tool_runtime::Registry::builder()
            .without_inventory()
            .build()
            .unwrap(),
    );
    let whoami = |options: ServerOptions, token: Option<&'static str>| {
        let app = tool_runtime::app::router(registry.clone(), options.console(true));
        async move {
            let mut request = axum::http::Request::get("/whoami");
            if let Some(token) = token {
                request = request.header("authorization", format!("Bearer {token}"));
            }
            let response = app
                .oneshot(request.body(axum::body::Body::empty()).unwrap())
                .await
                .unwrap();
            let body = axum::body::to_bytes(response.into_body(), 1 << 20)
                .await
                .unwrap();
            serde_json::from_slice::<serde_json::Value>(&body).unwrap()
        }
    };
    let open = whoami(ServerOptions::default(), None).await;
    assert_eq!(open["auth_required"], false, "{open}");
    assert!(open.get("authenticated").is_none(), "{open}");
    assert_eq!(open["principal"], serde_json::Value::Null, "{open}");
    let tokens = "[[tokens]]\ntoken = \"t-ops\"\nprincipal = \"olga\"\nroles = [\"ops\"]\n";
    let guarded = ServerOptions::default().auth(Auth::from_toml(tokens).unwrap());
    let who = whoami(guarded, Some("t-ops")).await;
    assert_eq!(who["auth_required"], true, "{who}");
    assert_eq!(
        (&who["principal"], &who["roles"], &who["audit"]),
        (&"olga".into(), &serde_json::json!(["ops"]), &false.into()),
        "{who}"
    );
}
