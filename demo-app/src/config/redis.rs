//! `[redis]`: where the state several replicas share lives (rate limits, confirmation tokens,
//! `serve`'s MCP sessions), when `--redis`/`DEMO_APP_REDIS` does not say.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use tool_runtime::Secret;
use tool_runtime::redis::RedisOptions;

use super::de;

/// `[redis]`: the URL (or the environment variable that holds it), the key prefix, the time
/// limits and the CA certificate `rediss://` trusts instead of the system's roots. Without a URL
/// from the command line, the environment or here, the demo keeps its state in the process.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedisConfig {
    /// `redis://[:password@]host[:port][/db]` (`rediss://` for TLS); never shown.
    pub url: Option<Secret<String>>,
    /// The environment variable that holds the URL, so the file need not.
    pub url_env: Option<String>,
    /// The prefix of every key (default the library's, `tool-runtime:`).
    pub prefix: Option<String>,
    /// How long connecting may take (default 5 s).
    #[serde(deserialize_with = "de::some_duration")]
    pub connect_timeout: Option<Duration>,
    /// How long one command may take (default 2 s).
    #[serde(deserialize_with = "de::some_duration")]
    pub command_timeout: Option<Duration>,
    /// How long an operation may wait while the connection is re-established (default 2 s).
    #[serde(deserialize_with = "de::some_duration")]
    pub pool_wait: Option<Duration>,
    /// A PEM file of CA certificates that `rediss://` trusts instead of the system's roots (a
    /// private CA's).
    pub ca_certificate: Option<PathBuf>,
}

impl RedisConfig {
    /// What is wrong with the table as a whole: both `url` and `url_env` named.
    pub(super) fn mistake(&self) -> Option<&'static str> {
        (self.url.is_some() && self.url_env.is_some())
            .then_some("name `url` or `url_env`, not both")
    }

    /// The options for Redis: at `given` (`--redis`, `DEMO_APP_REDIS`) if set, else at the
    /// file's `url` or the variable its `url_env` names, trusting the file's `ca_certificate`
    /// if set; `None` when none names a URL. Fails, naming the variable, when `url_env` names
    /// one that is unset or empty.
    pub fn options(
        &self,
        given: Option<&str>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<RedisOptions>, String> {
        let url = match (given, &self.url, &self.url_env) {
            (Some(url), _, _) => url.to_owned(),
            (None, Some(url), _) => url.expose().clone(),
            (None, None, Some(name)) => env(name).ok_or_else(|| {
                format!("[redis] url_env: the environment variable `{name}` is unset or empty")
            })?,
            (None, None, None) => return Ok(None),
        };
        let mut options = RedisOptions::new(url);
        if let Some(prefix) = &self.prefix {
            options = options.prefix(prefix);
        }
        if let Some(limit) = self.connect_timeout {
            options = options.connect_timeout(limit);
        }
        if let Some(limit) = self.command_timeout {
            options = options.command_timeout(limit);
        }
        if let Some(limit) = self.pool_wait {
            options = options.pool_wait(limit);
        }
        if let Some(path) = &self.ca_certificate {
            options = options.ca_certificate(path);
        }
        Ok(Some(options))
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
    ) -> Result<Option<RedisOptions>, String> {
        let config = Config::parse(file)?;
        config.redis.options(given, |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn the_url_comes_from_the_command_line_then_the_file_then_its_variable() {
        let location =
            |o: Result<Option<RedisOptions>, String>| o.unwrap().map(|o| o.location().unwrap());
        assert_eq!(location(options("", None, &[])), None);
        assert_eq!(
            location(options(
                "[redis]\nurl = \"redis://a:1\"",
                Some("redis://b:2"),
                &[]
            )),
            Some("b:2/0".into())
        );
        assert_eq!(
            location(options("[redis]\nurl = \"redis://:pw@a:1/3\"", None, &[])),
            Some("a:1/3".into())
        );
        let file =
            "[redis]\nurl_env = \"CACHE_URL\"\nprefix = \"demo:\"\ncommand_timeout = \"500ms\"";
        assert_eq!(
            location(options(file, None, &[("CACHE_URL", "redis://c:3/1")])),
            Some("c:3/1".into())
        );
        let e = options(file, None, &[]).unwrap_err();
        assert!(e.contains("`CACHE_URL` is unset"), "{e}");
    }

    #[test]
    fn the_ca_certificate_is_the_files() {
        let debug = |file: &str| {
            let options = Config::parse(file)
                .unwrap()
                .redis
                .options(Some("rediss://b:2"), |_| None)
                .unwrap()
                .unwrap();
            format!("{options:?}")
        };
        let with = debug("[redis]\nca_certificate = \"/etc/cache-ca.pem\"");
        assert!(with.contains("/etc/cache-ca.pem"), "{with}");
        let without = debug("");
        assert!(without.contains("ca_certificate: None"), "{without}");
    }

    #[test]
    fn the_files_mistakes_are_named() {
        let e = Config::parse("[redis]\nurl = \"redis://a\"\nurl_env = \"X\"").unwrap_err();
        assert!(
            e.contains("[redis]: name `url` or `url_env`, not both"),
            "{e}"
        );
        let e = Config::parse("[redis]\npool_wait = \"soon\"").unwrap_err();
        assert!(
            e.contains("line 2, redis.pool_wait: \"soon\" is not a duration"),
            "{e}"
        );
        let e = Config::parse("[redis]\nhost = \"a\"").unwrap_err();
        assert!(e.contains("unknown field `host`"), "{e}");
    }

    #[test]
    fn the_password_is_never_shown() {
        let config = Config::parse("[redis]\nurl = \"redis://:hunter2@a:1\"").unwrap();
        assert!(!format!("{config:?}").contains("hunter2"));
    }
}
