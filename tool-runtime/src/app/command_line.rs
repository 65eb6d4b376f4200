//! [`App`]: the command line of an application, with a subcommand per tool and the built-ins
//! that reach the other front ends.

use std::ffi::OsString;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Arg;

use super::context::{AppContext, SetupError, Shape, ToolsetsSetup};
use super::scan::is_server;
use crate::app::cli::fail;
use crate::registry::{Registry, RegistryBuilder};
use crate::toolset::Toolset;

/// A command-line application over a registry: a subcommand per tool, `tools`, `schema`,
/// `completions`, and with their features `serve`, `mcp`, `agent` and `chat`.
///
#[doc = include_str!("../../docs/cli.md")]
pub struct App {
    pub(super) name: String,
    pub(super) version: Option<String>,
    pub(super) about: Option<String>,
    pub(super) builder: RegistryBuilder,
    pub(super) globals: Vec<Arg>,
    pub(super) configure: Option<Shape>,
    pub(super) setup: Option<Shape>,
    pub(super) toolsets: Option<ToolsetsSetup>,
    pub(super) logging: bool,
    #[cfg(feature = "otel")]
    pub(super) telemetry: crate::otel::TelemetryOptions,
    #[cfg(feature = "agent")]
    pub(super) agent: Option<super::context::AgentSetup>,
    #[cfg(feature = "http")]
    pub(super) background: Vec<super::context::BackgroundSetup>,
    #[cfg(feature = "http")]
    pub(super) server_options: Option<super::context::ServerOptionsSetup>,
}

