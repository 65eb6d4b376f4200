//! Change notifications: a tool, resource or prompt says that a resource changed, or that the
//! set of resources or prompts did, and every front end that follows changes (MCP's
//! subscriptions) hears it, on every replica when the notifier is shared.

use std::sync::Arc;

use tokio::sync::broadcast;

/// A change that clients may follow.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "change", content = "uri", rename_all = "snake_case")]
pub enum Change {
    /// The contents of the resource at this URI changed.
    ResourceUpdated(String),
    /// Resources were added or removed.
    ResourcesChanged,
    /// Prompts were added or removed.
    PromptsChanged,
}

/// Where changes are published and heard. [`MemoryNotifier`] (the default) reaches the
/// subscribers of this process; a shared one (Redis's pub/sub, with the `redis` feature)
/// reaches those of every replica.
///
/// Tools, resources and prompts publish through their context:
///
/// ```
/// use tool_runtime::{CallContext, ToolError, tool};
///
/// /// Rename the device.
/// #[tool]
/// async fn device_rename(id: String, name: String, ctx: &CallContext) -> Result<(), ToolError> {
///     // ... store the new name, then:
///     ctx.notifier().resource_updated(format!("devices://{id}"));
///     Ok(())
/// }
/// ```
pub trait Notifier: Send + Sync + 'static {
    /// Publishes `change` to every subscriber.
    fn publish(&self, change: Change);
    /// A receiver of every change published from now on.
    fn subscribe(&self) -> broadcast::Receiver<Change>;
}

impl dyn Notifier {
    /// The resource at `uri` changed: its subscribers are told.
    pub fn resource_updated(&self, uri: impl Into<String>) {
        self.publish(Change::ResourceUpdated(uri.into()));
    }

    /// Resources were added or removed.
    pub fn resources_changed(&self) {
        self.publish(Change::ResourcesChanged);
    }

    /// Prompts were added or removed.
    pub fn prompts_changed(&self) {
        self.publish(Change::PromptsChanged);
    }
}

/// The notifier of one process: a broadcast channel. Subscribers that fall more than 1,024
/// changes behind miss the oldest.
#[derive(Debug, Clone)]
pub struct MemoryNotifier(broadcast::Sender<Change>);

impl MemoryNotifier {
    /// A notifier with no subscribers yet.
    #[must_use]
    pub fn new() -> Self {
        Self(broadcast::channel(1024).0)
    }
}

impl Default for MemoryNotifier {
    fn default() -> Self {
        Self::new()
    }
}

impl Notifier for MemoryNotifier {
    fn publish(&self, change: Change) {
        // No subscriber: nobody to tell.
        let _ = self.0.send(change);
    }

    fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.0.subscribe()
    }
}

/// The notifier as the registry's state, which every context reads.
#[derive(Clone)]
pub(crate) struct Notifications(pub(crate) Arc<dyn Notifier>);

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn subscribers_hear_what_is_published_after_they_subscribe() {
        let notifier: Arc<dyn Notifier> = Arc::new(MemoryNotifier::new());
        notifier.resources_changed();
        let mut rx = notifier.subscribe();
        notifier.resource_updated("devices://d1");
        notifier.prompts_changed();
        assert_eq!(
            rx.recv().await.unwrap(),
            Change::ResourceUpdated("devices://d1".into())
        );
        assert_eq!(rx.recv().await.unwrap(), Change::PromptsChanged);
    }
}
