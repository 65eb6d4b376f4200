//! The server built-ins: `serve` (HTTP, with MCP at `/mcp`) and `mcp` (stdio).

use std::sync::Arc;

#[cfg(feature = "http")]
use clap::ArgMatches;
use clap::Command;

#[cfg(feature = "http")]
use super::SetupError;
#[cfg(feature = "http")]
use super::context::{Background, BackgroundSetup};
use super::{App, AppContext};
use crate::app::cli::fail;
use crate::registry::Registry;
#[cfg(feature = "http")]
use {futures_util::future::BoxFuture, tokio_util::sync::CancellationToken};

#[cfg(feature = "http")]
impl App {
    /// Runs a task beside the server for as long as `serve` runs: a scheduler, a queue
    /// consumer. `start`, an async closure (or an `async fn`), runs once, after every other
    /// hook, and gets the run's [`AppContext`] (what [`setup`](Self::setup) opened is there)
    /// and a [`Background`] (the served registry, the agent, a shutdown token); it returns the
    /// task, or `None` to run nothing; an error stops `serve` with exit code 1 and its
    /// message. At shutdown the token is cancelled and the task is given the grace period to
    /// return. Each call adds a task.
    #[must_use]
    pub fn background<F>(mut self, start: F) -> Self
    where
        F: AsyncFnOnce(
                &mut AppContext,
                Background,
            ) -> Result<Option<BoxFuture<'static, ()>>, SetupError>
            + 'static,
    {
        self.background
            .push(Box::new(move |cx, given| Box::pin(start(cx, given))));
        self
    }
}

#[cfg(feature = "http")]
impl App {
    /// Shapes the [`ServerOptions`](crate::http::ServerOptions) `serve` serves with, after its
    /// flags set them: a shared store's MCP sessions and `/readyz` check
    /// ([`ServerOptions::redis`](crate::http::ServerOptions::redis) with the `redis` feature),
    /// more checks. `shape`, an async closure (or an `async fn`), runs once, after
    /// [`setup`](Self::setup) and the toolsets, and gets the run's [`AppContext`] (what `setup`
    /// opened is there) and the options; an error stops `serve` with exit code 1 and its
    /// message. Only `serve` runs it.
    ///
    /// ```no_run
    /// # fn main() -> std::process::ExitCode {
    /// tool_runtime::app!()
    ///     .server_options(async |_cx, options| {
    ///         Ok(options.ready_check("disk", || async { Ok(()) }))
    ///     })
    ///     .main()
    /// # }
    /// ```
    #[must_use]
    pub fn server_options<F>(mut self, shape: F) -> Self
    where
        F: AsyncFnOnce(
                &mut AppContext,
                crate::http::ServerOptions,
            ) -> Result<crate::http::ServerOptions, SetupError>
            + 'static,
    {
        self.server_options = Some(Box::new(move |cx, options| Box::pin(shape(cx, options))));
        self
    }
}

impl App {
    /// For a server (`serve`, `mcp`): the full registry with every input schema compiled up
    /// front, and the name and version to announce; or the exit code of the failure.
    pub(super) async fn serving_registry(
        mut self,
        cx: &mut AppContext,
    ) -> Result<(Arc<Registry>, String, String), u8> {
        let (name, version) = (self.name.clone(), self.version.clone());
        let registry = self.mounted_registry(cx).await.map_err(|e| fail(e, 1))?;
        if let Err(broken) = registry.warm_up() {
            return Err(fail(
                format_args!("input schemas that do not compile: {broken:?}"),
                1,
            ));
        }
        Ok((registry, name, version.unwrap_or_else(|| "0.0.0".into())))
    }

