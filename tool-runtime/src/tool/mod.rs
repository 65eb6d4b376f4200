//! What a tool is and what it works with, beyond the names at the crate's root: its metadata
//! and annotations ([`ToolMeta`], [`Annotations`], [`Kind`], [`Rate`], [`Icon`]), a hand-written
//! call's parts ([`PendingCall`], [`Guard`], [`FromCallContext`] for injections of one's own),
//! what a call reports on the way ([`ProgressSink`], [`ProgressUpdate`], [`notify`], [`peer`]) and
//! asks its user ([`Ask`], [`Answer`]), what it returns besides the value ([`EnvelopeMeta`],
//! [`EmbeddedResource`], [`Violation`], [`Confirmation`]), the completion of resource
//! template and prompt arguments ([`Completing`], [`Completion`], [`CompletionRef`],
//! [`CompleteFn`]), and what the types of an item's signature must be ([`Parameter`],
//! [`Output`], [`ErrorType`], [`IntoToolResult`], [`TextValue`]), each a compile error in its
//! own words when they are not.

pub(crate) mod ask;
pub(crate) mod blocking;
pub(crate) mod bounds;
pub(crate) mod caller;
pub(crate) mod complete;
pub(crate) mod content;
pub(crate) mod context;
pub(crate) mod definition;
pub(crate) mod envelope;
pub(crate) mod error;
pub(crate) mod input;
pub mod notify;
pub(crate) mod options;
pub(crate) mod parsed;
pub mod peer;
pub(crate) mod secret;
pub(crate) mod state;

pub use ask::{Answer, Ask};
pub use bounds::{ErrorType, HeaderValue, IntoToolResult, Output, Parameter, TextValue};
pub use caller::{ProgressSink, ProgressUpdate};
pub use complete::{CompleteFn, Completing, Completion, CompletionRef};
pub use content::{EmbeddedResource, Icon};
pub use context::{FromCallContext, Question};
pub use definition::{Annotations, Guard, Kind, PendingCall, TaskDetach, TaskMode, ToolMeta};
pub use envelope::EnvelopeMeta;
pub use error::{Confirmation, Violation};
pub use options::{ItemOptions, Rate};

/// Bytes as lower-case hexadecimal: digests in audit records, confirmation tokens, entity tags.
/// Event ids and session ids too, on every request: by table, not by `format!`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_is_two_lower_case_digits_a_byte() {
        assert_eq!(super::hex(&[]), "");
        assert_eq!(super::hex(&[0x00, 0x0f, 0xa0, 0xff, 0x5c]), "000fa0ff5c");
    }
}
