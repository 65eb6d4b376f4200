//! Resources over MCP: `resources/list`, `resources/templates/list`, `resources/read` and
//! `completion/complete`, each answered from the registry for the request's caller.

use std::collections::BTreeMap;

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope as WireScope, CompleteRequestParams, CompleteResult, CompletionInfo,
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference,
    ResourceContents, ResourceTemplate,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::input::modern;
use super::results::item_error;
use super::{McpServer, caller_of, pages, trace};
use crate::registry::{Caching, ListResources};
use crate::resource::{Listed, ResourceMeta};
use crate::tool::complete::CompletionRef;
use crate::tool::error::ToolError;

/// `annotations` (`audience`, `priority`) and `icons` of a resource, as MCP lists them.
fn decorate(item: &mut serde_json::Map<String, Value>, meta: &ResourceMeta) {
    let mut annotations = serde_json::Map::new();
    if !meta.audience.is_empty() {
        annotations.insert("audience".into(), json!(meta.audience));
    }
    if let Some(priority) = meta.priority {
        annotations.insert("priority".into(), json!(priority));
    }
    if !annotations.is_empty() {
        item.insert("annotations".into(), Value::Object(annotations));
    }
    if !meta.icons.is_empty() {
        item.insert("icons".into(), json!(meta.icons));
    }
}

/// One `resources/list` entry: a static resource or one a template listed.
fn listed(listed: Listed, meta: &ResourceMeta) -> rmcp::model::Resource {
    let Ok(Value::Object(mut item)) = serde_json::to_value(listed) else {
        unreachable!("a listed resource serializes as an object")
    };
    if meta.variables.is_empty()
        && let Some(size) = meta.size
    {
        item.insert("size".into(), json!(size));
    }
    decorate(&mut item, meta);
    serde_json::from_value(Value::Object(item)).expect("a resource has the shape rmcp reads")
}

/// One `resources/templates/list` entry.
fn template(meta: &ResourceMeta) -> ResourceTemplate {
    let mut item = serde_json::Map::new();
    item.insert("uriTemplate".into(), json!(meta.uri));
    item.insert("name".into(), json!(meta.name));
    item.insert("title".into(), json!(meta.title));
    if !meta.description.is_empty() {
        item.insert("description".into(), json!(meta.description));
    }
    if let Some(mime) = &meta.mime_type {
        item.insert("mimeType".into(), json!(mime));
    }
    decorate(&mut item, meta);
    serde_json::from_value(Value::Object(item)).expect("a template has the shape rmcp reads")
}

