//! Integration tests that share one binary (each test binary links separately, which is most
//! of a build's time): every file here builds its registries explicitly, never from
//! `inventory`, so their tools do not meet. Files that serve `inventory`'s tools have binaries
//! of their own.

mod agreement;
mod core;
mod demo;
mod http_conformance;
mod http_log;
mod llm;
mod load;
mod mcp;
mod parsed_path;
mod schemas;
mod ui;
