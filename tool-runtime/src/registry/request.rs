//! The one entry: every request a front end makes of the registry, of every kind, goes through
//! [`Registry::handle`]. A request says its kind (a tool call, a resource read, a subscription,
//! a prompt get, a completion, a page of the resources, a listing of tools, prompts or declared
//! resources, a call a front end refuses itself); the [`Caller`]
//! says who asks and carries how to reach them (progress, the peer, who asks them to
//! confirm); the answer is everything the front end renders.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::{Registry, ToolRef};
use crate::pipeline::{Called, Input};
use crate::prompt::{PromptMeta, PromptReply};
use crate::resource::{Listed, ResourceContents, ResourceMeta, Subscription};
use crate::tool::caller::Caller;
use crate::tool::complete::{Completion, CompletionRef};
use crate::tool::error::ToolError;
use crate::tool::parsed::Node;

/// Where a page of the resources starts ([`ListResources`]): the
/// resource or template, and how many of what a template lists come before. The default is the
/// start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListPosition {
    pub(crate) entry: usize,
    pub(crate) offset: usize,
}

/// What a resource read answers: the contents, and the resource that answered.
#[derive(Debug, Clone)]
pub struct ResourceRead {
    /// The contents: one or more.
    pub contents: Vec<ResourceContents>,
    /// The resource (or template) that was read.
    pub resource: Arc<ResourceMeta>,
}

mod sealed {
    pub trait Sealed {}
}

/// A kind of request [`Registry::handle`] serves, and what it answers. The kinds are this
/// module's types; the trait is sealed.
pub trait Request: sealed::Sealed + Send {
    /// What the request answers (a listing of tools borrows them from the registry, `'r`).
    type Answer<'r>;

    /// Serves the request for `caller`.
    #[doc(hidden)]
    fn serve(
        self,
        registry: &Registry,
        caller: Caller,
    ) -> impl Future<Output = Self::Answer<'_>> + Send;
}

impl Registry {
    /// Serves `request` for `caller`: the one entry every front end takes, for every kind of
    /// request. Each passes the pipeline: the item is found among those `caller` may see (one
    /// visibility rule, [`Policy::admit`](crate::layers::policy::Policy::admit)), then the layers run
    /// as for a tool call; a listing ([`ListTools`], [`ListPrompts`], [`DescribeResources`])
    /// is what that rule lets through, answered at once.
    ///
    /// ```standalone_crate
    /// use tool_runtime::prelude::*;
    /// use tool_runtime::registry::CallTool;
    ///
    /// /// Add two numbers.
    /// #[tool]
    /// async fn add(a: i64, b: i64) -> i64 {
    ///     a + b
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::builder().build().unwrap();
    /// let args = serde_json::json!({"a": 2, "b": 3});
    /// let called = registry.handle(CallTool::new("add", args), Caller::new(Source::Internal)).await;
    /// assert_eq!(called.envelope.outcome.unwrap(), 5);
    /// # });
    /// ```
    pub fn handle<R: Request>(
        &self,
        request: R,
        caller: Caller,
    ) -> impl Future<Output = R::Answer<'_>> + Send {
        request.serve(self, caller)
    }

    /// A listing's answer: [`ListTools`], [`ListPrompts`] and [`DescribeResources`] decide by
    /// visibility alone and never wait.
    pub(super) fn listed<R: Request>(&self, request: R, caller: Caller) -> R::Answer<'_> {
        use futures_util::FutureExt;
        self.handle(request, caller)
            .now_or_never()
            .expect("a listing is answered without waiting")
    }
}

/// Call a tool: answers [`Called`]. Never fails early: an unknown tool, invalid arguments, a
/// refusal, a call that needs confirmation, a panicking tool and a time-out are all envelopes.
#[derive(Debug)]
pub struct CallTool<'a> {
    name: &'a str,
    args: Input<'a>,
}

impl<'a> CallTool<'a> {
    /// A call of the tool `name` with `args` (an object of its parameters).
    #[must_use]
    pub fn new(name: &'a str, args: Value) -> Self {
        Self {
            name,
            args: Input::Value(args),
        }
    }

    /// A call of `name` whose arguments are `body`, a JSON object as a request carried it:
    /// parsed into a tree borrowing `body`, which a `#[tool]` decodes straight into its
    /// arguments when they validate, without a `serde_json::Value`. `None` when `body` is not
    /// one JSON object with each key once (read it with `serde_json` then, to say what is
    /// wrong with it).
    #[must_use]
    pub fn from_json(name: &'a str, body: &'a [u8]) -> Option<Self> {
        match Node::parse(body)? {
            node @ Node::Object(_) => Some(Self {
                name,
                args: Input::Parsed(node),
            }),
            _ => None,
        }
    }
}

