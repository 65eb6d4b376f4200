//! What the HTTP front layer learns of a request before any handler runs: its id, its trace,
//! and who sent it.

use crate::tool::caller::{Caller, Source};

/// Who an authenticated caller is: a principal, its roles and the OAuth scopes its token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The principal's name: an OAuth token's is `issuer#subject`.
    pub principal: String,
    /// Its roles.
    pub roles: Vec<String>,
    /// The OAuth scopes its token grants (a static token's, those its entry lists): it may
    /// call only the items whose scopes these cover.
    pub scopes: Vec<String>,
}

/// What a network front end learned about a request before any handler ran: its request id
/// and, behind authentication, who sent it. The HTTP front layer leaves it in the request's
/// extensions; handlers behind it (the HTTP routes, MCP over HTTP) read it there.
#[derive(Debug, Clone)]
pub struct Requester {
    /// The request id: the request's own `x-request-id`, or a new one.
    pub id: String,
    /// The trace id of the request's W3C `traceparent` header, if it sent a valid one.
    pub trace_id: Option<String>,
    /// The authenticated caller; `None` without authentication.
    pub identity: Option<Identity>,
    /// The request's span: the parent of what is done for it, in tasks of their own too (MCP
    /// sessions serve requests on theirs).
    #[cfg_attr(not(all(feature = "otel", feature = "mcp")), allow(dead_code))]
    pub(crate) span: tracing::Span,
}

impl Requester {
    /// A request with id `id`, no trace id, no identity and no span (a router served without
    /// the front layer, tests): set the public fields as needed.
    #[must_use]
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            trace_id: None,
            identity: None,
            span: tracing::Span::none(),
        }
    }

    /// The caller this request speaks for, from `source`.
    #[must_use]
    pub fn caller(&self, source: Source) -> Caller {
        let mut caller = Caller::new(source).request_id(self.id.clone());
        if let Some(trace) = &self.trace_id {
            caller = caller.trace_id(trace.clone());
        }
        if let Some(who) = &self.identity {
            caller = caller
                .principal(who.principal.clone())
                .roles(who.roles.clone())
                .scopes(who.scopes.clone());
        }
        caller
    }
}