    #[cfg(feature = "http")]
    pub(super) async fn serve(mut self, cx: &mut AppContext, m: &ArgMatches) -> u8 {
        use crate::http;
        let addr = *m
            .get_one::<std::net::SocketAddr>("addr")
            .expect("has a default");
        let mut options = match server_options(m) {
            Ok(options) => options,
            Err(e) => return fail(e, 2),
        };
        if let Err(refusal) = options.access.check_listen_address(addr) {
            return fail(refusal, 2);
        }
        options.access.listening_on(addr);
        #[cfg(feature = "agent")]
        let make_agent = self.agent.take();
        let shape_options = self.server_options.take();
        let background = std::mem::take(&mut self.background);
        let (registry, name, version) = match self.serving_registry(cx).await {
            Ok(served) => served,
            Err(code) => return code,
        };
        if let Some(shape) = shape_options {
            options = match shape(cx, options).await {
                Ok(options) => options,
                Err(e) => return fail(e, 1),
            };
        }
        #[cfg(feature = "agent")]
        let agent = serving_agent(make_agent, cx, &registry).await;
        let stopping = CancellationToken::new();
        let given = Background {
            registry: registry.clone(),
            #[cfg(feature = "agent")]
            agent: agent.clone(),
            shutdown: stopping.clone(),
        };
        let mut tasks = match start_background(background, cx, &given).await {
            Ok(tasks) => tasks,
            Err(code) => return code,
        };
        // The calls left detached in a task store this server shares, run here.
        tasks.push(tokio::spawn(
            registry.clone().run_queued_tasks(stopping.clone()),
        ));
        let options = options.api_title(name).api_version(version);
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => return fail(format_args!("cannot listen on {addr}: {e}"), 1),
        };
        let local = listener
            .local_addr()
            .map_or_else(|_| addr.to_string(), |a| a.to_string());
        // The one line on stdout: scripts and tests read the bound address from it.
        println!("listening on http://{local}");
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let stop_background = stopping.clone();
        let signal = async move {
            http::shutdown_signal().await;
            stop_background.cancel();
        };
        let grace = options.connections.grace;
        // `serve` cancels the options' shutdown token too: `/mcp` ends its sessions.
        #[cfg(feature = "agent")]
        let routes = match agent {
            Some(agent) => super::router_with_agent(registry, options.clone(), agent),
            None => super::router(registry, options.clone()),
        };
        #[cfg(not(feature = "agent"))]
        let routes = super::router(registry, options.clone());
        let served = http::serve(listener, routes, signal, &options).await;
        stopping.cancel();
        let _ = tokio::time::timeout(grace, futures_util::future::join_all(tasks)).await;
        // The last requests' spans and the metrics, exported within the grace period again.
        #[cfg(feature = "otel")]
        if let Some(telemetry) = crate::otel::installed() {
            telemetry.shutdown(grace).await;
        }
        match served {
            Ok(()) => 0,
            Err(e) => fail(e, 1),
        }
    }

    /// `mcp`: the MCP server on stdio until the client closes stdin.
    #[cfg(feature = "mcp")]
    pub(super) async fn mcp(self, cx: &mut AppContext) -> u8 {
        let (registry, name, version) = match self.serving_registry(cx).await {
            Ok(served) => served,
            Err(code) => return code,
        };
        let server = crate::mcp::McpServer::named(registry, name, version);
        match server.serve_stdio().await {
            Ok(()) => 0,
            Err(e) => fail(format_args!("MCP server stopped: {e}"), 1),
        }
    }
}

/// The agent of `POST /agent`, made by the application's hook; `None` (said in the log) when
/// it has none or it cannot be made.
#[cfg(all(feature = "http", feature = "agent"))]
async fn serving_agent(
    make: Option<super::context::AgentSetup>,
    cx: &mut AppContext,
    registry: &Arc<Registry>,
) -> Option<crate::agent::Agent> {
    let agent = make?(cx, super::AgentFlags::default(), Arc::clone(registry))
        .await
        .and_then(|b| b.build().map_err(Into::into));
    agent
        .map_err(|e| tracing::warn!(target: "tool_runtime::http", "POST /agent is off: {e}"))
        .ok()
}

/// The server options `serve`'s flags set, the console on; or why the auth file cannot be read.
#[cfg(feature = "http")]
fn server_options(m: &ArgMatches) -> Result<crate::http::ServerOptions, String> {
    let flag = |name: &str| *m.get_one::<u32>(name).expect("has a default") as usize;
    let options = crate::http::ServerOptions::default()
        .body_limit(*m.get_one::<usize>("body-limit").expect("has a default"))
        .allow_remote_without_auth(m.get_flag("insecure"))
        .operator_role(m.get_one::<String>("operator-role").expect("has a default"))
        .max_connections(flag("max-connections"))
        .grace(std::time::Duration::from_secs(
            *m.get_one::<u64>("grace-period").expect("has a default"),
        ))
        .drain(std::time::Duration::from_secs(
            *m.get_one::<u64>("drain-period").expect("has a default"),
        ))
        .console(true);
    let options = match m.get_one::<String>("replica-id") {
        Some(id) => options.replica_id(id),
        None => options,
    };
    #[cfg(feature = "mcp")]
    let options = options.max_sessions(flag("max-mcp-sessions"));
    match m.get_one::<std::path::PathBuf>("auth-file") {
        Some(path) => Ok(options.auth(crate::http::Auth::from_file(path)?)),
        None => Ok(options),
    }
}

