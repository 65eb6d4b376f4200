//! Counting the `/mcp` answers still being delivered, so that shutdown ends MCP sessions only
//! after them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Responses whose body is still being sent.
#[derive(Default)]
pub(super) struct Posts {
    open: AtomicUsize,
    idle: tokio::sync::Notify,
}

impl Posts {
    /// Counts one response until the returned guard is dropped.
    pub(super) fn enter(self: &Arc<Self>) -> Guard {
        self.open.fetch_add(1, Ordering::SeqCst);
        Guard(self.clone())
    }

    /// Completes when no counted response is open.
    pub(super) async fn idle(&self) {
        loop {
            // Registered before the check, so a release in between is not missed.
            let idle = self.idle.notified();
            if self.open.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }
}

pub(super) struct Guard(Arc<Posts>);

impl Drop for Guard {
    fn drop(&mut self) {
        if self.0.open.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}
