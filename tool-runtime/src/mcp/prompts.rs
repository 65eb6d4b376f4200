//! Prompts over MCP: `prompts/list` and `prompts/get`, answered from the registry for the
//! request's caller.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult,
    PaginatedRequestParams, PromptMessage,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::input::modern;
use super::resources::caching;
use super::results::item_error;
use super::{McpServer, caller_of, pages, trace};
use crate::prompt::PromptMeta;
use crate::tool::error::ToolError;

/// One `prompts/list` entry.
fn described(meta: &PromptMeta) -> rmcp::model::Prompt {
    let mut item = serde_json::Map::new();
    item.insert("name".into(), json!(meta.name));
    item.insert("title".into(), json!(meta.title));
    if !meta.description.is_empty() {
        item.insert("description".into(), json!(meta.description));
    }
    item.insert("arguments".into(), json!(meta.arguments));
    if !meta.icons.is_empty() {
        item.insert("icons".into(), json!(meta.icons));
    }
    serde_json::from_value(Value::Object(item)).expect("a prompt has the shape rmcp reads")
}

impl McpServer {
    /// `prompts/list`: the prompts the caller may see, by name, a page at a time.
    pub(super) async fn prompts_page(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        trace::Served::new("prompts/list", None, &context)
            .run(async {
                let prompts = self.inner.registry.prompts(&caller_of(&context));
                let (page, next) = pages::page(prompts, request.as_ref(), self.page_len())?;
                let mut result =
                    ListPromptsResult::with_all_items(page.iter().map(|p| described(p)).collect());
                result.next_cursor = next;
                if modern(&context) {
                    let (ttl, scope) =
                        caching(self.inner.registry.list_caching(crate::tool::Kind::Prompt));
                    result = result.with_ttl_ms(ttl).with_cache_scope(scope);
                }
                Ok(result)
            })
            .await
    }

    /// `prompts/get`: the prompt's messages for the arguments, through the call pipeline. On
    /// 2026-07-28 a prompt that asks its client (elicitation, sampling, the roots) answers with
    /// an input-required result, and runs again with the answers.
    pub(super) async fn get(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = std::mem::take(&mut request.name);
        trace::Served::new("prompts/get", Some(&name), &context)
            .run(async {
                let modern = modern(&context);
                let args = Value::Object(request.arguments.take().unwrap_or_default());
                let (caller, rounds) = self.rounds(
                    &context,
                    caller_of(&context),
                    "prompts/get",
                    &name,
                    &args,
                    request.request_state.as_deref(),
                    request.input_responses.as_ref(),
                )?;
                let peer = self.call_peer(&context, rounds.as_ref());
                let reply = self
                    .inner
                    .registry
                    .get_prompt(&name, args, caller.peer(Arc::clone(&peer) as _))
                    .await;
                peer.finish().await;
                if let Some(result) = self.after_round(rounds.as_ref(), &peer, &reply)? {
                    return Ok(result.into());
                }
                let reply = reply.map_err(|e| item_error(&e, modern))?;
                let messages = reply
                    .messages
                    .into_iter()
                    .map(|m| serde_json::to_value(m).and_then(serde_json::from_value))
                    .collect::<Result<Vec<PromptMessage>, _>>()
                    .map_err(|e| {
                        item_error(
                            &ToolError::internal(format_args!("an unreadable prompt message: {e}")),
                            modern,
                        )
                    })?;
                let mut result = GetPromptResult::new(messages);
                result.description = reply.description;
                Ok(result.into())
            })
            .await
    }
}
