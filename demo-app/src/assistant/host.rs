//! `host_execute`: allow-listed programs on this machine, through the command guard.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use tool_runtime::layers::guard::CommandPolicy;
use tool_runtime::prelude::*;

use super::web::{MAX_CHARS, TRUNCATED};
use crate::config::HostConfig;

/// The bridges `host_execute` may run commands through, each with its own programs.
#[derive(Debug, Clone, Default)]
pub struct Host {
    bridges: BTreeMap<String, CommandPolicy>,
    default_timeout: Duration,
}

impl Host {
    /// From `[host]`.
    #[must_use]
    pub fn from_config(config: &HostConfig) -> Self {
        let bridges = config
            .bridges
            .iter()
            .map(|(name, bridge)| {
                let mut policy =
                    CommandPolicy::new(bridge.allowed_commands.clone()).max_output(MAX_CHARS * 4);
                if let Some(dir) = &bridge.working_dir {
                    policy = policy.working_dir(dir);
                }
                (name.clone(), policy)
            })
            .collect();
        Self {
            bridges,
            default_timeout: config.default_timeout,
        }
    }
}

/// What a command printed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Execution {
    /// The bridge it ran on.
    pub bridge: String,
    /// Its exit code (0).
    pub exit_code: i32,
    /// Standard output, at most 15,000 characters.
    pub stdout: String,
    /// Standard error, at most 15,000 characters.
    pub stderr: String,
    /// Whether the output was cut (it then ends with `... (truncated)`).
    pub truncated: bool,
}

fn cap(text: &str) -> (String, bool) {
    if text.chars().count() <= MAX_CHARS {
        return (text.to_owned(), false);
    }
    let mut cut: String = text.chars().take(MAX_CHARS).collect();
    cut.push_str(TRUNCATED);
    (cut, true)
}

/// Run an allowed program on a host bridge, without a shell.
///
/// One program with its arguments. Quoting works as in a shell ('a b', "a b"); pipes, redirections, `;`, `&&` and `$(...)` are
/// refused. Errors: `no_bridges`, `unknown_bridge` (listing the bridges), `invalid_request`
/// (empty command, bad quoting), `forbidden` (a program not allowed, shell syntax),
/// `command_failed` (a non-zero exit, with its stderr), `timeout`.
#[tool(annotations(destructive = false, open_world), tags("host"))]
pub async fn host_execute(
    host: State<Host>,
    /// The bridge to run on, as configured in [host.bridges.NAME]
    #[arg(length(min = 1, max = 64))]
    bridge: String,
    /// The command line, such as "df -h /"
    #[arg(length(min = 1, max = 4096))]
    command: String,
    /// Seconds before the command is killed; 0 for the configured default
    #[arg(default = 0, range(min = 0, max = 3600))]
    timeout: u32,
) -> Result<Execution, ToolError> {
    if host.bridges.is_empty() {
        return Err(ToolError::new(
            "no_bridges",
            "no host bridges are configured: add [host.bridges.NAME] with allowed_commands to demo-app.toml",
        )
        .with_status(501));
    }
    let Some(policy) = host.bridges.get(&bridge) else {
        let names: Vec<&str> = host.bridges.keys().map(String::as_str).collect();
        return Err(ToolError::new(
            "unknown_bridge",
            format!(
                "no bridge `{bridge}`; the bridges are: {}",
                names.join(", ")
            ),
        )
        .with_status(404)
        .with_details(serde_json::json!({"bridges": names})));
    };
    let limit = if timeout == 0 {
        host.default_timeout
    } else {
        Duration::from_secs(u64::from(timeout))
    };
    let output = policy.clone().timeout(limit).run(&command).await?;
    let (stdout, out_cut) = cap(&output.stdout);
    let (stderr, err_cut) = cap(&output.stderr);
    if !output.success() {
        let code = output
            .code
            .map_or_else(|| "a signal".to_owned(), |c| c.to_string());
        return Err(ToolError::new(
            "command_failed",
            format!("the command exited with {code}: {}", stderr.trim()),
        )
        .with_status(422)
        .with_details(serde_json::json!({
            "exit_code": output.code, "stdout": stdout, "stderr": stderr,
        })));
    }
    Ok(Execution {
        bridge,
        exit_code: 0,
        stdout,
        stderr,
        truncated: output.truncated || out_cut || err_cut,
    })
}
