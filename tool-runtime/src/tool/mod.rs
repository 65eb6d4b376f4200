//! What a tool is: its metadata and call ([`definition`]), the caller and per-call handles it
//! receives ([`context`]), the application state injected into it ([`state`]), secret
//! parameters ([`secret`]), blocking work inside it ([`blocking`](crate::blocking)), its
//! arguments as the HTTP front end parses them ([`parsed`]), and what a call returns
//! ([`error`], [`envelope`]).

pub(crate) mod blocking;
pub(crate) mod context;
pub(crate) mod definition;
pub(crate) mod envelope;
pub(crate) mod error;
pub(crate) mod parsed;
pub(crate) mod secret;
pub(crate) mod state;
