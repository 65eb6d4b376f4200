//! Channels: where the assistant's messages go. A channel runs a command with the message on
//! its stdin (through the command guard), or POSTs it to a webhook (through the URL guard);
//! the built-in `log` channel only records it. Every delivery is recorded.

use schemars::JsonSchema;
use serde::Serialize;
use tool_runtime::layers::guard::CommandPolicy;
use tool_runtime::prelude::*;

use super::web::Web;
use crate::store::StoredChannels;
pub use crate::store::{Channel, Delivery, LOG};

/// Channels and how they deliver.
#[derive(Debug, Clone)]
pub struct Channels {
    store: StoredChannels,
    commands: CommandPolicy,
    web: Web,
}

fn is_webhook(command: &str) -> bool {
    command.starts_with("http://") || command.starts_with("https://")
}

impl Channels {
    /// Channels in `store`, running commands under `commands` and webhooks through `web`.
    #[must_use]
    pub fn new(store: StoredChannels, commands: CommandPolicy, web: Web) -> Self {
        Self {
            store,
            commands,
            web,
        }
    }

    /// Checks what a channel would run, before it is stored.
    fn check(&self, command: &str) -> Result<(), ToolError> {
        if is_webhook(command) {
            self.web.policy().check(command).map(drop)
        } else {
            self.commands.parse(command).map(drop)
        }
    }

    /// Delivers `message` on `channel` (to `chat_id` within it), and records the outcome.
    pub async fn deliver(
        &self,
        channel: &str,
        chat_id: Option<&str>,
        message: &str,
    ) -> Result<(), ToolError> {
        let outcome = self.send(channel, chat_id, message).await;
        let record = Delivery {
            channel: channel.to_owned(),
            chat_id: chat_id.map(str::to_owned),
            message: message.to_owned(),
            outcome: match &outcome {
                Ok(()) => "delivered".to_owned(),
                Err(e) => format!("{}: {}", e.kind(), e.message()),
            },
        };
        self.store.0.record(record).await?;
        outcome
    }

    async fn send(
        &self,
        channel: &str,
        chat_id: Option<&str>,
        message: &str,
    ) -> Result<(), ToolError> {
        if channel == LOG {
            // Outside every span: the message (an agent's answer) is written to the log, never
            // exported on the span of the run that delivers it.
            tracing::info!(target: "demo_app::channels", parent: None, chat_id, message, "log channel");
            return Ok(());
        }
        let Some(found) = self.store.0.get(channel.to_owned()).await? else {
            return Err(ToolError::not_found(format!("no channel `{channel}`")));
        };
        if !found.enabled {
            return Err(ToolError::new(
                "channel_disabled",
                format!("channel `{channel}` is disabled"),
            )
            .with_status(409));
        }
        if is_webhook(&found.command) {
            let response = self
                .web
                .client()?
                .post(found.command.as_str())
                .json(&serde_json::json!({
                    "channel": channel, "chat_id": chat_id, "message": message,
                }))
                .send()
                .await?;
            if !response.is_success() {
                return Err(ToolError::new(
                    tool_runtime::ErrorKind::UNAVAILABLE,
                    format!("the webhook answered with HTTP {}", response.status()),
                ));
            }
            return Ok(());
        }
        let output = self
            .commands
            .run_with_input(&found.command, message.as_bytes())
            .await?;
        if output.success() {
            Ok(())
        } else {
            Err(ToolError::new(
                "command_failed",
                format!(
                    "the channel's command exited with {:?}: {}",
                    output.code,
                    output.stderr.trim()
                ),
            )
            .with_status(422))
        }
    }

    /// The deliveries recorded on `channel`, oldest first.
    pub async fn deliveries(&self, channel: &str) -> Result<Vec<Delivery>, ToolError> {
        self.store.0.deliveries(channel.to_owned()).await
    }
}

/// Add a channel that delivers the assistant's messages.
///
/// `command` is a command line that gets each message on its stdin, or an http(s) URL each
/// message is POSTed to as JSON. The command's program must be among `[channels] allowed_commands`; it runs without a shell.
/// Errors: `conflict` (the name is taken), `forbidden` (a program or URL the guards refuse).
#[tool(annotations(destructive = false, idempotent = false), tags("channels"))]
pub async fn channel_add(
    channels: State<Channels>,
    /// The channel's name
    #[arg(pattern = "^[a-z0-9][a-z0-9_-]{0,31}$")]
    channel_name: String,
    /// The command line, or the webhook's URL
    #[arg(length(min = 1, max = 2048))]
    command: String,
    /// Whether it delivers right away
    #[arg(default = true)]
    enabled: bool,
    /// The workspace it belongs to
    #[arg(length(min = 1, max = 64))]
    workspace: Option<String>,
) -> Result<Channel, ToolError> {
    if channel_name == LOG {
        return Err(conflict(LOG));
    }
    channels.check(&command)?;
    let channel = Channel {
        name: channel_name,
        command,
        enabled,
        workspace,
    };
    if !channels.store.0.add(channel.clone()).await? {
        return Err(conflict(&channel.name));
    }
    Ok(channel)
}

