//! The command-line front end: every registered tool becomes a clap subcommand.
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     tool_runtime::app!()        // name, version and about from your Cargo.toml
//!         .state(42_u64)          // application state for State<T> parameters
//!         .main()                 // parses std::env::args, runs, renders, returns the exit code
//! }
//! ```
//!
//! [`App::main`] starts a tokio runtime fitting the command; in a runtime of your own, use
//! [`App::run`] (`.run().await`).
//!
//! The CLI owns parsing and rendering only: every call goes through
//! [`Registry::call`](crate::Registry::call) with caller source `cli`, like any other front end.
//!
//! Exit codes: 0 success; 1 the tool failed (its own error, `internal`, `timeout`); 2 usage
//! error or invalid arguments; 3 forbidden or confirmation required.

mod args;
mod command;
mod render;

use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Arg, ArgMatches};
use serde_json::{Value, json};

pub use clap;
pub use command::{command, subcommand_name};

use crate::context::{Caller, ProgressSink, ProgressUpdate, Source};
use crate::envelope::Envelope;
use crate::error::{ToolError, kind};
use crate::registry::{Registry, RegistryBuilder};
use render::Palette;

/// An error of an [`App::setup`] step, such as a database that does not open.
pub type SetupError = Box<dyn std::error::Error + Send + Sync>;

type Setup = Box<dyn FnOnce(&ArgMatches, RegistryBuilder) -> Result<RegistryBuilder, SetupError>>;

/// A command-line application over a registry. See the [module docs](self).
pub struct App {
    name: String,
    version: Option<String>,
    about: Option<String>,
    builder: RegistryBuilder,
    globals: Vec<Arg>,
    setup: Option<Setup>,
}

/// An [`App`] named, versioned and described from the calling crate's Cargo metadata.
#[macro_export]
macro_rules! app {
    () => {
        $crate::cli::App::new(::core::env!("CARGO_PKG_NAME"))
            .version(::core::env!("CARGO_PKG_VERSION"))
            .about(::core::env!("CARGO_PKG_DESCRIPTION"))
    };
}

