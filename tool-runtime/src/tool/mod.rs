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
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
