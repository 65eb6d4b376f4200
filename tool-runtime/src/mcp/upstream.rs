//! The subscriptions held on a mounted MCP server: which of its resource URIs are followed
//! here, by how many, and the session the server was asked on, so it is asked once per URI.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use rmcp::service::{RoleClient, RunningService};

use super::relay::Handler;

/// The server's resource URIs subscribed to here: for each, how many hold a subscription, and
/// the session of the server that was asked for its updates.
#[derive(Default)]
pub(super) struct Subscribed(Mutex<HashMap<String, Upstream>>);

#[derive(Default)]
pub(super) struct Upstream {
    pub(super) holders: usize,
    /// The session the server was asked on (none: not asked, or it offers no subscriptions).
    pub(super) asked_on: Weak<RunningService<RoleClient, Handler>>,
    /// Held while the server is asked, so that it is asked once.
    pub(super) asking: Arc<tokio::sync::Mutex<()>>,
}

impl Subscribed {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Upstream>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the server was asked for the updates of `uri` on `service`.
    pub(super) fn asked_on(
        &self,
        uri: &str,
        service: &Arc<RunningService<RoleClient, Handler>>,
    ) -> bool {
        self.lock()
            .get(uri)
            .and_then(|u| u.asked_on.upgrade())
            .is_some_and(|on| Arc::ptr_eq(&on, service))
    }

    /// The server was asked for the updates of `uri` on `service`.
    pub(super) fn asked(&self, uri: &str, service: &Arc<RunningService<RoleClient, Handler>>) {
        if let Some(upstream) = self.lock().get_mut(uri) {
            upstream.asked_on = Arc::downgrade(service);
        }
    }

    /// One holder of `uri` fewer. The last one gone: the session the server was asked on, if
    /// it is still open, to tell it.
    pub(super) fn release(&self, uri: &str) -> Option<Arc<RunningService<RoleClient, Handler>>> {
        let mut all = self.lock();
        let upstream = all.get_mut(uri)?;
        upstream.holders = upstream.holders.saturating_sub(1);
        if upstream.holders > 0 {
            return None;
        }
        let gone = all.remove(uri)?;
        drop(all);
        gone.asked_on
            .upgrade()
            .filter(|service| !service.is_transport_closed())
    }
}