impl App {
    /// An application called `name`, serving every `#[tool]` linked into the binary.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: None,
            about: None,
            builder: Registry::builder(),
            globals: Vec::new(),
            setup: None,
        }
    }

    /// The version `--version` prints.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// The description `--help` prints.
    #[must_use]
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = Some(about.into()).filter(|a: &String| !a.is_empty());
        self
    }

    /// Serves the tools of `builder` instead of every `#[tool]` found through `inventory`.
    #[must_use]
    pub fn registry(mut self, builder: RegistryBuilder) -> Self {
        self.builder = builder;
        self
    }

    /// Registers application state for `State<T>` parameters.
    #[must_use]
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.builder = self.builder.state(value);
        self
    }

    /// Adds an application-wide option, such as `--db PATH`; read it in [`setup`](Self::setup).
    /// It is made global, so it may come before or after the subcommand.
    #[must_use]
    pub fn global_arg(mut self, arg: Arg) -> Self {
        self.globals.push(arg.global(true));
        self
    }

    /// Prepares the registry from the parsed options (open a database named by `--db`, ...).
    /// Runs only when a tool is invoked, never for `--help`, `tools` or `schema`. The matches
    /// know the global options, the built-ins and the invoked tool's subcommand; other tools'
    /// subcommands are left out of a call's command tree (clap panics, in debug builds, when
    /// asked about a subcommand it does not know).
    #[must_use]
    pub fn setup<F>(mut self, f: F) -> Self
    where
        F: FnOnce(&ArgMatches, RegistryBuilder) -> Result<RegistryBuilder, SetupError> + 'static,
    {
        self.setup = Some(Box::new(f));
        self
    }

    /// Parses `std::env::args`, runs on a tokio runtime of its own, renders, and returns the
    /// exit code: for a plain `fn main() -> ExitCode`, no `#[tokio::main]` needed.
    ///
    /// The runtime fits the command: `serve` and `mcp` get a multi-threaded one; a tool call
    /// and the other built-ins, which run once and exit, a current-thread one on which
    /// [`blocking`](crate::blocking) work runs inline (no worker or pool threads to start).
    /// `tokio::task::block_in_place` panics on such a runtime: tools use
    /// [`blocking`](crate::blocking) instead, which works on both. Use [`run`](Self::run) inside
    /// a runtime of your own instead.
    ///
    /// ```no_run
    /// fn main() -> std::process::ExitCode {
    ///     tool_runtime::app!().main()
    /// }
    /// ```
    #[must_use]
    pub fn main(self) -> ExitCode {
        self.main_from(std::env::args_os())
    }

    /// Like [`main`](Self::main), with the given arguments (the first is the program name).
    ///
    /// # Panics
    ///
    /// When called inside an async runtime (use [`run_from`](Self::run_from) there).
    #[must_use]
    pub fn main_from<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let server = is_server(&args, &self.globals);
        let mut builder = if server {
            tokio::runtime::Builder::new_multi_thread()
        } else {
            tokio::runtime::Builder::new_current_thread()
        };
        let runtime = match builder.enable_all().build() {
            Ok(runtime) => runtime,
            Err(e) => return ExitCode::from(fail(format_args!("cannot start tokio: {e}"), 1)),
        };
        let _inline = (!server).then(crate::blocking::InlineGuard::enter);
        // Boxed: `block_on` moves its future through several frames, each of which would
        // otherwise reserve (and touch) stack for all of it.
        runtime.block_on(Box::pin(self.run_from(args)))
    }

    /// Parses `std::env::args`, runs, renders, and returns the exit code.
    pub async fn run(self) -> ExitCode {
        self.run_from(std::env::args_os()).await
    }

    /// Like [`run`](Self::run), with the given arguments (the first is the program name).
    pub async fn run_from<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        // Not `stdout().lock()`: `mcp` writes to standard output from another thread (when it is
        // not a pipe), which a lock held here for the whole run would block forever.
        let mut out = std::io::stdout();
        let code = self.execute(&args, &mut out).await;
        let _ = out.flush();
        ExitCode::from(code)
    }

    /// Like [`run_from`](Self::run_from), with standard output captured: the exit code and what
    /// was printed. For testing a CLI without spawning it (standard error is not captured).
    pub async fn run_captured<I, T>(self, args: I) -> (u8, String)
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let mut out = Vec::new();
        let code = self.execute(&args, &mut out).await;
        (code, String::from_utf8_lossy(&out).into_owned())
    }

    async fn execute(self, args: &[OsString], out: &mut dyn Write) -> u8 {
        let listing = match self.builder.clone().skip_state_check().build() {
            Ok(r) => r,
            Err(e) => return fail(e, 1),
        };
        if let Some(clash) = listing
            .names()
            .into_iter()
            .find(|n| command::BUILTINS.iter().any(|b| command::names_tool(b, n)))
        {
            return fail(
                format_args!(
                    "tool `{clash}` has the name of a built-in subcommand; rename it with #[tool(name = \"...\")]"
                ),
                1,
            );
        }
        // `device_add` is accepted for `device-add`: rewritten here rather than declared as an
        // alias, so clap's "did you mean" suggestions list each tool once.
        let mut args = args.to_vec();
        let invoked = find_subcommand(&args, &self.globals);
        // The tool named on the command line, looked up once (a registry may hold thousands).
        let tool = invoked.as_ref().and_then(|(i, name)| {
            // Among every tool, not only the listed ones: a hidden tool called by name is
            // refused by the pipeline (`forbidden`, with the policy's reason), as on every
            // front end.
            let tool = listing
                .tools()
                .into_iter()
                .find(|t| t.name() == name || command::names_tool(name, t.name()))?;
            if tool.name() == name {
                args[*i] = OsString::from(subcommand_name(name));
            }
            Some(tool)
        });
        let mut cmd = match &tool {
            // A tool call: its subcommand and the built-ins' names; the whole tree is for
            // help and suggestions.
            Some(tool) => {
                self.finish_command(command::for_call(&self.name, tool, cfg!(debug_assertions)))
            }
            None => self.command(&listing, invoked.as_ref().map(|(_, name)| name.as_str())),
        };
        // Parsed in place: a copy of the command tree costs more than the parse.
        let matches = match cmd.try_get_matches_from_mut(&args) {
            Ok(m) => m,
            Err(e) => {
                let _ = e.print();
                return u8::try_from(e.exit_code()).unwrap_or(2);
            }
        };
        let json_out = matches.get_flag(command::JSON);
        let Some((sub, sub_matches)) = matches.subcommand() else {
            let _ = writeln!(out, "{}", cmd.render_long_help());
            return 0;
        };
        match sub {
            "tools" => list_tools(&listing, json_out, out),
            "schema" => print_schema(&listing, sub_matches, out),
            "completions" => {
                let shell = *sub_matches
                    .get_one::<clap_complete::Shell>("shell")
                    .expect("required");
                let mut full = self.command(&listing, None);
                clap_complete::generate(shell, &mut full, self.name.clone(), out);
                0
            }
            #[cfg(feature = "http")]
            "serve" => {
                drop(listing);
                // Boxed, like `mcp` below: a server's future is tens of kilobytes, which would
                // otherwise make every run's future (a one-shot tool call's too) that large,
                // copied on start and touching a page of fresh stack per 4 KiB.
                Box::pin(self.serve(&matches, sub_matches)).await
            }
            #[cfg(feature = "mcp")]
            "mcp" => {
                drop(listing);
                Box::pin(self.mcp(&matches)).await
            }
            tool_sub => {
                let Some(tool_name) = tool.map(|t| t.name().to_owned()).or_else(|| {
                    listing
                        .names()
                        .into_iter()
                        .find(|n| command::names_tool(tool_sub, n))
                }) else {
                    return 2;
                };
                drop(listing);
                self.invoke(&tool_name, &matches, sub_matches, json_out, out)
                    .await
            }
        }
    }

    /// Runs the setup and builds the full registry (state checked).
    fn build_registry(self, matches: &ArgMatches) -> Result<Registry, String> {
        let builder = match self.setup {
            Some(setup) => setup(matches, self.builder).map_err(|e| e.to_string())?,
            None => self.builder,
        };
        builder.build().map_err(|e| e.to_string())
    }

    /// For a server (`serve`, `mcp`): the full registry with every input schema compiled up
    /// front, and the name and version to announce; or the exit code of the failure.
    #[cfg(any(feature = "http", feature = "mcp"))]
    fn serving_registry(self, matches: &ArgMatches) -> Result<(Arc<Registry>, String, String), u8> {
        let (name, version) = (self.name.clone(), self.version.clone());
        let registry = Arc::new(self.build_registry(matches).map_err(|e| fail(e, 1))?);
        if let Err(broken) = registry.warm_up() {
            return Err(fail(
                format_args!("input schemas that do not compile: {broken:?}"),
                1,
            ));
        }
        Ok((registry, name, version.unwrap_or_else(|| "0.0.0".into())))
    }

    #[cfg(feature = "http")]
    async fn serve(self, matches: &ArgMatches, m: &ArgMatches) -> u8 {
        use crate::http::{self, Auth, HttpOptions};
        let addr = *m
            .get_one::<std::net::SocketAddr>("addr")
            .expect("has a default");
        let auth = match m.get_one::<std::path::PathBuf>("auth-file") {
            Some(path) => match Auth::from_file(path) {
                Ok(a) => Some(Arc::new(a)),
                Err(e) => return fail(e, 2),
            },
            None => None,
        };
        let insecure = m.get_flag("insecure");
        if let Err(refusal) = crate::safety::check_listen_address(addr, auth.is_some(), insecure) {
            return fail(refusal, 2);
        }
        let auth_present = auth.is_some();
        let (registry, name, version) = match self.serving_registry(matches) {
            Ok(served) => served,
            Err(code) => return code,
        };
        let options = HttpOptions {
            body_limit: *m.get_one::<usize>("body-limit").expect("has a default"),
            auth,
            api_title: name,
            api_version: version,
            // Behind tokens, or deliberately exposed: any `Host` may reach `/mcp`.
            mcp_allowed_hosts: (auth_present || !addr.ip().is_loopback()).then(Vec::new),
            allow_remote_without_auth: insecure,
            ..HttpOptions::default()
        };
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => return fail(format_args!("cannot listen on {addr}: {e}"), 1),
        };
        let local = listener
            .local_addr()
            .map_or_else(|_| addr.to_string(), |a| a.to_string());
        // The one line on stdout: scripts and tests read the bound address from it.
        println!("listening on http://{local}");
        let _ = std::io::stdout().flush();
        let grace = std::time::Duration::from_secs(
            *m.get_one::<u64>("grace-period").expect("has a default"),
        );
        let shutdown = options.shutdown.clone();
        let signal = async move {
            http::shutdown_signal().await;
            shutdown.cancel();
        };
        match http::serve(listener, http::router(registry, options), signal, grace).await {
            Ok(()) => 0,
            Err(e) => fail(e, 1),
        }
    }

    /// `mcp`: the MCP server on stdio until the client closes stdin.
    #[cfg(feature = "mcp")]
    async fn mcp(self, matches: &ArgMatches) -> u8 {
        let (registry, name, version) = match self.serving_registry(matches) {
            Ok(served) => served,
            Err(code) => return code,
        };
        let server = crate::mcp::McpServer::named(registry, name, version);
        match server.serve_stdio().await {
            Ok(()) => 0,
            Err(e) => fail(format_args!("MCP server stopped: {e}"), 1),
        }
    }

    fn command(&self, registry: &Registry, invoked: Option<&str>) -> clap::Command {
        self.finish_command(command(&self.name, registry, invoked))
    }

    /// The application's version, description and global options on `cmd`.
    fn finish_command(&self, mut cmd: clap::Command) -> clap::Command {
        if let Some(v) = &self.version {
            cmd = cmd.version(v.clone());
        }
        if let Some(a) = &self.about {
            cmd = cmd.about(a.clone());
        }
        for g in &self.globals {
            cmd = cmd.arg(g.clone());
        }
        cmd
    }

    async fn invoke(
        self,
        tool_name: &str,
        matches: &ArgMatches,
        sub_matches: &ArgMatches,
        json_out: bool,
        out: &mut dyn Write,
    ) -> u8 {
        let registry = match self.build_registry(matches) {
            Ok(r) => r,
            Err(e) => return fail(e, 1),
        };
        let Some(tool) = registry.get(tool_name) else {
            return fail(format_args!("no tool `{tool_name}`"), 2);
        };
        let call_args = match args::collect(&tool, sub_matches, &mut std::io::stdin().lock()) {
            Ok(a) => a,
            Err(e) => return fail(&e.0, 2),
        };

        let dry_run = tool.meta().dry_run && sub_matches.get_flag(command::DRY_RUN);
        let yes =
            tool.meta().annotations.needs_confirmation() && sub_matches.get_flag(command::YES);
        let mut caller = Caller::new(Source::Cli).dry_run(dry_run).confirm(yes);
        let bar = std::io::stderr().is_terminal().then(progress_bar);
        if let Some(bar) = &bar {
            caller = caller.progress(Arc::new(BarSink(bar.clone())));
        }

        let mut envelope = registry
            .call(tool_name, call_args.clone(), caller.clone())
            .await;
        // The pipeline asks; the terminal answers. Without a terminal the question stands as
        // the answer (`confirmation_required`, exit code 3).
        if let Some((question, token)) = confirmation_asked(&envelope)
            && std::io::stdin().is_terminal()
        {
            if let Some(preview) = envelope.error().and_then(|e| e.details()?.get("preview")) {
                let p = Palette::new(color_for(&std::io::stderr()));
                eprint!("{}", render::render(preview, p));
            }
            if ask(&question) {
                envelope = registry
                    .call(tool_name, call_args, caller.confirmation(token))
                    .await;
            }
        }
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        report(&envelope, &tool, json_out, out)
    }
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("name", &self.name)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// Prints the envelope (as JSON, or rendered for people) and returns the exit code.
fn report(
    envelope: &Envelope,
    tool: &crate::registry::RegisteredTool,
    json_out: bool,
    out: &mut dyn Write,
) -> u8 {
    if json_out {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(envelope).unwrap_or_default()
        );
    }
    match &envelope.outcome {
        Ok(result) => {
            if !json_out {
                let p = Palette::new(color_for(&std::io::stdout()));
                let _ = write!(out, "{}", render::render(result, p));
            }
            0
        }
        Err(e) => {
            let p = Palette::new(color_for(&std::io::stderr()));
            eprintln!(
                "{}error:{} {}",
                p.error.render(),
                p.error.render_reset(),
                e.message()
            );
            for v in e.violations() {
                let at = flag_for(&v.path, tool);
                eprintln!(
                    "  {}{at}:{} {}",
                    p.dim.render(),
                    p.dim.render_reset(),
                    v.message
                );
            }
            if e.kind() == kind::CONFIRMATION_REQUIRED {
                eprintln!(
                    "  hint: run it again with --yes to confirm, or from a terminal to be asked"
                );
            }
            exit_code(e)
        }
    }
}

