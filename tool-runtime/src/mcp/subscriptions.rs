//! Change notifications over MCP. A session begun with `initialize` hears of every change to
//! the tools, resources and prompts, and of updates to the resources it subscribed to
//! (`resources/subscribe`); a `2026-07-28` client asks for what it wants to hear with
//! `subscriptions/listen` and hears that alone, on the stream of that request.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rmcp::ErrorData;
use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, RequestContext, RoleServer, SubscriptionContext};
use tokio::sync::broadcast::error::RecvError;

use super::input::modern;
use super::results::item_error;
use super::{McpServer, caller_of, trace};
use crate::registry::Registry;
use crate::resource::Subscription;
use crate::tool::caller::Caller;
use crate::tool::notify::Change;

/// The URIs one session may follow at once unless set otherwise
/// ([`McpServer::max_subscriptions`]).
pub(super) const MAX_SUBSCRIPTIONS: usize = 1_000;

/// What one session follows: the URIs of `resources/subscribe`, each with its subscription
/// (released when the URI is unsubscribed, and every one when the session ends), and how many
/// URIs its open `subscriptions/listen` streams follow. Both count against the session's cap.
#[derive(Debug, Default)]
pub(super) struct Subscribed(Mutex<Followed>);

#[derive(Debug, Default)]
struct Followed {
    subscribed: HashMap<String, Subscription>,
    listened: usize,
}

impl Followed {
    fn len(&self) -> usize {
        self.subscribed.len() + self.listened
    }
}

impl Subscribed {
    fn lock(&self) -> std::sync::MutexGuard<'_, Followed> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the session subscribed to `uri`: one lookup, whatever else it follows.
    fn has(&self, uri: &str) -> bool {
        self.lock().subscribed.contains_key(uri)
    }

    /// Every URI the session subscribed to (for the changes it missed).
    fn all(&self) -> Vec<String> {
        self.lock().subscribed.keys().cloned().collect()
    }

    /// Whether `uri` would be a URI more than `cap` allows.
    fn full(&self, uri: &str, cap: usize) -> bool {
        let followed = self.lock();
        !followed.subscribed.contains_key(uri) && followed.len() >= cap
    }

    /// Keeps `subscription`, unless the session already has one to its URI (the new one is
    /// released) or already follows `cap` URIs (refused, and released).
    fn keep(&self, subscription: Subscription, cap: usize) -> Result<(), ErrorData> {
        let mut followed = self.lock();
        if followed.subscribed.contains_key(subscription.uri()) {
            drop(followed);
            return Ok(());
        }
        if followed.len() >= cap {
            drop(followed);
            return Err(too_many(subscription.uri(), cap));
        }
        followed
            .subscribed
            .insert(subscription.uri().to_owned(), subscription);
        Ok(())
    }

    /// The subscription to `uri`, no longer the session's (released when dropped).
    fn take(&self, uri: &str) -> Option<Subscription> {
        self.lock().subscribed.remove(uri)
    }

    /// Every subscription, no longer the session's (released when dropped).
    pub(super) fn release_all(&self) {
        let all = std::mem::take(&mut self.lock().subscribed);
        drop(all);
    }

    /// Room for a listen stream that follows `count` URIs, counted against `cap` until the
    /// stream ends (the room is dropped); refused when the session would follow more.
    fn listen(self: &Arc<Self>, count: usize, cap: usize) -> Result<Listening, ErrorData> {
        let mut followed = self.lock();
        if followed.len() + count > cap {
            let followed = followed.len();
            return Err(too_many_to_listen(count, followed, cap));
        }
        followed.listened += count;
        Ok(Listening {
            subscribed: Arc::clone(self),
            count,
        })
    }
}

/// A listen stream's URIs, counted in its session's until dropped.
#[derive(Debug)]
struct Listening {
    subscribed: Arc<Subscribed>,
    count: usize,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let mut followed = self.subscribed.lock();
        followed.listened = followed.listened.saturating_sub(self.count);
    }
}

/// The refusal of a `resources/subscribe` past the session's cap.
fn too_many(uri: &str, cap: usize) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode(-32000),
        format!(
            "this MCP session follows {cap} resources, the most one MCP session may \
             (max_subscriptions); unsubscribe from one before subscribing to `{uri}`"
        ),
        Some(serde_json::json!({"max_subscriptions": cap, "uri": uri})),
    )
}

