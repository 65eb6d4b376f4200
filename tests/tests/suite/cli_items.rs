//! Resources and prompts on the command line, through `App::run_captured`: `resource list`,
//! `resource read` (text, bytes, a template, JSON), `prompt NAME --ARG VALUE`, refusals with
//! their exit codes, and no such built-ins in an application without resources or prompts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tool_runtime::App;
use tool_runtime::prelude::*;

fn app(reads: &Arc<AtomicUsize>) -> App {
    App::new("items").registry(super::items::registry(reads))
}

async fn run(args: &[&str]) -> (u8, String) {
    let mut line = vec!["items"];
    line.extend_from_slice(args);
    app(&Arc::new(AtomicUsize::new(0))).run_captured(line).await
}

#[tokio::test]
async fn resources_are_listed_and_read_as_they_are() {
    let (code, out) = run(&["resource", "list"]).await;
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines.iter().any(|l| l.starts_with("docs://readme")
            && l.contains("readme")
            && l.ends_with("text/markdown")),
        "{out}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("files://notes/a.txt")),
        "{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("files://{path*}") && l.contains("files (template)")),
        "{out}"
    );
    // The admin's resource is not the command line's (it has no roles).
    assert!(!out.contains("secrets://"), "{out}");

    let (_, out) = run(&["--json", "resource", "list"]).await;
    let listing: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listing["templates"][0]["uriTemplate"], "files://{path*}");
    assert_eq!(listing["resources"].as_array().unwrap().len(), 7);

    // Text as it is; a template's value decoded.
    let (code, out) = run(&["resource", "read", "docs://readme"]).await;
    assert_eq!((code, out.as_str()), (0, super::items::README));
    let (_, out) = run(&["resource", "read", "files://notes/a%20b.txt"]).await;
    assert_eq!(out, "contents of notes/a b.txt");

    // Bytes, decoded, to a file; the contents as JSON with --json.
    let dir = tool_test_support::TempDir::new("cli-items");
    let file = dir.join("logo.png");
    let (code, out) = run(&[
        "resource",
        "read",
        "images://logo",
        "-o",
        file.to_str().unwrap(),
    ])
    .await;
    assert_eq!((code, out.as_str()), (0, ""));
    assert_eq!(std::fs::read(&file).unwrap(), super::items::LOGO);
    let (_, out) = run(&["resource", "read", "images://logo", "--json"]).await;
    let contents: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        contents["contents"][0],
        json!({"uri": "images://logo", "mimeType": "image/png", "blob": super::items::LOGO_BASE64})
    );

    // Several contents, each under its URI.
    let (_, out) = run(&["resource", "read", "pair://both"]).await;
    assert!(out.contains("[resource pair://both/1"), "{out}");
    assert!(out.contains("one\n") && out.contains("two\n"), "{out}");
}

#[tokio::test]
async fn refused_reads_exit_with_their_kinds_codes() {
    // Nothing at the URI, and a resource hidden from the command line: not found (exit 1).
    for uri in ["nowhere://x", "secrets://key"] {
        let (code, out) = run(&["--json", "resource", "read", uri]).await;
        assert_eq!(code, 1, "{out}");
        let refused: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(refused["error"]["type"], "not_found");
        assert_eq!(refused["error"]["details"]["uri"], uri);
    }
    // A value that climbs out of its place: invalid arguments (exit 2), the fn never run.
    let reads = Arc::new(AtomicUsize::new(0));
    let (code, out) = app(&reads)
        .run_captured([
            "items",
            "--json",
            "resource",
            "read",
            "files://notes/../../etc/passwd",
        ])
        .await;
    assert_eq!(code, 2, "{out}");
    let refused: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(refused["error"]["type"], "invalid_arguments");
    assert_eq!(reads.load(Ordering::SeqCst), 0);
    // Without --json, nothing on standard output.
    let (code, out) = run(&["resource", "read", "nowhere://x"]).await;
    assert_eq!((code, out.as_str()), (1, ""));
}

#[tokio::test]
async fn prompts_take_their_arguments_as_flags() {
    let (code, out) = run(&[
        "prompt",
        "review",
        "--code",
        "fn main() {}",
        "--strictness",
        "3",
        "--language",
        "rust",
    ])
    .await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "[user]\nReview this rust at strictness 3:\nfn main() {}\n\n[assistant]\nI will.\n"
    );
    let (_, out) = run(&["--json", "prompt", "review", "--code", "x"]).await;
    let reply: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(reply["description"], "A review at strictness 2");
    assert_eq!(reply["messages"][1]["content"]["text"], "I will.");

    // An argument that does not parse: invalid arguments, exit 2.
    let (code, out) = run(&[
        "--json",
        "prompt",
        "review",
        "--code",
        "x",
        "--strictness",
        "very",
    ])
    .await;
    assert_eq!(code, 2, "{out}");
    let refused: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        refused["error"]["details"]["violations"][0]["path"],
        "/strictness"
    );
    // A required one left out, or a prompt that does not exist: a usage error, exit 2.
    assert_eq!(run(&["prompt", "review"]).await.0, 2);
    assert_eq!(run(&["prompt", "nope"]).await.0, 2);

    // `prompt` alone lists them.
    let (code, out) = run(&["prompt"]).await;
    assert_eq!(
        (code, out.as_str()),
        (0, "review  Ask for a code review.\n")
    );
}

/// Named like the `prompt` built-in.
#[tool]
async fn prompt(text: String) -> String {
    text
}

#[tokio::test]
async fn only_an_application_with_resources_or_prompts_has_their_built_ins() {
    let bare = || {
        App::new("bare").registry(
            tool_runtime::Registry::builder()
                .without_inventory()
                .tool(prompt::descriptor()),
        )
    };
    // Without a subcommand, the help is printed (to the captured output).
    let (code, help) = bare().run_captured(["bare"]).await;
    assert_eq!(code, 0);
    assert!(help.lines().any(|l| l.starts_with("  prompt ")), "{help}");
    assert!(!help.contains("resource"), "{help}");
    // There, a tool may be called `prompt`.
    let (code, out) = bare()
        .run_captured(["bare", "--json", "prompt", "--text", "hi"])
        .await;
    assert_eq!(code, 0, "{out}");

    let (_, help) = run(&[]).await;
    assert!(
        help.lines().any(|l| l.starts_with("  resource "))
            && help.lines().any(|l| l.starts_with("  prompt ")),
        "{help}"
    );
    // Beside prompts, it clashes with the built-in.
    let reads = Arc::new(AtomicUsize::new(0));
    let (code, _) = App::new("items")
        .registry(super::items::registry(&reads).tool(prompt::descriptor()))
        .run_captured(["items"])
        .await;
    assert_eq!(code, 1);
}
