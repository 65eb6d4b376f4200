//! The log an [`App`](crate::App) writes: a `tracing` subscriber on standard error, installed
//! by [`App::main`](crate::App::main) and [`App::run`](crate::App::run) unless the process
//! already has one or the app says [`without_logging`](crate::App::without_logging).
//!
//! `RUST_LOG` decides what is written: a default level and `target=level` directives, comma
//! separated (`warn,tool_runtime=debug`), as [`Targets`] reads them; unset or unreadable,
//! warnings and errors, and one line per HTTP request when serving ([`DEFAULT_FILTER`]).
//! `EnvFilter`'s span and field directives are not read: they would link two regular
//! expression engines into every command line. A subscriber of your own may use them. Standard output is never written: it
//! carries the CLI's answers and the MCP protocol.
//!
//! The MCP SDK logs whole protocol messages, tool arguments and results included, at `debug`
//! and `trace`: a [`Secret`](crate::Secret) argument would be written in clear. Its log is
//! therefore kept at `warn` unless `RUST_LOG` names it (`RUST_LOG=debug,rmcp=debug`), which
//! shows those messages as they are.
//!
//! To bring your own subscriber, install it before `main` (it is kept) or call
//! `without_logging`; [`env_filter`] gives the same filter for it.

use std::io::IsTerminal;

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// What is logged when `RUST_LOG` is unset.
pub const DEFAULT_FILTER: &str = "warn,tool_runtime::http=info";

/// The targets whose logs carry protocol messages verbatim, kept at `warn` unless named.
const VERBATIM: &[&str] = &["rmcp"];

/// The filter of `RUST_LOG`, or of [`DEFAULT_FILTER`] when it is unset or unreadable, with the
/// MCP SDK held at `warn` unless named.
#[must_use]
pub fn env_filter() -> Targets {
    filter_of(std::env::var("RUST_LOG").ok().as_deref())
}

fn filter_of(spec: Option<&str>) -> Targets {
    let spec = spec.filter(|s| !s.trim().is_empty());
    let mut filter = spec
        .and_then(|s| s.parse::<Targets>().ok())
        .unwrap_or_else(|| DEFAULT_FILTER.parse().expect("the default filter"));
    for target in VERBATIM {
        if !spec.is_some_and(|s| s.contains(target)) {
            filter = filter.with_target(*target, LevelFilter::WARN);
        }
    }
    filter
}

/// Installs the log on standard error (coloured on a terminal unless `NO_COLOR` is set), unless
/// the process already has a global subscriber. Returns whether it was installed.
pub fn init() -> bool {
    use tracing_subscriber::Layer as _;
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(ansi())
        .with_filter(env_filter());
    tracing_subscriber::registry().with(log).try_init().is_ok()
}

/// Colours on a terminal, unless `NO_COLOR` is set.
fn ansi() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// [`init`]'s log, its lines inside a recorded span prefixed with their trace and span ids,
/// beside `telemetry`'s layer, which has a filter of its own: `RUST_LOG` decides what is
/// written, not what is exported.
#[cfg(feature = "otel")]
pub(crate) fn init_with_telemetry(telemetry: &crate::otel::Telemetry) -> bool {
    use tracing_subscriber::Layer as _;
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(ansi())
        .event_format(crate::otel::WithTraceIds(tracing_subscriber::fmt::format()))
        .with_filter(env_filter());
    tracing_subscriber::registry()
        .with(log)
        .with(telemetry.layer())
        .try_init()
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::filter_of;

    fn directives(spec: Option<&str>) -> Vec<String> {
        let mut all: Vec<String> = filter_of(spec)
            .to_string()
            .split(',')
            .map(str::to_owned)
            .collect();
        all.sort();
        all
    }

    #[test]
    fn the_sdk_is_held_at_warn_unless_named() {
        assert_eq!(
            directives(None),
            ["rmcp=warn", "tool_runtime::http=info", "warn"]
        );
        assert_eq!(directives(Some("")), directives(None));
        assert_eq!(directives(Some("debug")), ["debug", "rmcp=warn"]);
        assert_eq!(
            directives(Some("trace,rmcp=debug")),
            ["rmcp=debug", "trace"]
        );
        // What `Targets` does not read is the default.
        assert_eq!(directives(Some("[span{a=1}]=debug")), directives(None));
    }
}
