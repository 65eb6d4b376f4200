//! The browser console of `demo-app serve`, in real headless Chromium driven by Playwright
//! (`tests/node/console_check.mjs`): tool lists per caller, a violation beside its field, a
//! call's result and its command line, a task answered and one cancelled in the page, a
//! destructive call cancelled then confirmed, the
//! activity list, and the chat: Send held while a run streams, failures said in the page; behind
//! OAuth, where to get a token, a token's scopes and the scopes a tool needs.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use tool_runtime::agent::Api;
use tool_test_support::fake_provider::{FakeProvider, Step};
use tool_test_support::oauth::AuthServers;
use tool_test_support::{Served, TempDir};

const KEY: &str = "sk-console-test-key-0042";

fn serve(
    dir: &Path,
    name: &str,
    globals: &[&str],
    options: &[&str],
    fake: &FakeProvider,
) -> Served {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_demo-app"));
    cmd.arg("--db")
        .arg(dir.join(format!("{name}.db")))
        .current_dir(dir)
        .env_remove("DEMO_APP_CONFIG")
        .env_remove("RUST_LOG")
        .env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", &fake.base_url)
        .args(globals)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(options)
        .stderr(Stdio::null());
    Served::spawn(cmd)
}

/// Writes the servers' files in `dir`: the static tokens (`t-admin` with the role admin,
/// `t-viewer` without), `demo-app.toml` for the open server and the guarded server's
/// configuration, which adds the OAuth issuer at `issuer` for `audience`. Returns the auth file's
/// path and the guarded configuration's.
fn configure(
    dir: &TempDir,
    issuer: &str,
    audience: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let auth = dir.join("auth.toml");
    std::fs::write(
        &auth,
        "[[tokens]]\ntoken = \"t-admin\"\nprincipal = \"admin\"\nroles = [\"admin\"]\n\
         scopes = [\"devices:read\", \"devices:write\"]\n\
         [[tokens]]\ntoken = \"t-viewer\"\nprincipal = \"viewer\"\nroles = []\n\
         scopes = [\"devices:read\"]\n",
    )
    .unwrap();
    // Destructive calls reach the agent's host (here: no one to ask, and offered in the page), and
    // channels may run `tee`; behind authentication, adding a device needs the scope
    // devices:write.
    let config = "[roles]\ndevice_revoke = [\"admin\"]\n[policy]\ndeny_destructive_for = []\n\
                  [channels]\nallowed_commands = [\"tee\"]\n";
    std::fs::write(dir.join("demo-app.toml"), config).unwrap();
    let guarded = dir.join("guarded.toml");
    std::fs::write(
        &guarded,
        format!(
            "{config}[auth]\nissuer = \"{issuer}\"\naudience = \"{audience}\"\n\
             scopes_supported = [\"devices:read\", \"devices:write\"]\n\
             [scopes]\ndevice_add = [\"devices:write\"]\n"
        ),
    )
    .unwrap();
    (auth, guarded)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_in_headless_chromium() {
    let dir = TempDir::new("console");
    let fake = FakeProvider::start(
        Api::OpenAiChat,
        KEY,
        vec![
            Step::calls(&[("device_list", "{}")]),
            Step::text("You have one device: browser phone, now revoked."),
            Step::calls(&[("channel_remove", r#"{"channel_name":"alerts"}"#)]),
            Step::text("Removing a channel needs your confirmation; you can give it in the page."),
            // Slow enough that the page is seen while the run streams.
            Step::Pause(Duration::from_millis(1500)),
            Step::text("Nothing else is pending."),
        ],
    )
    .await;
    // Beside the static tokens, an issuer's (oauth2-mock-server's) for the server's public URL.
    let audience = "https://console.test/mcp";
    let mut issuer = AuthServers::start(audience, "devices:read");
    let jwt = issuer.mint(&serde_json::json!({"claims": {
        "sub": "grace", "aud": audience, "scope": "devices:read",
        "exp": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 600,
    }}));
    let (auth, guarded_config) = configure(&dir, &issuer.mock, audience);
    let audit = dir.join("audit.jsonl");
    let open = serve(dir.path(), "open", &[], &[], &fake);
    let audit_arg = audit.to_str().unwrap();
    let auth_arg = auth.to_str().unwrap();
    let guarded = serve(
        dir.path(),
        "guarded",
        &[
            "--audit-log",
            audit_arg,
            "--config",
            guarded_config.to_str().unwrap(),
        ],
        &["--auth-file", auth_arg],
        &fake,
    );
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-screenshots");
    let (open_base, guarded_base) = (open.base.clone(), guarded.base.clone());
    let issuer_url = issuer.mock.clone();
    let shots = shots.to_str().unwrap().to_owned();
    tokio::task::spawn_blocking(move || {
        tool_test_support::console_check(
            &[
                "--open",
                &open_base,
                "--auth",
                &guarded_base,
                "--admin",
                "t-admin",
                "--viewer",
                "t-viewer",
                "--issuer",
                &issuer_url,
                "--jwt",
                &jwt,
                "--shots",
                &shots,
            ],
            &[
                "anonymous-lists-its-tools",
                "signed-out-asks-for-a-token",
                "token-shows-its-scopes",
                "viewer-sees-fewer-tools",
                "admin-sees-every-tool",
                "violation-beside-its-field",
                "valid-call-shows-the-code",
                "pair-with-a-secret-field",
                "task-asks-and-ends-in-the-page",
                "task-cancelled-from-the-page",
                "confirmation-cancelled-does-nothing",
                "confirmation-confirmed-revokes",
                "activity-shows-the-call",
                "activity-shows-the-trace",
                "chat-shows-the-tool-call",
                "chat-confirmation-in-the-page",
                "chat-send-disabled-while-streaming",
                "chat-failures-shown-in-the-page",
                "narrow-window",
                "clean",
            ],
        );
    })
    .await
    .unwrap();
    // The cancelled question ran nothing but its dry run: one device_revoke intent that is not
    // a dry run, the confirmed one; the previews' dry runs have intents of their own.
    let log = std::fs::read_to_string(&audit).unwrap();
    let intents = |dry_run: bool| {
        log.lines()
            .filter(|l| {
                l.contains(r#""event":"intent""#) && l.contains(r#""tool":"device_revoke""#)
            })
            .filter(|l| l.contains(r#""dry_run":true"#) == dry_run)
            .count()
    };
    assert_eq!(intents(false), 1, "{log}");
    assert!(intents(true) >= 1, "{log}");
    drop((open, guarded, issuer));
    fake.assert_clean();
}