impl sealed::Sealed for CallTool<'_> {}

impl Request for CallTool<'_> {
    type Answer<'r> = Called;

    async fn serve(self, registry: &Registry, caller: Caller) -> Called {
        let pipeline = &registry.pipeline;
        pipeline
            .call_by(&registry.catalog, self.name, self.args, caller)
            .await
    }
}

/// End a call as `error`, decided by the front end before the pipeline (an agent's budget used
/// up, say): nothing runs, and the observers (audit) get its one record, with `args` as they
/// see them. Answers the [`Called`] a call that came to that error would. A tool hidden from
/// the caller is answered `unknown_tool`, as any call of it is.
#[derive(Debug)]
pub struct Refuse<'a> {
    name: &'a str,
    args: Value,
    error: ToolError,
}

impl<'a> Refuse<'a> {
    /// The call of `name` with `args`, refused with `error`.
    #[must_use]
    pub fn new(name: &'a str, args: Value, error: ToolError) -> Self {
        Self { name, args, error }
    }
}

impl sealed::Sealed for Refuse<'_> {}

impl Request for Refuse<'_> {
    type Answer<'r> = Called;

    async fn serve(self, registry: &Registry, caller: Caller) -> Called {
        let ctx = registry.context(caller);
        let pipeline = &registry.pipeline;
        pipeline
            .refuse(&registry.catalog, self.name, self.args, ctx, self.error)
            .await
    }
}

/// Read the resource at a URI: answers its [`ResourceRead`], `not_found` (with `uri` in its
/// details) when no resource the caller may see matches it, `invalid_arguments` for a URI
/// longer than 8 KiB.
#[derive(Debug)]
pub struct ReadResource<'a> {
    uri: &'a str,
}

impl<'a> ReadResource<'a> {
    /// A read of `uri`.
    #[must_use]
    pub fn new(uri: &'a str) -> Self {
        Self { uri }
    }
}

impl sealed::Sealed for ReadResource<'_> {}

impl Request for ReadResource<'_> {
    type Answer<'r> = Result<ResourceRead, ToolError>;

    fn serve(
        self,
        registry: &Registry,
        caller: Caller,
    ) -> impl Future<Output = Self::Answer<'_>> + Send {
        registry.read(self.uri, caller)
    }
}

/// Hear of updates to the resource at a URI: answers the [`Subscription`], which lasts until it
/// is dropped; `not_found` when no resource the caller may see matches the URI. A mounted
/// server's resource has its server asked to send them.
#[derive(Debug)]
pub struct Subscribe<'a> {
    uri: &'a str,
}

impl<'a> Subscribe<'a> {
    /// A subscription to `uri`.
    #[must_use]
    pub fn new(uri: &'a str) -> Self {
        Self { uri }
    }
}

impl sealed::Sealed for Subscribe<'_> {}

impl Request for Subscribe<'_> {
    type Answer<'r> = Result<Subscription, ToolError>;

    fn serve(
        self,
        registry: &Registry,
        caller: Caller,
    ) -> impl Future<Output = Self::Answer<'_>> + Send {
        registry.subscribe(self.uri, caller)
    }
}

/// Get a prompt's messages: answers its [`PromptReply`], `not_found` (with `name` in its
/// details) for a prompt the caller may not see, `invalid_arguments` for a missing, unknown or
/// unparsable argument.
#[derive(Debug)]
pub struct GetPrompt<'a> {
    name: &'a str,
    args: Value,
}

impl<'a> GetPrompt<'a> {
    /// The prompt `name` with `args`, an object of strings.
    #[must_use]
    pub fn new(name: &'a str, args: Value) -> Self {
        Self { name, args }
    }
}

impl sealed::Sealed for GetPrompt<'_> {}

impl Request for GetPrompt<'_> {
    type Answer<'r> = Result<PromptReply, ToolError>;

    fn serve(
        self,
        registry: &Registry,
        caller: Caller,
    ) -> impl Future<Output = Self::Answer<'_>> + Send {
        registry.prompt_get(self.name, self.args, caller)
    }
}

