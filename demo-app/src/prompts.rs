//! The demo app's prompt: a message inviting someone to pair a device, for a model (or an MCP
//! client's user) to send on.

use tool_runtime::prelude::*;
use tool_runtime::prompt;
use tool_runtime::prompt::PromptMessage;
use tool_runtime::tool::Completing;

use crate::store::Devices;

/// Draft a short message inviting someone to pair a new device with a workspace.
///
/// The message says how to pair and when the code expires; it never contains the code, which
/// is sent apart.
#[prompt]
pub async fn pairing_message(
    /// Who receives the message, such as "Alice"
    recipient: String,
    /// The workspace the device will join
    #[arg(complete = workspaces)]
    workspace: Option<String>,
    /// How many minutes the pairing code stays valid
    minutes: Option<u32>,
) -> Vec<PromptMessage> {
    let workspace = workspace.map_or_else(String::new, |w| format!(" to the workspace `{w}`"));
    let minutes = minutes.unwrap_or(5);
    vec![PromptMessage::user(format!(
        "Write a short, friendly message to {recipient} asking them to pair their new device\
         {workspace}. Tell them to open the app, choose \"Pair a device\" and type the code \
         they receive separately within {minutes} minutes. Do not include any code."
    ))]
}

/// The workspaces that devices or pending codes belong to, starting with what was typed.
async fn workspaces(c: Completing) -> Result<Vec<String>, ToolError> {
    let Some(devices) = c.state::<Devices>() else {
        return Ok(Vec::new());
    };
    let listing = devices.0.list(None).await?;
    let mut names: Vec<String> = listing
        .devices
        .into_iter()
        .filter_map(|d| d.workspace)
        .chain(listing.codes.into_iter().filter_map(|c| c.workspace))
        .filter(|w| w.starts_with(c.value()))
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}