/// MCP's `ttlMs` and `cacheScope` for the registry's caching decision.
pub(super) fn caching(decided: Caching) -> (u64, WireScope) {
    let ttl = decided
        .ttl
        .map_or(0, |t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
    let scope = if decided.public {
        WireScope::Public
    } else {
        WireScope::Private
    };
    (ttl, scope)
}

impl McpServer {
    /// `resources/list`: the static resources and those their templates list, a page at a time.
    pub(super) async fn resources_page(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        trace::Served::new("resources/list", None, &context)
            .run(async {
                let from = pages::position(request.as_ref())?;
                let (page, next) = self
                    .inner
                    .registry
                    .handle(
                        ListResources::page(from, self.page_len().max(1)),
                        caller_of(&context),
                    )
                    .await;
                let next = next.map(pages::position_cursor);
                let (ttl, scope) = caching(
                    self.inner
                        .registry
                        .list_caching(crate::tool::Kind::Resource),
                );
                let resources = page
                    .into_iter()
                    .map(|(item, meta)| listed(item, &meta))
                    .collect();
                let mut result = ListResourcesResult::with_all_items(resources);
                result.next_cursor = next;
                if modern(&context) {
                    result = result.with_ttl_ms(ttl).with_cache_scope(scope);
                }
                Ok(result)
            })
            .await
    }

    /// `resources/templates/list`: the resources with variables, a page at a time.
    pub(super) async fn templates_page(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        trace::Served::new("resources/templates/list", None, &context)
            .run(async {
                let templates: Vec<_> = self
                    .inner
                    .registry
                    .resources(&caller_of(&context))
                    .into_iter()
                    .filter(|meta| !meta.variables.is_empty())
                    .collect();
                let (page, next) = pages::page(templates, request.as_ref(), self.page_len())?;
                let (ttl, scope) = caching(
                    self.inner
                        .registry
                        .list_caching(crate::tool::Kind::Resource),
                );
                let mut result = ListResourceTemplatesResult::with_all_items(
                    page.iter().map(|m| template(m)).collect(),
                );
                result.next_cursor = next;
                if modern(&context) {
                    result = result.with_ttl_ms(ttl).with_cache_scope(scope);
                }
                Ok(result)
            })
            .await
    }

    /// `resources/read`: the resource's contents, read through the call pipeline.
    pub(super) async fn read(
        &self,
        mut request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = std::mem::take(&mut request.uri);
        trace::Served::new("resources/read", Some(&uri), &context)
            .run(async {
                let modern = modern(&context);
                // On 2026-07-28 a resource that asks its client answers with an input-required
                // result, and is read again with the answers.
                let (caller, rounds) = self.rounds(
                    &context,
                    caller_of(&context),
                    "resources/read",
                    &uri,
                    &Value::Null,
                    request.request_state.as_deref(),
                    request.input_responses.as_ref(),
                )?;
                let peer = self.call_peer(&context, rounds.as_ref());
                let read = self
                    .inner
                    .registry
                    .read_resource(&uri, caller.peer(std::sync::Arc::clone(&peer) as _))
                    .await;
                peer.finish().await;
                if let Some(result) = self.after_round(rounds.as_ref(), &peer, &read)? {
                    return Ok(result.into());
                }
                let read = read.map_err(|e| item_error(&e, modern))?;
                let contents = read
                    .contents
                    .into_iter()
                    .map(|c| serde_json::to_value(c).and_then(serde_json::from_value))
                    .collect::<Result<Vec<ResourceContents>, _>>()
                    .map_err(|e| {
                        item_error(
                            &ToolError::internal(format_args!(
                                "contents with neither text nor blob: {e}"
                            )),
                            modern,
                        )
                    })?;
                let mut result = ReadResourceResult::new(contents);
                if modern {
                    let (ttl, scope) = caching(self.inner.registry.read_caching(&read.resource));
                    result = result.with_ttl_ms(ttl).with_cache_scope(scope);
                }
                Ok(result.into())
            })
            .await
    }

    /// `completion/complete`: the values a prompt argument or template variable offers.
    pub(super) async fn completion(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let reference = match &request.r#ref {
            Reference::Prompt(p) => CompletionRef::Prompt(p.name.clone()),
            Reference::Resource(r) => CompletionRef::Resource(r.uri.clone()),
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "`{}` is not a reference this server completes",
                        other.reference_type()
                    ),
                    None,
                ));
            }
        };
        // A prompt's name may name the span; a template's URI never does.
        let prompt = match &reference {
            CompletionRef::Prompt(name) => Some(name.as_str()),
            CompletionRef::Resource(_) => None,
        };
        trace::Served::new("completion/complete", prompt, &context)
            .run(async {
                let others: BTreeMap<String, String> = request
                    .context
                    .and_then(|c| c.arguments)
                    .map(|args| args.into_iter().collect())
                    .unwrap_or_default();
                let completion = self
                    .inner
                    .registry
                    .complete(
                        &reference,
                        &request.argument.name,
                        &request.argument.value,
                        others,
                        caller_of(&context),
                    )
                    .await
                    .map_err(|e| item_error(&e, modern(&context)))?;
                let info = CompletionInfo::with_pagination(
                    completion.values,
                    completion.total,
                    completion.has_more,
                )
                .map_err(|e| ErrorData::internal_error(e, None))?;
                Ok(CompleteResult::new(info))
            })
            .await
    }
}