/// Starts the background tasks, or returns the exit code of the first that fails to start.
#[cfg(feature = "http")]
async fn start_background(
    background: Vec<BackgroundSetup>,
    cx: &mut AppContext,
    given: &Background,
) -> Result<Vec<tokio::task::JoinHandle<()>>, u8> {
    let mut tasks = Vec::new();
    for start in background {
        match start(cx, given.clone()).await {
            Ok(Some(task)) => tasks.push(tokio::spawn(task)),
            Ok(None) => {}
            Err(e) => return Err(fail(e, 1)),
        }
    }
    Ok(tasks)
}

/// `serve`: the HTTP front end.
#[cfg(feature = "http")]
pub(super) fn serve_command() -> Command {
    let cmd = Command::new("serve")
        .about(if cfg!(feature = "mcp") {
            "Serve every tool over HTTP (GET /tools, POST /tools/{name}, POST /invoke, GET /openapi.json) and MCP at /mcp"
        } else {
            "Serve every tool over HTTP (GET /tools, POST /tools/{name}, POST /invoke, GET /openapi.json)"
        })
        .display_order(crate::app::cli::command::BUILTIN_ORDER)
        .arg(
            clap::Arg::new("addr")
                .long("addr")
                .value_name("ADDR")
                .default_value("127.0.0.1:8080")
                .value_parser(clap::value_parser!(std::net::SocketAddr))
                .help("Address to listen on; port 0 picks a free one"),
        )
        .arg(
            clap::Arg::new("auth-file")
                .long("auth-file")
                .value_name("PATH")
                .value_hint(clap::ValueHint::FilePath)
                .value_parser(clap::value_parser!(std::path::PathBuf))
                .help("TOML file of bearer tokens ([[tokens]] token or token_sha256, principal, roles); requests then need `Authorization: Bearer <token>`"),
        )
        .arg(
            clap::Arg::new("operator-role")
                .long("operator-role")
                .value_name("ROLE")
                .default_value(crate::http::OPERATOR_ROLE)
                .help("With --auth-file, the role that may read GET /audit and GET /toolsets"),
        )
        .arg(
            clap::Arg::new("insecure")
                .long("insecure")
                .action(clap::ArgAction::SetTrue)
                .help("Allow a non-loopback address without --auth-file"),
        )
        .arg(
            clap::Arg::new("body-limit")
                .long("body-limit")
                .value_name("BYTES")
                .default_value("1048576")
                .value_parser(clap::value_parser!(usize))
                .help("Largest accepted request body"),
        )
        .arg(
            clap::Arg::new("grace-period")
                .long("grace-period")
                .value_name("SECONDS")
                .default_value("10")
                .value_parser(clap::value_parser!(u64))
                .help("On SIGINT or SIGTERM, how long calls in flight may take to finish"),
        )
        .arg(
            clap::Arg::new("drain-period")
                .long("drain-period")
                .value_name("SECONDS")
                .default_value("0")
                .value_parser(clap::value_parser!(u64))
                .help("On SIGINT or SIGTERM, how long to keep serving first, GET /readyz answering 503 and connections closed after each answer, so a load balancer stops sending traffic (a few seconds behind one)"),
        )
        .arg(
            clap::Arg::new("replica-id")
                .long("replica-id")
                .value_name("ID")
                .env("TOOL_REPLICA_ID")
                .value_parser(|id: &str| {
                    if crate::front::server::is_replica_id(id) {
                        Ok(id.to_owned())
                    } else {
                        Err("ASCII letters, digits, `-` and `_` only")
                    }
                })
                .help("This replica's tag behind a load balancer: the prefix of the MCP session ids it makes (ID.…), for session affinity, and its X-Replica header"),
        )
        .arg(
            clap::Arg::new("max-connections")
                .long("max-connections")
                .value_name("N")
                .default_value("512")
                .value_parser(clap::value_parser!(u32).range(1..))
                .help("Connections served at once; more wait to be accepted"),
        );
    #[cfg(feature = "mcp")]
    let cmd = cmd.arg(
        clap::Arg::new("max-mcp-sessions")
            .long("max-mcp-sessions")
            .value_name("N")
            .default_value("256")
            .value_parser(clap::value_parser!(u32).range(1..))
            .help("MCP sessions open at /mcp at once; an initialize beyond it gets 503"),
    );
    cmd
}

/// `mcp`: the MCP server on stdio.
#[cfg(feature = "mcp")]
pub(super) fn mcp_command() -> Command {
    Command::new("mcp")
        .about("Serve every tool over MCP (Model Context Protocol) on stdin/stdout")
        .display_order(crate::app::cli::command::BUILTIN_ORDER)
}
