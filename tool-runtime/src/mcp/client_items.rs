//! A mounted server's resources and prompts: listed through the SDK's client when the server
//! is mounted, each read, get and completion sent to the server after our pipeline.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompletionContext, GetPromptRequestParams,
    ReadResourceRequestParams, Reference,
};

use super::client::RemoteServer;
use super::relay::Handler;
use crate::prompt::{Prompt, PromptArgument, PromptMeta, PromptReply};
use crate::resource::{Resource, ResourceBody, ResourceMeta, UriTemplate};
use crate::tool::complete::Completing;
use crate::tool::context::CallContext;
use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::notify::Change;
use crate::toolset::{Toolset as _, ToolsetItems};
use futures_util::StreamExt as _;
use rmcp::service::{RoleClient, RunningService};
use tokio::sync::broadcast::error::RecvError;

/// The server's resources, templates and prompts, as ours: resources keep their URIs and
/// are named `{server}-{name}`, prompts are named `{server}-{name}`. A template whose URI our
/// grammar does not read is left out with a warning.
pub(super) async fn items(server: Arc<RemoteServer>) -> Result<ToolsetItems, ToolError> {
    let service = server.session().await?;
    let caps = service
        .peer_info()
        .map(|i| i.capabilities.clone())
        .unwrap_or_default();
    let failed = |what: &str, e: rmcp::ServiceError| {
        ToolError::new(
            ErrorKind::UNAVAILABLE,
            format!(
                "MCP server `{}`: listing its {what} failed: {e}",
                server.name()
            ),
        )
    };
    let mut out = ToolsetItems {
        changes: Some(changes(&server)),
        ..ToolsetItems::default()
    };
    if caps.resources.is_some() {
        let resources = service
            .list_all_resources()
            .await
            .map_err(|e| failed("resources", e))?;
        for r in resources {
            if !UriTemplate::parse(&r.uri).is_ok_and(|t| t.is_static()) {
                tracing::warn!(server = %server.name(), uri = %r.uri, "a resource whose URI holds braces left out");
                continue;
            }
            let mut meta = resource_meta(
                &server,
                &r.name,
                &r.uri,
                r.title.as_ref(),
                r.description.as_ref(),
            );
            meta.mime_type = r.mime_type.clone().map(Cow::Owned);
            meta.variables.clear();
            out.resources.push(Arc::new(Remote {
                server: Arc::downgrade(&server),
                meta,
            }));
        }
        let templates = service
            .list_all_resource_templates()
            .await
            .map_err(|e| failed("resource templates", e))?;
        for t in templates {
            if UriTemplate::parse(&t.uri_template).is_err() {
                tracing::warn!(server = %server.name(), template = %t.uri_template, "a resource template of a syntax this server does not match left out");
                continue;
            }
            let mut meta = resource_meta(
                &server,
                &t.name,
                &t.uri_template,
                t.title.as_ref(),
                t.description.as_ref(),
            );
            meta.mime_type = t.mime_type.clone().map(Cow::Owned);
            // The server screens its own values, and may complete any of them.
            for v in &mut meta.variables {
                v.screened = false;
                v.completes = true;
            }
            out.resources.push(Arc::new(Remote {
                server: Arc::downgrade(&server),
                meta,
            }));
        }
    }
    if caps.prompts.is_some() {
        let prompts = service
            .list_all_prompts()
            .await
            .map_err(|e| failed("prompts", e))?;
        out.prompts.extend(
            prompts
                .into_iter()
                .map(|p| Arc::new(RemotePrompt::new(Arc::clone(&server), p)) as Arc<dyn Prompt>),
        );
    }
    Ok(out)
}

/// What the server announces from now on: its resource updates, and changes of its resources
/// and prompts.
fn changes(server: &RemoteServer) -> futures_util::stream::BoxStream<'static, Change> {
    let heard = server.item_changes.subscribe();
    futures_util::stream::unfold(heard, |mut heard| async move {
        match heard.recv().await {
            Ok(change) => Some((change, heard)),
            // Fallen behind: the lists may have changed.
            Err(RecvError::Lagged(_)) => Some((Change::ResourcesChanged, heard)),
            Err(RecvError::Closed) => None,
        }
    })
    .boxed()
}

