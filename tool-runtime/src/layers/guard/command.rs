//! [`CommandPolicy`]: which programs a tool may run on the host, and how.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::refuse;
use crate::tool::error::{ErrorKind, ToolError};

/// The first piece of shell syntax outside quotes in `line`, with its rule: an operator
/// (`;`, `|`, `&`, `<`, `>`) or a command substitution (`$(`, a backtick, also inside double
/// quotes, where a shell would run them too).
fn shell_syntax(line: &str) -> Option<(&'static str, &'static str)> {
    let mut chars = line.chars().peekable();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        if single {
            single = c != '\'';
            continue;
        }
        match c {
            '\\' => {
                chars.next();
            }
            '\'' if !double => single = true,
            '"' => double = !double,
            '`' => return Some(("command_substitution", "`")),
            '$' if chars.peek() == Some(&'(') => return Some(("command_substitution", "$(")),
            ';' if !double => return Some(("shell_operator", ";")),
            '|' if !double => return Some(("shell_operator", "|")),
            '&' if !double => return Some(("shell_operator", "&")),
            '<' if !double => return Some(("shell_operator", "<")),
            '>' if !double => return Some(("shell_operator", ">")),
            _ => {}
        }
    }
    None
}

/// Which programs a tool may run on the host, and how: the guard against shell injection and
/// runaway processes.
///
/// A command line is split into words with shell-like quoting (`'...'`, `"..."`, `\`), and
/// run **without a shell**: nothing is expanded, substituted, redirected or piped. The first
/// word must be one of the allowed program names (looked up on `PATH`, never a path). Shell
/// syntax that would not do what it says is refused rather than passed on as text: operators
/// outside quotes (`;`, `&&`, `|`, `>`, ...), command substitution (`$(...)`, backticks), a
/// leading `NAME=value`, and line breaks. Globs and `$VAR` pass as the literal text they are.
///
/// The program runs with the environment cleared but for the listed variables, in a fixed
/// working directory, with stdin closed or given, as the leader of a new process group. When
/// the time limit passes, the whole group is killed, children included; so it is when the
/// call is cancelled. Each of stdout and stderr is kept up to the output limit and read to
/// its end. Refusals are `forbidden` [`ToolError`]s naming the rule; an empty command and bad
/// quoting are `invalid_request`.
///
/// ```
/// use tool_runtime::layers::guard::CommandPolicy;
///
/// let policy = CommandPolicy::new(["ls", "echo"]);
/// assert_eq!(policy.parse("echo 'a b' c*").unwrap(), ["echo", "a b", "c*"]);
/// assert_eq!(policy.parse("echo 'a | b'").unwrap(), ["echo", "a | b"]);
/// let refused = policy.parse("echo hi; rm -rf /").unwrap_err();
/// assert_eq!(refused.details().unwrap()["rule"], "shell_operator");
/// let refused = policy.parse("rm -rf /").unwrap_err();
/// assert_eq!(refused.details().unwrap()["rule"], "program_not_allowed");
/// ```
#[derive(Debug, Clone)]
pub struct CommandPolicy {
    programs: Vec<String>,
    env: Vec<String>,
    working_dir: PathBuf,
    timeout: Duration,
    max_output: usize,
}

/// What a finished program left: its exit code and output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandOutput {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// Standard output (invalid UTF-8 replaced), up to the output limit.
    pub stdout: String,
    /// Standard error, likewise.
    pub stderr: String,
    /// Whether either stream was longer than the limit and was cut.
    pub truncated: bool,
}

impl CommandOutput {
    /// Whether the program exited with 0.
    #[must_use]
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

impl CommandPolicy {
    /// The programs that may run, by name; `PATH`, `LANG`, `LC_ALL`, `LC_CTYPE` and `TZ` passed
    /// on; the system's temporary directory as working directory; 30 seconds; 64 KiB of output
    /// per stream.
    pub fn new<I, S>(programs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            programs: programs.into_iter().map(Into::into).collect(),
            env: ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ"]
                .map(str::to_owned)
                .to_vec(),
            working_dir: std::env::temp_dir(),
            timeout: Duration::from_secs(30),
            max_output: 64 * 1024,
        }
    }

