//! Pairing codes and devices on SQLite. Every operation that reads and then writes runs in one
//! `BEGIN IMMEDIATE` transaction, so two processes (or two connections) redeeming one code
//! pair exactly one device.

use std::time::Duration;

use futures_util::future::BoxFuture;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use tool_runtime::ToolError;

use super::Store;
use crate::store::devices::seconds;
use crate::store::{
    CodeRow, DeviceListing, DeviceRow, DeviceStore, StoreError, new_device_id, now, random_digits,
};

/// Pairing codes and devices in the demo's SQLite database.
#[derive(Debug, Clone)]
pub struct SqliteDevices(pub Store);

impl DeviceStore for SqliteDevices {
    fn create_code(
        &self,
        workspace: Option<String>,
        ttl: Duration,
        length: usize,
    ) -> BoxFuture<'_, Result<CodeRow, ToolError>> {
        Box::pin(async move {
            Ok(self
                .0
                .run(move |c| create_code(c, workspace.as_deref(), ttl, length))
                .await?)
        })
    }

    fn redeem_code(
        &self,
        code: String,
        name: String,
    ) -> BoxFuture<'_, Result<DeviceRow, ToolError>> {
        Box::pin(async move { Ok(self.0.run(move |c| redeem_code(c, &code, &name)).await?) })
    }

    fn list(&self, workspace: Option<String>) -> BoxFuture<'_, Result<DeviceListing, ToolError>> {
        Box::pin(async move {
            let (devices, codes) = self.0.run(move |c| list(c, workspace.as_deref())).await?;
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
            Ok(self
                .0
                .run(move |c| page(c, workspace.as_deref(), after.as_deref(), limit))
                .await?)
        })
    }

    fn device(&self, device_id: String) -> BoxFuture<'_, Result<DeviceRow, ToolError>> {
        Box::pin(async move { Ok(self.0.run(move |c| device(c, &device_id)).await?) })
    }

    fn revoke(&self, device_id: String) -> BoxFuture<'_, Result<DeviceRow, ToolError>> {
        Box::pin(async move { Ok(self.0.run(move |c| revoke(c, &device_id)).await?) })
    }
}

/// Creates a pending code, unique among pending codes.
pub(super) fn create_code(
    conn: &mut Connection,
    workspace: Option<&str>,
    ttl: Duration,
    length: usize,
) -> Result<CodeRow, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now();
    let expires_at = now.saturating_add(seconds(ttl));
    let code = loop {
        let candidate = random_digits(length)?;
        let taken: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM pairing_codes
               WHERE code = ?1 AND redeemed_at IS NULL AND expires_at > ?2)",
            params![candidate, now],
            |r| r.get(0),
        )?;
        if !taken {
            break candidate;
        }
    };
    tx.execute(
        "INSERT INTO pairing_codes (code, workspace, created_at, expires_at) VALUES (?1, ?2, ?3, ?4)",
        params![code, workspace, now, expires_at],
    )?;
    tx.commit()?;
    Ok(CodeRow {
        code,
        workspace: workspace.map(str::to_owned),
        expires_at,
    })
}

/// Redeems a pending, unexpired code once and creates the device.
pub(super) fn redeem_code(
    conn: &mut Connection,
    code: &str,
    name: &str,
) -> Result<DeviceRow, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now();
    let pending: Option<(i64, Option<String>, i64)> = tx
        .query_row(
            "SELECT id, workspace, expires_at FROM pairing_codes
              WHERE code = ?1 AND redeemed_at IS NULL ORDER BY expires_at DESC LIMIT 1",
            params![code],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((id, workspace, expires_at)) = pending else {
        return Err(StoreError::InvalidCode);
    };
    if expires_at <= now {
        return Err(StoreError::CodeExpired);
    }
    let device_id = new_device_id()?;
    let changed = tx.execute(
        "UPDATE pairing_codes SET redeemed_at = ?1, device_id = ?2 WHERE id = ?3 AND redeemed_at IS NULL",
        params![now, device_id, id],
    )?;
    if changed != 1 {
        return Err(StoreError::InvalidCode);
    }
    tx.execute(
        "INSERT INTO devices (device_id, name, workspace, paired_at) VALUES (?1, ?2, ?3, ?4)",
        params![device_id, name, workspace, now],
    )?;
    tx.commit()?;
    Ok(DeviceRow {
        device_id,
        name: name.to_owned(),
        workspace,
        paired_at: now,
        revoked_at: None,
    })
}

