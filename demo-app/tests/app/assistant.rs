//! The assistant's tools through the demo binary: web pages and search against local fakes,
//! host commands on a configured bridge, channels, and scheduled agent runs under `serve`
//! against the fake provider, across a restart.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Query;
use axum::http::HeaderMap;
use axum::response::Html;
use axum::routing::get;
use serde_json::{Value, json};
use tool_runtime::agent::Api;
use tool_test_support::TempDir;
use tool_test_support::fake_provider::{FakeProvider, Step};

const KEY: &str = "sk-demo-test-key-0042";

/// `demo-app --db DIR/demo.db --config DIR/demo-app.toml`, no provider or key inherited.
fn demo(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_demo-app"));
    cmd.arg("--db")
        .arg(dir.join("demo.db"))
        .arg("--config")
        .arg(dir.join("demo-app.toml"))
        .current_dir(dir);
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "BRAVE_API_KEY",
        "DEMO_APP_CONFIG",
        "RUST_LOG",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs `demo-app --json ARGS` off the async workers; the exit code and the result, or the
/// whole envelope when the call failed.
async fn call(mut cmd: Command, args: &[&str]) -> (i32, Value) {
    cmd.arg("--json").args(args);
    let out: Output = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let value: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "not JSON: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let value = match value.get("result") {
        Some(result) => result.clone(),
        None => value,
    };
    (out.status.code().unwrap(), value)
}

