//! Who may reach what on a listener, decided here once ([`Access`]), for every network front end.
//!
//! **No unauthenticated remote callers.** A server without authentication answers callers on
//! the same machine (loopback) only: anyone who can reach it could otherwise call every tool.
//! The HTTP front layer refuses other peers with `forbidden` (this covers `/mcp` too), and the
//! CLI's `serve` refuses to listen on a non-loopback address without `--auth-file`. Opt out
//! explicitly when something else guards the network:
//! `ServerOptions::allow_remote_without_auth`, `serve --insecure`.
//!
//! **Only this machine's names, without authentication.** Against DNS rebinding, `/mcp`
//! accepts the `Host` names of an allow-list: loopback names unless told otherwise; `serve`
//! accepts any host with authentication or on a non-loopback address, and also the IPv4-mapped
//! loopback address it listens on.
//!
//! **Operator endpoints need the operator role.** The read-only routes for whoever runs the
//! server (`GET /audit`, `GET /toolsets`, whose errors name URLs and connection failures) are
//! served, on a server with authentication, to callers with one role only (`admin` unless
//! configured), so a monitoring token need not be one that may call destructive tools. Without
//! authentication they follow the rule above: the machine's own callers, the only ones served.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use crate::front::auth::tokens::Auth;
use crate::front::requester::Identity;
use crate::tool::error::{ErrorKind, ToolError};

/// The operator role by default: what a caller needs, on a server with authentication, to read
/// the operator endpoints (`GET /audit`, `GET /toolsets`).
pub const OPERATOR_ROLE: &str = "admin";

/// The `Host` names `/mcp` accepts, against DNS rebinding: a web page whose name resolves to
/// this machine cannot reach the server through a browser unless its name is accepted here.
/// Given to [`ServerOptions::allowed_hosts`](crate::http::ServerOptions::allowed_hosts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AllowedHosts {
    /// This machine's names: `localhost`, `127.0.0.1` and `::1`, on any port. The default; the
    /// CLI's `serve` widens it to fit its address: [`Any`](Self::Any) behind tokens or on a
    /// non-loopback address, and the IPv4-mapped loopback address when it listens on one.
    #[default]
    Loopback,
    /// Every name: for a server behind authentication, or deliberately on the network.
    Any,
    /// These names only, each with or without a port (`tools.example`, `tools.example:8443`);
    /// an empty list accepts none.
    Only(Vec<String>),
}

impl AllowedHosts {
    /// The names of `hosts` only (see [`Only`](Self::Only)).
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(hosts: I) -> Self {
        Self::Only(hosts.into_iter().map(Into::into).collect())
    }
}

/// Who may reach what on a listener: the tokens, the opt-out for remote callers without them,
/// the `Host` names `/mcp` accepts and the operator role. Every check a listener makes is a
/// method here.
#[derive(Debug, Clone)]
pub(crate) struct Access {
    /// Static bearer tokens.
    pub(crate) auth: Option<Arc<Auth>>,
    /// OAuth access tokens. Without these and static tokens, the server serves without
    /// authentication.
    #[cfg(feature = "oauth")]
    pub(crate) oauth: Option<crate::front::auth::oauth::OAuth>,
    /// Serve callers on other machines without authentication.
    pub(crate) allow_remote_without_auth: bool,
    /// The `Host` names `/mcp` accepts.
    pub(crate) allowed_hosts: AllowedHosts,
    /// The role that opens the operator endpoints on a server with authentication.
    pub(crate) operator_role: String,
}

impl Default for Access {
    fn default() -> Self {
        Self {
            auth: None,
            #[cfg(feature = "oauth")]
            oauth: None,
            allow_remote_without_auth: false,
            allowed_hosts: AllowedHosts::Loopback,
            operator_role: OPERATOR_ROLE.into(),
        }
    }
}

impl Access {
    /// Whether callers are authenticated.
    pub(crate) fn authenticates(&self) -> bool {
        #[cfg(feature = "oauth")]
        if self.oauth.is_some() {
            return true;
        }
        self.auth.is_some()
    }

    /// Whether a caller at `peer` may be served: always with authentication or with the
    /// explicit opt-out, else only from loopback.
    pub(crate) fn admit_peer(&self, peer: IpAddr) -> Result<(), ToolError> {
        if self.open_to_remote() || is_loopback(peer) {
            return Ok(());
        }
        Err(ToolError::new(
            ErrorKind::FORBIDDEN,
            "this server has no authentication and serves callers on its own machine only; give it tokens (an auth file), or opt out explicitly if something else guards the network",
        ))
    }

    /// Whether listening on `addr` is allowed: the same rule as [`admit_peer`](Self::admit_peer),
    /// for a listener (a non-loopback address exposes every tool to the network).
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn check_listen_address(&self, addr: SocketAddr) -> Result<(), String> {
        if self.open_to_remote() || is_loopback(addr.ip()) {
            return Ok(());
        }
        Err(format!(
            "refusing to serve on {addr} without authentication: anyone who can reach it could call every tool. Give tokens (--auth-file PATH), or opt out (--insecure) if something else guards the network"
        ))
    }

