//! Mounted servers behind MCP authorization: reached as the application or as one signed-in
//! user (`identity`, which of them a mount is; `client`, the SDK's OAuth client; `enterprise`,
//! an enterprise's user by their identity provider's token; `workload`, a workload by its
//! platform's token; `loopback`, the browser of a program its user runs;
//! `token_file`, where that user's token is kept), or as each caller with the account they
//! connected (`accounts`, their tokens sealed in a `vault`; `connect`, the pages that connect
//! one; `mcp/per_user`, a connection per caller).

mod accounts;
pub(super) mod client;
pub(crate) mod connect;
mod enterprise;
mod identity;
mod loopback;
mod token_file;
mod vault;
mod workload;

pub use accounts::ConnectedAccounts;
pub(super) use accounts::{UserMount, UserSession, Users};
pub use client::{Browser, ClientCredentials, SignIn};
pub(super) use client::{Opening, connect_with, signed_in};
pub use enterprise::EnterpriseGrant;
pub(super) use identity::{Identity, challenge_of, connect};
pub use loopback::LoopbackBrowser;
pub use vault::TokenKeys;
pub use workload::WorkloadIdentity;
