//! What a tool is: its metadata and call ([`definition`]), the caller and per-call handles it
//! receives ([`context`]) and what it may ask of the caller ([`peer`]), the application state injected into it ([`state`]), secret
//! parameters ([`secret`]), blocking work inside it ([`blocking`](crate::blocking)), its
//! arguments as the HTTP front end parses them ([`parsed`]), and what a call returns
//! ([`error`], [`envelope`], and [`Content`](crate::Content) for media).

pub(crate) mod ask;
pub(crate) mod blocking;
pub(crate) mod caller;
pub(crate) mod complete;
pub(crate) mod content;
pub(crate) mod context;
pub(crate) mod definition;
pub(crate) mod envelope;
pub(crate) mod error;
pub mod notify;
pub(crate) mod parsed;
pub mod peer;
pub(crate) mod secret;
pub(crate) mod state;

/// Bytes as lower-case hexadecimal: digests in audit records, confirmation tokens, entity tags.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
