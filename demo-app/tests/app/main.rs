//! The demo app's binary driven as a user would: its command line, its HTTP server, its MCP
//! server with the official clients. One test binary (each links separately).

mod agent;
mod assistant;
mod chaos;
mod cli;
mod console;
mod gateway;
mod mcp;
mod modules;
mod otel;
mod otel_agent;
mod otel_demo;
mod postgres;
mod redis;
mod replicas;
mod scheduler_pg;
mod serve;
mod store;
mod tasks;
mod tasks_replicas;

/// The demo app's tools, in the order every listing gives them.
pub(crate) const DEMO_TOOLS: [&str; 14] = [
    "cancel_task",
    "channel_add",
    "channel_list",
    "channel_remove",
    "device_add",
    "device_export",
    "device_list",
    "device_pair",
    "device_revoke",
    "host_execute",
    "list_tasks",
    "schedule_task",
    "web_fetch",
    "web_search",
];
