//! Pairing codes and devices on PostgreSQL. A code is redeemed by one conditional `UPDATE`
//! (the row's lock makes a second redemption find it redeemed), and a new code's digits are
//! checked and inserted under a transaction-level advisory lock on those digits, so that two
//! replicas never hand out the same pending code.

use std::time::Duration;

use futures_util::future::BoxFuture;
use tool_runtime::ToolError;
use tool_runtime::postgres::Postgres;
use tool_runtime::postgres::tokio_postgres::Row;

use crate::store::devices::seconds;
use crate::store::{
    CodeRow, DeviceListing, DeviceRow, DeviceStore, StoreError, new_device_id, random_digits,
};

/// Pairing codes and devices in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PostgresDevices(pub Postgres);

/// Serialises the creation of codes with the same digits (`$1`); other digits do not wait.
const LOCK_DIGITS: &str =
    "SELECT pg_advisory_xact_lock(hashtext('demo-app/pairing_codes'), hashtext($1::text))";

/// Inserts the code `$1` unless a pending code has its digits; returns its expiry.
const INSERT_CODE: &str = concat!(
    "INSERT INTO pairing_codes (code, workspace, created_at, expires_at)
     SELECT $1::text, $2::text, clock.now, clock.now + $3::bigint
       FROM (SELECT ",
    unix_now!(),
    " AS now) AS clock
      WHERE NOT EXISTS (SELECT 1 FROM pairing_codes
                         WHERE code = $1::text AND redeemed_at IS NULL AND expires_at > clock.now)
     RETURNING expires_at"
);

/// Redeems the newest unredeemed code `$1` if it has not expired, and pairs the device `$2`
/// named `$3`, in one statement: of concurrent redemptions, the first takes the row's lock and
/// the others, finding it redeemed once it is released, change nothing.
const REDEEM: &str = concat!(
    "WITH clock AS (SELECT ",
    unix_now!(),
    " AS now),
     redeemed AS (
         UPDATE pairing_codes SET redeemed_at = clock.now, device_id = $2::text
           FROM clock
          WHERE id = (SELECT id FROM pairing_codes
                       WHERE code = $1::text AND redeemed_at IS NULL
                       ORDER BY expires_at DESC, id DESC LIMIT 1)
            AND redeemed_at IS NULL AND expires_at > clock.now
         RETURNING pairing_codes.workspace, pairing_codes.redeemed_at
     )
     INSERT INTO devices (device_id, name, workspace, paired_at)
     SELECT $2::text, $3::text, workspace, redeemed_at FROM redeemed
     RETURNING device_id, name, workspace, paired_at, revoked_at"
);

/// Whether the newest unredeemed code `$1` has expired: why a redemption changed nothing.
const EXPIRED: &str = concat!(
    "SELECT expires_at <= ",
    unix_now!(),
    " FROM pairing_codes WHERE code = $1::text AND redeemed_at IS NULL
      ORDER BY expires_at DESC, id DESC LIMIT 1"
);

const DEVICES: &str = "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices
     WHERE $1::text IS NULL OR workspace = $1::text
     ORDER BY paired_at, device_id COLLATE \"C\"";

const PAGE: &str = "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices
     WHERE ($1::text IS NULL OR workspace = $1::text)
       AND ($2::text IS NULL OR device_id COLLATE \"C\" > $2::text COLLATE \"C\")
     ORDER BY device_id COLLATE \"C\" LIMIT $3::bigint";

const PENDING: &str = concat!(
    "SELECT code, workspace, expires_at FROM pairing_codes
      WHERE redeemed_at IS NULL AND expires_at > ",
    unix_now!(),
    " AND ($1::text IS NULL OR workspace = $1::text)
      ORDER BY expires_at, id"
);

const DEVICE: &str = "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices
     WHERE device_id = $1::text";

const REVOKE: &str = concat!(
    "UPDATE devices SET revoked_at = ",
    unix_now!(),
    " WHERE device_id = $1::text AND revoked_at IS NULL
      RETURNING device_id, name, workspace, paired_at, revoked_at"
);

impl PostgresDevices {
    fn device_row(&self, row: &Row) -> Result<DeviceRow, ToolError> {
        let e = |e| self.0.error(e);
        Ok(DeviceRow {
            device_id: row.try_get(0).map_err(e)?,
            name: row.try_get(1).map_err(e)?,
            workspace: row.try_get(2).map_err(e)?,
            paired_at: row.try_get(3).map_err(e)?,
            revoked_at: row.try_get(4).map_err(e)?,
        })
    }

    /// The device `device_id` as it is now.
    async fn find(&self, device_id: &str) -> Result<DeviceRow, ToolError> {
        let client = self.0.client().await?;
        let statement = client
            .prepare_cached(DEVICE)
            .await
            .map_err(|e| self.0.error(e))?;
        match client
            .query_opt(&statement, &[&device_id])
            .await
            .map_err(|e| self.0.error(e))?
        {
            Some(row) => self.device_row(&row),
            None => Err(StoreError::NotFound(device_id.to_owned()).into()),
        }
    }
}

impl DeviceStore for PostgresDevices {
    fn create_code(
        &self,
        workspace: Option<String>,
        ttl: Duration,
        length: usize,
    ) -> BoxFuture<'_, Result<CodeRow, ToolError>> {
        Box::pin(async move {
            let e = |e| self.0.error(e);
            let mut client = self.0.client().await?;
            let transaction = client.transaction().await.map_err(e)?;
            let lock = transaction.prepare_cached(LOCK_DIGITS).await.map_err(e)?;
            let insert = transaction.prepare_cached(INSERT_CODE).await.map_err(e)?;
            let ttl = seconds(ttl);
            loop {
                let code = random_digits(length)?;
                transaction.execute(&lock, &[&code]).await.map_err(e)?;
                let inserted = transaction
                    .query_opt(&insert, &[&code, &workspace, &ttl])
                    .await
                    .map_err(e)?;
                if let Some(row) = inserted {
                    let expires_at = row.try_get(0).map_err(e)?;
                    transaction.commit().await.map_err(e)?;
                    return Ok(CodeRow {
                        code,
                        workspace,
                        expires_at,
                    });
                }
            }
        })
    }

    fn redeem_code(
        &self,
        code: String,
        name: String,
    ) -> BoxFuture<'_, Result<DeviceRow, ToolError>> {
        Box::pin(async move {
            let e = |e| self.0.error(e);
            let device_id = new_device_id()?;
            let client = self.0.client().await?;
            let redeem = client.prepare_cached(REDEEM).await.map_err(e)?;
            if let Some(row) = client
                .query_opt(&redeem, &[&code, &device_id, &name])
                .await
                .map_err(e)?
            {
                return self.device_row(&row);
            }
            let expired = client.prepare_cached(EXPIRED).await.map_err(e)?;
            let newest = client.query_opt(&expired, &[&code]).await.map_err(e)?;
            let expired: Option<bool> = newest.map(|row| row.try_get(0)).transpose().map_err(e)?;
            Err(if expired == Some(true) {
                StoreError::CodeExpired
            } else {
                StoreError::InvalidCode
            }
            .into())
        })
    }

    fn list(&self, workspace: Option<String>) -> BoxFuture<'_, Result<DeviceListing, ToolError>> {
        Box::pin(async move {
            let e = |e| self.0.error(e);
            let client = self.0.client().await?;
            let devices = client.prepare_cached(DEVICES).await.map_err(e)?;
            let devices = client
                .query(&devices, &[&workspace])
                .await
                .map_err(e)?
                .iter()
                .map(|row| self.device_row(row))
                .collect::<Result<Vec<_>, _>>()?;
            let pending = client.prepare_cached(PENDING).await.map_err(e)?;
            let codes = client
                .query(&pending, &[&workspace])
                .await
                .map_err(e)?
                .iter()
                .map(|row| {
                    Ok(CodeRow {
                        code: row.try_get(0)?,
                        workspace: row.try_get(1)?,
                        expires_at: row.try_get(2)?,
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(e)?;
            Ok(DeviceListing { devices, codes })
        })
    }

    fn page(
        &self,
        workspace: Option<String>,
        after: Option<String>,
        limit: u32,
    ) -> BoxFuture<'_, Result<Vec<DeviceRow>, ToolError>> {
        Box::pin(async move {
            let e = |e| self.0.error(e);
            let client = self.0.client().await?;
            let page = client.prepare_cached(PAGE).await.map_err(e)?;
            client
                .query(&page, &[&workspace, &after, &i64::from(limit)])
                .await
                .map_err(e)?
                .iter()
                .map(|row| self.device_row(row))
                .collect()
        })
    }

    fn device(&self, device_id: String) -> BoxFuture<'_, Result<DeviceRow, ToolError>> {
        Box::pin(async move { self.find(&device_id).await })
    }

    fn revoke(&self, device_id: String) -> BoxFuture<'_, Result<DeviceRow, ToolError>> {
        Box::pin(async move {
            let e = |e| self.0.error(e);
            let revoked = {
                let client = self.0.client().await?;
                let revoke = client.prepare_cached(REVOKE).await.map_err(e)?;
                client.query_opt(&revoke, &[&device_id]).await.map_err(e)?
            };
            match revoked {
                Some(row) => self.device_row(&row),
                // Revoked already, or no such device: read it in a statement of its own, which
                // sees a revocation that committed while this one waited for the row.
                None => self.find(&device_id).await,
            }
        })
    }
}