/// `/ttl_seconds` → `--ttl-seconds` when it names a flag of the tool; the pointer otherwise.
fn flag_for(path: &str, tool: &crate::registry::RegisteredTool) -> String {
    let top = path.strip_prefix('/').unwrap_or(path);
    let (head, rest) = top.split_once('/').map_or((top, ""), |(h, r)| (h, r));
    let known = tool.input_schema()["properties"]
        .as_object()
        .is_some_and(|p| p.contains_key(head));
    let positional = tool
        .meta()
        .params
        .iter()
        .any(|h| h.name == head && h.positional);
    match (known, positional) {
        (true, false) if rest.is_empty() => format!("--{}", head.replace('_', "-")),
        (true, false) => format!("--{} /{rest}", head.replace('_', "-")),
        (true, true) => format!("<{}>", head.to_uppercase()),
        _ if path.is_empty() => "arguments".to_owned(),
        _ => path.to_owned(),
    }
}

/// Prints `error: {message}` on stderr (red on a terminal) and returns `code`.
fn fail(message: impl std::fmt::Display, code: u8) -> u8 {
    let p = Palette::new(color_for(&std::io::stderr()));
    eprintln!(
        "{}error:{} {message}",
        p.error.render(),
        p.error.render_reset()
    );
    code
}

