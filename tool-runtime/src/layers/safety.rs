//! Safety rules every network front end applies, decided here once.
//!
//! **No unauthenticated remote callers.** A server without authentication answers callers on
//! the same machine (loopback) only: anyone who can reach it could otherwise call every tool.
//! The HTTP front layer refuses other peers with `forbidden` (this covers `/mcp` too), and the
//! CLI's `serve` refuses to listen on a non-loopback address without `--auth-file`. Opt out
//! explicitly when something else guards the network: `HttpOptions::allow_remote_without_auth`,
//! `serve --insecure`.
//!
//! **Operator endpoints need the operator role.** The read-only routes for whoever runs the
//! server (`GET /audit`, `GET /providers`, whose errors name URLs and connection failures) are
//! served, on a server with authentication, to callers with one role only (`admin` unless
//! configured), so a monitoring token need not be one that may call destructive tools. Without
//! authentication they follow the rule above: the machine's own callers, the only ones served.

use std::net::IpAddr;

use crate::tool::error::{ToolError, kind};

/// Whether a caller at `peer` may be served: always with authentication or with the explicit
/// opt-out, else only from loopback.
pub(crate) fn admit_peer(
    peer: IpAddr,
    authenticated: bool,
    allow_remote_without_auth: bool,
) -> Result<(), ToolError> {
    if authenticated || allow_remote_without_auth || is_loopback(peer) {
        return Ok(());
    }
    Err(ToolError::new(
        kind::FORBIDDEN,
        "this server has no authentication and serves callers on its own machine only; give it tokens (an auth file), or opt out explicitly if something else guards the network",
    ))
}

/// Whether a caller may read the operator endpoints: with authentication, one whose `roles`
/// include `operator_role`; without, every caller the peer rule lets through.
pub(crate) fn may_operate(
    authenticated: bool,
    roles: Option<&[String]>,
    operator_role: &str,
) -> bool {
    !authenticated || roles.is_some_and(|roles| roles.iter().any(|r| r == operator_role))
}

/// Whether listening on `addr` is allowed: the same rule as [`admit_peer`], for a listener (a
/// non-loopback address exposes every tool to the network).
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn check_listen_address(
    addr: std::net::SocketAddr,
    authenticated: bool,
    allow_remote_without_auth: bool,
) -> Result<(), String> {
    if authenticated || allow_remote_without_auth || is_loopback(addr.ip()) {
        return Ok(());
    }
    Err(format!(
        "refusing to serve on {addr} without authentication: anyone who can reach it could call every tool. Give tokens (--auth-file PATH), or opt out (--insecure) if something else guards the network"
    ))
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

    #[test]
    fn remote_peers_need_authentication_or_the_opt_out() {
        let lan = "192.168.1.20".parse().unwrap();
        assert!(admit_peer("127.0.0.1".parse().unwrap(), false, false).is_ok());
        assert!(admit_peer(lan, false, false).is_err());
        assert!(admit_peer(lan, true, false).is_ok());
        assert!(admit_peer(lan, false, true).is_ok());
    }

    #[test]
    fn operator_endpoints_need_the_operator_role_with_authentication() {
        let admin = ["admin".to_owned()];
        let ops = ["ops".to_owned()];
        assert!(may_operate(false, None, "admin"));
        assert!(!may_operate(true, None, "admin"));
        assert!(may_operate(true, Some(&admin), "admin"));
        assert!(!may_operate(true, Some(&ops), "admin"));
        assert!(may_operate(true, Some(&ops), "ops"));
    }
}
