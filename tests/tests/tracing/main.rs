//! Tests that install tracing subscribers, in a binary of their own.
//!
//! tracing caches per callsite whether anyone is interested in it, process-wide: a callsite
//! first reached while no subscriber is installed is skipped for good, and a test's own
//! (thread-scoped) subscriber would then miss it. So every test here first installs the one
//! global subscriber ([`secrets::seen`], at TRACE), which is interested in everything; tests that
//! need their own capture add a scoped one on their thread.

mod agent_key;
mod http_log;
mod secrets;
mod spans;
