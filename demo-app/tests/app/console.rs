//! The browser console of `demo-app serve`, in real headless Chromium driven by Playwright
//! (`tests/node/console_check.mjs`): tool lists per caller, a violation beside its field, a
//! call's result and its command line, a destructive call cancelled then confirmed, the
//! activity list, and the chat: Send held while a run streams, failures said in the page.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use tool_runtime::agent::Api;
use tool_test_support::fake_provider::{FakeProvider, Step};
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
    let auth = dir.join("auth.toml");
    std::fs::write(
        &auth,
        "[[tokens]]\ntoken = \"t-admin\"\nprincipal = \"admin\"\nroles = [\"admin\"]\n\
         [[tokens]]\ntoken = \"t-viewer\"\nprincipal = \"viewer\"\nroles = []\n",
    )
    .unwrap();
    // Destructive calls reach the agent's host (here: no one to ask, and offered in the page), and
    // channels may run `tee`.
    std::fs::write(
        dir.join("demo-app.toml"),
        "[roles]\ndevice_revoke = [\"admin\"]\n[policy]\ndeny_destructive_for = []\n\
         [channels]\nallowed_commands = [\"tee\"]\n",
    )
    .unwrap();
    let audit = dir.join("audit.jsonl");
    let open = serve(dir.path(), "open", &[], &[], &fake);
    let audit_arg = audit.to_str().unwrap();
    let auth_arg = auth.to_str().unwrap();
    let guarded = serve(
        dir.path(),
        "guarded",
        &["--audit-log", audit_arg],
        &["--auth-file", auth_arg],
        &fake,
    );
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-screenshots");
    let (open_base, guarded_base) = (open.base.clone(), guarded.base.clone());
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
                "--shots",
                &shots,
            ],
            &[
                "anonymous-lists-its-tools",
                "signed-out-asks-for-a-token",
                "viewer-sees-fewer-tools",
                "admin-sees-every-tool",
                "violation-beside-its-field",
                "valid-call-shows-the-code",
                "pair-with-a-secret-field",
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
    drop((open, guarded));
    fake.assert_clean();
}
