//! Flags generated from a downstream crate's parameter types, through `App::run_captured`:
//! positional and short arguments, enums, repeatable lists, JSON structs, bools and paths.

use serde_json::Value;
use tool_runtime::App;
use tool_runtime::cli::clap::ValueHint;

fn app() -> App {
    App::new("tickets")
        .registry(downstream_tools())
        .state(downstream::Inbox::default())
}

/// The downstream crate's tools, listed: this test binary holds other files' tools too.
fn downstream_tools() -> tool_runtime::RegistryBuilder {
    tool_runtime::Registry::builder()
        .without_inventory()
        .tool(downstream::ticket_open::descriptor())
        .tool(downstream::ticket_list::descriptor())
}

async fn json(args: &[&str]) -> (u8, Value) {
    let mut command_line = vec!["tickets", "--json"];
    command_line.extend_from_slice(args);
    let (code, out) = app().run_captured(command_line).await;
    (code, serde_json::from_str(&out).unwrap_or(Value::Null))
}

#[tokio::test]
async fn every_kind_of_parameter_becomes_a_typed_flag() {
    let (code, env) = json(&[
        "ticket-open",
        "printer on fire",
        "-p",
        "very-high",
        "--labels",
        "hw",
        "--labels",
        "urgent",
        "--metadata",
        r#"{"floor": "3"}"#,
        "--address",
        r#"{"street": "Main 1", "zip-code": "12345"}"#,
        "--page",
        "--score",
        "0.25",
        "--attachment",
        "/tmp/photo.jpg",
    ])
    .await;
    assert_eq!(code, 0, "{env}");
    let t = &env["result"];
    assert_eq!(t["title"], "printer on fire");
    assert_eq!(t["priority"], "very-high");
    assert_eq!(t["labels"], serde_json::json!(["hw", "urgent"]));
    assert_eq!(t["metadata"]["floor"], "3");
    assert_eq!(t["address"]["zip-code"], "12345");
}

#[tokio::test]
async fn type_errors_are_usage_errors_and_constraints_go_to_the_validator() {
    // Not one of the enum's values: clap refuses it (exit 2).
    let (code, _) = app()
        .run_captured(["tickets", "ticket-open", "abc", "-p", "urgent"])
        .await;
    assert_eq!(code, 2);
    // Not JSON for a struct parameter.
    let (code, _) = app()
        .run_captured([
            "tickets",
            "ticket-open",
            "abcd",
            "-p",
            "low",
            "--address",
            "{",
        ])
        .await;
    assert_eq!(code, 2);
    // Too short a title and too many labels: the validator lists both.
    let (code, env) = json(&[
        "ticket-open",
        "ab",
        "-p",
        "low",
        "--labels",
        "1",
        "--labels",
        "2",
        "--labels",
        "3",
        "--labels",
        "4",
        "--labels",
        "5",
        "--labels",
        "6",
    ])
    .await;
    assert_eq!(code, 2);
    let paths: Vec<&str> = env["error"]["details"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["/title", "/labels"]);
}

#[tokio::test]
async fn enums_list_their_values_and_paths_complete_as_files() {
    let registry = downstream_tools()
        .state(downstream::Inbox::default())
        .build()
        .unwrap();
    let mut cmd = tool_runtime::cli::command("tickets", &registry, Some("ticket-open"));
    let sub = cmd.find_subcommand_mut("ticket-open").unwrap();
    let help = sub.render_long_help().to_string();
    assert!(
        help.contains("[possible values: low, high, very-high]"),
        "{help}"
    );
    // Required unless given through --params-json, so clap shows them as optional.
    assert!(
        help.contains("Usage: ticket-open [OPTIONS] [TITLE]"),
        "{help}"
    );
    assert!(help.contains("-p, --priority <PRIORITY>"), "{help}");
    let attachment = sub
        .get_arguments()
        .find(|a| a.get_id() == "attachment")
        .unwrap();
    assert_eq!(attachment.get_value_hint(), ValueHint::FilePath);
    let page = sub.get_arguments().find(|a| a.get_id() == "page").unwrap();
    assert!(!page.get_action().takes_values(), "a bool is a flag");
}

#[tokio::test]
async fn only_the_invoked_tool_gets_its_flags() {
    let registry = downstream_tools()
        .state(downstream::Inbox::default())
        .build()
        .unwrap();
    let cmd = tool_runtime::cli::command("tickets", &registry, Some("ticket-list"));
    let args = |name: &str| cmd.find_subcommand(name).unwrap().get_arguments().count();
    assert_eq!(args("ticket-open"), 0);
    assert!(args("ticket-list") > 0);
}

/// Whether `tool_runtime::blocking` ran its work on the calling thread; fails if `inline` says
/// otherwise, so the exit code tells.
#[tool_runtime::tool(annotations(read_only))]
async fn blocking_probe(
    /// Where the work is expected to run: inline (`true`) or on the blocking pool.
    inline: bool,
) -> Result<bool, tool_runtime::ToolError> {
    let caller = std::thread::current().id();
    let ran_inline = tool_runtime::blocking(move || std::thread::current().id() == caller).await;
    if ran_inline == inline {
        Ok(ran_inline)
    } else {
        Err(tool_runtime::ToolError::internal(format_args!(
            "blocking work ran inline: {ran_inline}"
        )))
    }
}

fn probe() -> App {
    App::new("probe").registry(
        tool_runtime::Registry::builder()
            .without_inventory()
            .tool(blocking_probe::descriptor()),
    )
}

#[test]
fn main_runs_a_single_call_on_one_thread_with_blocking_work_inline() {
    // `--inline` says the work must run inline; without it, on the pool.
    let code = |args: &[&str]| probe().main_from([&["probe", "blocking-probe"], args].concat());
    assert_eq!(code(&["--inline"]), std::process::ExitCode::SUCCESS);
    assert_eq!(code(&[]), std::process::ExitCode::from(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn in_a_runtime_of_its_own_blocking_work_goes_to_the_pool() {
    // Without `--inline` the required `bool` is `false` (a flag left out), not missing.
    let (code, out) = probe()
        .run_captured(["probe", "--json", "blocking-probe"])
        .await;
    assert_eq!(code, 0, "{out}");
}
