//! The demo app's binary driven as a user would: its command line, its HTTP server, its MCP
//! server with the official clients. One test binary (each links separately).

mod agent;
mod cli;
mod gateway;
mod mcp;
mod serve;