    /// The environment variables passed on (all others are removed).
    #[must_use]
    pub fn env<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.env = names.into_iter().map(Into::into).collect();
        self
    }

    /// The directory programs run in.
    #[must_use]
    pub fn working_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.working_dir = dir.into();
        self
    }

    /// How long a program may run before its process group is killed.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many bytes of each of stdout and stderr are kept.
    #[must_use]
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.max_output = bytes;
        self
    }

    /// The allowed program names.
    #[must_use]
    pub fn programs(&self) -> &[String] {
        &self.programs
    }

    /// The time limit.
    #[must_use]
    pub fn time_limit(&self) -> Duration {
        self.timeout
    }

    /// Splits `line` into the program and its arguments, refusing what the policy does not
    /// allow.
    pub fn parse(&self, line: &str) -> Result<Vec<String>, ToolError> {
        if line.trim().is_empty() {
            return Err(invalid("empty", "the command is empty"));
        }
        if line.contains(['\n', '\r', '\0']) {
            return Err(invalid(
                "control_character",
                "a command is one line: it holds a line break or NUL byte",
            ));
        }
        if let Some((rule, syntax)) = shell_syntax(line) {
            return Err(refuse(
                rule,
                format!(
                    "`{syntax}` is shell syntax, and commands run without a shell: run one \
                     program, and quote the text if it is meant as an argument"
                ),
                None,
            ));
        }
        let argv = shlex::split(line).ok_or_else(|| {
            invalid(
                "bad_quoting",
                "the command's quoting is unbalanced (an unclosed quote or a trailing backslash)",
            )
        })?;
        let Some(program) = argv.first() else {
            return Err(invalid("empty", "the command is empty (only a comment)"));
        };
        if program.contains('=') && !program.starts_with('=') {
            return Err(refuse(
                "env_assignment",
                format!(
                    "`{program}` sets a variable, which commands cannot do: the environment is fixed"
                ),
                None,
            ));
        }
        if program.contains('/') {
            return Err(refuse(
                "program_path",
                format!("give the program's name, not a path: `{program}`"),
                None,
            ));
        }
        if !self.programs.iter().any(|p| p == program) {
            return Err(refuse(
                "program_not_allowed",
                format!(
                    "`{program}` is not an allowed program (allowed: {})",
                    if self.programs.is_empty() {
                        "none".to_owned()
                    } else {
                        self.programs.join(", ")
                    }
                ),
                None,
            )
            .with_details(serde_json::json!({
                "rule": "program_not_allowed", "program": program, "allowed": self.programs,
            })));
        }
        Ok(argv)
    }

    /// Parses and runs `line` with stdin closed.
    pub async fn run(&self, line: &str) -> Result<CommandOutput, ToolError> {
        self.run_argv(&self.parse(line)?, None).await
    }

    /// Parses and runs `line` with `input` on its stdin.
    pub async fn run_with_input(
        &self,
        line: &str,
        input: &[u8],
    ) -> Result<CommandOutput, ToolError> {
        self.run_argv(&self.parse(line)?, Some(input)).await
    }

    async fn run_argv(
        &self,
        argv: &[String],
        input: Option<&[u8]>,
    ) -> Result<CommandOutput, ToolError> {
        let program = &argv[0];
        let mut command = CommandWrap::with_new(program, |c| {
            c.args(&argv[1..])
                .env_clear()
                .current_dir(&self.working_dir)
                .stdin(if input.is_some() {
                    Stdio::piped()
                } else {
                    Stdio::null()
                })
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            for name in &self.env {
                if let Some(value) = std::env::var_os(name) {
                    c.env(name, value);
                }
            }
        });
        command.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let mut child = command.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ToolError::not_found(format!("`{program}` is allowed but not installed here"))
            } else {
                ToolError::failed(format!("cannot start `{program}`: {e}"))
            }
        })?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin().take()) {
            let input = input.to_vec();
            // A program that never reads its input must not block the call.
            tokio::spawn(async move {
                let _ = stdin.write_all(&input).await;
            });
        }
        let limit = self.max_output;
        let stdout = tokio::spawn(capped(child.stdout().take(), limit));
        let stderr = tokio::spawn(capped(child.stderr().take(), limit));
        let Ok(status) = tokio::time::timeout(self.timeout, child.wait()).await else {
            let _ = child.start_kill();
            let _ = child.wait().await;
            return Err(ToolError::new(
                ErrorKind::TIMEOUT,
                format!(
                    "`{program}` ran longer than {:?}; it and every process it started were killed",
                    self.timeout
                ),
            ));
        };
        let status = status.map_err(|e| ToolError::failed(format!("`{program}` failed: {e}")))?;
        // A process that left the group may hold the pipes open: wait for them a moment only.
        let grace = Duration::from_secs(1);
        let (out, out_cut) = tokio::time::timeout(grace, stdout)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let (err, err_cut) = tokio::time::timeout(grace, stderr)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        Ok(CommandOutput {
            code: status.code(),
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
            truncated: out_cut || err_cut,
        })
    }
}

fn invalid(rule: &str, message: &str) -> ToolError {
    ToolError::new(ErrorKind::INVALID_REQUEST, message)
        .with_details(serde_json::json!({"rule": rule}))
}

/// Reads a stream to its end, keeping the first `limit` bytes; and whether it was cut.
async fn capped<R: AsyncRead + Unpin>(stream: Option<R>, limit: usize) -> (Vec<u8>, bool) {
    let Some(mut stream) = stream else {
        return (Vec::new(), false);
    };
    let mut kept = Vec::new();
    let mut cut = false;
    let mut buf = [0u8; 8192];
    while let Ok(n @ 1..) = stream.read(&mut buf).await {
        let room = limit.saturating_sub(kept.len());
        cut |= n > room;
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
    (kept, cut)
}
