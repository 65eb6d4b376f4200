//! Channels and deliveries on SQLite.

use futures_util::future::BoxFuture;
use rusqlite::{OptionalExtension, params};
use tool_runtime::ToolError;

use super::Store;
use crate::store::{Channel, ChannelStore, Delivery, now};

/// Channels and deliveries in the demo's SQLite database.
#[derive(Debug, Clone)]
pub struct SqliteChannels(pub Store);

/// Reads a row of `SELECT name, command, enabled, workspace FROM channels`.
fn channel_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Channel> {
    Ok(Channel {
        name: r.get(0)?,
        command: r.get(1)?,
        enabled: r.get(2)?,
        workspace: r.get(3)?,
    })
}

impl ChannelStore for SqliteChannels {
    fn add(&self, channel: Channel) -> BoxFuture<'_, Result<bool, ToolError>> {
        Box::pin(async move {
            let added = self
                .0
                .run(move |c| {
                    Ok(c.execute(
                        "INSERT INTO channels (name, command, enabled, workspace, created_at)
                         VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (name) DO NOTHING",
                        params![
                            channel.name,
                            channel.command,
                            channel.enabled,
                            channel.workspace,
                            now()
                        ],
                    )?)
                })
                .await?;
            Ok(added == 1)
        })
    }

    fn get(&self, name: String) -> BoxFuture<'_, Result<Option<Channel>, ToolError>> {
        Box::pin(async move {
            Ok(self
                .0
                .run(move |c| {
                    Ok(c.query_row(
                        "SELECT name, command, enabled, workspace FROM channels WHERE name = ?1",
                        params![name],
                        channel_row,
                    )
                    .optional()?)
                })
                .await?)
        })
    }

    fn list(&self, workspace: Option<String>) -> BoxFuture<'_, Result<Vec<Channel>, ToolError>> {
        Box::pin(async move {
            Ok(self
                .0
                .run(move |c| {
                    let mut statement = c.prepare(
                        "SELECT name, command, enabled, workspace FROM channels
                         WHERE ?1 IS NULL OR workspace = ?1 ORDER BY name",
                    )?;
                    let rows = statement.query_map(params![workspace], channel_row)?;
                    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
                })
                .await?)
        })
    }

    fn remove(&self, name: String) -> BoxFuture<'_, Result<Option<Channel>, ToolError>> {
        Box::pin(async move {
            Ok(self
                .0
                .run(move |c| {
                    Ok(c.query_row(
                        "DELETE FROM channels WHERE name = ?1
                         RETURNING name, command, enabled, workspace",
                        params![name],
                        channel_row,
                    )
                    .optional()?)
                })
                .await?)
        })
    }

    fn record(&self, delivery: Delivery) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(async move {
            self.0
                .run(move |c| {
                    c.execute(
                        "INSERT INTO deliveries (channel, chat_id, message, outcome, delivered_at)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![
                            delivery.channel,
                            delivery.chat_id,
                            delivery.message,
                            delivery.outcome,
                            now()
                        ],
                    )?;
                    Ok(())
                })
                .await?;
            Ok(())
        })
    }

    fn deliveries(&self, channel: String) -> BoxFuture<'_, Result<Vec<Delivery>, ToolError>> {
        Box::pin(async move {
            Ok(self
                .0
                .run(move |c| {
                    let mut statement = c.prepare(
                        "SELECT channel, chat_id, message, outcome FROM deliveries
                         WHERE channel = ?1 ORDER BY id",
                    )?;
                    let rows = statement.query_map(params![channel], |r| {
                        Ok(Delivery {
                            channel: r.get(0)?,
                            chat_id: r.get(1)?,
                            message: r.get(2)?,
                            outcome: r.get(3)?,
                        })
                    })?;
                    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
                })
                .await?)
        })
    }
}
