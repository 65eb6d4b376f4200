//! The browser console's forms for inputs beyond flat fields, in headless Chromium: the test
//! fixture's `itinerary` (an array of objects, an enum, a boolean) through `mcp-fixture serve`;
//! violations placed by keyword and property, the command line it shows run as shown, and a
//! call after the server stopped; and resources and prompts (`items.rs`) read and got in the
//! page.
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

/// The suite's resources and prompts in the console: listed beside the tools, text shown, an
/// image drawn, bytes downloaded, a template completed and read, its escaping value refused
/// beside its field, a prompt's messages and its violations beside their fields.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_prompts_in_headless_chromium() {
    use std::sync::Arc;
    use tool_runtime::http::{self, ServerOptions};
    let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let registry = Arc::new(super::items::registry(&reads).build().unwrap());
    let options = ServerOptions::default().console(true);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(
        listener,
        tool_runtime::app::router(registry, options),
        async {
            let _ = stopped.await;
        },
        &ServerOptions::default().grace(std::time::Duration::from_secs(1)),
    ));
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-items-screenshots");
    tokio::task::spawn_blocking(move || {
        tool_test_support::console_check(
            &["--items", &base, "--shots", shots.to_str().unwrap()],
            &[
                "items-listed-beside-tools",
                "resource-text-shown",
                "resource-image-shown",
                "resource-bytes-downloaded",
                "template-completed-and-read",
                "template-escape-beside-its-field",
                "prompt-messages-shown",
                "prompt-violations-beside-their-fields",
                "clean",
            ],
        );
    })
    .await
    .unwrap();
    let _ = stop.send(());
    let _ = server.await;
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
