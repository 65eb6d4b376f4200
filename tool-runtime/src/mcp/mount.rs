//! A mounted MCP server as a [toolset](crate::toolset): its tools called through our pipeline
//! then the server, its health, its resources and prompts (`client_items`), its change notices.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use rmcp::model::CallToolRequestParams;
use serde_json::Value;
use tracing::Instrument as _;

use super::client::{RemoteServer, SIGN_INS, failure_of, protocol_of, result_of};
use super::trace::Sent;
use crate::tool::context::CallContext;
use crate::tool::error::{ErrorKind, ToolError};
use crate::toolset::{Health, Toolset, ToolsetTool};

impl RemoteServer {
    /// One `tools/call` of `tool` with `params`, on a connection: its answer, or `unavailable`
    /// when none opens.
    async fn call_once(
        &self,
        tool: &str,
        mut params: CallToolRequestParams,
        ctx: &CallContext,
    ) -> Result<Result<rmcp::model::CallToolResult, rmcp::ServiceError>, ToolError> {
        // A mount that acts as each caller calls on the caller's own connection.
        #[cfg(feature = "mcp-oauth")]
        let own = self.user_session(ctx).await?;
        #[cfg(not(feature = "mcp-oauth"))]
        let own = None;
        let (service, calls) = match own {
            Some(own) => own,
            None => (self.session().await?, Arc::clone(&self.calls)),
        };
        let sent = Sent::new("tools/call", Some(tool), self.url());
        params.meta = sent.meta(params.meta.take());
        // In flight until it returns or is dropped: what the server asks meanwhile (an
        // elicitation, sampling) and what it reports (progress, log messages) go to `ctx`, in
        // the request's span.
        let _in_flight = calls.enter(ctx.clone(), sent.span.clone());
        // Dropped by the pipeline (a time-out, a caller gone), the SDK's request sends the
        // server `notifications/cancelled`.
        let answer = super::remote_call::call(&service, params, ctx, &sent.span)
            .instrument(sent.span.clone())
            .await;
        let protocol = protocol_of(&service);
        match &answer {
            Ok(result) => {
                let failed = result.is_error == Some(true);
                sent.ended(failed.then_some("tool_error"), None, protocol.as_deref());
            }
            Err(e) => {
                let (error, code) = failure_of(e);
                sent.ended(Some(&error), code, protocol.as_deref());
            }
        }
        Ok(answer)
    }
}

impl Toolset for RemoteServer {
    fn name(&self) -> &str {
        &self.name
    }

    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolsetTool>, ToolError>> {
        Box::pin(async move {
            let mut sign_ins = 0;
            let listed = loop {
                let service = self.session().await?;
                match self.list(&service).await {
                    Ok(tools) => break tools,
                    Err(e) if sign_ins < SIGN_INS && self.signs_in_again(&e).await => {
                        sign_ins += 1;
                    }
                    Err(e) => {
                        let why = format!("tools/list failed: {e}");
                        self.lost(&why).await;
                        return Err(self.unavailable(&why));
                    }
                }
            };
            let mut tools = Vec::with_capacity(listed.len());
            for tool in listed {
                let name = tool.name.to_string();
                match Self::provided(tool) {
                    Ok(mut tool) => {
                        tool.meta.task = self.task_mode;
                        tools.push(tool);
                    }
                    Err(why) => tracing::warn!(
                        target: "tool_runtime::mcp",
                        server = %self.name,
                        tool = %name,
                        "the MCP server's tool is left out: {why}"
                    ),
                }
            }
            Ok(tools)
        })
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: Value,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let mut params = CallToolRequestParams::new(tool.to_owned());
            if let Value::Object(arguments) = args {
                params.arguments = Some(arguments);
            }
            let mut sign_ins = 0;
            let answer = loop {
                // Kept for a retry only where a refused token can be replaced.
                let again = (sign_ins < SIGN_INS && self.can_sign_in()).then(|| params.clone());
                let answer = self.call_once(tool, params, &ctx).await?;
                #[cfg(feature = "mcp-oauth")]
                if let Err(e) = &answer
                    && let Some(refused) = self.user_refused(&ctx, e).await
                {
                    return Err(refused);
                }
                match (answer, again) {
                    (Err(e), Some(again)) if self.signs_in_again(&e).await => {
                        sign_ins += 1;
                        params = again;
                    }
                    (answer, _) => break answer,
                }
            };
            match answer {
                Ok(result) => result_of(&self.name, tool, result),
                Err(rmcp::ServiceError::McpError(e)) => Err(ToolError::new(
                    ErrorKind::INTERNAL,
                    format!(
                        "MCP server `{}` refused the call of `{tool}`: {}",
                        self.name, e.message
                    ),
                )),
                Err(e) => {
                    let why = e.to_string();
                    self.lost(&why).await;
                    Err(self.unavailable(&why))
                }
            }
        })
    }

    #[cfg(feature = "mcp-oauth")]
    fn sign_in(&self) -> Option<BoxFuture<'_, Result<String, ToolError>>> {
        self.sign_in_now()
    }

    fn health(&self) -> BoxFuture<'_, Health> {
        Box::pin(std::future::ready(self.health_now()))
    }

    fn items(
        self: Arc<Self>,
    ) -> BoxFuture<'static, Result<crate::toolset::ToolsetItems, ToolError>> {
        if self.tools_only {
            return Box::pin(std::future::ready(Ok(
                crate::toolset::ToolsetItems::default(),
            )));
        }
        Box::pin(super::client_items::items(self))
    }

    fn changes(&self) -> Option<BoxStream<'static, ()>> {
        let rx = self.changed.subscribe();
        Some(Box::pin(futures_util::stream::unfold(
            rx,
            |mut rx| async move {
                match rx.recv().await {
                    Ok(()) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        Some(((), rx))
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => None,
                }
            },
        )))
    }
}
