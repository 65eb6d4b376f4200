//! Whom an MCP session answers ([`Owner`]) and what binds it to them ([`Binding`]): kept
//! with the session in the store, so that a replica restores a session for its owner alone,
//! bound as it was.

use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionState};

/// Whom a session answers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Owner {
    /// Every caller of a server that authenticates none.
    Anonymous,
    /// The principal an authenticated caller is, with any of its tokens.
    Principal(String),
}

impl Owner {
    /// The sender of `request`: the principal the front layer authenticated, if any.
    pub(crate) fn of<B>(request: &axum::http::Request<B>) -> Self {
        match request
            .extensions()
            .get::<crate::front::requester::Requester>()
            .and_then(|r| r.identity.as_ref())
        {
            Some(who) => Owner::Principal(who.principal.clone()),
            None => Owner::Anonymous,
        }
    }
}

/// What binds a session: whom it answers, and the key of the tags of its event ids. Kept in the
/// session store with the session's `initialize` parameters, in their `_meta`, under [`BINDING`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Binding {
    pub(super) owner: Owner,
    /// 32 hex digits, random.
    pub(super) key: String,
}

/// The `_meta` key of a stored session's [`Binding`].
const BINDING: &str = "tool-runtime/session";

impl Binding {
    /// A new session's: `owner`'s, with a key of its own.
    pub(super) fn new(owner: Owner) -> Self {
        Self {
            owner,
            key: super::random_id(),
        }
    }

    /// Takes the binding out of a stored session's state; `None` when it has none (or one
    /// that does not read).
    pub(super) fn take(state: &mut SessionState) -> Option<Self> {
        let meta = state.initialize_params.meta.as_mut()?;
        let binding = meta.0.0.remove(BINDING)?;
        if meta.0.0.is_empty() {
            state.initialize_params.meta = None;
        }
        serde_json::from_value(binding).ok()
    }

    /// Puts the binding into a session's state for the store.
    pub(super) fn put(&self, state: &mut SessionState) {
        let binding = serde_json::to_value(self).expect("a binding is JSON");
        state
            .initialize_params
            .meta
            .get_or_insert_with(Default::default)
            .0
            .0
            .insert(BINDING.to_owned(), binding);
    }

    /// `event`, its id (the event store's) tagged for this MCP session: `{tag}.{id}`.
    pub(super) fn tagged(&self, mut event: ServerSseMessage) -> ServerSseMessage {
        if let Some(id) = &mut event.event_id {
            let mut tagged = self.tag(id);
            tagged.push('.');
            tagged.push_str(id);
            *id = tagged;
        }
        event
    }

    /// The event store's id in `presented`, if its tag is this MCP session's.
    pub(super) fn untagged<'a>(&self, presented: &'a str) -> Option<&'a str> {
        use subtle::ConstantTimeEq as _;
        let (tag, id) = presented.split_once('.')?;
        bool::from(tag.as_bytes().ct_eq(self.tag(id).as_bytes())).then_some(id)
    }

    /// The first 128 bits of SHA-256(key, id), as hex.
    pub(super) fn tag(&self, id: &str) -> String {
        use sha2::{Digest as _, Sha256};
        let digest = Sha256::new()
            .chain_update(self.key.as_bytes())
            .chain_update(id.as_bytes())
            .finalize();
        crate::tool::hex(&digest[..16])
    }
}
