//! `[otel]`: traces and metrics through OpenTelemetry, when the standard `OTEL_*` variables do
//! not say (they win over every key here).

use std::time::Duration;

use serde::Deserialize;
use tool_runtime::otel::{InboundTrace, TelemetryOptions};

use super::de;

/// `[otel]`: whether telemetry is on, where it is exported, under which service name, whether
/// calls' arguments and results go on their spans, whose trace context is continued, and how
/// long one export may take. An empty table leaves everything to the `OTEL_*` variables.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OtelConfig {
    /// On without an endpoint (spans made, trace ids logged and audited, `GET /metrics`), or
    /// off even with one; by default, on when an endpoint is named.
    pub enabled: Option<bool>,
    /// The OTLP/HTTP endpoint, such as `http://collector:4318`.
    #[serde(deserialize_with = "de::some_http_url")]
    pub endpoint: Option<String>,
    /// The resource's `service.name` (default the application's name, `demo-app`).
    pub service_name: Option<String>,
    /// Whether calls' arguments and results go on their spans (default `false`: they may hold
    /// personal data).
    pub capture_content: bool,
    /// Whose `traceparent` a server continues (default `accept`).
    pub inbound: Inbound,
    /// How long one export may take (default 10 s).
    #[serde(deserialize_with = "de::some_duration")]
    pub export_timeout: Option<Duration>,
}

/// `inbound`: whose trace context a server takes as the parent of its spans.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Inbound {
    /// Every caller's.
    #[default]
    Accept,
    /// Only an authenticated caller's.
    Authenticated,
    /// No caller's: every request starts a trace.
    Ignore,
}

impl From<Inbound> for InboundTrace {
    fn from(inbound: Inbound) -> Self {
        match inbound {
            Inbound::Accept => InboundTrace::Accept,
            Inbound::Authenticated => InboundTrace::Authenticated,
            Inbound::Ignore => InboundTrace::Ignore,
        }
    }
}

impl OtelConfig {
    /// The options telemetry is installed with; the `OTEL_*` variables still win over them.
    #[must_use]
    pub fn options(&self) -> TelemetryOptions {
        let mut options = TelemetryOptions::new()
            .capture_content(self.capture_content)
            .inbound(self.inbound.into());
        if let Some(enabled) = self.enabled {
            options = options.enabled(enabled);
        }
        if let Some(endpoint) = &self.endpoint {
            options = options.endpoint(endpoint);
        }
        if let Some(name) = &self.service_name {
            options = options.service_name(name);
        }
        if let Some(timeout) = self.export_timeout {
            options = options.export_timeout(timeout);
        }
        options
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn a_section_is_read_into_its_options() {
        let config = Config::parse(
            "[otel]\nenabled = true\nendpoint = \"http://collector:4318\"\n\
             service_name = \"pairing\"\ncapture_content = true\ninbound = \"authenticated\"\n\
             export_timeout = \"1500ms\"",
        )
        .unwrap();
        let otel = &config.otel;
        assert_eq!(otel.enabled, Some(true));
        assert_eq!(otel.endpoint.as_deref(), Some("http://collector:4318"));
        assert_eq!(otel.service_name.as_deref(), Some("pairing"));
        assert!(otel.capture_content);
        assert_eq!(otel.inbound, Inbound::Authenticated);
        assert_eq!(otel.export_timeout, Some(Duration::from_millis(1500)));
        let options = format!("{:?}", otel.options());
        for shown in [
            "enabled: Some(true)",
            "service_name: Some(\"pairing\")",
            "endpoint: Some(\"http://collector:4318\")",
            "capture_content: true",
            "inbound: Authenticated",
            "export_timeout: Some(1.5s)",
        ] {
            assert!(options.contains(shown), "{shown} in {options}");
        }
        // Without the section, nothing is set: the variables alone decide.
        let empty = format!("{:?}", Config::parse("").unwrap().otel.options());
        assert_eq!(
            empty,
            format!(
                "{:?}",
                TelemetryOptions::new().inbound(InboundTrace::Accept)
            )
        );
    }

    #[test]
    fn the_sections_mistakes_are_named() {
        let mistakes = [
            (
                "[otel]\nservice = \"pairing\"",
                "line 2, otel.service: unknown field `service`",
            ),
            (
                "[otel]\ninbound = \"trusted\"",
                "line 2, otel.inbound: unknown variant `trusted`, expected one of `accept`, `authenticated`, `ignore`",
            ),
            (
                "[otel]\nendpoint = \"collector:4318\"",
                "line 2, otel.endpoint: \"collector:4318\" is not an http(s) URL",
            ),
            (
                "[otel]\nexport_timeout = \"10\"",
                "line 2, otel.export_timeout: \"10\" is not a duration",
            ),
        ];
        for (text, names) in mistakes {
            let e = Config::parse(text).unwrap_err();
            assert!(e.contains(names), "{text}: {e}");
        }
    }
}
