//! Flags generated from a downstream crate's parameter types, through `App::run_captured`:
//! positional and short arguments, enums, repeatable lists, JSON structs, bools and paths.

use serde_json::Value;
use tool_runtime::App;
use tool_runtime::app::cli::clap::ValueHint;

fn app() -> App {
    App::new("tickets")
        .registry(downstream_tools())
        .state(downstream::Inbox::default())
}

/// Without a `setup` hook, the state is all registered up front: a forgotten `.state(...)`
/// stops every command, listings included, naming the type and the tool.
#[tokio::test]
async fn forgotten_state_stops_listings_too_without_a_setup_hook() {
    for line in [
        &["tickets", "tools"][..],
        &["tickets", "--help"],
        &["tickets", "ticket-list"],
    ] {
        let (code, out) = App::new("tickets")
            .registry(downstream_tools())
            .run_captured(line)
            .await;
        assert_eq!((code, out.as_str()), (1, ""), "{line:?}");
    }
    // With one, listings do not need it (it may register the state), and calls still do.
    let with_setup = || {
        App::new("tickets")
            .registry(downstream_tools())
            .setup(async |_, registry| Ok(registry))
    };
    let (code, _) = with_setup().run_captured(["tickets", "tools"]).await;
    assert_eq!(code, 0);
    let (code, _) = with_setup().run_captured(["tickets", "ticket-list"]).await;
    assert_eq!(code, 1);
}

