//! How an [`App`] runs a command line: routed before it is parsed (a listing, a started
//! built-in, or a named tool, resource or prompt), the hooks run in order, the one registry
//! built, and the command dispatched to the built-in or the tool.

use std::ffi::OsString;
use std::io::Write;
use std::sync::Arc;

use clap::ArgMatches;

use super::scan::{find_subcommand, scan};
use super::{App, AppContext};
use crate::app::cli::command::{self, subcommand_name};
use crate::app::cli::fail;
use crate::app::cli::{list_tools, logging, print_schema};
use crate::registry::Registry;

#[cfg(feature = "agent")]
use super::agent;

impl App {
    pub(super) async fn execute(mut self, args: &[OsString], out: &mut dyn Write) -> u8 {
        // `configure`, once, on the global options: what it shapes is what every command
        // builds its one registry from. (`setup` sees them too, before a tool's own words are
        // parsed.)
        let mut cx = AppContext::new(if self.configure.is_some() || self.setup.is_some() {
            self.global_matches(args)
        } else {
            ArgMatches::default()
        });
        if let Err(code) = self.configured(&mut cx).await {
            return code;
        }
        let invoked = find_subcommand(args, &self.globals);
        match self.route(args, invoked.as_ref().map(|(_, sub)| sub.as_str())) {
            Route::Listing => self.listing(args, invoked.as_ref(), out),
            Route::Started => Box::pin(self.start(cx, args, out)).await,
            Route::Named => {
                let (index, name) = invoked.expect("a named command has a subcommand");
                Box::pin(self.named(cx, args, index, &name, out)).await
            }
        }
    }

    /// Which way a command line goes, read before it is parsed.
    fn route(&self, args: &[OsString], sub: Option<&str>) -> Route {
        let Some(sub) = sub else {
            return Route::Listing;
        };
        let words = args.iter().skip(1).take_while(|a| *a != "--");
        if words.into_iter().any(|a| a == "-h" || a == "--help") {
            return Route::Listing;
        }
        if self.started_commands().iter().any(|c| c.get_name() == sub) {
            Route::Started
        } else if command::BUILTINS.contains(&sub) || sub == "help" {
            Route::Listing
        } else {
            Route::Named
        }
    }

    /// A listing (`tools`, `schema`, `completions`, help, or no subcommand): the registry as
    /// `configure` shapes it ([`listing_registry`](Self::listing_registry)); `setup` never
    /// runs.
    fn listing(
        &self,
        args: &[OsString],
        invoked: Option<&(usize, String)>,
        out: &mut dyn Write,
    ) -> u8 {
        let listing = match self.listing_registry() {
            Ok(listing) => listing,
            Err(code) => return code,
        };
        let mut args = args.to_vec();
        // `device_add` is accepted for `device-add`: rewritten here rather than declared as an
        // alias, so clap's "did you mean" suggestions list each tool once.
        if let Some((i, name)) = invoked
            && let Some(tool) = command::find_tool(&listing, name, Some(&crate::app::cli::caller()))
            && tool.name() == name
        {
            args[*i] = OsString::from(subcommand_name(name));
        }
        // Without a subcommand (help, `--version`) clap shows no tool's flags, only the tools'
        // names and summaries: no tool's flags are built (`""` names no tool).
        let mut cmd = self.command(
            &listing,
            Some(invoked.map_or("", |(_, name)| name.as_str())),
        );
        // Parsed in place: a copy of the command tree costs more than the parse.
        let matches = match parse(&mut cmd, &args) {
            Ok(m) => m,
            Err(code) => return code,
        };
        let json_out = matches.get_flag(command::JSON);
        match matches.subcommand() {
            None => {
                let _ = writeln!(out, "{}", cmd.render_long_help());
                0
            }
            Some(("tools", m)) => list_tools(&listing, m, json_out, out),
            Some(("schema", m)) => print_schema(&listing, m, out),
            Some(("completions", m)) => {
                let shell = *m
                    .get_one::<clap_complete::Shell>("shell")
                    .expect("required");
                let mut full = self.command(&listing, None);
                clap_complete::generate(shell, &mut full, self.name.clone(), out);
                0
            }
            // Anything else asked for help, which clap answered before this.
            Some((other, _)) => fail(format_args!("`{other}` was not expected here"), 2),
        }
    }

