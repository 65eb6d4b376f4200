//! The key that seals the request state of MCP input-required results: an option of the server
//! (`ServerOptions::mcp_request_state_key`) and of the MCP front end
//! (`McpServer::request_state_key`), checked once, when it is made.

use std::sync::Arc;

/// The key that seals the request state of MCP input-required results (protocol 2026-07-28),
/// shared by every replica ([`McpServer::request_state_key`](crate::mcp::McpServer::request_state_key)):
/// at least 32 bytes of secret, high-entropy material. States are signed (HMAC-SHA256), not
/// encrypted.
#[derive(Clone)]
pub struct RequestStateKey(Arc<[u8]>);

/// The shortest key an HMAC-SHA256 request state takes.
const MIN_LEN: usize = 32;

impl RequestStateKey {
    /// The key `bytes`.
    ///
    /// # Errors
    ///
    /// When `bytes` holds fewer than 32 bytes.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Self, RequestStateKeyError> {
        let bytes = bytes.into();
        if bytes.len() < MIN_LEN {
            return Err(RequestStateKeyError(()));
        }
        Ok(Self(bytes.into()))
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for RequestStateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestStateKey(..)")
    }
}

/// A request-state key shorter than the 32 bytes it needs ([`RequestStateKey::new`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestStateKeyError(());

impl std::fmt::Display for RequestStateKeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an MCP request-state key must be at least 32 bytes long")
    }
}

impl std::error::Error for RequestStateKeyError {}