/// An [`App`] named, versioned and described from the calling crate's Cargo metadata.
#[macro_export]
macro_rules! app {
    () => {
        $crate::App::new(::core::env!("CARGO_PKG_NAME"))
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
            configure: None,
            setup: None,
            toolsets: None,
            logging: true,
            #[cfg(feature = "otel")]
            telemetry: crate::otel::TelemetryOptions::new(),
            #[cfg(feature = "agent")]
            agent: None,
            #[cfg(feature = "http")]
            background: Vec::new(),
            #[cfg(feature = "http")]
            server_options: None,
        }
    }

    /// Installs no log subscriber: the app's log is yours to set up. Without this, `main` and
    /// `run` install [`logging::init`](crate::app::cli::logging::init)'s (on standard error, `RUST_LOG` deciding) unless the
    /// process already has one.
    #[must_use]
    pub fn without_logging(mut self) -> Self {
        self.logging = false;
        self
    }

    /// How traces and metrics are exported ([`otel`](crate::otel)); by default, as the standard
    /// `OTEL_*` variables say. A [`configure`](Self::configure) step that reads them from a file
    /// may instead leave a [`TelemetryOptions`](crate::otel::TelemetryOptions) in the context
    /// (`cx.insert(options)`), which wins. Telemetry is installed with the log, after
    /// `configure`, and flushed when the command ends.
    #[cfg(feature = "otel")]
    #[must_use]
    pub fn telemetry(mut self, options: crate::otel::TelemetryOptions) -> Self {
        self.telemetry = options;
        self
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

    /// Shapes the registry from the global options for every command, listings included:
    /// policies, roles and limits read from a configuration file named by `--config`, say.
    /// What it adds decides what `--help`, `tools` and `schema` list, exactly as it decides what
    /// a call may reach. It must not open anything a listing should not touch (a database, a
    /// log): that belongs in [`setup`](Self::setup). Runs once per command, first.
    ///
    /// An async closure (or an `async fn`) given the run's [`AppContext`], whose
    /// [`matches`](AppContext::matches) hold the global options only (the command tree, which
    /// depends on what `configure` adds, does not exist yet): what it loads (the
    /// configuration) it can [`insert`](AppContext::insert) there for the later hooks.
    ///
    /// ```no_run
    /// # use tool_runtime::app::cli::clap::Arg;
    /// # use tool_runtime::layers::policy::AllowTools;
    /// # fn main() -> std::process::ExitCode {
    /// tool_runtime::app!()
    ///     .global_arg(Arg::new("only").long("only"))
    ///     .configure(async |cx, registry| {
    ///         Ok(match cx.matches().get_one::<String>("only") {
    ///             Some(tool) => registry.policy(
    ///                 AllowTools::new().allow(tool_runtime::Source::Cli, [tool.clone()]),
    ///             ),
    ///             None => registry,
    ///         })
    ///     })
    ///     .main()
    /// # }
    /// ```
    #[must_use]
    pub fn configure<F>(mut self, f: F) -> Self
    where
        F: AsyncFnOnce(&mut AppContext, RegistryBuilder) -> Result<RegistryBuilder, SetupError>
            + 'static,
    {
        self.configure = Some(Box::new(move |cx, builder| Box::pin(f(cx, builder))));
        self
    }

    /// Prepares the registry from the parsed options (open a database named by `--db`, ...).
    /// Runs when a tool is invoked and before `serve`, `mcp`, `agent`, `chat` and `toolsets`,
    /// after [`configure`](Self::configure), never for `--help`, `tools`, `schema` or
    /// `completions`: policies that should shape those listings go in `configure`. What it
    /// returns is built into the command's one registry, in which a tool named on the command
    /// line is then looked up, once, among the tools the command line may see.
    ///
    /// An async closure (or an `async fn`) given the run's [`AppContext`]: what `configure`
    /// left there, and the command line as far as it is parsed: the global options, and for
    /// `serve`, `mcp`, `agent`, `chat`, `toolsets` and `call` that built-in's own options
    /// (`cx.matches().subcommand_matches("serve")`). A tool's own flags, and those of
    /// `resource` and `prompt`, are parsed after it, against the registry it shapes: a
    /// usage error there is reported after `setup` has run. What it opens (a database) it can
    /// [`insert`](AppContext::insert) for the later hooks: [`toolsets`](Self::toolsets),
    /// [`agent`](Self::agent), [`background`](Self::background).
    #[must_use]
    pub fn setup<F>(mut self, f: F) -> Self
    where
        F: AsyncFnOnce(&mut AppContext, RegistryBuilder) -> Result<RegistryBuilder, SetupError>
            + 'static,
    {
        self.setup = Some(Box::new(move |cx, builder| Box::pin(f(cx, builder))));
        self
    }

    /// Toolsets to mount into the registry of a server or an agent (`serve`, `mcp`, `agent`,
    /// `chat`, and the `toolsets` and `call` built-ins this adds): other MCP servers, stores
    /// from the configuration. Their tools are then served, offered and called like the
    /// application's own (see [`toolset`](crate::toolset)). A toolset that cannot be mounted
    /// stops the command with exit code 1 and a message naming it. One-shot tool calls and
    /// listings mount nothing.
    ///
    /// An async closure (or an `async fn`) given the run's [`AppContext`], after
    /// [`setup`](Self::setup): the configuration and the database the earlier hooks left there
    /// are at hand.
    #[must_use]
    pub fn toolsets<F>(mut self, make: F) -> Self
    where
        F: AsyncFnOnce(&mut AppContext) -> Result<Vec<Arc<dyn Toolset>>, SetupError> + 'static,
    {
        self.toolsets = Some(Box::new(move |cx| Box::pin(make(cx))));
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
        let _inline = (!server).then(crate::app::cli::InlineGuard::enter);
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
        // What a one-shot command recorded is exported now, or not at all: a collector that
        // does not answer holds the command up for this long at most.
        #[cfg(feature = "otel")]
        if let Some(telemetry) = crate::otel::installed() {
            telemetry.shutdown(std::time::Duration::from_secs(2)).await;
        }
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
        let code = self.without_logging().execute(&args, &mut out).await;
        (code, String::from_utf8_lossy(&out).into_owned())
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