    /// A server, an agent or a toolset built-in: its options parsed (they depend on no
    /// registry, and `setup` may read them), then the command, which builds the registry.
    async fn start(self, mut cx: AppContext, args: &[OsString], out: &mut dyn Write) -> u8 {
        let mut cmd = self.finish_command(command::for_builtin(
            &self.name,
            self.started_commands(),
            cfg!(debug_assertions),
        ));
        let matches = match parse(&mut cmd, args) {
            Ok(m) => Arc::new(m),
            Err(code) => return code,
        };
        cx.parsed(Arc::clone(&matches));
        let json_out = matches.get_flag(command::JSON);
        let (sub, m) = matches.subcommand().expect("routed by its subcommand");
        match sub {
            #[cfg(feature = "http")]
            "serve" => self.serve(&mut cx, m).await,
            #[cfg(feature = "mcp")]
            "mcp" => self.mcp(&mut cx).await,
            #[cfg(feature = "agent")]
            "agent" | "chat" => self.run_agent(&mut cx, sub, m).await,
            "toolsets" => self.show_toolsets(&mut cx, json_out, out).await,
            "call" => self.call_by_name(&mut cx, m, json_out, out).await,
            "login" => self.log_in(&mut cx, m, out).await,
            "tasks" => self.follow_task(&mut cx, m, json_out, out).await,
            _ => unreachable!("`started_commands` names every started built-in"),
        }
    }

    /// A tool named on the command line, or `resource`/`prompt`: `setup` on the global
    /// options, the one registry built, the name looked up once among what the command line may
    /// see, and only then the tool's own words parsed, against its flags. A tool the command
    /// line may not see is answered by the pipeline as one that does not exist
    /// (`unknown_tool`, its reason to the log and the audit), its words never parsed: its flags
    /// and help are not the caller's to see.
    async fn named(
        mut self,
        mut cx: AppContext,
        args: &[OsString],
        index: usize,
        typed: &str,
        out: &mut dyn Write,
    ) -> u8 {
        let registry = match self.build_registry(&mut cx).await {
            Ok(r) => r,
            Err(e) => return fail(e, 1),
        };
        let debug = cfg!(debug_assertions);
        // Only `resource` and `prompt` can be item built-ins: a tool call lists no items.
        let item = [
            crate::app::cli::items::RESOURCE,
            crate::app::cli::items::PROMPT,
        ]
        .into_iter()
        .find(|i| *i == typed)
        .filter(|i| crate::app::cli::items::builtins(&registry).contains(i));
        if let Some(item) = item {
            let sub = if item == crate::app::cli::items::RESOURCE {
                crate::app::cli::items::resource_command()
            } else {
                crate::app::cli::items::prompt_command(&registry)
            };
            let mut cmd = self.finish_command(command::for_builtin(&self.name, vec![sub], debug));
            let matches = match parse(&mut cmd, args) {
                Ok(m) => m,
                Err(code) => return code,
            };
            let json_out = matches.get_flag(command::JSON);
            let (_, m) = matches.subcommand().expect("routed by its subcommand");
            return if item == crate::app::cli::items::RESOURCE {
                crate::app::cli::items::resource(&registry, m, json_out, out).await
            } else {
                crate::app::cli::items::prompt(&registry, m, json_out, out).await
            };
        }
        let Some(tool) = command::find_tool(&registry, typed, Some(&crate::app::cli::caller()))
        else {
            // Hidden or unknown: the pipeline says which, to the log and the audit only.
            let json_out = args.iter().any(|a| a == "--json");
            let name = command::find_tool(&registry, typed, None)
                .map_or_else(|| typed.to_owned(), |t| t.name().to_owned());
            let arguments = serde_json::Value::Object(serde_json::Map::new());
            let flags = ArgMatches::default();
            return crate::app::cli::call::call(&registry, &name, arguments, &flags, json_out, out)
                .await;
        };
        let mut args = args.to_vec();
        if tool.name() == typed {
            args[index] = OsString::from(subcommand_name(typed));
        }
        let mut cmd = self.finish_command(command::for_call(&self.name, &tool, debug));
        let matches = match parse(&mut cmd, &args) {
            Ok(m) => m,
            Err(code) => return code,
        };
        let json_out = matches.get_flag(command::JSON);
        let (_, m) = matches
            .subcommand()
            .expect("a call's tree has one subcommand");
        crate::app::cli::call::invoke(&registry, &tool, m, json_out, out).await
    }

