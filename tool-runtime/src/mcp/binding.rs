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

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams};
    use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionState};

    use super::*;

    fn state() -> SessionState {
        SessionState::new(InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::default(),
        ))
    }

    #[test]
    fn a_binding_is_kept_in_the_stored_state_and_taken_out_again() {
        let binding = Binding::new(Owner::Principal("ann".into()));
        let mut stored = state();
        binding.put(&mut stored);
        // Through JSON, as a store of another process keeps it.
        let mut loaded: SessionState =
            serde_json::from_str(&serde_json::to_string(&stored).unwrap()).unwrap();
        let taken = Binding::take(&mut loaded).expect("the binding");
        assert_eq!(taken.owner, binding.owner);
        assert_eq!(taken.key, binding.key);
        assert!(
            loaded.initialize_params.meta.is_none(),
            "nothing of it left"
        );
        assert!(Binding::take(&mut state()).is_none());
        // Another `_meta` key of the client's stays.
        let mut theirs = state();
        let mut meta = rmcp::model::RequestMetaObject::default();
        meta.0.0.insert("x".into(), serde_json::json!(1));
        theirs.initialize_params.meta = Some(meta);
        Binding::new(Owner::Anonymous).put(&mut theirs);
        assert_eq!(Binding::take(&mut theirs).unwrap().owner, Owner::Anonymous);
        assert_eq!(
            theirs.initialize_params.meta.unwrap().0.0["x"],
            serde_json::json!(1)
        );
    }

    #[test]
    fn an_event_id_untags_only_with_its_sessions_key() {
        let one = Binding::new(Owner::Anonymous);
        let other = Binding::new(Owner::Anonymous);
        let mut event = ServerSseMessage::retry(std::time::Duration::from_secs(1));
        event.event_id = Some("k-7".into());
        let event = one.tagged(event);
        let id = event.event_id.unwrap();
        assert_eq!(one.untagged(&id), Some("k-7"));
        assert_eq!(other.untagged(&id), None);
        // The tag is over the id: another id under it is refused.
        let (tag, _) = id.split_once('.').unwrap();
        assert_eq!(one.untagged(&format!("{tag}.k-8")), None);
        assert_eq!(one.untagged("k-7"), None);
        assert_eq!(one.untagged(""), None);
    }
}