/// The refusal of a `subscriptions/listen` whose URIs would take its session past the cap,
/// `followed` being what the session follows already.
fn too_many_to_listen(count: usize, followed: usize, cap: usize) -> ErrorData {
    let already = if followed > 0 {
        format!(" and the MCP session already follows {followed}")
    } else {
        String::new()
    };
    ErrorData::new(
        rmcp::model::ErrorCode(-32000),
        format!(
            "this listen names {count} resources{already}; one MCP session follows at most {cap} \
             (max_subscriptions)"
        ),
        Some(serde_json::json!({"max_subscriptions": cap})),
    )
}

/// Whether `caller` may read the resource at `uri`: a resource or template it sees matches it.
fn readable(registry: &Registry, caller: &Caller, uri: &str) -> bool {
    registry.can_read(uri, caller)
}

/// What a session is told of one change: the notifications, in order.
#[derive(Debug, PartialEq, Eq)]
enum Tell {
    Updated(String),
    ResourcesChanged,
    PromptsChanged,
}

/// What `change` (or the changes missed when the receiver fell behind: `None`) tells a session
/// that follows the URIs `subscribed` follows. An update costs one call of `subscribed`, for
/// its URI; `all` (every URI followed) is called only for missed changes.
fn tell(
    change: Option<Change>,
    subscribed: &dyn Fn(&str) -> bool,
    all: &dyn Fn() -> Vec<String>,
) -> Vec<Tell> {
    match change {
        Some(Change::ResourceUpdated(uri)) if subscribed(&uri) => vec![Tell::Updated(uri)],
        Some(Change::ResourceUpdated(_)) => Vec::new(),
        Some(Change::ResourcesChanged) => vec![Tell::ResourcesChanged],
        Some(Change::PromptsChanged) => vec![Tell::PromptsChanged],
        // Missed changes: anything may have changed.
        None => [Tell::ResourcesChanged, Tell::PromptsChanged]
            .into_iter()
            .chain(all().into_iter().map(Tell::Updated))
            .collect(),
    }
}

/// A change heard: `Some(None)` when the receiver fell behind, `None` when the notifier is gone.
async fn heard(changes: &mut tokio::sync::broadcast::Receiver<Change>) -> Option<Option<Change>> {
    match changes.recv().await {
        Ok(change) => Some(Some(change)),
        Err(RecvError::Lagged(missed)) => {
            tracing::warn!(
                missed,
                "an MCP session fell behind the change notifications"
            );
            Some(None)
        }
        Err(RecvError::Closed) => None,
    }
}

/// Tells the client of session `peer` of every change until the session ends: the tools',
/// the resources' and the prompts' lists, and updates of the URIs it subscribed to. When the
/// client can no longer be told, the session's subscriptions are released.
pub(super) fn watch(
    registry: &Arc<Registry>,
    peer: Peer<RoleServer>,
    subscribed: Arc<Subscribed>,
) -> tokio::task::AbortHandle {
    let mut tools = registry.changes();
    let mut changes = registry.notifier().subscribe();
    tokio::spawn(async move {
        'told: loop {
            let told = tokio::select! {
                moved = tools.changed() => {
                    if moved.is_err() {
                        break 'told;
                    }
                    vec![None]
                }
                change = heard(&mut changes) => {
                    let Some(change) = change else { break 'told };
                    tell(change, &|uri| subscribed.has(uri), &|| subscribed.all())
                        .into_iter()
                        .map(Some)
                        .collect()
                }
            };
            for tell in told {
                let sent = match tell {
                    None => peer.notify_tool_list_changed().await,
                    Some(Tell::Updated(uri)) => {
                        peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                            .await
                    }
                    Some(Tell::ResourcesChanged) => peer.notify_resource_list_changed().await,
                    Some(Tell::PromptsChanged) => peer.notify_prompt_list_changed().await,
                };
                if sent.is_err() {
                    break 'told;
                }
            }
        }
        subscribed.release_all();
    })
    .abort_handle()
}

/// What `subscriptions/listen` accepts of a filter: every list's changes, and updates of the
/// URIs asked for (those the caller cannot read are never sent), none of them when it names
/// more than `cap` (the listen is then refused).
pub(super) fn accepted(requested: &SubscriptionFilter, cap: usize) -> SubscriptionFilter {
    let uris = match &requested.resource_subscriptions {
        Some(uris) if uris.len() <= cap => distinct(uris),
        _ => Vec::new(),
    };
    SubscriptionFilter::builder()
        .tools_list_changed()
        .prompts_list_changed()
        .resources_list_changed()
        .resource_subscriptions(uris)
        .build()
}

/// `uris` without repeats, in order.
fn distinct(uris: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    uris.iter()
        .filter(|uri| seen.insert(uri.as_str()))
        .cloned()
        .collect()
}