    /// Installs the log on standard error and, when it is on, telemetry beside it.
    #[cfg_attr(not(feature = "otel"), allow(clippy::unused_self))]
    fn start_logging(&self, cx: &AppContext) {
        #[cfg(feature = "otel")]
        {
            let options = cx
                .get::<crate::otel::TelemetryOptions>()
                .unwrap_or(&self.telemetry);
            match crate::otel::Telemetry::install(options, &self.name) {
                Ok(Some(telemetry)) => {
                    logging::init_with_telemetry(telemetry);
                    return;
                }
                Ok(None) => {}
                Err(e) => {
                    logging::init();
                    tracing::warn!(target: "tool_runtime::otel", "telemetry is off: {e}");
                    return;
                }
            }
        }
        let _ = cx;
        logging::init();
    }

    /// Runs `configure` on the global options and installs the log (and telemetry); or the
    /// exit code of a failure, said.
    async fn configured(&mut self, cx: &mut AppContext) -> Result<(), u8> {
        if let Some(configure) = self.configure.take() {
            let builder = std::mem::take(&mut self.builder);
            self.builder = configure(cx, builder).await.map_err(|e| fail(e, 1))?;
        }
        if self.logging {
            self.start_logging(cx);
        }
        Ok(())
    }

    /// The registry as `configure` shaped it, for a listing. An application with a `setup`
    /// hook registers state there, which runs only for calls and servers: its listings leave
    /// the state unchecked. Without one, the state is all there is already, so a forgotten
    /// `.state(...)` stops every command, `--help` included.
    fn listing_registry(&self) -> Result<Registry, u8> {
        let builder = self.builder.clone();
        let builder = if self.setup.is_some() {
            builder.skip_state_check()
        } else {
            builder
        };
        let listing = builder.build().map_err(|e| fail(e, 1))?;
        match crate::app::cli::items::builtin_clash(&listing) {
            Some(clash) => Err(fail(clash, 1)),
            None => Ok(listing),
        }
    }

    /// The registry of a server or an agent: [`build_registry`](Self::build_registry), then
    /// the toolsets mounted; or the message naming what failed.
    pub(super) async fn mounted_registry(
        &mut self,
        cx: &mut AppContext,
    ) -> Result<Arc<Registry>, String> {
        let toolsets = self.toolsets.take();
        let registry = Arc::new(self.build_registry(cx).await?);
        let toolsets = match toolsets {
            Some(make) => make(cx).await.map_err(|e| e.to_string())?,
            None => Vec::new(),
        };
        for toolset in toolsets {
            let name = toolset.name().to_owned();
            registry
                .mount(toolset)
                .await
                .map_err(|e| format!("cannot mount toolset `{name}`: {e}"))?;
        }
        Ok(registry)
    }

    /// Runs `setup` on the registry `configure` shaped, and builds it (state checked): the one
    /// registry of a call, a server or an agent.
    /// `tasks get|wait|cancel ID`: the registry built (`setup` gives it its task store), then
    /// the task followed there.
    async fn follow_task(
        mut self,
        cx: &mut AppContext,
        m: &ArgMatches,
        json: bool,
        out: &mut dyn Write,
    ) -> u8 {
        match self.build_registry(cx).await {
            Ok(registry) => crate::app::cli::tasks::run(&registry, m, json, out).await,
            Err(e) => fail(e, 1),
        }
    }