/// The documented exit code of an error type.
#[must_use]
pub fn exit_code(e: &ToolError) -> u8 {
    match e.kind() {
        kind::INVALID_ARGUMENTS | kind::INVALID_REQUEST | kind::UNKNOWN_TOOL => 2,
        kind::FORBIDDEN | kind::CONFIRMATION_REQUIRED | kind::UNAUTHENTICATED => 3,
        _ => 1,
    }
}

fn list_tools(registry: &Registry, json_out: bool, out: &mut dyn Write) -> u8 {
    // What a command-line caller may call (it carries no roles: with `RequireRoles`,
    // role-gated tools are not shown).
    let visible = registry.visible(&Caller::new(Source::Cli));
    if json_out {
        let tools: Vec<Value> = visible
            .iter()
            .map(|t| {
                let m = t.meta();
                json!({"name": m.name, "title": m.title, "summary": m.summary,
                       "description": m.description, "annotations": m.annotations, "tags": m.tags})
            })
            .collect();
        let _ = writeln!(out, "{}", json!({ "tools": tools }));
        return 0;
    }
    let width = visible
        .iter()
        .map(|t| subcommand_name(t.name()).len())
        .max()
        .unwrap_or(0);
    for t in &visible {
        let _ = writeln!(
            out,
            "{:<width$}  {}",
            subcommand_name(t.name()),
            t.meta().summary
        );
    }
    0
}

