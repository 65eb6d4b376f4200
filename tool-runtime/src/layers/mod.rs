//! The layers of the call pipeline, as axum's `middleware`: one concern a module, each
//! configured on the [`RegistryBuilder`](crate::registry::RegistryBuilder) and run by every
//! call whatever its front end. Who may see and call what ([`policy`]), rate and concurrency
//! ([`limits`]), the OAuth scopes a call needs ([`scopes`]), confirmation of destructive calls ([`confirm`]), the audit log ([`audit`]),
//! where layers of one's own plug in ([`hooks`]), and (feature `guards`) the URL, path and
//! command guards of tools that reach the network, the disk and the host ([`guard`]). The
//! cap on a result's size is a layer too, set by `RegistryBuilder::max_output`.

pub mod audit;
pub mod confirm;
#[cfg(feature = "guards")]
pub mod guard;
pub mod hooks;
pub mod limits;
pub(crate) mod output_cap;
pub mod policy;
pub mod scopes;