/// Complete an argument of a prompt or a variable of a resource template: answers at most 100
/// values, with the total when there were more. The completer runs as its item: its roles,
/// rate, concurrency and time limit.
#[derive(Debug)]
pub struct Complete<'a> {
    reference: &'a CompletionRef,
    argument: &'a str,
    value: &'a str,
    others: BTreeMap<String, String>,
}

impl<'a> Complete<'a> {
    /// The values offered for `argument` of `reference`, given what the user typed (`value`).
    #[must_use]
    pub fn new(reference: &'a CompletionRef, argument: &'a str, value: &'a str) -> Self {
        Self {
            reference,
            argument,
            value,
            others: BTreeMap::new(),
        }
    }

    /// The values of the other arguments, which the completer may read.
    #[must_use]
    pub fn others(mut self, others: BTreeMap<String, String>) -> Self {
        self.others = others;
        self
    }
}

impl sealed::Sealed for Complete<'_> {}

impl Request for Complete<'_> {
    type Answer<'r> = Result<Completion, ToolError>;

    fn serve(
        self,
        registry: &Registry,
        caller: Caller,
    ) -> impl Future<Output = Self::Answer<'_>> + Send {
        registry.completion(
            self.reference,
            self.argument,
            self.value,
            self.others,
            caller,
        )
    }
}

/// A page of the concrete resources the caller may see (the static ones, then what each
/// template lists, each list run as its template): answers the page, each with the resource
/// or template it belongs to, and where the next page starts when there is more.
#[derive(Debug, Clone, Copy)]
pub struct ListResources {
    from: ListPosition,
    len: usize,
}

impl ListResources {
    /// Every resource, in one page.
    #[must_use]
    pub fn all() -> Self {
        Self {
            from: ListPosition::default(),
            len: usize::MAX,
        }
    }

    /// At most `len` resources from `from` on (the start: [`ListPosition::default`]).
    #[must_use]
    pub fn page(from: ListPosition, len: usize) -> Self {
        Self { from, len }
    }
}

impl sealed::Sealed for ListResources {}

impl Request for ListResources {
    type Answer<'r> = (Vec<(Listed, Arc<ResourceMeta>)>, Option<ListPosition>);

    fn serve(
        self,
        registry: &Registry,
        caller: Caller,
    ) -> impl Future<Output = Self::Answer<'_>> + Send {
        registry.resources_page(caller, self.from, self.len)
    }
}

/// List the tools the caller may see, sorted by name: answers them. Every listing of tools
/// (`GET /tools`, `/openapi.json`, MCP `tools/list`, the CLI's help, what an agent offers its
/// model) is this list, so a tool is listed exactly when a call of it gets past
/// [`Policy::admit`](crate::layers::policy::Policy::admit). Nothing runs: it is answered at once
/// ([`Registry::visible`] is this request).
#[derive(Debug, Clone, Copy, Default)]
pub struct ListTools;

impl sealed::Sealed for ListTools {}

impl Request for ListTools {
    type Answer<'r> = Vec<ToolRef<'r>>;

    fn serve(
        self,
        registry: &Registry,
        caller: Caller,
    ) -> impl Future<Output = Self::Answer<'_>> + Send {
        std::future::ready(registry.visible_in(&registry.context(caller)))
    }
}

/// List the prompts the caller may see, by name: answers their metadata. Nothing runs
/// ([`Registry::prompts`] is this request).
#[derive(Debug, Clone, Copy, Default)]
pub struct ListPrompts;

impl sealed::Sealed for ListPrompts {}

impl Request for ListPrompts {
    type Answer<'r> = Vec<Arc<PromptMeta>>;

    fn serve(
        self,
        registry: &Registry,
        caller: Caller,
    ) -> impl Future<Output = Self::Answer<'_>> + Send {
        std::future::ready(registry.prompts_for(&registry.context(caller)))
    }
}

/// List the resources and templates the caller may see, as they are declared (static URIs
/// first, then templates from the most specific): answers their metadata. Nothing runs; what
/// the templates list is [`ListResources`] ([`Registry::resources`] is this request).
#[derive(Debug, Clone, Copy, Default)]
pub struct DescribeResources;

impl sealed::Sealed for DescribeResources {}

impl Request for DescribeResources {
    type Answer<'r> = Vec<Arc<ResourceMeta>>;

    fn serve(
        self,
        registry: &Registry,
        caller: Caller,
    ) -> impl Future<Output = Self::Answer<'_>> + Send {
        std::future::ready(registry.resources_for(&registry.context(caller)))
    }
}