fn conflict(name: &str) -> ToolError {
    ToolError::new(
        "conflict",
        format!("a channel named `{name}` exists; remove it first or choose another name"),
    )
    .with_status(409)
}

/// The channels.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ChannelList {
    /// Every channel, the built-in `log` first.
    pub channels: Vec<Channel>,
}

/// List the channels messages can be delivered to.
#[tool(annotations(read_only, idempotent), tags("channels"))]
pub async fn channel_list(
    channels: State<Channels>,
    /// Only this workspace's channels (and `log`)
    #[arg(positional)]
    workspace: Option<String>,
) -> Result<ChannelList, ToolError> {
    let mut list = vec![Channel {
        name: LOG.to_owned(),
        command: "(records messages)".to_owned(),
        enabled: true,
        workspace: None,
    }];
    list.extend(channels.store.0.list(workspace).await?);
    Ok(ChannelList { channels: list })
}

/// Remove a channel.
///
/// Tasks that deliver to it then fail to deliver, saying so. Error: `not_found`.
#[tool(annotations(destructive, idempotent), tags("channels"))]
pub async fn channel_remove(
    channels: State<Channels>,
    /// The channel's name
    #[arg(positional, pattern = "^[a-z0-9][a-z0-9_-]{0,31}$")]
    channel_name: String,
) -> Result<Channel, ToolError> {
    channels
        .store
        .0
        .remove(channel_name.clone())
        .await?
        .ok_or_else(|| ToolError::not_found(format!("no channel `{channel_name}`")))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tool_runtime::layers::guard::UrlPolicy;

    use super::*;

    /// Each way a channel delivers, and what is recorded when it cannot.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn channels_deliver_by_webhook_by_command_and_to_the_log() {
        let posted: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
        let seen = posted.clone();
        let hook = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |axum::Json(body): axum::Json<serde_json::Value>| {
                let seen = seen.clone();
                async move { seen.lock().unwrap().push(body) }
            }),
        );
        let base = tool_test_support::serve_on_loopback(hook).await;
        let dir = tool_test_support::TempDir::new("demo-channels");
        let stores = crate::Stores::in_memory().unwrap();
        let web = Web::new(
            UrlPolicy::new().allow_hosts(["127.0.0.1"]),
            None,
            String::new(),
            String::new(),
        );
        let channels = Channels::new(stores.channels, CommandPolicy::new(["tee"]), web);
        let out = dir.join("out.txt");
        let registry = crate::registry_builder()
            .tool(channel_add::descriptor())
            .state(stores.devices)
            .state(channels.clone())
            .build()
            .unwrap();
        let add = |name: &str, command: String, enabled: bool| {
            let args =
                serde_json::json!({"channel_name": name, "command": command, "enabled": enabled});
            let registry = &registry;
            async move {
                registry
                    .call(
                        "channel_add",
                        args,
                        tool_runtime::Caller::new(tool_runtime::Source::Internal),
                    )
                    .await
            }
        };
        assert!(
            add("hook", format!("{base}/hook"), true)
                .await
                .result()
                .is_some()
        );
        assert!(
            add("file", format!("tee {}", out.display()), true)
                .await
                .result()
                .is_some()
        );
        assert!(
            add("off", format!("tee {}", out.display()), false)
                .await
                .result()
                .is_some()
        );
        let taken = add("hook", "tee x".to_owned(), true).await;
        assert_eq!(taken.error().unwrap().kind(), "conflict");
        let refused = add("shell", "sh -c 'echo hi'".to_owned(), true).await;
        assert_eq!(refused.error().unwrap().kind(), "forbidden");
        let private = add("intranet", "http://10.0.0.1/hook".to_owned(), true).await;
        assert_eq!(
            private.error().unwrap().details().unwrap()["rule"],
            "private"
        );

        channels
            .deliver("hook", Some("chat-1"), "to the hook")
            .await
            .unwrap();
        channels.deliver("file", None, "to the file").await.unwrap();
        channels.deliver(LOG, None, "to the log").await.unwrap();
        let off = channels.deliver("off", None, "nowhere").await.unwrap_err();
        assert_eq!(off.kind(), "channel_disabled");
        let missing = channels.deliver("gone", None, "nowhere").await.unwrap_err();
        assert_eq!(missing.kind(), "not_found");

        assert_eq!(
            posted.lock().unwrap().clone(),
            [serde_json::json!({"channel": "hook", "chat_id": "chat-1", "message": "to the hook"})]
        );
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "to the file");
        let recorded = channels.deliveries("off").await.unwrap();
        assert_eq!(
            recorded[0].outcome,
            "channel_disabled: channel `off` is disabled"
        );
        assert_eq!(
            channels.deliveries(LOG).await.unwrap()[0].message,
            "to the log"
        );
    }
}
