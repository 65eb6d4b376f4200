//! [`AppContext`]: the one value an [`App`](super::App)'s hooks share during a run, and the
//! hooks themselves: their types, the error they end with, what `serve` and the agent hand them.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use clap::ArgMatches;
#[cfg(feature = "http")]
use futures_util::future::BoxFuture;
use futures_util::future::LocalBoxFuture;
#[cfg(feature = "http")]
use tokio_util::sync::CancellationToken;

#[cfg(feature = "agent")]
use crate::agent::{AgentBuilder, Api};
#[cfg(any(feature = "agent", feature = "http"))]
use crate::registry::Registry;
use crate::registry::RegistryBuilder;
use crate::toolset::Toolset;

/// What every hook of an [`App`](super::App) is handed, the same value from the first hook to
/// the last of one run: the parsed command line, and values one hook leaves for the later ones
/// (one of each type), so that an application reads its configuration once and opens its
/// database once.
///
/// The hooks run in this order, each at most once per run: [`configure`](super::App::configure)
/// (every command, listings included), [`setup`](super::App::setup) (a tool call, a server, an
/// agent), [`toolsets`](super::App::toolsets) and [`agent`](super::App::agent) (a server, an
/// agent), [`background`](super::App::background) (`serve`).
///
/// ```no_run
/// use tool_runtime::app::cli::clap::Arg;
///
/// #[derive(Clone)]
/// struct Config { database_url: String }
///
/// #[derive(Clone)]
/// struct Db;
///
/// # async fn read_config(_: Option<&String>) -> std::io::Result<Config> { todo!() }
/// # async fn connect(_: &str) -> std::io::Result<Db> { todo!() }
/// fn main() -> std::process::ExitCode {
///     tool_runtime::app!()
///         .global_arg(Arg::new("config").long("config"))
///         .configure(async |cx, registry| {
///             // Read once, for every command; the later hooks find it in the context.
///             let config = read_config(cx.matches().get_one::<String>("config")).await?;
///             cx.insert(config);
///             Ok(registry)
///         })
///         .setup(async |cx, registry| {
///             let config = cx.get::<Config>().expect("read by configure");
///             // Connected once, for a call or a server, never for a listing.
///             let db = connect(&config.database_url).await?;
///             cx.insert(db.clone());
///             Ok(registry.state(db))
///         })
///         .main()
/// }
/// ```
pub struct AppContext {
    matches: Arc<ArgMatches>,
    values: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl AppContext {
    pub(super) fn new(matches: ArgMatches) -> Self {
        Self {
            matches: Arc::new(matches),
            values: HashMap::new(),
        }
    }

    /// The command line as parsed before a hook that starts something: what the hooks after
    /// `configure` see.
    pub(super) fn parsed(&mut self, matches: Arc<ArgMatches>) {
        self.matches = matches;
    }

    /// The parsed command line. In [`configure`](super::App::configure), which shapes the
    /// registry before the command tree exists, and in [`setup`](super::App::setup) before a
    /// tool call, the application's global options only (the built-ins known by name, none of
    /// them invoked); for `serve`, `mcp`, `agent`, `chat`, `toolsets` and `call`, from `setup`
    /// on, also `--json` and the invoked built-in's matches.
    #[must_use]
    pub fn matches(&self) -> &ArgMatches {
        &self.matches
    }

    /// Leaves `value` for the later hooks; returns the value of that type left before, if any.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        let old = self.values.insert(TypeId::of::<T>(), Box::new(value))?;
        old.downcast().ok().map(|b| *b)
    }

    /// The value of type `T` a hook left, if any.
    #[must_use]
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.values.get(&TypeId::of::<T>())?.downcast_ref()
    }

    /// The value of type `T` a hook left, to change in place.
    pub fn get_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut T> {
        self.values.get_mut(&TypeId::of::<T>())?.downcast_mut()
    }

    /// Takes the value of type `T` a hook left, if any.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> Option<T> {
        let value = self.values.remove(&TypeId::of::<T>())?;
        value.downcast().ok().map(|b| *b)
    }
}

impl fmt::Debug for AppContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppContext")
            .field("matches", &self.matches)
            .field("values", &self.values.len())
            .finish()
    }
}

// The hooks an App holds, and what they are handed besides the context.

/// An error of an [`App::setup`](super::App::setup) step, such as a database that does not open.
pub type SetupError = Box<dyn std::error::Error + Send + Sync>;

/// `configure` and `setup`: the registry builder, shaped.
pub(super) type Shape = Box<
    dyn for<'a> FnOnce(
        &'a mut AppContext,
        RegistryBuilder,
    ) -> LocalBoxFuture<'a, Result<RegistryBuilder, SetupError>>,
>;

/// `toolsets`: what to mount for servers and the agent.
pub(super) type ToolsetsSetup = Box<
    dyn for<'a> FnOnce(
        &'a mut AppContext,
    ) -> LocalBoxFuture<'a, Result<Vec<Arc<dyn Toolset>>, SetupError>>,
>;

/// What the command line asks of the agent: `--provider` and `--model`, which override the
/// application's configuration. `serve` passes none.
#[cfg(feature = "agent")]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentFlags {
    /// `--provider`.
    pub provider: Option<Api>,
    /// `--model`.
    pub model: Option<String>,
}

/// Makes the application's agent: see [`App::agent`](super::App::agent).
#[cfg(feature = "agent")]
pub(super) type AgentSetup = Box<
    dyn for<'a> FnOnce(
        &'a mut AppContext,
        AgentFlags,
        Arc<Registry>,
    ) -> LocalBoxFuture<'a, Result<AgentBuilder, SetupError>>,
>;

/// Starts a background task of `serve`: see [`App::background`](super::App::background).
#[cfg(feature = "http")]
pub(super) type BackgroundSetup = Box<
    dyn for<'a> FnOnce(
        &'a mut AppContext,
        Background,
    )
        -> LocalBoxFuture<'a, Result<Option<BoxFuture<'static, ()>>, SetupError>>,
>;

/// Shapes the options `serve` serves with: see [`App::server_options`](super::App::server_options).
#[cfg(feature = "http")]
pub(super) type ServerOptionsSetup = Box<
    dyn for<'a> FnOnce(
        &'a mut AppContext,
        crate::http::ServerOptions,
    ) -> LocalBoxFuture<'a, Result<crate::http::ServerOptions, SetupError>>,
>;

/// What a background task of `serve` is given: see [`App::background`](super::App::background).
#[cfg(feature = "http")]
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Background {
    /// The registry being served, toolsets mounted.
    pub registry: Arc<Registry>,
    /// The application's agent, when it has one and it could be made.
    #[cfg(feature = "agent")]
    pub agent: Option<crate::agent::Agent>,
    /// Cancelled when the server begins to shut down; the task should then return.
    pub shutdown: CancellationToken,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_of_each_type() {
        let mut cx = AppContext::new(ArgMatches::default());
        assert_eq!(cx.insert(1_u32), None);
        assert_eq!(cx.insert("config"), None);
        assert_eq!(cx.insert(2_u32), Some(1));
        *cx.get_mut::<u32>().unwrap() += 1;
        assert_eq!(cx.get::<u32>(), Some(&3));
        assert_eq!(cx.remove::<&str>(), Some("config"));
        assert_eq!(cx.get::<&str>(), None);
        assert_eq!(cx.remove::<u64>(), None);
    }
}
