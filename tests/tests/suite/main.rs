//! Integration tests that share one binary (each test binary links separately, which is most
//! of a build's time): every file here builds its registries explicitly, never from
//! `inventory`, so their tools do not meet. `tests/downstream.rs` (tools found through
//! `inventory` across crates) and `tests/tracing/` (tests that install tracing subscribers)
//! have binaries of their own.

mod agent;
mod agent_providers;
mod agent_resources;
mod agreement;
mod architecture;
mod audit;
mod cli;
mod cli_items;
mod conformance;
mod console;
mod core;
mod demo;
mod examples;
mod guards;
mod http;
mod http_conformance;
mod http_resources;
mod items;
mod json_schema_suite;
mod limits;
mod llm;
mod load;
mod mcp;
mod mcp_resources;
mod mcp_resume;
mod mcp_rounds;
mod oauth;
mod oauth_accounts;
mod otel_mcp;
mod output_cap;
mod parsed_path;
mod pipeline;
mod policy;
mod postgres;
mod redis;
mod replicas;
mod resources;
mod scale_out;
mod schemas;
mod tasks;
mod toolsets;
mod toolsets_items;
mod validator_agreement;