/// Devices (revoked ones included) and pending codes, optionally of one workspace.
pub(super) fn list(
    conn: &mut Connection,
    workspace: Option<&str>,
) -> Result<(Vec<DeviceRow>, Vec<CodeRow>), StoreError> {
    let now = now();
    let mut devices = conn.prepare(
        "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices
          WHERE ?1 IS NULL OR workspace = ?1 ORDER BY paired_at, device_id",
    )?;
    let devices = devices
        .query_map(params![workspace], device_row)?
        .collect::<Result<Vec<_>, _>>()?;
    let mut codes = conn.prepare(
        "SELECT code, workspace, expires_at FROM pairing_codes
          WHERE redeemed_at IS NULL AND expires_at > ?2 AND (?1 IS NULL OR workspace = ?1)
          ORDER BY expires_at, id",
    )?;
    let codes = codes
        .query_map(params![workspace, now], |r| {
            Ok(CodeRow {
                code: r.get(0)?,
                workspace: r.get(1)?,
                expires_at: r.get(2)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok((devices, codes))
}

/// At most `limit` devices, by id, after `after`.
pub(super) fn page(
    conn: &mut Connection,
    workspace: Option<&str>,
    after: Option<&str>,
    limit: u32,
) -> Result<Vec<DeviceRow>, StoreError> {
    let mut devices = conn.prepare_cached(
        "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices
          WHERE (?1 IS NULL OR workspace = ?1) AND (?2 IS NULL OR device_id > ?2)
          ORDER BY device_id LIMIT ?3",
    )?;
    let rows = devices
        .query_map(params![workspace, after, limit], device_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Reads a row of `SELECT device_id, name, workspace, paired_at, revoked_at FROM devices`.
fn device_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DeviceRow> {
    Ok(DeviceRow {
        device_id: r.get(0)?,
        name: r.get(1)?,
        workspace: r.get(2)?,
        paired_at: r.get(3)?,
        revoked_at: r.get(4)?,
    })
}

/// The device as it is, for a dry run of a revocation.
fn device(conn: &mut Connection, device_id: &str) -> Result<DeviceRow, StoreError> {
    conn.query_row(
        "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices WHERE device_id = ?1",
        params![device_id],
        device_row,
    )
    .optional()?
    .ok_or_else(|| StoreError::NotFound(device_id.to_owned()))
}

/// Revokes a device; revoking a revoked device changes nothing and returns it.
fn revoke(conn: &mut Connection, device_id: &str) -> Result<DeviceRow, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(
        "UPDATE devices SET revoked_at = ?1 WHERE device_id = ?2 AND revoked_at IS NULL",
        params![now(), device_id],
    )?;
    let row = tx
        .query_row(
            "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices WHERE device_id = ?1",
            params![device_id],
            device_row,
        )
        .optional()?
        .ok_or_else(|| StoreError::NotFound(device_id.to_owned()))?;
    tx.commit()?;
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_pairs_once_then_is_invalid() {
        let store = Store::in_memory().unwrap();
        let mut conn = store.pool.get().unwrap();
        let code = create_code(&mut conn, Some("home"), Duration::from_secs(60), 6).unwrap();
        let dev = redeem_code(&mut conn, &code.code, "phone").unwrap();
        assert!(dev.device_id.starts_with("dev_"));
        assert_eq!(dev.workspace.as_deref(), Some("home"));
        assert!(matches!(
            redeem_code(&mut conn, &code.code, "phone"),
            Err(StoreError::InvalidCode)
        ));
        let (devices, codes) = list(&mut conn, None).unwrap();
        assert_eq!(devices.len(), 1);
        assert!(codes.is_empty());
        let revoked = revoke(&mut conn, &dev.device_id).unwrap();
        assert!(revoked.revoked_at.is_some());
        assert!(matches!(
            revoke(&mut conn, "dev_x"),
            Err(StoreError::NotFound(_))
        ));
    }

    #[test]
    fn expired_codes_are_refused() {
        let store = Store::in_memory().unwrap();
        let mut conn = store.pool.get().unwrap();
        let code = create_code(&mut conn, None, Duration::ZERO, 6).unwrap();
        assert!(matches!(
            redeem_code(&mut conn, &code.code, "x"),
            Err(StoreError::CodeExpired)
        ));
    }
}