    pub(super) async fn build_registry(&mut self, cx: &mut AppContext) -> Result<Registry, String> {
        let builder = std::mem::take(&mut self.builder);
        let builder = match self.setup.take() {
            Some(setup) => setup(cx, builder).await.map_err(|e| e.to_string())?,
            None => builder,
        };
        let registry = builder.build().map_err(|e| e.to_string())?;
        match crate::app::cli::items::builtin_clash(&registry) {
            Some(clash) => Err(clash),
            None => Ok(registry),
        }
    }

    /// The global options of `args` (and their environment variables and defaults), parsed
    /// apart from the rest: what `configure` reads before the command tree, which depends on
    /// it, exists.
    fn global_matches(&self, args: &[OsString]) -> ArgMatches {
        let picked = args.iter().take(1).cloned().chain(
            scan(args, &self.globals)
                .globals
                .into_iter()
                .flat_map(|(i, n)| args[i..i + n].iter().cloned()),
        );
        // The built-ins by name, as in a call's tree, so that asking whether one was invoked
        // answers no rather than panicking.
        clap::Command::new(self.name.clone())
            .args(self.globals.iter().map(|g| g.clone().global(false)))
            .subcommands(command::BUILTINS.iter().map(|b| clap::Command::new(*b)))
            .disable_help_flag(true)
            .disable_version_flag(true)
            .ignore_errors(true)
            .try_get_matches_from(picked)
            .unwrap_or_default()
    }

    /// The whole tree: the tools' command with the built-ins that reach the other front ends.
    /// (A tool call's tree names them only bare, in debug builds: see `for_call`.)
    fn command(&self, registry: &Registry, invoked: Option<&str>) -> clap::Command {
        let mut cmd = crate::app::cli::command(&self.name, registry, invoked);
        for item in crate::app::cli::items::builtins(registry) {
            cmd = cmd.subcommand(if item == crate::app::cli::items::RESOURCE {
                crate::app::cli::items::resource_command()
            } else {
                crate::app::cli::items::prompt_command(registry)
            });
        }
        let cmd = cmd.subcommands(self.started_commands());
        self.finish_command(cmd)
    }

    /// The built-ins that start something (a server, an agent, the toolsets), which this
    /// application offers: their options depend on no registry.
    fn started_commands(&self) -> Vec<clap::Command> {
        let mut commands = Vec::new();
        #[cfg(feature = "http")]
        commands.push(super::serve::serve_command());
        #[cfg(feature = "mcp")]
        commands.push(super::serve::mcp_command());
        #[cfg(feature = "agent")]
        if self.agent.is_some() {
            commands.extend(agent::commands());
        }
        if self.toolsets.is_some() {
            commands.push(
                clap::Command::new("toolsets")
                    .about("Mount the configured toolsets; show each one's tools, state and last error")
                    .display_order(command::BUILTIN_ORDER),
            );
            commands.push(super::toolsets::call_command());
            commands.push(super::toolsets::login_command());
        }
        commands.push(crate::app::cli::tasks::command());
        commands
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
}

/// Which way a command line goes ([`App::route`]).
enum Route {
    /// Help, `tools`, `schema`, `completions`, or no subcommand: nothing is set up.
    Listing,
    /// `serve`, `mcp`, `agent`, `chat`, `toolsets`, `call`.
    Started,
    /// A tool, `resource` or `prompt`, found in the registry `setup` builds.
    Named,
}

/// `args` parsed by `cmd` in place (a copy of the command tree costs more than the parse); or,
/// when they do not parse or ask for help or the version, what clap says printed and its exit
/// code.
fn parse(cmd: &mut clap::Command, args: &[OsString]) -> Result<ArgMatches, u8> {
    cmd.try_get_matches_from_mut(args).map_err(|mut e| {
        command::fewer_suggestions(&mut e);
        let _ = e.print();
        u8::try_from(e.exit_code()).unwrap_or(2)
    })
}