impl McpServer {
    /// `resources/subscribe`: the session hears of updates to the resource at `uri`, which
    /// the caller must be able to read, unless it already follows as many URIs as it may
    /// ([`McpServer::max_subscriptions`]). Subscribing again to a URI changes nothing.
    pub(super) async fn subscribe_to(
        &self,
        uri: String,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        trace::Served::new("resources/subscribe", Some(&uri), &context)
            .run(async {
                let cap = self.subscription_cap();
                let subscribed = &self.session.subscribed;
                if subscribed.has(&uri) {
                    return Ok(());
                }
                // Refused before a mounted server is asked, and again after, for the requests
                // that were under way meanwhile.
                if subscribed.full(&uri, cap) {
                    return Err(too_many(&uri, cap));
                }
                let subscription = self
                    .inner
                    .registry
                    .subscribe_resource(&uri, &caller_of(&context))
                    .await
                    .map_err(|e| item_error(&e, modern(&context)))?;
                subscribed.keep(subscription, cap)
            })
            .await
    }

    /// `resources/unsubscribe`: no more updates of `uri` (subscribed or not); a mounted
    /// server's resource is released on that server once no session follows it.
    pub(super) async fn unsubscribe_from(
        &self,
        uri: String,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        trace::Served::new("resources/unsubscribe", Some(&uri), &context)
            .run(async {
                drop(self.session.subscribed.take(&uri));
                Ok(())
            })
            .await
    }

