//! The resources and prompts a mounted toolset brings: added with its tools, followed while it
//! is mounted (an update it announces reaches the registry's subscribers; a change of its
//! resources or prompts has them listed again), removed with it.

use std::sync::Arc;

use futures_util::StreamExt as _;

use super::MountError;
use super::Registry;
use super::items::{Brought, Items};
use crate::resource::Subscription;
use crate::tool::caller::Caller;
use crate::tool::error::ToolError;
use crate::tool::notify::Change;
use crate::toolset::Toolset;

impl Registry {
    /// Mounts the resources and prompts of the toolset `name`, and follows what it announces.
    pub(super) async fn mount_items(
        &self,
        name: &str,
        toolset: Arc<dyn Toolset>,
    ) -> Result<(), MountError> {
        let items = match Arc::clone(&toolset).items().await {
            Ok(items) => items,
            Err(e) => {
                tracing::warn!(toolset = %name, error = %e, "listing the toolset's resources and prompts failed; its tools are mounted without them");
                return Ok(());
            }
        };
        let resources = names(items.resources.iter().map(|r| r.meta().name));
        let prompts = names(items.prompts.iter().map(|p| p.meta().name));
        if !resources.is_empty() || !prompts.is_empty() {
            self.items
                .replace(&[], &[], items.resources, items.prompts, true)
                .map_err(MountError::Items)?;
        }
        let watcher = items.changes.map(|mut changes| {
            let (items, name) = (Arc::clone(&self.items), name.to_owned());
            tokio::spawn(async move {
                while let Some(change) = changes.next().await {
                    match change {
                        Change::ResourceUpdated(_) => items.notifier.publish(change),
                        Change::ResourcesChanged | Change::PromptsChanged => {
                            relist(&items, &name, Arc::clone(&toolset)).await;
                        }
                    }
                }
            })
            .abort_handle()
        });
        self.items.mounted().insert(
            name.to_owned(),
            Brought {
                resources,
                prompts,
                watcher,
            },
        );
        Ok(())
    }

    /// Removes the resources and prompts the toolset `name` brought, and stops following it.
    pub(super) fn unmount_items(&self, name: &str) {
        let brought = self.items.mounted().remove(name);
        if let Some(brought) = brought {
            if let Some(watcher) = brought.watcher {
                watcher.abort();
            }
            // Removing only cannot fail.
            let _ = self.items.replace(
                &brought.resources,
                &brought.prompts,
                Vec::new(),
                Vec::new(),
                true,
            );
        }
    }

    /// Asks to hear of updates to the resource at `uri` for `caller`, who must be able to read
    /// it (else `not_found`): a mounted server's resource has its server asked to send them,
    /// until the [`Subscription`] answered is dropped.
    pub async fn subscribe_resource(
        &self,
        uri: &str,
        caller: &Caller,
    ) -> Result<Subscription, ToolError> {
        self.handle(super::Subscribe::new(uri), caller.clone())
            .await
    }

    /// Serves [`Subscribe`](super::Subscribe).
    pub(super) async fn subscribe(
        &self,
        uri: &str,
        caller: Caller,
    ) -> Result<Subscription, ToolError> {
        let ctx = self.context(caller);
        let (entry, _) = self.resource_at(&self.items.index(), uri, &ctx)?;
        match entry.resource.subscribe(uri) {
            Some(asked) => tokio::time::timeout(super::items::SUBSCRIBE_TIMEOUT, asked)
                .await
                .unwrap_or_else(|_| {
                    Err(ToolError::new(
                        crate::tool::error::ErrorKind::TIMEOUT,
                        format!("subscribing to `{uri}` took too long"),
                    ))
                }),
            None => Ok(()),
        }
        .map(|()| Subscription::new(entry.resource, uri))
    }
}

fn names(names: impl Iterator<Item = std::borrow::Cow<'static, str>>) -> Vec<String> {
    names.map(|n| n.to_string()).collect()
}

/// Lists the resources and prompts of the toolset `name` again and puts them in place of
/// those it brought before, in one change (a failure is logged and changes nothing).
async fn relist(items: &Items, name: &str, toolset: Arc<dyn Toolset>) {
    let fresh = match toolset.items().await {
        Ok(fresh) => fresh,
        Err(e) => {
            tracing::warn!(toolset = %name, error = %e, "listing the toolset's resources and prompts again failed");
            return;
        }
    };
    let Some((old_resources, old_prompts)) = items
        .mounted()
        .get(name)
        .map(|b| (b.resources.clone(), b.prompts.clone()))
    else {
        return;
    };
    let resources = names(fresh.resources.iter().map(|r| r.meta().name));
    let prompts = names(fresh.prompts.iter().map(|p| p.meta().name));
    match items.replace(
        &old_resources,
        &old_prompts,
        fresh.resources,
        fresh.prompts,
        true,
    ) {
        Ok(()) => {
            if let Some(brought) = items.mounted().get_mut(name) {
                brought.resources = resources;
                brought.prompts = prompts;
            }
        }
        Err(e) => {
            tracing::warn!(toolset = %name, error = %e, "the toolset's new resources and prompts were not mounted");
        }
    }
}
