//! Pairing codes and devices: what the device tools ask of a store ([`DeviceStore`]), and the
//! rows it answers with.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tool_runtime::ToolError;

use super::{StoreError, new_id};

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

/// Devices and pending codes, as [`DeviceStore::list`] finds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceListing {
    /// Devices, revoked ones included, oldest first.
    pub devices: Vec<DeviceRow>,
    /// Codes neither redeemed nor expired, soonest to expire first.
    pub codes: Vec<CodeRow>,
}

/// Where pairing codes and devices are kept. However many processes share the storage, a code
/// pairs at most one device, and no two pending codes have the same digits.
pub trait DeviceStore: Send + Sync + 'static {
    /// Creates a code of `length` digits, valid for `ttl`, unique among the pending codes.
    fn create_code(
        &self,
        workspace: Option<String>,
        ttl: Duration,
        length: usize,
    ) -> BoxFuture<'_, Result<CodeRow, ToolError>>;
    /// Redeems a pending, unexpired code once and creates the device named `name`:
    /// `invalid_code` when no pending code matches, `code_expired` when the newest one that
    /// does has expired.
    fn redeem_code(
        &self,
        code: String,
        name: String,
    ) -> BoxFuture<'_, Result<DeviceRow, ToolError>>;
    /// Devices and pending codes, of one workspace or all.
    fn list(&self, workspace: Option<String>) -> BoxFuture<'_, Result<DeviceListing, ToolError>>;
    /// At most `limit` devices of one workspace or all, revoked ones included, by id, after
    /// the device `after`: one page of an export.
    fn page(
        &self,
        workspace: Option<String>,
        after: Option<String>,
        limit: u32,
    ) -> BoxFuture<'_, Result<Vec<DeviceRow>, ToolError>>;
    /// The device as it is (a revocation's dry run); `not_found` when there is none.
    fn device(&self, device_id: String) -> BoxFuture<'_, Result<DeviceRow, ToolError>>;
    /// Revokes a device and returns it; revoking a revoked device changes nothing. `not_found`
    /// when there is none.
    fn revoke(&self, device_id: String) -> BoxFuture<'_, Result<DeviceRow, ToolError>>;
}

/// The devices and pairing codes, as the device tools share them.
#[derive(Clone)]
pub struct Devices(pub Arc<dyn DeviceStore>);

impl std::fmt::Debug for Devices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Devices")
    }
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

/// A duration as whole seconds, for adding to Unix seconds.
pub(super) fn seconds(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_digits_of_the_right_length() {
        for len in [4, 6, 10] {
            let d = random_digits(len).unwrap();
            assert_eq!(d.len(), len);
            assert!(d.bytes().all(|b| b.is_ascii_digit()));
        }
    }
}