fn print_schema(registry: &Registry, m: &ArgMatches, out: &mut dyn Write) -> u8 {
    let name = m.get_one::<String>("tool").expect("required");
    let caller = Caller::new(Source::Cli);
    let found = registry.visible_tool(name, &caller).or_else(|| {
        registry
            .visible(&caller)
            .into_iter()
            .find(|t| subcommand_name(t.name()) == *name)
    });
    let Some(tool) = found else {
        let ctx = registry.context(caller);
        return fail(registry.unknown_tool(name, &ctx).message(), 2);
    };
    let schema = if m.get_flag("output-schema") {
        tool.output_schema()
    } else {
        tool.input_schema()
    };
    let _ = writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(schema).unwrap_or_default()
    );
    0
}

/// Whether `args` start a server (`serve`, `mcp`), which gets a multi-threaded runtime.
fn is_server(args: &[OsString], globals: &[Arg]) -> bool {
    find_subcommand(args, globals).is_some_and(|(_, sub)| sub == "serve" || sub == "mcp")
}

/// The subcommand named on the command line, found before parsing so that only its flags are
/// built. Skips global options and the values of those that take one.
fn find_subcommand(args: &[OsString], globals: &[Arg]) -> Option<(usize, String)> {
    let mut it = args.iter().enumerate().skip(1);
    while let Some((index, arg)) = it.next() {
        let s = arg.to_str()?;
        if s == "--" {
            return None;
        }
        if let Some(long) = s.strip_prefix("--") {
            let takes_value = !long.contains('=')
                && globals
                    .iter()
                    .any(|g| g.get_long() == Some(long) && g.get_action().takes_values());
            if takes_value {
                it.next();
            }
            continue;
        }
        if s.starts_with('-') {
            continue;
        }
        return Some((index, s.to_owned()));
    }
    None
}

