//! A known secret, sent through every front end, appears in no envelope, error, prompt preview,
//! audit record or log line.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tool_runtime::http::{self, ServerOptions};
use tool_runtime::layers::hooks::{CallObserver, CompletedCall};
use tool_runtime::prelude::*;
use tool_runtime::{App, Secret};

const SECRET: &str = "correct-horse-battery-staple";
const SHORT_SECRET: &str = "hunter2";

/// Log in to the mail server.
#[tool]
async fn mail_login(
    /// Account
    user: String,
    /// Password
    #[arg(length(min = 8))]
    password: Secret<String>,
) -> bool {
    // The tool itself can use the value.
    tracing::info!(?password, %password, "login attempt");
    !user.is_empty() && password.expose() == SECRET
}

/// Replace the password.
#[tool(annotations(destructive))]
async fn password_reset(
    /// Account
    user: String,
    /// The new password
    new_password: Secret<String>,
) -> bool {
    !user.is_empty() && !new_password.expose().is_empty()
}

/// Everything every subscriber and observer saw.
#[derive(Clone, Default)]
pub(crate) struct Seen(pub(crate) Arc<Mutex<Vec<u8>>>);

impl Write for Seen {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl CallObserver for Seen {
    fn observe<'a>(&'a self, call: CompletedCall<'a>) -> BoxFuture<'a, ()> {
        let line = format!(
            "AUDIT {} {} {}\n",
            call.ctx.request_id(),
            call.args,
            call.envelope.to_json()
        );
        self.0.lock().unwrap().extend_from_slice(line.as_bytes());
        Box::pin(async {})
    }
}

/// The process's global subscriber (TRACE, every line kept), installed on first use.
pub(crate) fn seen() -> &'static Seen {
    static SEEN: OnceLock<Seen> = OnceLock::new();
    SEEN.get_or_init(|| {
        let seen = Seen::default();
        let writer = seen.clone();
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .init();
        seen
    })
}

fn registry() -> Arc<Registry> {
    Arc::new(registry_builder().observer(seen().clone()).build().unwrap())
}

fn record(text: &str) {
    seen().0.lock().unwrap().extend_from_slice(text.as_bytes());
}

async fn through_the_pipeline(r: &Registry) {
    let c = || Caller::new(Source::Internal);

    // Through the pipeline: success, a violation about the secret, a confirmation refusal.
    let ok = r
        .call(
            "mail_login",
            json!({"user": "ann", "password": SECRET}),
            c(),
        )
        .await;
    assert_eq!(ok.result(), Some(&json!(true)));
    record(&ok.to_json().to_string());
    let short = r
        .call(
            "mail_login",
            json!({"user": "ann", "password": SHORT_SECRET}),
            c(),
        )
        .await;
    let e = short.error().unwrap();
    assert_eq!(e.violations()[0].path, "/password");
    assert_eq!(
        e.violations()[0].message,
        "the secret value does not satisfy `minLength`"
    );
    record(&short.to_json().to_string());
    let wrong_type = r
        .call(
            "mail_login",
            json!({"user": "ann", "password": 12_345_678_901_u64}),
            c(),
        )
        .await;
    record(&wrong_type.to_json().to_string());
    let refused = r
        .call(
            "password_reset",
            json!({"user": "ann", "new_password": SECRET}),
            c(),
        )
        .await;
    let e = refused.error().unwrap();
    assert_eq!(e.kind(), "confirmation_required");
    assert!(e.message().contains("[redacted]"), "{}", e.message());
    record(&refused.to_json().to_string());
}

async fn over_http(r: Arc<Registry>) {
    let base =
        tool_test_support::serve_on_loopback(http::router(r, ServerOptions::default())).await;
    let client = reqwest::Client::new();
    for (tool, body) in [
        ("mail_login", json!({"user": "ann", "password": SECRET})),
        (
            "mail_login",
            json!({"user": "ann", "password": SHORT_SECRET}),
        ),
        (
            "password_reset",
            json!({"user": "ann", "new_password": SECRET}),
        ),
    ] {
        let text = client
            .post(format!("{base}/tools/{tool}"))
            .json(&body)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        record(&text);
    }
    let schema: Value = client
        .get(format!("{base}/tools/mail_login"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        schema["input_schema"]["properties"]["password"]["writeOnly"],
        true
    );
    assert_eq!(
        schema["input_schema"]["properties"]["password"]["format"],
        "password"
    );
}

async fn through_the_cli() {
    for args in [
        vec![
            "app",
            "--json",
            "mail-login",
            "--user",
            "ann",
            "--password",
            SECRET,
        ],
        vec![
            "app",
            "--json",
            "mail-login",
            "--user",
            "ann",
            "--password",
            SHORT_SECRET,
        ],
        vec![
            "app",
            "--json",
            "password-reset",
            "--user",
            "ann",
            "--new-password",
            SECRET,
        ],
    ] {
        let (_, out) = App::new("app")
            .registry(registry_builder())
            .run_captured(args)
            .await;
        record(&out);
    }
}

#[tokio::test]
async fn no_front_end_shows_a_secret() {
    let r = registry();
    through_the_pipeline(&r).await;
    over_http(r).await;
    through_the_cli().await;

    let all = String::from_utf8(seen().0.lock().unwrap().clone()).unwrap();
    assert!(all.contains("AUDIT"), "the observer saw the calls");
    assert!(all.contains("login attempt"), "the log saw the tool's line");
    assert!(all.contains("[redacted]"));
    for secret in [SECRET, SHORT_SECRET, "12345678901"] {
        assert!(!all.contains(secret), "`{secret}` leaked:\n{all}");
    }
}

/// The tools of this file, and no others: the test binary holds other files' tools too.
fn registry_builder() -> tool_runtime::registry::RegistryBuilder {
    tool_runtime::Registry::builder()
        .without_inventory()
        .tool(mail_login::descriptor())
        .tool(password_reset::descriptor())
}
