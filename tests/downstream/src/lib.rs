//! Plays a user's crate: its own types, state and tools, depending on `tool-runtime` alone
//! (plus the serde and schemars derives for its own types).

use std::collections::BTreeMap;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_runtime::prelude::*;

/// How urgent a ticket is.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Priority {
    /// Whenever.
    Low,
    /// Soon.
    High,
    /// Now.
    VeryHigh,
}

/// A postal address.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Address {
    /// Street and number.
    pub street: String,
    /// Postal code.
    #[serde(rename = "zip-code")]
    pub zip: String,
}

/// A tree of components, to show recursive types.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Component {
    /// Its name.
    pub name: String,
    /// Its parts.
    #[serde(default)]
    pub parts: Vec<Component>,
}

/// A support ticket.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Ticket {
    /// Sequential id.
    pub id: u64,
    /// Short summary.
    pub title: String,
    /// Urgency.
    pub priority: Priority,
    /// Free-form labels.
    pub labels: Vec<String>,
    /// Free-form key-value data.
    pub metadata: BTreeMap<String, String>,
    /// Where to send someone.
    pub address: Option<Address>,
    /// The affected component.
    pub component: Option<Component>,
}

/// This crate's own state.
#[derive(Debug, Default)]
pub struct Inbox {
    tickets: Mutex<Vec<Ticket>>,
}

/// Open a support ticket.
///
/// Tickets are kept in memory.
#[tool(tags("support"), timeout = "5s")]
pub async fn ticket_open(
    inbox: State<Inbox>,
    /// Short summary
    #[arg(positional, length(min = 3, max = 80))]
    title: String,
    /// How urgent it is
    #[arg(short = 'p')]
    priority: Priority,
    /// Free-form labels
    #[arg(default = Vec::new(), length(max = 5))]
    labels: Vec<String>,
    /// Free-form key-value data
    #[arg(default = BTreeMap::new())]
    metadata: BTreeMap<String, String>,
    /// Where to send someone, if anywhere
    address: Option<Address>,
    /// The affected component
    component: Option<Component>,
    /// Follow-up contact score
    #[arg(default = 0.5, range(min = 0.0, max = 1.0))]
    score: f64,
    /// Page the on-call engineer
    #[arg(default = false)]
    page: bool,
    /// A file to attach
    attachment: Option<std::path::PathBuf>,
) -> Result<Ticket, ToolError> {
    let _ = (score, page, attachment);
    let mut tickets = inbox.tickets.lock().map_err(ToolError::internal)?;
    let ticket = Ticket {
        id: tickets.len() as u64 + 1,
        title,
        priority,
        labels,
        metadata,
        address,
        component,
    };
    tickets.push(ticket.clone());
    Ok(ticket)
}

/// List open tickets,
///   oldest first.
#[tool(annotations(read_only, idempotent), tags("support"))]
pub async fn ticket_list(
    inbox: State<Inbox>,
    /// Only tickets of this priority
    priority: Option<Priority>,
) -> Vec<Ticket> {
    let tickets = inbox.tickets.lock().map(|t| t.clone()).unwrap_or_default();
    tickets
        .into_iter()
        .filter(|t| priority.is_none_or(|p| p == t.priority))
        .collect()
}
