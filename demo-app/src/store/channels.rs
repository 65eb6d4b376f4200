//! Channels and the deliveries made through them: what the assistant's channels ask of a store
//! ([`ChannelStore`]), and the rows it answers with.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use tool_runtime::ToolError;

/// The channel that only records what it is given, always present: where a task stored
/// without a channel delivers.
pub const LOG: &str = "log";

/// A channel as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Channel {
    /// Its name.
    pub name: String,
    /// The command that receives messages on stdin, or the webhook URL they are POSTed to.
    pub command: String,
    /// Whether it delivers.
    pub enabled: bool,
    /// The workspace it belongs to.
    pub workspace: Option<String>,
}

/// A delivery as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivery {
    /// The channel.
    pub channel: String,
    /// The chat within it.
    pub chat_id: Option<String>,
    /// The message.
    pub message: String,
    /// `delivered`, or what went wrong.
    pub outcome: String,
}

/// Where channels and their deliveries are kept. Names are unique however many processes
/// share the storage: of two adding one name, one is told it is taken.
pub trait ChannelStore: Send + Sync + 'static {
    /// Stores a new channel; `false` (and nothing changed) when one of that name exists.
    fn add(&self, channel: Channel) -> BoxFuture<'_, Result<bool, ToolError>>;
    /// The channel named `name`, if there is one.
    fn get(&self, name: String) -> BoxFuture<'_, Result<Option<Channel>, ToolError>>;
    /// The channels of one workspace, or all, by name.
    fn list(&self, workspace: Option<String>) -> BoxFuture<'_, Result<Vec<Channel>, ToolError>>;
    /// Removes the channel named `name` and returns it; `None` when there was none.
    fn remove(&self, name: String) -> BoxFuture<'_, Result<Option<Channel>, ToolError>>;
    /// Records a delivery.
    fn record(&self, delivery: Delivery) -> BoxFuture<'_, Result<(), ToolError>>;
    /// The deliveries recorded on `channel`, oldest first.
    fn deliveries(&self, channel: String) -> BoxFuture<'_, Result<Vec<Delivery>, ToolError>>;
}

/// The channels and deliveries, as the channel tools and the scheduler share them.
#[derive(Clone)]
pub struct StoredChannels(pub Arc<dyn ChannelStore>);

impl std::fmt::Debug for StoredChannels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoredChannels")
    }
}