/// The metadata of a mounted server's resource or template named `name` at `uri`.
fn resource_meta(
    server: &RemoteServer,
    name: &str,
    uri: &str,
    title: Option<&String>,
    description: Option<&String>,
) -> ResourceMeta {
    let mut meta = ResourceMeta::new(
        format!("{}-{name}", server.name()),
        uri.to_owned(),
        description.cloned().unwrap_or_default(),
    );
    if let Some(title) = title {
        meta.title = Cow::Owned(title.clone());
    }
    meta.options.defined_at = Cow::Owned(format!("MCP server `{}`", server.name()));
    meta
}

impl RemotePrompt {
    /// The server's prompt `p`, named `{server}-{name}`.
    fn new(server: Arc<RemoteServer>, p: rmcp::model::Prompt) -> Self {
        let mut meta = PromptMeta::new(
            format!("{}-{}", server.name(), p.name),
            p.description.clone().unwrap_or_default(),
        );
        if let Some(title) = &p.title {
            meta.title = Cow::Owned(title.clone());
        }
        meta.arguments = p
            .arguments
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(|a| PromptArgument {
                name: Cow::Owned(a.name),
                description: Cow::Owned(a.description.unwrap_or_default()),
                required: a.required.unwrap_or(false),
                completes: true,
            })
            .collect();
        meta.options.defined_at = Cow::Owned(format!("MCP server `{}`", server.name()));
        Self {
            server,
            remote_name: p.name,
            meta,
        }
    }
}

/// A resource or template of a mounted server. It does not keep the server: a subscription
/// to it, which keeps the resource, must not keep an unmounted server running.
struct Remote {
    server: Weak<RemoteServer>,
    meta: ResourceMeta,
}

impl Remote {
    /// Its server, while it is mounted.
    fn server(&self) -> Result<Arc<RemoteServer>, ToolError> {
        self.server.upgrade().ok_or_else(|| {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!("{} is no longer mounted", self.meta.options.defined_at),
            )
        })
    }
}

/// A prompt of a mounted server, and its name there.
struct RemotePrompt {
    server: Arc<RemoteServer>,
    remote_name: String,
    meta: PromptMeta,
}

/// A failed request to the server: its own JSON-RPC error passed on with its message (a
/// resource it does not have is `not_found`); a lost connection `unavailable`.
fn remote_error(server: &RemoteServer, e: &rmcp::ServiceError) -> ToolError {
    if let rmcp::ServiceError::McpError(data) = e {
        let kind = match data.code.0 {
            -32002 => ErrorKind::NOT_FOUND,
            -32602 if data.data.as_ref().is_some_and(|d| d.get("uri").is_some()) => {
                ErrorKind::NOT_FOUND
            }
            -32602 => ErrorKind::INVALID_ARGUMENTS,
            _ => ErrorKind::TOOL_FAILED,
        };
        return ToolError::new(
            kind,
            format!("MCP server `{}`: {}", server.name(), data.message),
        );
    }
    ToolError::new(
        ErrorKind::UNAVAILABLE,
        format!("MCP server `{}` is not available: {e}", server.name()),
    )
}

async fn complete(
    server: Arc<RemoteServer>,
    reference: Reference,
    completing: Completing,
) -> Result<Vec<String>, ToolError> {
    let service = server.session().await?;
    let mut params = CompleteRequestParams::new(
        reference,
        ArgumentInfo::new(completing.argument(), completing.value()),
    );
    if !completing.others.is_empty() {
        params.context = Some(CompletionContext::with_arguments(
            completing.others.clone().into_iter().collect(),
        ));
    }
    service
        .complete(params)
        .await
        .map(|r| r.completion.values)
        .map_err(|e| remote_error(&server, &e))
}

impl Resource for Remote {
    fn meta(&self) -> ResourceMeta {
        self.meta.clone()
    }

    fn read(
        &self,
        uri: String,
        _values: BTreeMap<String, String>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        Box::pin(async move {
            let server = self.server()?;
            let service = server.session().await?;
            let read = service
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
                .map_err(|e| remote_error(&server, &e))?;
            let contents = serde_json::to_value(read.contents)
                .and_then(serde_json::from_value)
                .map_err(|e| ToolError::internal(format_args!("unreadable contents: {e}")))?;
            Ok(ResourceBody::Contents(contents))
        })
    }

