//! Mounted servers behind MCP authorization: reached as the application or as one signed-in
//! user ([`client`], the SDK's OAuth client; [`loopback`], the browser of a program its user
//! runs), or as each caller with the account they connected ([`accounts`], their tokens sealed
//! in a [`vault`]; [`connect`], the pages that connect one; [`per_user`], a connection per
//! caller).

mod accounts;
pub(super) mod client;
pub(crate) mod connect;
mod loopback;
mod per_user;
mod token_file;
mod vault;

pub use accounts::ConnectedAccounts;
#[cfg(feature = "redis")]
pub(crate) use accounts::random_id;
pub use client::{Browser, ClientCredentials, SignIn};
pub(super) use client::{Identity, Opening, challenge_of, connect};
pub use loopback::LoopbackBrowser;
pub(super) use per_user::Users;
pub use vault::{MemoryTokens, TokenKeys, TokenLock, TokenStore};
