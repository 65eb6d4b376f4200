//! The cross-cutting layers of the call pipeline, one concern a file: who may see and call
//! what ([`policy`]), rate and concurrency ([`limits`]), result size ([`output_cap`]), the
//! audit log ([`audit`]), confirmation of destructive calls ([`confirm`]), where layers plug in ([`hooks`]), and, for
//! network listeners, the options they take ([`server`]), bearer tokens ([`auth`]) and the
//! rules they all apply ([`safety`]).

pub mod audit;
#[cfg(feature = "http")]
pub(crate) mod auth;
pub mod confirm;
pub mod hooks;
pub mod limits;
pub(crate) mod output_cap;
pub mod policy;
#[cfg(feature = "http")]
pub(crate) mod safety;
#[cfg(feature = "http")]
pub(crate) mod server;
