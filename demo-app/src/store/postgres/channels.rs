//! Channels and deliveries on PostgreSQL.

use futures_util::future::BoxFuture;
use tool_runtime::ToolError;
use tool_runtime::postgres::Postgres;
use tool_runtime::postgres::tokio_postgres::Row;
use tool_runtime::postgres::tokio_postgres::types::ToSql;

use crate::store::{Channel, ChannelStore, Delivery};

/// Channels and deliveries in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PostgresChannels(pub Postgres);

const ADD: &str = concat!(
    "INSERT INTO channels (name, command, enabled, workspace, created_at)
     VALUES ($1::text, $2::text, $3::boolean, $4::text, ",
    unix_now!(),
    ") ON CONFLICT (name) DO NOTHING"
);

const GET: &str = "SELECT name, command, enabled, workspace FROM channels WHERE name = $1::text";

const LIST: &str = "SELECT name, command, enabled, workspace FROM channels
     WHERE $1::text IS NULL OR workspace = $1::text ORDER BY name COLLATE \"C\"";

const REMOVE: &str =
    "DELETE FROM channels WHERE name = $1::text RETURNING name, command, enabled, workspace";

const RECORD: &str = concat!(
    "INSERT INTO deliveries (channel, chat_id, message, outcome, delivered_at)
     VALUES ($1::text, $2::text, $3::text, $4::text, ",
    unix_now!(),
    ")"
);

const DELIVERIES: &str = "SELECT channel, chat_id, message, outcome FROM deliveries
     WHERE channel = $1::text ORDER BY id";

fn channel_row(row: &Row) -> Result<Channel, tool_runtime::postgres::tokio_postgres::Error> {
    Ok(Channel {
        name: row.try_get(0)?,
        command: row.try_get(1)?,
        enabled: row.try_get(2)?,
        workspace: row.try_get(3)?,
    })
}

impl PostgresChannels {
    /// The rows `sql` answers with `params`.
    async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, ToolError> {
        let client = self.0.client().await?;
        let statement = client
            .prepare_cached(sql)
            .await
            .map_err(|e| self.0.error(e))?;
        client
            .query(&statement, params)
            .await
            .map_err(|e| self.0.error(e))
    }

    /// The channels among `rows`.
    fn channels(&self, rows: &[Row]) -> Result<Vec<Channel>, ToolError> {
        rows.iter()
            .map(channel_row)
            .collect::<Result<_, _>>()
            .map_err(|e| self.0.error(e))
    }
}

impl ChannelStore for PostgresChannels {
    fn add(&self, channel: Channel) -> BoxFuture<'_, Result<bool, ToolError>> {
        Box::pin(async move {
            let client = self.0.client().await?;
            let statement = client
                .prepare_cached(ADD)
                .await
                .map_err(|e| self.0.error(e))?;
            let added = client
                .execute(
                    &statement,
                    &[
                        &channel.name,
                        &channel.command,
                        &channel.enabled,
                        &channel.workspace,
                    ],
                )
                .await
                .map_err(|e| self.0.error(e))?;
            Ok(added == 1)
        })
    }

    fn get(&self, name: String) -> BoxFuture<'_, Result<Option<Channel>, ToolError>> {
        Box::pin(async move {
            let rows = self.query(GET, &[&name]).await?;
            Ok(self.channels(&rows)?.pop())
        })
    }

    fn list(&self, workspace: Option<String>) -> BoxFuture<'_, Result<Vec<Channel>, ToolError>> {
        Box::pin(async move {
            let rows = self.query(LIST, &[&workspace]).await?;
            self.channels(&rows)
        })
    }

    fn remove(&self, name: String) -> BoxFuture<'_, Result<Option<Channel>, ToolError>> {
        Box::pin(async move {
            let rows = self.query(REMOVE, &[&name]).await?;
            Ok(self.channels(&rows)?.pop())
        })
    }

    fn record(&self, delivery: Delivery) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(async move {
            self.query(
                RECORD,
                &[
                    &delivery.channel,
                    &delivery.chat_id,
                    &delivery.message,
                    &delivery.outcome,
                ],
            )
            .await
            .map(drop)
        })
    }

    fn deliveries(&self, channel: String) -> BoxFuture<'_, Result<Vec<Delivery>, ToolError>> {
        Box::pin(async move {
            let rows = self.query(DELIVERIES, &[&channel]).await?;
            rows.iter()
                .map(|row| {
                    Ok(Delivery {
                        channel: row.try_get(0)?,
                        chat_id: row.try_get(1)?,
                        message: row.try_get(2)?,
                        outcome: row.try_get(3)?,
                    })
                })
                .collect::<Result<_, _>>()
                .map_err(|e| self.0.error(e))
        })
    }
}