/// The downstream crate's tools, listed: this test binary holds other files' tools too.
fn downstream_tools() -> tool_runtime::registry::RegistryBuilder {
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
    let mut cmd = tool_runtime::app::cli::command("tickets", &registry, Some("ticket-open"));
    let sub = cmd.find_subcommand_mut("ticket-open").unwrap();
    let help = sub.render_long_help().to_string();
    assert!(
        help.contains("[possible values: low, high, very-high]"),
        "{help}"
    );
    // Required unless given through --params-json (so optional to clap): the usage names each
    // required flag and positional, and the help says they are required.
    assert!(
        help.contains("Usage: tickets ticket-open [OPTIONS] --priority <PRIORITY> <TITLE>"),
        "{help}"
    );
    assert!(
        help.contains("Short summary [required] [length: 3 to 80]"),
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
    let cmd = tool_runtime::app::cli::command("tickets", &registry, Some("ticket-list"));
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

/// A short global option's value is not the subcommand: `probe -d x.db blocking-probe` calls the
/// tool (on the one-shot runtime, its blocking work inline), in every form of the option.
#[test]
fn a_call_after_a_global_option_with_a_value_reaches_the_tool() {
    use tool_runtime::app::cli::clap::Arg;
    let with_db = || {
        probe().global_arg(
            Arg::new("db")
                .long("db")
                .short('d')
                .value_name("PATH")
                .default_value("default.db"),
        )
    };
    for globals in [
        &["-d", "x.db"][..],
        &["-dx.db"],
        &["--db", "x.db"],
        &["--db=x.db"],
    ] {
        let line = [&["probe"], globals, &["blocking-probe", "--inline"]].concat();
        assert_eq!(
            with_db().main_from(&line),
            std::process::ExitCode::SUCCESS,
            "{line:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn in_a_runtime_of_its_own_blocking_work_goes_to_the_pool() {
    // Without `--inline` the required `bool` is `false` (a flag left out), not missing.
    let (code, out) = probe()
        .run_captured(["probe", "--json", "blocking-probe"])
        .await;
    assert_eq!(code, 0, "{out}");
}

mod notes {
    use tool_runtime::prelude::*;

    /// Which notes.
    #[allow(dead_code)] // read through `Debug` in the tool's answer
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum Filter {
        /// The pinned ones
        Pinned,
        /// Every note
        All,
        /// Notes with this tag
        Tag(String),
    }

    /// A place.
    #[allow(dead_code)] // read through `Debug` in the tool's answer
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    pub struct Place {
        /// The city
        pub city: String,
        /// The floor, if any
        pub floor: Option<u8>,
    }

    /// Find notes.
    #[tool]
    pub async fn find_notes(
        /// Words of the title
        #[arg(positional, length(min = 2, max = 40))]
        words: String,
        /// Which ones
        filter: Option<Filter>,
        /// Where they were written
        place: Option<Place>,
        /// How many at most
        #[arg(range(min = 1, max = 50))]
        limit: u32,
        /// Only after this note
        #[arg(pattern = "^n_[0-9]+$")]
        after: Option<String>,
    ) -> String {
        format!("{words} {filter:?} {place:?} {limit} {after:?}")
    }
}

fn notes_tools() -> tool_runtime::registry::RegistryBuilder {
    tool_runtime::Registry::builder()
        .without_inventory()
        .tool(notes::find_notes::descriptor())
}

/// Unit variants of an enum with data are plain words (listed in help), anything else is JSON,
/// and help shows its shape; help marks required flags and states each constraint.
#[tokio::test]
async fn enum_words_json_shapes_and_constraints_on_the_command_line() {
    let run = |args: &'static [&'static str]| async move {
        let mut command_line = vec!["notes", "--json", "find-notes", "hi", "--limit", "3"];
        command_line.extend_from_slice(args);
        let (code, out) = App::new("notes")
            .registry(notes_tools())
            .run_captured(command_line)
            .await;
        let envelope: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        (
            code,
            envelope["result"].as_str().unwrap_or_default().to_owned(),
        )
    };
    assert_eq!(
        run(&["--filter", "pinned"]).await,
        (0, "hi Some(Pinned) None 3 None".to_owned())
    );
    assert_eq!(
        run(&[
            "--filter",
            r#"{"tag": "x"}"#,
            "--place",
            r#"{"city": "Oslo"}"#
        ])
        .await,
        (
            0,
            r#"hi Some(Tag("x")) Some(Place { city: "Oslo", floor: None }) 3 None"#.to_owned()
        )
    );

    let registry = notes_tools().build().unwrap();
    let cmd = || tool_runtime::app::cli::command("notes", &registry, Some("find-notes"));
    let refused = cmd()
        .try_get_matches_from([
            "notes",
            "find-notes",
            "hi",
            "--limit",
            "3",
            "--filter",
            "bogus",
        ])
        .unwrap_err();
    assert_eq!(refused.exit_code(), 2);
    assert!(
        refused
            .to_string()
            .contains("neither one of pinned, all nor JSON"),
        "{refused}"
    );

    let mut tree = cmd();
    let help = tree
        .find_subcommand_mut("find-notes")
        .unwrap()
        .render_long_help()
        .to_string();
    for expected in [
        "Usage: notes find-notes [OPTIONS] --limit <LIMIT> <WORDS>",
        "Words of the title [required] [length: 2 to 40]",
        "[possible values: pinned, all]",
        r#"Which ones [or JSON, such as {"tag":"..."}]"#,
        r#"Where they were written [JSON, such as {"city":"..."}]"#,
        "How many at most [required] [range: ≥ 1, ≤ 50]",
        "Only after this note [pattern: ^n_[0-9]+$]",
    ] {
        assert!(help.contains(expected), "{expected:?} not in:\n{help}");
    }

    // Over JSON, a value that is no variant is told every variant.
    let envelope = registry
        .call(
            "find_notes",
            serde_json::json!({"words": "hi", "limit": 3, "filter": "pinnd"}),
            tool_runtime::Caller::new(tool_runtime::Source::Internal),
        )
        .await;
    let message = &envelope.error().expect("refused").violations()[0].message;
    assert_eq!(
        message,
        r#""pinnd" is not one of "pinned", "all" or an object"#
    );
}

/// `tickets --only NAME`: a policy, added in `configure` from a global option, lets the CLI
/// reach that tool alone.
fn only() -> App {
    use tool_runtime::app::cli::clap::Arg;
    use tool_runtime::layers::policy::AllowTools;
    app()
        .global_arg(Arg::new("only").long("only").num_args(1))
        .configure(async |cx, builder| {
            Ok(match cx.matches().get_one::<String>("only") {
                Some(tool) => builder
                    .policy(AllowTools::new().allow(tool_runtime::Source::Cli, [tool.clone()])),
                None => builder,
            })
        })
}

#[tokio::test]
async fn a_policy_added_in_configure_hides_a_tool_from_every_listing_and_refuses_it() {
    let listed = |args: &'static [&'static str]| async move {
        let (code, out) = only().run_captured(args).await;
        assert_eq!(code, 0, "{args:?}: {out}");
        out
    };
    // Help (the long help a bare command prints).
    let help = listed(&["tickets", "--only", "ticket_list"]).await;
    assert!(help.contains("ticket-list"), "{help}");
    assert!(!help.contains("ticket-open"), "{help}");
    let help = listed(&["tickets"]).await;
    assert!(help.contains("ticket-open"), "without the policy: {help}");
    // `tools`, with the global option before or after the built-in.
    for args in [
        &["tickets", "--only", "ticket_list", "--json", "tools"][..],
        &["tickets", "--json", "tools", "--only=ticket_list"],
    ] {
        let (code, out) = only().run_captured(args).await;
        assert_eq!(code, 0, "{out}");
        let tools: Value = serde_json::from_str(&out).unwrap();
        let names = tool_test_support::tool_names(&tools);
        assert_eq!(names, ["ticket_list"], "{args:?}");
    }
    // `schema` of the hidden tool: unknown to this caller.
    let (code, _) = only()
        .run_captured(["tickets", "--only", "ticket_list", "schema", "ticket_open"])
        .await;
    assert_eq!(code, 2);
    // Called by name: unknown to this caller too, as a tool that does not exist.
    let (code, out) = only()
        .run_captured([
            "tickets",
            "--json",
            "--only",
            "ticket_list",
            "ticket-open",
            "printer on fire",
            "-p",
            "low",
        ])
        .await;
    assert_eq!(code, 2, "{out}");
    let envelope: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(envelope["error"]["type"], "unknown_tool", "{envelope}");
    // Nor is its help shown: its flags are not this caller's to see.
    let (code, out) = only()
        .run_captured(["tickets", "--only", "ticket_list", "ticket-open", "--help"])
        .await;
    assert_eq!(code, 2, "{out}");
    assert!(!out.contains("--priority"), "{out}");
}

/// The `call` built-in (offered with toolsets) and a tool's own subcommand read a name, the
/// arguments of `--params-json` and `--yes` alike.
#[tokio::test]
async fn call_and_a_subcommand_resolve_names_and_read_arguments_alike() {
    let with_call = || app().toolsets(async |_| Ok(Vec::new()));
    let title = r#"{"title": "printer on fire", "priority": "low"}"#;
    for line in [
        &[
            "tickets",
            "--json",
            "call",
            "ticket-open",
            "--params-json",
            title,
        ][..],
        &[
            "tickets",
            "--json",
            "call",
            "ticket_open",
            "--params-json",
            title,
        ],
        &["tickets", "--json", "ticket-open", "--params-json", title],
        &["tickets", "--json", "ticket_open", "--params-json", title],
    ] {
        let (code, out) = with_call().run_captured(line).await;
        assert_eq!(code, 0, "{line:?}: {out}");
        let envelope: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(envelope["result"]["title"], "printer on fire", "{line:?}");
    }
    for line in [
        &["tickets", "call", "ticket-open", "--params-json", "[1]"][..],
        &["tickets", "ticket-open", "--params-json", "[1]"],
        &["tickets", "call", "ticket-open", "--params-json", "{"],
        &["tickets", "ticket-open", "--params-json", "{"],
    ] {
        let (code, out) = with_call().run_captured(line).await;
        assert_eq!((code, out.as_str()), (2, ""), "{line:?}");
    }
    // A name no tool has: `unknown_tool` from the pipeline, exit 2.
    let (code, out) = with_call()
        .run_captured(["tickets", "--json", "call", "ticket-opn"])
        .await;
    assert_eq!(code, 2, "{out}");
    let envelope: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(envelope["error"]["type"], "unknown_tool", "{envelope}");
}

/// What the hooks of [`recording`] saw, in order.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// The configuration `configure` reads once, and the "database" `setup` opens once.
struct Loaded(u32);
struct Opened(&'static str);

/// An app whose hooks await before they answer, hand values on through the context and note
/// what they found in `seen`.
fn recording(seen: &Seen) -> App {
    let (configure, setup, toolsets) = (seen.clone(), seen.clone(), seen.clone());
    app()
        .configure(async move |cx, registry| {
            // Awaits work that another task finishes.
            let n = tokio::spawn(async { 7 }).await.unwrap();
            configure.lock().unwrap().push("configure".to_owned());
            cx.insert(Loaded(n));
            Ok(registry)
        })
        .setup(async move |cx, registry| {
            tokio::task::yield_now().await;
            let n = cx.get::<Loaded>().map(|l| l.0);
            setup.lock().unwrap().push(format!("setup saw {n:?}"));
            cx.insert(Opened("db"));
            Ok(registry)
        })
        .toolsets(async move |cx| {
            let found = (
                cx.get::<Loaded>().map(|l| l.0),
                cx.get::<Opened>().map(|o| o.0),
            );
            toolsets
                .lock()
                .unwrap()
                .push(format!("toolsets saw {found:?}"));
            Ok(Vec::new())
        })
}

#[tokio::test]
async fn configure_runs_once_a_command_and_hands_values_to_the_later_hooks() {
    let seen = Seen::default();
    let run = |line: &'static [&'static str]| {
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().clear();
            let (code, out) = recording(&seen).run_captured(line).await;
            assert_eq!(code, 0, "{line:?}: {out}");
            seen.lock().unwrap().clone()
        }
    };
    // A listing: `configure` alone, once.
    assert_eq!(run(&["tickets", "--json", "tools"]).await, ["configure"]);
    // A tool call: `configure` once (the command tree and the call share its registry), then
    // `setup`, which finds what `configure` left.
    assert_eq!(
        run(&["tickets", "ticket-list"]).await,
        ["configure", "setup saw Some(7)"]
    );
    // `call`, which mounts the toolsets: every hook once, each seeing what the earlier left.
    assert_eq!(
        run(&["tickets", "call", "ticket-list"]).await,
        [
            "configure",
            "setup saw Some(7)",
            "toolsets saw (Some(7), Some(\"db\"))"
        ]
    );
}

#[tokio::test]
async fn a_failing_async_hook_stops_the_command_with_exit_code_1() {
    let (code, out) = app()
        .configure(async |_, _| {
            tokio::task::yield_now().await;
            Err("no configuration".into())
        })
        .run_captured(["tickets", "tools"])
        .await;
    assert_eq!((code, out.as_str()), (1, ""));
    let (code, out) = app()
        .setup(async |_, _| Err("the database does not open".into()))
        .run_captured(["tickets", "ticket-list"])
        .await;
    assert_eq!((code, out.as_str()), (1, ""));
}
