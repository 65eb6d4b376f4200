//! The cross-cutting layers of the call pipeline, one concern a file: who may see and call
//! what ([`policy`]), rate and concurrency ([`limits`]), result size ([`output_cap`]), the
//! audit log ([`audit`]), confirmation of destructive calls ([`confirm`]) and where layers plug
//! in ([`hooks`]).

pub mod audit;
pub mod confirm;
pub mod hooks;
pub mod limits;
pub(crate) mod output_cap;
pub mod policy;
