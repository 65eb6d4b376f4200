//! Who is calling: bearer tokens checked against a file of static tokens ([`tokens`]), and
//! (feature `oauth`) OAuth 2.1 access tokens from an authorization server ([`oauth`]: JWTs
//! checked against the issuer's keys, or opaque tokens by introspection), with the protected
//! resource metadata and the challenges OAuth clients read ([`challenge`]).

pub(crate) mod challenge;
#[cfg(feature = "oauth")]
mod fetch;
#[cfg(feature = "oauth")]
mod keys;
#[cfg(feature = "oauth")]
pub(crate) mod oauth;
pub(crate) mod tokens;

pub use crate::front::requester::Identity;