    /// The `Host` names `/mcp` accepts when listening on `addr`, unless others than loopback
    /// names are given: behind tokens, or deliberately exposed on a non-loopback address, any;
    /// on loopback, loopback names only (against DNS rebinding), the IPv4-mapped loopback
    /// address included when listening on it.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn listening_on(&mut self, addr: SocketAddr) {
        if self.allowed_hosts != AllowedHosts::Loopback {
            return;
        }
        if self.authenticates() || !is_loopback(addr.ip()) {
            self.allowed_hosts = AllowedHosts::Any;
            return;
        }
        if let IpAddr::V6(v6) = addr.ip()
            && v6.to_ipv4_mapped().is_some()
        {
            self.allowed_hosts =
                AllowedHosts::only(["localhost", "127.0.0.1", "::1", &format!("[{v6}]")]);
        }
    }

    /// Whether a caller may read the operator endpoints: with authentication, one whose roles
    /// include the operator role; without, every caller the peer rule lets through.
    pub(crate) fn may_operate(&self, identity: Option<&Identity>) -> bool {
        !self.authenticates() || identity.is_some_and(|i| i.roles.contains(&self.operator_role))
    }

    /// The refusal of a caller who may not read the operator endpoint showing `what`.
    pub(crate) fn operator_only(
        &self,
        identity: Option<&Identity>,
        what: &str,
    ) -> Option<ToolError> {
        (!self.may_operate(identity)).then(|| {
            ToolError::new(
                ErrorKind::FORBIDDEN,
                format!(
                    "{what} is for callers with the operator role `{}`",
                    self.operator_role
                ),
            )
        })
    }

    fn open_to_remote(&self) -> bool {
        self.authenticates() || self.allow_remote_without_auth
    }
}

/// Whether `ip` is this machine: `127.0.0.0/8`, `::1`, or IPv4-mapped `::ffff:127.x.y.z`.
pub(crate) fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        // `::ffff:127.0.0.1` is loopback too.
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_tokens() -> Access {
        Access {
            auth: Some(Arc::new(
                Auth::from_toml("[[tokens]]\ntoken = \"t\"\nprincipal = \"p\"\n").unwrap(),
            )),
            ..Access::default()
        }
    }

    #[test]
    fn remote_peers_need_authentication_or_the_opt_out() {
        let lan = "192.168.1.20".parse().unwrap();
        let open = Access::default();
        assert!(open.admit_peer("127.0.0.1".parse().unwrap()).is_ok());
        assert!(open.admit_peer(lan).is_err());
        assert!(with_tokens().admit_peer(lan).is_ok());
        let opted_out = Access {
            allow_remote_without_auth: true,
            ..Access::default()
        };
        assert!(opted_out.admit_peer(lan).is_ok());
        let public = "0.0.0.0:80".parse().unwrap();
        assert!(open.check_listen_address(public).is_err());
        assert!(opted_out.check_listen_address(public).is_ok());
        assert!(with_tokens().check_listen_address(public).is_ok());
    }

    #[test]
    fn operator_endpoints_need_the_operator_role_with_authentication() {
        let who = |roles: &[&str]| Identity {
            principal: "p".into(),
            roles: roles.iter().map(|r| (*r).to_owned()).collect(),
            scopes: Vec::new(),
        };
        assert!(Access::default().may_operate(None));
        let tokens = with_tokens();
        assert!(!tokens.may_operate(None));
        assert!(tokens.may_operate(Some(&who(&["admin"]))));
        assert!(!tokens.may_operate(Some(&who(&["ops"]))));
        let ops = Access {
            operator_role: "ops".into(),
            ..with_tokens()
        };
        assert!(ops.may_operate(Some(&who(&["ops"]))));
        assert!(!ops.may_operate(Some(&who(&["admin"]))));
    }

    #[test]
    fn the_host_names_follow_the_listener() {
        let hosts = |mut access: Access, addr: &str| {
            access.listening_on(addr.parse().unwrap());
            access.allowed_hosts
        };
        assert_eq!(
            hosts(Access::default(), "127.0.0.1:80"),
            AllowedHosts::Loopback
        );
        assert_eq!(hosts(Access::default(), "0.0.0.0:80"), AllowedHosts::Any);
        assert_eq!(hosts(with_tokens(), "127.0.0.1:80"), AllowedHosts::Any);
        assert_eq!(
            hosts(Access::default(), "[::ffff:127.0.0.1]:80"),
            AllowedHosts::only(["localhost", "127.0.0.1", "::1", "[::ffff:127.0.0.1]"])
        );
        let given = Access {
            allowed_hosts: AllowedHosts::only(["tools.example"]),
            ..Access::default()
        };
        assert_eq!(
            hosts(given, "0.0.0.0:80"),
            AllowedHosts::only(["tools.example"])
        );
    }
}
