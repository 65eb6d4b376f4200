//! The demo app's tools: pair mobile devices with short-lived codes.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use tool_runtime::Secret;
use tool_runtime::prelude::*;
use tool_runtime::tool::peer::Elicited;

use crate::store::{CodeRow, DeviceRow, Devices, rfc3339};

/// A pairing code to type into the new device.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PairingCode {
    /// The digits to enter on the device.
    pub code: String,
    /// When the code stops working (RFC 3339, UTC).
    pub expires_at: String,
    /// The workspace the device will join.
    pub workspace: Option<String>,
}

/// A paired device.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Device {
    /// Stable id, `dev_` followed by 16 hex digits.
    pub device_id: String,
    /// The name given at pairing.
    pub name: String,
    /// The workspace it belongs to.
    pub workspace: Option<String>,
    /// When it was paired (RFC 3339, UTC).
    pub paired_at: String,
    /// When it was revoked (RFC 3339, UTC), if it was.
    pub revoked_at: Option<String>,
}

/// A code waiting to be redeemed. The digits are masked: listing must not leak a usable code.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PendingCode {
    /// The code with all but its last two digits masked, such as `****10`.
    pub code_hint: String,
    /// The workspace the device will join.
    pub workspace: Option<String>,
    /// When the code stops working (RFC 3339, UTC).
    pub expires_at: String,
}

/// Devices and pending codes.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DeviceList {
    /// Paired devices, revoked ones included, oldest first.
    pub devices: Vec<Device>,
    /// Codes not yet redeemed nor expired.
    pub pending_codes: Vec<PendingCode>,
}

impl From<DeviceRow> for Device {
    fn from(d: DeviceRow) -> Self {
        Device {
            device_id: d.device_id,
            name: d.name,
            workspace: d.workspace,
            paired_at: rfc3339(d.paired_at),
            revoked_at: d.revoked_at.map(rfc3339),
        }
    }
}

impl From<CodeRow> for PendingCode {
    fn from(c: CodeRow) -> Self {
        let shown = c.code.len().saturating_sub(2);
        PendingCode {
            code_hint: format!("{}{}", "*".repeat(shown), &c.code[shown..]),
            workspace: c.workspace,
            expires_at: rfc3339(c.expires_at),
        }
    }
}

/// Generate a short-lived pairing code to onboard a new mobile device.
///
/// The code is stored until it expires or is redeemed with `device_pair`.
#[tool(
    annotations(destructive = false, read_only = false, idempotent = false),
    tags("devices")
)]
pub async fn device_add(
    devices: State<Devices>,
    /// Workspace name
    #[arg(short = 'w', length(min = 1, max = 64))]
    workspace: Option<String>,
    /// Pairing code lifetime in seconds
    #[arg(default = 300, range(min = 30, max = 86400))]
    ttl_seconds: u32,
    /// Pairing code length in digits
    #[arg(default = 6, range(min = 4, max = 10))]
    code_length: u8,
) -> Result<PairingCode, ToolError> {
    let row = devices
        .0
        .create_code(
            workspace,
            Duration::from_secs(u64::from(ttl_seconds)),
            usize::from(code_length),
        )
        .await?;
    Ok(PairingCode {
        expires_at: rfc3339(row.expires_at),
        code: row.code,
        workspace: row.workspace,
    })
}

/// Redeem a pairing code and register the new device.
///
/// A code works once, before it expires. Errors: `invalid_code` (no pending code has these
/// digits) and `code_expired`.
#[tool(annotations(destructive = false, idempotent = false), tags("devices"))]
pub async fn device_pair(
    devices: State<Devices>,
    ctx: &CallContext,
    /// The pairing code shown by device_add
    #[arg(short = 'c', pattern = "^[0-9]{4,10}$")]
    code: Secret<String>,
    /// A name for the new device, such as "Alice's phone"
    #[arg(length(min = 1, max = 100))]
    device_name: String,
) -> Result<Device, ToolError> {
    let row = devices
        .0
        .redeem_code(code.into_inner(), device_name)
        .await?;
    devices_changed(ctx, &row.device_id, true);
    Ok(row.into())
}

/// List paired devices and pending pairing codes.
///
/// Pending codes are shown masked.
#[tool(annotations(read_only, idempotent), tags("devices"))]
pub async fn device_list(
    devices: State<Devices>,
    /// Only this workspace
    #[arg(positional)]
    workspace: Option<String>,
) -> Result<DeviceList, ToolError> {
    let listing = devices.0.list(workspace).await?;
    Ok(DeviceList {
        devices: listing.devices.into_iter().map(Device::from).collect(),
        pending_codes: listing.codes.into_iter().map(PendingCode::from).collect(),
    })
}