    /// `subscriptions/listen` (2026-07-28): the notifications the accepted filter names, on
    /// the request's stream, until the client cancels it. Its URIs count against the
    /// session's cap while it is open; a filter that would take the session past it is refused.
    pub(super) async fn listen_to(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let request = context.request_context();
        let served = trace::Served::new("subscriptions/listen", None, request);
        let caller = caller_of(request);
        let registry = Arc::clone(&self.inner.registry);
        served
            .run(async {
                let cap = self.subscription_cap();
                let named = context
                    .requested()
                    .resource_subscriptions
                    .as_ref()
                    .map_or(0, Vec::len);
                // Such a filter had none of its URIs accepted (`accepted`): refused by name.
                if named > cap {
                    return Err(too_many_to_listen(named, 0, cap));
                }
                let accepted = context.accepted();
                let sink = context.sink();
                let wanted: HashSet<&str> = accepted
                    .resource_subscriptions
                    .iter()
                    .flatten()
                    .map(String::as_str)
                    .collect();
                let _room = self.session.subscribed.listen(wanted.len(), cap)?;
                // A mounted server's resource: its server is asked to send updates, until the
                // stream ends.
                let mut held = Vec::with_capacity(wanted.len());
                for &uri in &wanted {
                    match registry.subscribe_resource(uri, &caller).await {
                        Ok(subscription) => held.push(subscription),
                        Err(e) => {
                            tracing::debug!(%uri, error = %e, "a listened-to resource was not subscribed");
                        }
                    }
                }
                let mut tools = registry.changes();
                let mut changes = registry.notifier().subscribe();
                let wants = |uri: &str| wanted.contains(uri) && readable(&registry, &caller, uri);
                let all = || {
                    wanted
                        .iter()
                        .filter(|uri| readable(&registry, &caller, uri))
                        .map(|&uri| uri.to_owned())
                        .collect()
                };
                loop {
                    let told = tokio::select! {
                        () = context.cancelled() => return Ok(()),
                        moved = tools.changed() => {
                            if moved.is_err() {
                                return Ok(());
                            }
                            if accepted.tools_list_changed == Some(true)
                                && sink.notify_tool_list_changed().await.is_err()
                            {
                                return Ok(());
                            }
                            continue;
                        }
                        change = heard(&mut changes) => {
                            let Some(change) = change else { return Ok(()) };
                            tell(change, &wants, &all)
                        }
                    };
                    for tell in told {
                        let sent = match tell {
                            Tell::Updated(uri) => sink.notify_resource_updated(uri).await,
                            Tell::ResourcesChanged
                                if accepted.resources_list_changed == Some(true) =>
                            {
                                sink.notify_resource_list_changed().await
                            }
                            Tell::PromptsChanged if accepted.prompts_list_changed == Some(true) => {
                                sink.notify_prompt_list_changed().await
                            }
                            _ => Ok(()),
                        };
                        if sent.is_err() {
                            return Ok(());
                        }
                    }
                }
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::resource::{Resource, ResourceBody, ResourceMeta};

    #[test]
    fn updates_reach_subscribers_only_and_missed_changes_tell_everything() {
        let subscribed = |uri: &str| uri == "a://1";
        let all = || vec!["a://1".to_owned()];
        assert_eq!(
            tell(
                Some(Change::ResourceUpdated("a://1".into())),
                &subscribed,
                &all
            ),
            vec![Tell::Updated("a://1".into())]
        );
        assert!(
            tell(
                Some(Change::ResourceUpdated("a://2".into())),
                &subscribed,
                &all
            )
            .is_empty()
        );
        assert_eq!(
            tell(None, &subscribed, &all),
            vec![
                Tell::ResourcesChanged,
                Tell::PromptsChanged,
                Tell::Updated("a://1".into())
            ]
        );
    }

    #[test]
    fn a_change_looks_up_its_own_uri_and_never_reads_the_whole_set() {
        let (looked_up, read_all) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let subscribed = |uri: &str| {
            looked_up.fetch_add(1, Ordering::Relaxed);
            uri == "a://1"
        };
        let all = || {
            read_all.fetch_add(1, Ordering::Relaxed);
            Vec::new()
        };
        for change in [
            Change::ResourceUpdated("a://1".into()),
            Change::ResourceUpdated("a://2".into()),
            Change::ResourcesChanged,
            Change::PromptsChanged,
        ] {
            tell(Some(change), &subscribed, &all);
        }
        assert_eq!(looked_up.load(Ordering::Relaxed), 2);
        assert_eq!(read_all.load(Ordering::Relaxed), 0);
        tell(None, &subscribed, &all);
        assert_eq!(read_all.load(Ordering::Relaxed), 1);
    }

    /// A resource that counts the subscriptions released.
    struct Counted(Arc<AtomicUsize>);

    impl Resource for Counted {
        fn meta(&self) -> ResourceMeta {
            ResourceMeta::new("counted", "c://{id}", "Counts releases")
        }

        fn read(
            &self,
            _: String,
            _: std::collections::BTreeMap<String, String>,
            _: crate::CallContext,
        ) -> futures_util::future::BoxFuture<'_, Result<ResourceBody, crate::ToolError>> {
            Box::pin(async { Ok(ResourceBody::Text(String::new())) })
        }

        fn unsubscribe(
            &self,
            _: &str,
        ) -> Option<futures_util::future::BoxFuture<'static, Result<(), crate::ToolError>>>
        {
            self.0.fetch_add(1, Ordering::Relaxed);
            None
        }
    }

    #[test]
    fn a_session_follows_at_most_its_cap_and_releases_what_it_lets_go() {
        let released = Arc::new(AtomicUsize::new(0));
        let resource: Arc<dyn Resource> = Arc::new(Counted(Arc::clone(&released)));
        let subscription = |uri: &str| Subscription::new(Arc::clone(&resource), uri);
        let session = Arc::new(Subscribed::default());
        session.keep(subscription("c://1"), 2).unwrap();
        session.keep(subscription("c://2"), 2).unwrap();
        // A URI it has: nothing more held, the new subscription released.
        session.keep(subscription("c://1"), 2).unwrap();
        assert_eq!(released.load(Ordering::Relaxed), 1);
        assert!(!session.full("c://1", 2));
        // A third: refused, naming the cap, and released.
        assert!(session.full("c://3", 2));
        let refused = session.keep(subscription("c://3"), 2).unwrap_err();
        assert_eq!(refused.code.0, -32000);
        assert!(
            refused.message.contains("follows 2 resources") && refused.message.contains("c://3"),
            "{}",
            refused.message
        );
        assert_eq!(released.load(Ordering::Relaxed), 2);
        // A listen stream's URIs count too, while it is open.
        let refused = session.listen(1, 2).unwrap_err();
        assert!(refused.message.contains("at most 2"), "{}", refused.message);
        drop(session.take("c://2"));
        assert_eq!(released.load(Ordering::Relaxed), 3);
        let listening = session.listen(1, 2).unwrap();
        assert!(session.full("c://3", 2));
        drop(listening);
        assert!(!session.full("c://3", 2));
        // The session's end releases the rest.
        session.release_all();
        assert_eq!(released.load(Ordering::Relaxed), 4);
        assert_eq!(session.all(), Vec::<String>::new());
    }

    #[test]
    fn a_listen_naming_more_than_the_cap_has_none_of_its_uris_accepted() {
        let requested = |uris: &[&str]| {
            SubscriptionFilter::builder()
                .resource_subscriptions(uris.iter().copied())
                .build()
        };
        let accepted = accepted(&requested(&["a://1", "a://2", "a://1"]), 3);
        assert_eq!(
            accepted.resource_subscriptions,
            Some(vec!["a://1".to_owned(), "a://2".to_owned()])
        );
        let accepted = super::accepted(&requested(&["a://1", "a://2", "a://3"]), 2);
        assert_eq!(accepted.resource_subscriptions, Some(Vec::new()));
        assert_eq!(accepted.tools_list_changed, Some(true));
    }
}