fn config(dir: &TempDir, text: &str) {
    std::fs::write(dir.join("demo-app.toml"), text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_fetch_converts_pages_and_caps_them() {
    let page = "<html><head><title>T</title><style>body{color:red}</style>\
        <script>steal()</script></head><body><nav><a href='/'>Home</a> Menu</nav>\
        <h1>Garden notes</h1><p>Tomatoes need <b>sun</b>.</p>\
        <footer>Copyright footer</footer></body></html>";
    let long = format!("<p>{}</p>", "word ".repeat(5000));
    let app = Router::new()
        .route("/page", get(move || async move { Html(page) }))
        .route("/long", get(move || async move { Html(long.clone()) }))
        .route("/plain", get(|| async { "just text" }))
        .route(
            "/image",
            get(|| async {
                (
                    [("content-type", "image/png")],
                    vec![0x89u8, b'P', b'N', b'G'],
                )
            }),
        );
    let base = tool_test_support::serve_on_loopback(app).await;
    let dir = TempDir::new("assistant-fetch");
    config(&dir, "[web]\nallow_hosts = [\"127.0.0.1\"]\n");

    let (code, page) = call(demo(dir.path()), &["web-fetch", &format!("{base}/page")]).await;
    assert_eq!(code, 0, "{page}");
    let text = page["content"].as_str().unwrap();
    assert!(
        text.contains("# Garden notes") && text.contains("**sun**"),
        "{text}"
    );
    for gone in ["steal", "color:red", "Menu", "Copyright", "Home"] {
        assert!(!text.contains(gone), "{gone} left in {text}");
    }
    assert_eq!(page["truncated"], false);

    let (code, long) = call(demo(dir.path()), &["web-fetch", &format!("{base}/long")]).await;
    assert_eq!(code, 0);
    let content = long["content"].as_str().unwrap();
    assert!(
        content.ends_with("... (truncated)"),
        "{}",
        &content[content.len() - 40..]
    );
    assert_eq!(
        content.chars().count(),
        15_000 + "\n\n... (truncated)".len()
    );
    assert_eq!(long["truncated"], true);
    assert!(
        long["length"].as_u64().unwrap() > 20_000,
        "{}",
        long["length"]
    );

    let (_, plain) = call(demo(dir.path()), &["web-fetch", &format!("{base}/plain")]).await;
    assert_eq!(plain["content"], "just text");
    let (code, image) = call(demo(dir.path()), &["web-fetch", &format!("{base}/image")]).await;
    assert_ne!(code, 0);
    assert_eq!(image["error"]["type"], "unsupported_media_type", "{image}");

    // Without the exemption, the same page is refused before any request.
    config(&dir, "");
    let (code, refused) = call(demo(dir.path()), &["web-fetch", &format!("{base}/page")]).await;
    assert_ne!(code, 0);
    assert_eq!(refused["error"]["type"], "forbidden", "{refused}");
    assert_eq!(refused["error"]["details"]["rule"], "loopback");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_search_reads_brave_with_a_key_and_duckduckgo_without() {
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let brave_seen = seen.clone();
    let app = Router::new()
        .route(
            "/brave",
            get(move |headers: HeaderMap, Query(q): Query<Vec<(String, String)>>| {
                let seen = brave_seen.clone();
                async move {
                    let token = headers["x-subscription-token"].to_str().unwrap().to_owned();
                    seen.lock().unwrap().push(("token".into(), token));
                    seen.lock().unwrap().extend(q);
                    axum::Json(serde_json::json!({"web": {"results": [
                        {"title": "<strong>Rust</strong> language", "url": "https://www.rust-lang.org/", "description": "Fast &amp; <strong>safe</strong>."},
                        {"title": "Crates", "url": "https://crates.io/", "description": "Packages"},
                        {"title": "Docs", "url": "https://docs.rs/", "description": "Docs"}
                    ]}}))
                }
            }),
        )
        .route(
            "/ddg",
            get(|Query(q): Query<Vec<(String, String)>>| async move {
                assert_eq!(q, [("q".to_owned(), "rust book".to_owned())]);
                Html(
                    r#"<div class="result result--ad"><a class="result__a" href="https://ad.example/">Ad</a></div>
                    <div class="result"><h2><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdoc.rust-lang.org%2Fbook%2F&amp;rut=x">The <b>Rust</b> Book</a></h2>
                    <a class="result__snippet">Learn Rust.</a></div>"#,
                )
            }),
        );
    let base = tool_test_support::serve_on_loopback(app).await;
    let dir = TempDir::new("assistant-search");
    config(
        &dir,
        &format!(
            "[web]\nallow_hosts = [\"127.0.0.1\"]\nbrave_api_key_env = \"DEMO_BRAVE\"\n\
             brave_url = \"{base}/brave\"\nduckduckgo_url = \"{base}/ddg\"\n"
        ),
    );
    let mut with_key = demo(dir.path());
    with_key.env("DEMO_BRAVE", "brave-secret");
    let (code, found) = call(with_key, &["web-search", "rust lang", "--max-results", "2"]).await;
    assert_eq!(code, 0, "{found}");
    assert_eq!(found["engine"], "brave");
    assert_eq!(
        found["results"],
        serde_json::json!([
            {"title": "Rust language", "url": "https://www.rust-lang.org/", "snippet": "Fast & safe."},
            {"title": "Crates", "url": "https://crates.io/", "snippet": "Packages"}
        ])
    );
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.contains(&("token".into(), "brave-secret".into())),
        "{seen:?}"
    );
    assert!(seen.contains(&("q".into(), "rust lang".into())), "{seen:?}");

    let (code, found) = call(demo(dir.path()), &["web-search", "rust book"]).await;
    assert_eq!(code, 0, "{found}");
    assert_eq!(found["engine"], "duckduckgo");
    assert_eq!(
        found["results"],
        serde_json::json!([{"title": "The Rust Book", "url": "https://doc.rust-lang.org/book/", "snippet": "Learn Rust."}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_execute_runs_allowed_programs_on_a_bridge() {
    let dir = TempDir::new("assistant-host");
    config(&dir, "");
    let (code, none) = call(
        demo(dir.path()),
        &["host-execute", "--bridge", "local", "--command", "echo hi"],
    )
    .await;
    assert_ne!(code, 0);
    assert_eq!(none["error"]["type"], "no_bridges", "{none}");

    config(
        &dir,
        "[host]\ndefault_timeout = \"5s\"\n[host.bridges.local]\nallowed_commands = [\"echo\", \"ls\", \"sleep\"]\n",
    );
    let run = |command: &str| {
        let command = command.to_owned();
        let cmd = demo(dir.path());
        async move {
            call(
                cmd,
                &["host-execute", "--bridge", "local", "--command", &command],
            )
            .await
        }
    };
    let (code, out) = run("echo 'hello world' | not-a-pipe").await;
    assert_ne!(code, 0);
    assert_eq!(out["error"]["details"]["rule"], "shell_operator", "{out}");
    let (code, out) = run("echo 'hello  world' *").await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["stdout"], "hello  world *\n");
    let (_, out) = run("rm -rf /").await;
    assert_eq!(out["error"]["type"], "forbidden");
    assert_eq!(
        out["error"]["details"]["allowed"],
        serde_json::json!(["echo", "ls", "sleep"])
    );
    let (_, out) = run("echo 'unclosed").await;
    assert_eq!(out["error"]["type"], "invalid_request", "{out}");
    let (_, out) = run("ls /no/such/dir").await;
    assert_eq!(out["error"]["type"], "command_failed", "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("No such file"),
        "{out}"
    );
    let (_, out) = call(
        demo(dir.path()),
        &["host-execute", "--bridge", "remote", "--command", "echo hi"],
    )
    .await;
    assert_eq!(out["error"]["type"], "unknown_bridge");
    assert!(
        out["error"]["message"].as_str().unwrap().contains("local"),
        "{out}"
    );
    let (_, out) = call(
        demo(dir.path()),
        &[
            "host-execute",
            "--bridge",
            "local",
            "--command",
            "sleep 10",
            "--timeout",
            "1",
        ],
    )
    .await;
    assert_eq!(out["error"]["type"], "timeout", "{out}");
}

/// The task's rows in `task_runs`: (due, outcome).
fn runs(db: &Path, task: &str) -> Vec<(i64, Option<String>)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut statement = conn
        .prepare("SELECT due, outcome FROM task_runs WHERE task_id = ?1 ORDER BY due")
        .unwrap();
    statement
        .query_map([task], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

async fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn serve(dir: &Path, fake: &FakeProvider) -> tool_test_support::Served {
    let mut cmd = demo(dir);
    cmd.env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", &fake.base_url)
        .args(["serve", "--addr", "127.0.0.1:0"]);
    tool_test_support::Served::spawn(cmd)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_schedules_are_refused_with_the_reason() {
    let dir = TempDir::new("assistant-schedules");
    config(&dir, "");
    for (kind, value, says) in [
        ("cron", "every day", "not a cron expression"),
        ("interval", "0s", "positive"),
        ("interval", "-5", "positive"),
        ("interval", "soon", "not an interval"),
        ("once", "2001-01-01T00:00:00Z", "not in the future"),
        ("once", "tomorrow", "not an ISO-8601 time"),
    ] {
        let value_arg = format!("--schedule-value={value}");
        let (code, out) = call(
            demo(dir.path()),
            &[
                "schedule-task",
                "--prompt",
                "x",
                "--schedule-type",
                kind,
                &value_arg,
            ],
        )
        .await;
        assert_ne!(code, 0, "{kind} {value}");
        assert_eq!(out["error"]["type"], "invalid_arguments", "{out}");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{kind} {value}: {message}");
        let violation = &out["error"]["details"]["violations"][0];
        assert_eq!(
            (&violation["path"], &violation["keyword"]),
            (&json!("/schedule_value"), &json!("format")),
            "{out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduled_tasks_run_deliver_survive_a_restart_and_stop_when_cancelled() {
    let dir = TempDir::new("assistant-scheduler");
    let db: PathBuf = dir.join("demo.db");
    let delivered = dir.join("delivered.txt");
    config(
        &dir,
        "[channels]\nallowed_commands = [\"tee\"]\n[scheduler]\nenabled = true\ntick = \"200ms\"\n\
         [agent]\nprovider = \"openai\"\nmodel = \"gpt-test\"\n",
    );
    let script = (0..60)
        .map(|i| Step::text(&format!("report {i}")))
        .collect();
    let fake = FakeProvider::start(Api::OpenAiChat, KEY, script).await;

    let line = format!("tee -a {}", delivered.display());
    let (code, added) = call(
        demo(dir.path()),
        &["channel-add", "--channel-name", "out", "--command", &line],
    )
    .await;
    assert_eq!(code, 0, "{added}");
    let (code, task) = call(
        demo(dir.path()),
        &[
            "schedule-task",
            "--prompt",
            "Report the garden's state",
            "--schedule-type",
            "interval",
            "--schedule-value",
            "1s",
            "--channel",
            "out",
        ],
    )
    .await;
    assert_eq!(code, 0, "{task}");
    assert_eq!(task["channel"], "out");
    let id = task["task_id"].as_str().unwrap().to_owned();

    let first = serve(dir.path(), &fake);
    wait_for("two delivered runs", Duration::from_secs(20), || {
        std::fs::read_to_string(&delivered).is_ok_and(|t| t.matches("report").count() >= 2)
    })
    .await;
    drop(first); // killed, as a crash would
    let before = runs(&db, &id).len();
    tokio::time::sleep(Duration::from_millis(2500)).await;

    let second = serve(dir.path(), &fake);
    wait_for("runs after the restart", Duration::from_secs(20), || {
        runs(&db, &id).len() >= before + 2
    })
    .await;
    let (code, cancelled) = call(demo(dir.path()), &["cancel-task", &id, "--yes"]).await;
    assert_eq!(code, 0, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    let after_cancel = runs(&db, &id).len();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    drop(second);

    let all = runs(&db, &id);
    assert_eq!(all.len(), after_cancel, "a cancelled task ran: {all:?}");
    let mut dues: Vec<i64> = all.iter().map(|(due, _)| *due).collect();
    dues.dedup();
    assert_eq!(dues.len(), all.len(), "a due time ran twice: {all:?}");
    let text = std::fs::read_to_string(&delivered).unwrap();
    assert!(text.matches("report").count() >= 3, "{text}");
    let (_, listed) = call(demo(dir.path()), &["list-tasks"]).await;
    let listed = &listed["tasks"][0];
    assert_eq!(listed["status"], "cancelled");
    assert_eq!(listed["runs"], serde_json::json!(all.len()), "{listed}");
    assert!(
        all.iter()
            .filter(|(_, o)| o.as_deref() == Some("delivered"))
            .count()
            >= 3,
        "{all:?}"
    );

    let (code, gone) = call(demo(dir.path()), &["channel-remove", "out", "--yes"]).await;
    assert_eq!(code, 0, "{gone}");
    let (_, channels) = call(demo(dir.path()), &["channel-list"]).await;
    assert_eq!(
        channels["channels"].as_array().unwrap().len(),
        1,
        "{channels}"
    );
}
