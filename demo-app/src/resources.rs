//! The demo app's resources: its paired devices, which a client (or a model) reads rather
//! than calls a tool for. `devices://paired` lists them all; `devices://{device_id}` is one,
//! listed per device in `resources/list` and completed by id.

use tool_runtime::prelude::*;
use tool_runtime::resource;
use tool_runtime::resource::Listed;
use tool_runtime::tool::Completing;

use crate::store::Devices;
use crate::tools::Device;

/// Every paired device, revoked ones included, oldest first.
#[resource(
    "devices://paired",
    mime = "application/json",
    ttl = "10s",
    scope = "private"
)]
pub async fn paired_devices(devices: State<Devices>) -> Result<Vec<Device>, ToolError> {
    let listing = devices.0.list(None).await?;
    Ok(listing.devices.into_iter().map(Device::from).collect())
}

/// One paired device: its name, workspace, and when it was paired or revoked.
#[resource(
    "devices://{device_id}",
    mime = "application/json",
    ttl = "10s",
    scope = "private",
    list = each_device
)]
pub async fn device(
    devices: State<Devices>,
    /// The device's id, as `device_list` shows it
    #[arg(complete = device_ids)]
    device_id: String,
) -> Result<Device, ToolError> {
    Ok(devices.0.device(device_id).await?.into())
}

/// One resource per paired device, for `resources/list`.
async fn each_device(devices: State<Devices>) -> Result<Vec<Listed>, ToolError> {
    let listing = devices.0.list(None).await?;
    Ok(listing
        .devices
        .into_iter()
        .map(|d| {
            Listed::new(format!("devices://{}", d.device_id), d.name.clone()).description(match &d
                .workspace
            {
                Some(w) => format!("{} in workspace {w}", d.name),
                None => d.name,
            })
        })
        .collect())
}

/// The ids of paired devices that start with what was typed.
async fn device_ids(c: Completing) -> Result<Vec<String>, ToolError> {
    let Some(devices) = c.state::<Devices>() else {
        return Ok(Vec::new());
    };
    let listing = devices.0.list(None).await?;
    Ok(listing
        .devices
        .into_iter()
        .map(|d| d.device_id)
        .filter(|id| id.starts_with(c.value()))
        .collect())
}
