//! `[postgres]`: where the audit, the scheduler's tasks and the demo's data live when several
//! replicas share them, when `--postgres`/`DEMO_APP_POSTGRES` does not say.

use std::time::Duration;

use serde::Deserialize;
use tool_runtime::Secret;
use tool_runtime::postgres::{AuditOptions, PostgresOptions};

use super::de;

/// `[postgres]`: the URL (or the environment variables that hold it and its password), the time
/// limits, and how the audit's leases and retention work. Without a URL from the command line,
/// the environment or here, the demo keeps everything in SQLite and the JSON-lines audit.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PostgresConfig {
    /// `postgres://user[:password]@host[:port]/database[?sslmode=...&sslrootcert=PATH]`
    /// (`sslmode` one of disable, prefer, require, verify-ca, verify-full); never shown.
    pub url: Option<Secret<String>>,
    /// The environment variable that holds the URL, so the file need not.
    pub url_env: Option<String>,
    /// The environment variable that holds the password, so neither the URL nor the file need.
    pub password_env: Option<String>,
    /// How long connecting may take (default 5 s).
    #[serde(deserialize_with = "de::some_duration")]
    pub connect_timeout: Option<Duration>,
    /// How long one statement may run (default 2 s).
    #[serde(deserialize_with = "de::some_duration")]
    pub statement_timeout: Option<Duration>,
    /// How long a query may wait for a pooled connection (default 2 s).
    #[serde(deserialize_with = "de::some_duration")]
    pub pool_wait: Option<Duration>,
    /// How many connections each process opens at most (default 16).
    pub pool_size: Option<usize>,
    /// How long a replica's claim on its in-flight calls lasts without renewal (default 10 s):
    /// after that, its intents without outcome are reported as "outcome unknown".
    #[serde(deserialize_with = "de::some_duration")]
    pub audit_lease: Option<Duration>,
    /// How often a replica renews its lease (default 3 s).
    #[serde(deserialize_with = "de::some_duration")]
    pub audit_renew: Option<Duration>,
    /// Audit records older than this many days are deleted (default: kept).
    pub audit_retention_days: Option<u32>,
}

impl PostgresConfig {
    /// What is wrong with the table as a whole: both `url` and `url_env` named, or a renewal
    /// not shorter than the lease.
    pub(super) fn mistake(&self) -> Option<&'static str> {
        if self.url.is_some() && self.url_env.is_some() {
            return Some("name `url` or `url_env`, not both");
        }
        let lease = self.audit_lease.unwrap_or(Duration::from_secs(10));
        let renew = self.audit_renew.unwrap_or(Duration::from_secs(3));
        (renew >= lease).then_some("`audit_renew` must be shorter than `audit_lease`")
    }

    /// The options for PostgreSQL: at `given` (`--postgres`, `DEMO_APP_POSTGRES`) if set, else
    /// at the file's `url` or the variable its `url_env` names, with the password of
    /// `password_env` if named; `None` when none names a URL. Fails, naming the variable, when
    /// a named one is unset or empty.
    pub fn options(
        &self,
        given: Option<&str>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<PostgresOptions>, String> {
        let unset = |table_key: &str, name: &str| {
            format!("[postgres] {table_key}: the environment variable `{name}` is unset or empty")
        };
        let url = match (given, &self.url, &self.url_env) {
            (Some(url), _, _) => url.to_owned(),
            (None, Some(url), _) => url.expose().clone(),
            (None, None, Some(name)) => env(name).ok_or_else(|| unset("url_env", name))?,
            (None, None, None) => return Ok(None),
        };
        let mut options = PostgresOptions::new(url);
        if let Some(name) = &self.password_env {
            options = options.password(env(name).ok_or_else(|| unset("password_env", name))?);
        }
        if let Some(limit) = self.connect_timeout {
            options = options.connect_timeout(limit);
        }
        if let Some(limit) = self.statement_timeout {
            options = options.statement_timeout(limit);
        }
        if let Some(limit) = self.pool_wait {
            options = options.pool_wait(limit);
        }
        if let Some(size) = self.pool_size {
            options = options.pool_size(size);
        }
        Ok(Some(options))
    }

    /// The audit's lease, renewal and retention.
    #[must_use]
    pub fn audit(&self) -> AuditOptions {
        let mut options = AuditOptions::default();
        if let Some(lease) = self.audit_lease {
            options = options.lease(lease);
        }
        if let Some(renew) = self.audit_renew {
            options = options.renew(renew);
        }
        if let Some(days) = self.audit_retention_days {
            options = options.retention(days);
        }
        options
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn options(
        file: &str,
        given: Option<&str>,
        vars: &[(&str, &str)],
    ) -> Result<Option<PostgresOptions>, String> {
        let config = Config::parse(file)?;
        config.postgres.options(given, |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn the_url_comes_from_the_command_line_then_the_file_then_its_variable() {
        let location =
            |o: Result<Option<PostgresOptions>, String>| o.unwrap().map(|o| o.location().unwrap());
        assert_eq!(location(options("", None, &[])), None);
        assert_eq!(
            location(options(
                "[postgres]\nurl = \"postgres://a@h1/d1\"",
                Some("postgres://b@h2:5433/d2"),
                &[]
            )),
            Some("b@h2:5433/d2".into())
        );
        let file = "[postgres]\nurl_env = \"PG_URL\"\npassword_env = \"PG_PASSWORD\"\nstatement_timeout = \"500ms\"";
        let vars = [("PG_URL", "postgres://c@h3/d3"), ("PG_PASSWORD", "hunter2")];
        let found = options(file, None, &vars).unwrap().unwrap();
        assert_eq!(found.location().unwrap(), "c@h3:5432/d3");
        assert!(!format!("{found:?}").contains("hunter2"));
        let e = options(file, None, &vars[..1]).unwrap_err();
        assert!(
            e.contains("password_env: the environment variable `PG_PASSWORD` is unset"),
            "{e}"
        );
        let e = options(file, None, &[]).unwrap_err();
        assert!(
            e.contains("url_env: the environment variable `PG_URL` is unset"),
            "{e}"
        );
    }

    #[test]
    fn the_files_mistakes_are_named() {
        let e = Config::parse("[postgres]\nurl = \"postgres://a\"\nurl_env = \"X\"").unwrap_err();
        assert!(
            e.contains("[postgres]: name `url` or `url_env`, not both"),
            "{e}"
        );
        let e =
            Config::parse("[postgres]\naudit_lease = \"2s\"\naudit_renew = \"2s\"").unwrap_err();
        assert!(
            e.contains("`audit_renew` must be shorter than `audit_lease`"),
            "{e}"
        );
        let e = Config::parse("[postgres]\npool_wait = \"soon\"").unwrap_err();
        assert!(
            e.contains("line 2, postgres.pool_wait: \"soon\" is not a duration"),
            "{e}"
        );
        let e = Config::parse("[postgres]\nhost = \"a\"").unwrap_err();
        assert!(e.contains("unknown field `host`"), "{e}");
    }

    #[test]
    fn the_password_is_never_shown() {
        let config = Config::parse("[postgres]\nurl = \"postgres://u:hunter2@a/d\"").unwrap();
        assert!(!format!("{config:?}").contains("hunter2"));
    }
}
