//! Pairing codes and devices. Every operation that reads and then writes runs in one
//! `BEGIN IMMEDIATE` transaction, so two processes (or two connections) redeeming one code
//! pair exactly one device.

use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{StoreError, new_id, now};

/// A pending pairing code as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRow {
    /// The digits.
    pub code: String,
    /// The workspace it pairs into.
    pub workspace: Option<String>,
    /// Unix seconds.
    pub expires_at: i64,
}

/// A device as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceRow {
    /// `dev_` and 16 hex digits.
    pub device_id: String,
    /// The name given at pairing.
    pub name: String,
    /// The workspace.
    pub workspace: Option<String>,
    /// Unix seconds.
    pub paired_at: i64,
    /// Unix seconds, when revoked.
    pub revoked_at: Option<i64>,
}

/// `length` decimal digits from the operating system's CSPRNG, without modulo bias.
pub fn random_digits(length: usize) -> Result<String, StoreError> {
    let mut out = String::with_capacity(length);
    let mut buf = [0u8; 32];
    while out.len() < length {
        getrandom::fill(&mut buf).map_err(StoreError::Random)?;
        // 250 is the largest multiple of 10 below 256: rejecting 250..=255 keeps digits uniform.
        for b in buf.iter().filter(|b| **b < 250) {
            if out.len() == length {
                break;
            }
            out.push(char::from(b'0' + b % 10));
        }
    }
    Ok(out)
}

/// A new device id: `dev_` and 16 random hex digits.
pub fn new_device_id() -> Result<String, StoreError> {
    new_id("dev")
}

/// Creates a pending code, unique among pending codes.
pub fn create_code(
    conn: &mut Connection,
    workspace: Option<&str>,
    ttl: Duration,
    length: usize,
) -> Result<CodeRow, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now();
    let expires_at = now.saturating_add(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX));
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
pub fn redeem_code(conn: &mut Connection, code: &str, name: &str) -> Result<DeviceRow, StoreError> {
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
pub fn list(
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
pub fn device(conn: &mut Connection, device_id: &str) -> Result<DeviceRow, StoreError> {
    conn.query_row(
        "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices WHERE device_id = ?1",
        params![device_id],
        device_row,
    )
    .optional()?
    .ok_or_else(|| StoreError::NotFound(device_id.to_owned()))
}

/// Revokes a device; revoking a revoked device changes nothing and returns it.
pub fn revoke(conn: &mut Connection, device_id: &str) -> Result<DeviceRow, StoreError> {
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
    use crate::Store;

    #[test]
    fn digits_are_digits_of_the_right_length() {
        for len in [4, 6, 10] {
            let d = random_digits(len).unwrap();
            assert_eq!(d.len(), len);
            assert!(d.bytes().all(|b| b.is_ascii_digit()));
        }
    }

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