/// The question and token of a `confirmation_required` answer.
fn confirmation_asked(envelope: &Envelope) -> Option<(String, String)> {
    let e = envelope
        .error()
        .filter(|e| e.kind() == kind::CONFIRMATION_REQUIRED)?;
    let details = e.details()?;
    Some((
        details.get("question")?.as_str()?.to_owned(),
        details.get("token")?.as_str()?.to_owned(),
    ))
}

/// Asks on the terminal; only `y` or `yes` confirms.
fn ask(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

fn color_for(stream: &impl IsTerminal) -> bool {
    stream.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn progress_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar
}

/// Shows a tool's progress reports as a spinner, or a bar once a total is known.
struct BarSink(indicatif::ProgressBar);

impl ProgressSink for BarSink {
    fn report(&self, update: ProgressUpdate) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        // Reason: progress counts are small non-negative numbers; a bar needs integers.
        let (pos, total) = (
            update.progress.max(0.0) as u64,
            update.total.map(|t| t.max(0.0) as u64),
        );
        if let Some(total) = total
            && self.0.length() != Some(total)
        {
            self.0.set_length(total);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg}")
            {
                self.0.set_style(style.progress_chars("=> "));
            }
        }
        self.0.set_position(pos);
        if let Some(m) = update.message {
            self.0.set_message(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subcommand_is_found_past_global_options() {
        let globals = [Arg::new("db").long("db").num_args(1)];
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            find_subcommand(
                &args(&["app", "--db", "x.db", "--json", "device-add"]),
                &globals
            ),
            Some((4, "device-add".into()))
        );
        assert_eq!(
            find_subcommand(&args(&["app", "--db=x.db", "tools"]), &globals),
            Some((2, "tools".into()))
        );
        assert_eq!(find_subcommand(&args(&["app", "--help"]), &globals), None);
    }

    #[test]
    fn servers_get_the_multi_threaded_runtime() {
        let globals = [Arg::new("db").long("db").num_args(1)];
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(is_server(
            &args(&["app", "--db", "serve", "serve"]),
            &globals
        ));
        assert!(is_server(&args(&["app", "mcp"]), &globals));
        assert!(!is_server(
            &args(&["app", "--db", "serve", "device-list"]),
            &globals
        ));
        assert!(!is_server(&args(&["app", "tools"]), &globals));
        assert!(!is_server(&args(&["app"]), &globals));
    }

    #[test]
    fn progress_reports_drive_the_bar() {
        let bar = indicatif::ProgressBar::hidden();
        let sink = BarSink(bar.clone());
        sink.report(ProgressUpdate {
            progress: 2.0,
            total: Some(5.0),
            message: Some("copying".into()),
        });
        assert_eq!((bar.position(), bar.length()), (2, Some(5)));
        assert_eq!(bar.message(), "copying");
    }

    #[test]
    fn exit_codes_follow_the_documented_table() {
        for (k, code) in [
            ("invalid_arguments", 2),
            ("unknown_tool", 2),
            ("forbidden", 3),
            ("confirmation_required", 3),
            ("internal", 1),
            ("timeout", 1),
            ("not_found", 1),
        ] {
            assert_eq!(exit_code(&ToolError::new(k, "x")), code, "{k}");
        }
    }
}