    /// Subscribes on the server, when it offers subscriptions: its updates then reach ours.
    /// The server is asked once for a URI however many hold it here (again after it
    /// reconnected), and those who ask meanwhile wait for its answer.
    fn subscribe(&self, uri: &str) -> Option<BoxFuture<'static, Result<(), ToolError>>> {
        let (server, uri) = (self.server(), uri.to_owned());
        Some(Box::pin(async move {
            let server = server?;
            let service = server.session().await?;
            // Counted from here; uncounted again unless the subscription succeeds.
            let (holder, asking) = Holder::new(&server, &uri);
            let _asking = asking.lock().await;
            if server.subscribed.asked_on(&uri, &service) {
                holder.keep();
                return Ok(());
            }
            let offered = service
                .peer_info()
                .and_then(|i| i.capabilities.resources.as_ref().and_then(|r| r.subscribe))
                == Some(true);
            if offered {
                #[allow(
                    deprecated,
                    reason = "the session is agreed by `initialize`, where resources/subscribe is how"
                )]
                let subscribed = service
                    .subscribe(rmcp::model::SubscribeRequestParams::new(uri.clone()))
                    .await;
                subscribed.map_err(|e| remote_error(&server, &e))?;
                server.subscribed.asked(&uri, &service);
            }
            holder.keep();
            Ok(())
        }))
    }

    /// One holder fewer; the last one gone, the server is told (`resources/unsubscribe`) on
    /// the session it was asked on, if that session is still open.
    fn unsubscribe(&self, uri: &str) -> Option<BoxFuture<'static, Result<(), ToolError>>> {
        let server = self.server.upgrade()?;
        let service = server.subscribed.release(uri)?;
        Some(unsubscribe(server, service, uri.to_owned()))
    }

    fn complete(
        &self,
        completing: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        let reference = Reference::for_resource(self.meta.uri.to_string());
        let server = self.server();
        Some(Box::pin(async move {
            complete(server?, reference, completing).await
        }))
    }
}

/// One holder of a subscription to `uri` of `server`, counted while it lives, uncounted when
/// dropped unless it was kept (the subscription succeeded).
struct Holder {
    server: Arc<RemoteServer>,
    uri: String,
    kept: bool,
}

impl Holder {
    /// A holder more, and the lock held while the server is asked for `uri`.
    fn new(server: &Arc<RemoteServer>, uri: &str) -> (Self, Arc<tokio::sync::Mutex<()>>) {
        let asking = {
            let mut all = server.subscribed.lock();
            let upstream = all.entry(uri.to_owned()).or_default();
            upstream.holders += 1;
            Arc::clone(&upstream.asking)
        };
        let holder = Self {
            server: Arc::clone(server),
            uri: uri.to_owned(),
            kept: false,
        };
        (holder, asking)
    }

    /// Counted for good: released by [`Resource::unsubscribe`].
    fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        let Some(service) = self.server.subscribed.release(&self.uri) else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let told = unsubscribe(Arc::clone(&self.server), service, self.uri.clone());
            runtime.spawn(async move {
                let _ = tokio::time::timeout(std::time::Duration::from_secs(10), told).await;
            });
        }
    }
}

/// Tells the server, on `service`, that the updates of `uri` are no longer wanted.
fn unsubscribe(
    server: Arc<RemoteServer>,
    service: Arc<RunningService<RoleClient, Handler>>,
    uri: String,
) -> BoxFuture<'static, Result<(), ToolError>> {
    Box::pin(async move {
        #[allow(
            deprecated,
            reason = "the session is agreed by `initialize`, where resources/unsubscribe is how"
        )]
        let unsubscribed = service
            .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(uri))
            .await;
        unsubscribed.map_err(|e| remote_error(&server, &e))
    })
}

impl Prompt for RemotePrompt {
    fn meta(&self) -> PromptMeta {
        self.meta.clone()
    }

    fn get(
        &self,
        args: BTreeMap<String, String>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, Result<PromptReply, ToolError>> {
        Box::pin(async move {
            let service = self.server.session().await?;
            let arguments = args
                .into_iter()
                .map(|(k, v)| (k, serde_json::Value::String(v)))
                .collect();
            let got = service
                .get_prompt(
                    GetPromptRequestParams::new(self.remote_name.clone()).with_arguments(arguments),
                )
                .await
                .map_err(|e| remote_error(&self.server, &e))?;
            serde_json::to_value(got)
                .and_then(serde_json::from_value)
                .map_err(|e| ToolError::internal(format_args!("unreadable messages: {e}")))
        })
    }

    fn complete(
        &self,
        completing: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        let reference = Reference::for_prompt(self.remote_name.clone());
        Some(Box::pin(complete(
            Arc::clone(&self.server),
            reference,
            completing,
        )))
    }
}