/// Revoke a paired device.
///
/// The device can no longer connect. Revoking a revoked device changes nothing. A dry run
/// returns the device as it is, unchanged. Error: `not_found`.
#[tool(annotations(destructive, idempotent), tags("devices"), dry_run)]
pub async fn device_revoke(
    devices: State<Devices>,
    ctx: &CallContext,
    /// The device's id, as device_list shows it
    #[arg(pattern = "^dev_[0-9a-f]{16}$")]
    device_id: String,
) -> Result<Device, ToolError> {
    let row = if ctx.dry_run() {
        devices.0.device(device_id).await?
    } else {
        let row = devices.0.revoke(device_id).await?;
        devices_changed(ctx, &row.device_id, false);
        row
    };
    Ok(row.into())
}

/// The devices as CSV.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DeviceExport {
    /// A header line, then one line per device: `device_id,name,workspace,paired_at,revoked_at`.
    pub csv: String,
    /// How many devices it holds.
    pub devices: u32,
    /// Whether revoked devices are among them.
    pub include_revoked: bool,
}

#[derive(serde::Deserialize, JsonSchema)]
struct IncludeRevoked {
    /// Include the revoked devices too
    include_revoked: bool,
}

/// Export the devices as CSV, a page at a time.
///
/// Reads `page_size` devices at a time, by id, and waits `pace_ms` between pages, so that an
/// export of many devices leaves the database to the other calls; reports its progress after
/// each page, and stops when cancelled. Worth running as a task: over MCP (the tasks extension)
/// and HTTP (`Prefer: respond-async`) it answers at once with a task to follow. Without
/// `include_revoked`, it asks whether to include revoked devices (no, where no one can be
/// asked).
#[tool(
    annotations(read_only, idempotent),
    tags("devices"),
    task = "optional",
    timeout = "15m"
)]
pub async fn device_export(
    devices: State<Devices>,
    ctx: &CallContext,
    /// Only this workspace
    #[arg(short = 'w', length(min = 1, max = 64))]
    workspace: Option<String>,
    /// Include revoked devices (asked when left out)
    include_revoked: Option<bool>,
    /// Devices read at a time
    #[arg(default = 100, range(min = 1, max = 1000))]
    page_size: u32,
    /// Milliseconds to wait between pages
    #[arg(default = 250, range(min = 0, max = 10000))]
    pace_ms: u32,
) -> Result<DeviceExport, ToolError> {
    let include_revoked = match include_revoked {
        Some(given) => given,
        None => match ctx
            .question("include_revoked")
            .elicit::<IncludeRevoked>("Include revoked devices in the export?")
            .await
        {
            Ok(Elicited::Accepted(answer)) => answer.include_revoked,
            Ok(_) => false,
            Err(e) if e.kind() == ErrorKind::UNSUPPORTED => false,
            Err(e) => return Err(e),
        },
    };
    let mut csv = String::from("device_id,name,workspace,paired_at,revoked_at\n");
    let mut count = 0u32;
    let mut after = None;
    loop {
        let page = devices
            .0
            .page(workspace.clone(), after.clone(), page_size)
            .await?;
        let full = page.len() == page_size as usize;
        after = page.last().map(|d| d.device_id.clone());
        for device in page {
            if device.revoked_at.is_some() && !include_revoked {
                continue;
            }
            let device = Device::from(device);
            let fields = [
                device.device_id.as_str(),
                device.name.as_str(),
                device.workspace.as_deref().unwrap_or_default(),
                device.paired_at.as_str(),
                device.revoked_at.as_deref().unwrap_or_default(),
            ];
            let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
            csv.push_str(&line.join(","));
            csv.push('\n');
            count += 1;
        }
        ctx.progress(f64::from(count), None, Some("devices exported"));
        if !full {
            break;
        }
        tokio::time::sleep(Duration::from_millis(u64::from(pace_ms))).await;
    }
    Ok(DeviceExport {
        csv,
        devices: count,
        include_revoked,
    })
}

/// `field` as a CSV field: quoted when it holds a comma, a quote or a line break.
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

/// Tells the subscribers of the devices' resources (`devices://paired`, `devices://{id}`) that
/// they changed, and, for a device paired, that there is one resource more.
fn devices_changed(ctx: &CallContext, device_id: &str, added: bool) {
    let notifier = ctx.notifier();
    notifier.resource_updated("devices://paired");
    notifier.resource_updated(format!("devices://{device_id}"));
    if added {
        notifier.resources_changed();
    }
}
