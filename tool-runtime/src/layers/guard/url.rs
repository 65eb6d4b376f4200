//! [`UrlPolicy`]: which URLs a tool may request, checked before the request, on every redirect
//! hop, and on the addresses a host name resolves to.

use std::fmt;
use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolving};
use url::Host;

use super::address::address_rule;
use super::refuse;
use crate::tool::error::{ErrorKind, ToolError};

/// Turns a host name into addresses for [`UrlPolicy`]. The default, [`SystemResolver`], asks the
/// system; tests supply their own to map names to addresses without a DNS server: any
/// `Fn(&str) -> io::Result<Vec<IpAddr>>` is one.
pub trait Resolve: Send + Sync + 'static {
    /// The addresses of `host` (lower case, without a trailing dot).
    fn resolve(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>>;
}

impl<F> Resolve for F
where
    F: Fn(&str) -> io::Result<Vec<IpAddr>> + Send + Sync + 'static,
{
    fn resolve(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>> {
        let answer = self(host);
        Box::pin(async move { answer })
    }
}

/// The system's resolver (`getaddrinfo`, on a blocking thread).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>> {
        let host = host.to_owned();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// Which URLs a tool may request: the guard against server-side request forgery.
///
/// Only `http` and `https`, no credentials in the URL, and only hosts on the public internet:
/// every address [`address_rule`] names is refused, in every spelling the URL standard accepts
/// (`http://2130706433/`, `http://0x7f.1/`, `http://[::ffff:127.0.0.1]/`, `http://127.0.0.1./`).
/// A host name is resolved once, by the [`Resolve`] given, and the request connects to the
/// addresses that were checked, so the name cannot point elsewhere between check and connect;
/// every redirect hop is checked the same way, up to [`max_redirects`](Self::max_redirects).
/// Requests go straight to the host: proxies from the environment are not used, since a proxy
/// would resolve the name itself.
///
/// Each refusal is a `forbidden` [`ToolError`] whose details name the rule
/// (`{"rule": "private", "host": ..., "address": ...}`), raised before any byte is sent to the
/// refused host.
///
/// ```
/// use tool_runtime::layers::guard::UrlPolicy;
///
/// let policy = UrlPolicy::new().deny_hosts(["ads.example"]);
/// assert!(policy.check("https://example.com/page").is_ok());
/// let refused = policy.check("http://0x7f.0.0.1:8080/admin").unwrap_err();
/// assert_eq!(refused.kind(), "forbidden");
/// assert_eq!(refused.details().unwrap()["rule"], "loopback");
/// ```
#[derive(Clone)]
pub struct UrlPolicy {
    allowed_domains: Vec<String>,
    exempt_hosts: Vec<String>,
    denied_hosts: Vec<String>,
    pub(super) max_redirects: usize,
    max_bytes: usize,
    pub(super) timeout: Duration,
    resolver: Arc<dyn Resolve>,
}

impl fmt::Debug for UrlPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UrlPolicy")
            .field("allowed_domains", &self.allowed_domains)
            .field("exempt_hosts", &self.exempt_hosts)
            .field("denied_hosts", &self.denied_hosts)
            .field("max_redirects", &self.max_redirects)
            .field("max_bytes", &self.max_bytes)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Default for UrlPolicy {
    fn default() -> Self {
        Self::new()
    }
}

fn normalize(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether `host` is `pattern` or one of its subdomains; IP addresses compare as addresses.
fn host_matches(host: &Host<&str>, pattern: &str) -> bool {
    match host {
        Host::Domain(d) => {
            let d = normalize(d);
            d == pattern
                || d.strip_suffix(pattern)
                    .is_some_and(|head| head.ends_with('.'))
        }
        Host::Ipv4(ip) => pattern.parse::<IpAddr>() == Ok(IpAddr::V4(*ip)),
        Host::Ipv6(ip) => {
            pattern
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                == Ok(IpAddr::V6(*ip))
        }
    }
}

impl UrlPolicy {
    /// Any public host; 5 redirects, 5 MiB responses, 30 seconds per request; the system's
    /// resolver.
    #[must_use]
    pub fn new() -> Self {
        Self {
            allowed_domains: Vec::new(),
            exempt_hosts: Vec::new(),
            denied_hosts: Vec::new(),
            max_redirects: 5,
            max_bytes: 5 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            resolver: Arc::new(SystemResolver),
        }
    }

    /// Only these domains and their subdomains (`example.com` allows `docs.example.com`); IP
    /// addresses are then refused unless listed in [`allow_hosts`](Self::allow_hosts).
    #[must_use]
    pub fn allow_domains<I, S>(mut self, domains: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.allowed_domains
            .extend(domains.into_iter().map(|d| normalize(d.as_ref())));
        self
    }

    /// Hosts (names or addresses) exempt from the address rules: an intranet service, a test
    /// server on loopback. A name listed here may resolve to any address.
    #[must_use]
    pub fn allow_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.exempt_hosts
            .extend(hosts.into_iter().map(|h| normalize(h.as_ref())));
        self
    }

    /// Hosts (names, with their subdomains, or addresses) never requested.
    #[must_use]
    pub fn deny_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.denied_hosts
            .extend(hosts.into_iter().map(|h| normalize(h.as_ref())));
        self
    }

    /// How many redirects a request follows (default 5); one more is refused.
    #[must_use]
    pub fn max_redirects(mut self, redirects: usize) -> Self {
        self.max_redirects = redirects;
        self
    }

    /// The largest response body read (default 5 MiB); a larger one fails with
    /// `payload_too_large`.
    #[must_use]
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// How long a request may take, redirects and body included (default 30 s).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Resolves host names with `resolver` instead of the system's.
    #[must_use]
    pub fn resolver(mut self, resolver: impl Resolve) -> Self {
        self.resolver = Arc::new(resolver);
        self
    }

    /// The response size limit.
    #[must_use]
    pub fn byte_limit(&self) -> usize {
        self.max_bytes
    }

    /// The request time limit.
    #[must_use]
    pub fn time_limit(&self) -> Duration {
        self.timeout
    }

    /// Checks what can be checked without resolving: the scheme, credentials, the allowed and
    /// denied hosts, and an address written in the URL. Returns the parsed URL.
    pub fn check(&self, url: &str) -> Result<Url, ToolError> {
        let parsed = Url::parse(url.trim()).map_err(|e| {
            ToolError::new(
                ErrorKind::INVALID_REQUEST,
                format!("`{url}` is not a URL: {e}"),
            )
            .with_details(serde_json::json!({"rule": "invalid_url"}))
        })?;
        self.check_url(&parsed)?;
        Ok(parsed)
    }

    pub(super) fn check_url(&self, url: &Url) -> Result<(), ToolError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(refuse(
                "scheme",
                format!(
                    "only http and https URLs may be requested, not `{}:`",
                    url.scheme()
                ),
                None,
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(refuse(
                "credentials",
                "URLs with a user name or password are refused; pass credentials another way",
                None,
            ));
        }
        let Some(host) = url.host() else {
            return Err(refuse("invalid_url", "the URL has no host", None));
        };
        let shown = host.to_string();
        if self.denied_hosts.iter().any(|p| host_matches(&host, p)) {
            return Err(refuse(
                "denied_host",
                format!("`{shown}` is on the deny list"),
                Some(&shown),
            ));
        }
        let exempt = self.exempt_hosts.iter().any(|p| host_matches(&host, p));
        if exempt {
            return Ok(());
        }
        if !self.allowed_domains.is_empty()
            && !self.allowed_domains.iter().any(|p| host_matches(&host, p))
        {
            return Err(refuse(
                "domain_not_allowed",
                format!(
                    "`{shown}` is not among the allowed domains ({})",
                    self.allowed_domains.join(", ")
                ),
                Some(&shown),
            ));
        }
        let rule = match host {
            Host::Domain(d) => {
                let d = normalize(d);
                if d == "localhost" || d.ends_with(".localhost") {
                    Some("loopback")
                } else if d == "metadata.google.internal" {
                    Some("cloud_metadata")
                } else {
                    None
                }
            }
            Host::Ipv4(ip) => address_rule(IpAddr::V4(ip)),
            Host::Ipv6(ip) => address_rule(IpAddr::V6(ip)),
        };
        match rule {
            Some(rule) => Err(refuse(
                rule,
                format!(
                    "`{shown}` is not a public address ({})",
                    rule.replace('_', " ")
                ),
                Some(&shown),
            )),
            None => Ok(()),
        }
    }

    /// Resolves a name and checks every address it has: all must be public.
    async fn resolve_checked(&self, name: &str) -> Result<Vec<IpAddr>, ToolError> {
        let host = normalize(name);
        let addrs = self.resolver.resolve(&host).await.map_err(|e| {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!("cannot resolve `{host}`: {e}"),
            )
        })?;
        if addrs.is_empty() {
            return Err(ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!("`{host}` has no address"),
            ));
        }
        let exempt = self
            .exempt_hosts
            .iter()
            .any(|p| host_matches(&Host::Domain(host.as_str()), p));
        if !exempt {
            for ip in &addrs {
                if let Some(rule) = address_rule(*ip) {
                    return Err(ToolError::new(
                        ErrorKind::FORBIDDEN,
                        format!(
                            "`{host}` resolves to {ip}, which is not a public address ({})",
                            rule.replace('_', " ")
                        ),
                    )
                    .with_details(serde_json::json!({
                        "rule": rule, "host": host, "address": ip.to_string(),
                    })));
                }
            }
        }
        Ok(addrs)
    }
}

/// A refusal carried through reqwest's error chain, recovered by [`GuardedClient`](super::GuardedClient).
#[derive(Debug)]
pub(super) struct Refused(pub(super) ToolError);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.message())
    }
}

impl std::error::Error for Refused {}

/// reqwest's resolver: the policy's, with every address checked.
pub(super) struct Checked(pub(super) Arc<UrlPolicy>);

impl reqwest::dns::Resolve for Checked {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.0.clone();
        Box::pin(async move {
            let addrs = policy
                .resolve_checked(name.as_str())
                .await
                .map_err(|e| Box::new(Refused(e)) as Box<dyn std::error::Error + Send + Sync>)?;
            let addrs: Addrs =
                Box::new(addrs.into_iter().map(|ip| std::net::SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}
