//! Resources: what a server lets its clients read by URI. `#[resource("uri")]` fns become a
//! const [`ResourceDescriptor`]; code that discovers resources at run time (a mounted MCP
//! server) implements [`Resource`]. A read passes the call pipeline as a tool call does: each
//! resource is adapted into a [`Tool`] whose [`ToolMeta::kind`] is [`Kind::Resource`].

pub(crate) mod lister;
pub(crate) mod template;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::{Value, json};

use crate::tool::complete::{Completer, Completing};
use crate::tool::content::EmbeddedResource;
use crate::tool::content::Icon;
use crate::tool::context::CallContext;
use crate::tool::definition::{Kind, Tool, ToolMeta};
use crate::tool::error::{ToolError, Violation};
use crate::tool::options::{ItemOptions, OptionsDescriptor};
pub use lister::Lister;
pub use template::{TemplateError, UriTemplate};

/// A resource's contents as one read answers them.
pub type ResourceContents = EmbeddedResource;

/// Who may cache a resource read: any cache (`public`) or only the caller's own (`private`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Shared caches may keep it.
    Public,
    /// Only the caller's own cache may keep it.
    Private,
}

/// One variable of a resource template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its name, as in the template and the fn.
    pub name: Cow<'static, str>,
    /// Whether its values are screened for `..`, absolute paths and NUL before the fn runs
    /// (the default; `#[arg(unscreened)]` turns it off).
    pub screened: bool,
    /// Whether a completion is offered for it.
    pub completes: bool,
}

/// Everything about a resource except its code.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ResourceMeta {
    /// Who may call it, its limits, the state it needs, where it is defined, as a tool's.
    pub options: ItemOptions,
    /// A name unique among resources: the fn's.
    pub name: Cow<'static, str>,
    /// Its URI, or its URI template when it has variables.
    pub uri: Cow<'static, str>,
    /// A human-readable title.
    pub title: Cow<'static, str>,
    /// What it is: the doc comment.
    pub description: Cow<'static, str>,
    /// The media type of its contents.
    pub mime_type: Option<Cow<'static, str>>,
    /// How long a read may be cached.
    pub ttl: Option<Duration>,
    /// Who may cache a read.
    pub scope: Option<CacheScope>,
    /// Its size in bytes, when known in advance.
    pub size: Option<u64>,
    /// Who it is for: `user`, `assistant`.
    pub audience: Vec<Cow<'static, str>>,
    /// How important it is, from 0 (optional) to 1 (required).
    pub priority: Option<f32>,
    /// Its icons.
    pub icons: Vec<Icon>,
    /// The template's variables, in order.
    pub variables: Vec<Variable>,
}

impl ResourceMeta {
    /// Metadata for the resource `name` at `uri`, described by `description`; the rest empty.
    /// Variables are read from the URI template.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        uri: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> Self {
        let name = name.into();
        let uri = uri.into();
        let variables = UriTemplate::parse(&uri)
            .map(|t| {
                t.variables()
                    .map(|v| Variable {
                        name: Cow::Owned(v.to_owned()),
                        screened: true,
                        completes: false,
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            title: Cow::Owned(tool_grammar::title_from_name(&name)),
            name,
            uri,
            description: description.into(),
            mime_type: None,
            ttl: None,
            scope: None,
            size: None,
            audience: Vec::new(),
            priority: None,
            icons: Vec::new(),
            variables,
            options: ItemOptions {
                defined_at: Cow::Borrowed(crate::tool::definition::UNSTATED_ORIGIN),
                ..ItemOptions::default()
            },
        }
    }
}

/// What a resource fn answers: text, bytes, JSON, or contents written out in full.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceBody {
    /// Text (`text/plain` unless the resource names its media type).
    Text(String),
    /// Bytes (`application/octet-stream` unless the resource names its media type).
    Blob(Vec<u8>),
    /// A value sent as JSON text (`application/json` unless named otherwise).
    Json(Value),
    /// Contents written out in full: one or more, each with its URI and media type.
    Contents(Vec<ResourceContents>),
}

/// One concrete resource a template lists (one per paired device, say), for `resources/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    /// Its URI, which the template matches.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its media type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

impl Listed {
    /// The resource at `uri`, named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
        }
    }

    /// With a description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// A resource: metadata and a read. Object-safe.
///
/// Implement it for resources discovered at run time; `#[resource]` implements it for you.
pub trait Resource: Send + Sync + 'static {
    /// Metadata; read once, when the resource is registered.
    fn meta(&self) -> ResourceMeta;
    /// Reads the resource at `uri`, whose template variables had these (decoded, screened)
    /// values.
    fn read(
        &self,
        uri: String,
        values: BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>>;
    /// The concrete resources a template lists; `None`: it lists none.
    fn list(&self, ctx: CallContext) -> Option<BoxFuture<'_, Result<Vec<Listed>, ToolError>>> {
        let _ = ctx;
        None
    }
    /// The values offered for a variable; `None`: none are.
    fn complete(
        &self,
        completing: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        let _ = completing;
        None
    }
    /// Asks to hear of updates to the resource at `uri` (a mounted server's resource asks its
    /// server); `None` (the default): there is nothing to ask, updates are published through
    /// the [`Notifier`](crate::tool::notify::Notifier). Each subscription that succeeds is released
    /// once, by [`unsubscribe`](Self::unsubscribe), when its subscriber no longer wants the
    /// updates; one whose future is dropped before it completes is not.
    fn subscribe(&self, uri: &str) -> Option<BoxFuture<'static, Result<(), ToolError>>> {
        let _ = uri;
        None
    }
    /// Releases one subscription to `uri` that [`subscribe`](Self::subscribe) made: called
    /// once for each, when its [`Subscription`] is dropped (an MCP client unsubscribed, or its
    /// session ended). It is called from `drop`: what must happen at once (a count kept) happens
    /// before it returns; the future, if any, runs in the background and its failure is only
    /// logged. `None` (the default): there is nothing to ask.
    fn unsubscribe(&self, uri: &str) -> Option<BoxFuture<'static, Result<(), ToolError>>> {
        let _ = uri;
        None
    }
}

/// How long releasing a subscription may take in the background.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(10);

/// One subscription to the updates of a resource
/// ([`Registry::subscribe_resource`](crate::Registry::subscribe_resource)), held until it is
/// dropped: then its resource's [`unsubscribe`](Resource::unsubscribe) is called, and what it
/// asks runs in the background on the current Tokio runtime (outside one, it is not run).
#[must_use = "the subscription is released when it is dropped"]
pub struct Subscription {
    resource: Arc<dyn Resource>,
    uri: String,
}

impl Subscription {
    /// The subscription `resource` made for `uri`.
    pub(crate) fn new(resource: Arc<dyn Resource>, uri: impl Into<String>) -> Self {
        Self {
            resource,
            uri: uri.into(),
        }
    }

    /// The URI subscribed to.
    #[must_use]
    pub fn uri(&self) -> &str {
        &self.uri
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let Some(release) = self.resource.unsubscribe(&self.uri) else {
            return;
        };
        let uri = std::mem::take(&mut self.uri);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::debug!(%uri, "a resource subscription dropped outside a runtime is not released");
            return;
        };
        runtime.spawn(async move {
            match tokio::time::timeout(RELEASE_TIMEOUT, release).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::debug!(%uri, error = %e, "releasing a resource subscription failed");
                }
                Err(_) => tracing::debug!(%uri, "releasing a resource subscription took too long"),
            }
        });
    }
}

/// Not public API: how `#[resource]` code reads, from the URI and the template's values.
#[doc(hidden)]
pub type ReadFn = fn(
    String,
    BTreeMap<String, String>,
    CallContext,
) -> BoxFuture<'static, Result<ResourceBody, ToolError>>;

/// Not public API: how `#[resource(list = f)]` code lists a template's resources.
#[doc(hidden)]
pub type ListFn = fn(CallContext) -> BoxFuture<'static, Result<Vec<Listed>, ToolError>>;

/// The const descriptor `#[resource]` generates and submits to `inventory`. Not built by hand:
/// implement [`Resource`] instead.
#[allow(clippy::type_complexity)] // Reason: fn pointers the generated code fills, named nowhere else.
pub struct ResourceDescriptor {
    #[doc(hidden)]
    pub options: OptionsDescriptor,
    #[doc(hidden)]
    pub name: &'static str,
    #[doc(hidden)]
    pub uri: &'static str,
    #[doc(hidden)]
    pub title: &'static str,
    #[doc(hidden)]
    pub description: &'static str,
    #[doc(hidden)]
    pub mime_type: Option<&'static str>,
    #[doc(hidden)]
    pub ttl: Option<Duration>,
    #[doc(hidden)]
    pub scope: Option<CacheScope>,
    #[doc(hidden)]
    pub size: Option<u64>,
    #[doc(hidden)]
    pub audience: &'static [&'static str],
    #[doc(hidden)]
    pub priority: Option<f32>,
    /// `(src, mime type, sizes)`.
    #[doc(hidden)]
    pub icons: &'static [crate::tool::content::StaticIcon],
    /// `(name, screened)`, in the template's order.
    #[doc(hidden)]
    pub variables: &'static [(&'static str, bool)],
    #[doc(hidden)]
    pub read: ReadFn,
    #[doc(hidden)]
    pub list: Option<ListFn>,
    #[doc(hidden)]
    pub completers: &'static [(&'static str, Completer)],
}

impl std::fmt::Debug for ResourceDescriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceDescriptor")
            .field("name", &self.name)
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

impl Resource for &'static ResourceDescriptor {
    fn meta(&self) -> ResourceMeta {
        ResourceMeta {
            name: Cow::Borrowed(self.name),
            uri: Cow::Borrowed(self.uri),
            title: Cow::Borrowed(self.title),
            description: Cow::Borrowed(self.description),
            mime_type: self.mime_type.map(Cow::Borrowed),
            ttl: self.ttl,
            scope: self.scope,
            size: self.size,
            audience: self.audience.iter().map(|a| Cow::Borrowed(*a)).collect(),
            priority: self.priority,
            icons: Icon::all_of(self.icons),
            variables: self
                .variables
                .iter()
                .map(|(name, screened)| Variable {
                    name: Cow::Borrowed(name),
                    screened: *screened,
                    completes: self.completers.iter().any(|(n, _)| n == name),
                })
                .collect(),
            options: self.options.to_options(),
        }
    }

    fn read(
        &self,
        uri: String,
        values: BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<ResourceBody, ToolError>> {
        (self.read)(uri, values, ctx)
    }

    fn list(&self, ctx: CallContext) -> Option<BoxFuture<'_, Result<Vec<Listed>, ToolError>>> {
        self.list.map(|f| f(ctx))
    }

    fn complete(
        &self,
        completing: Completing,
    ) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
        crate::tool::complete::run(self.completers, completing)
    }
}

/// The `inventory` item `#[resource]` submits.
#[doc(hidden)]
#[derive(Debug)]
pub struct ResourceRegistration(pub &'static ResourceDescriptor);

inventory::collect!(ResourceRegistration);

/// The argument that carries the URI read, beside the template's variables (a `$` no variable
/// name has).
pub(crate) const URI_ARG: &str = "$uri";

/// Refuses a template value that could escape its place in a path: a `..` segment, an absolute
/// path (`/…`, `\…`, `C:…`), or NUL.
pub(crate) fn screen(name: &str, value: &str) -> Result<(), Violation> {
    let refuse = |why: &str| {
        Err(Violation::new(
            format!("/{name}"),
            "screened",
            format!("`{name}` {why}; a template value stays inside its place"),
        ))
    };
    if value.contains('\0') {
        return refuse("contains NUL");
    }
    if value.starts_with(['/', '\\'])
        || value.as_bytes().get(1) == Some(&b':') && value.as_bytes()[0].is_ascii_alphabetic()
    {
        return refuse("is an absolute path");
    }
    if value.split(['/', '\\']).any(|segment| segment == "..") {
        return refuse("has a `..` segment");
    }
    Ok(())
}

/// What a resource fn returns: text (`String`, `&'static str`), bytes (`Vec<u8>`,
/// `bytes::Bytes`), [`ResourceContents`], `Vec<ResourceContents>`, [`ResourceBody`], or a
/// type deriving `serde::Serialize` (answered as JSON). No type implements it: it names, in a
/// compile error, a return type that is none of these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a resource's contents",
    label = "a resource returns text, bytes, contents or a serializable value",
    note = "return `String` or `&'static str` (text), `Vec<u8>` or `bytes::Bytes` (a blob), `ResourceContents`, `Vec<ResourceContents>` or `ResourceBody` (as given), or a type deriving `serde::Serialize` (JSON); or `Result<_, E>` of one, `E: Into<ToolError>`"
)]
pub trait ResourceOutput {}

/// A resource as the pipeline calls it: its arguments are the URI read and the template's
/// values, each a string; its result the contents.
pub(crate) struct ResourceTool {
    pub(crate) resource: Arc<dyn Resource>,
    pub(crate) meta: ResourceMeta,
    pub(crate) template: UriTemplate,
}

impl ResourceTool {
    /// The name its pipeline calls go by: `resource:{name}`.
    pub(crate) fn call_name(name: &str) -> String {
        format!("resource:{name}")
    }
}

impl Tool for ResourceTool {
    fn meta(&self) -> ToolMeta {
        let m = &self.meta;
        ToolMeta::of_item(
            Kind::Resource,
            Self::call_name(&m.name),
            m.title.clone(),
            m.description.clone(),
            &m.options,
        )
    }

    fn input_schema(&self) -> Value {
        let mut properties = serde_json::Map::new();
        properties.insert(URI_ARG.to_owned(), json!({"type": "string"}));
        let mut required = vec![URI_ARG.to_owned()];
        for v in self.template.variables() {
            properties.insert(v.to_owned(), json!({"type": "string"}));
            if !self.template.is_query(v) {
                required.push(v.to_owned());
            }
        }
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }

    fn output_schema(&self) -> Value {
        json!({"type": "array", "minItems": 1, "items": {"type": "object"}})
    }

    fn call(&self, args: Value, ctx: CallContext) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            let Value::Object(mut args) = args else {
                return Err(ToolError::internal("a resource read without its URI"));
            };
            let Some(Value::String(uri)) = args.remove(URI_ARG) else {
                return Err(ToolError::internal("a resource read without its URI"));
            };
            let values: BTreeMap<String, String> = args
                .into_iter()
                .filter_map(|(k, v)| match v {
                    Value::String(s) => Some((k, s)),
                    _ => None,
                })
                .collect();
            let violations: Vec<Violation> = self
                .meta
                .variables
                .iter()
                .filter(|v| v.screened)
                .filter_map(|v| {
                    let value = values.get(&*v.name)?;
                    screen(&v.name, value).err()
                })
                .collect();
            if !violations.is_empty() {
                return Err(ToolError::invalid_arguments(violations));
            }
            let body = self.resource.read(uri.clone(), values, ctx).await?;
            let contents = contents(&uri, self.meta.mime_type.as_deref(), body)?;
            serde_json::to_value(contents)
                .map_err(|e| ToolError::internal(format_args!("unserializable contents: {e}")))
        })
    }
}

/// A body as contents of `uri`: never empty.
pub(crate) fn contents(
    uri: &str,
    mime: Option<&str>,
    body: ResourceBody,
) -> Result<Vec<ResourceContents>, ToolError> {
    let typed = |c: ResourceContents, default: &str| {
        c.mime_type(mime.map_or_else(|| default.to_owned(), str::to_owned))
    };
    let contents = match body {
        ResourceBody::Text(text) => vec![typed(ResourceContents::text(uri, text), "text/plain")],
        ResourceBody::Blob(bytes) => vec![typed(
            ResourceContents::blob(uri, bytes),
            "application/octet-stream",
        )],
        ResourceBody::Json(value) => vec![typed(
            ResourceContents::text(uri, value.to_string()),
            "application/json",
        )],
        ResourceBody::Contents(list) => list,
    };
    if contents.is_empty() {
        return Err(ToolError::internal(format_args!(
            "the resource `{uri}` answered no contents"
        )));
    }
    Ok(contents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screening_refuses_escapes_and_passes_plain_values() {
        for bad in [
            "..",
            "a/../b",
            "..\\x",
            "/etc/passwd",
            "\\\\host",
            "C:\\x",
            "a\0b",
        ] {
            assert!(screen("p", bad).is_err(), "{bad:?}");
        }
        for good in ["a", "a/b.txt", "..a", "a..", "d-1", "ab:c"] {
            assert!(screen("p", good).is_ok(), "{good:?}");
        }
        let v = screen("path", "../x").unwrap_err();
        assert_eq!(v.path, "/path");
    }

    #[test]
    fn bodies_become_contents_of_the_uri_read() {
        let c = contents("a://x", None, ResourceBody::Text("hi".into())).unwrap();
        assert_eq!(c[0].mime_type.as_deref(), Some("text/plain"));
        assert_eq!(c[0].uri, "a://x");
        let c = contents("a://x", Some("image/png"), ResourceBody::Blob(vec![1])).unwrap();
        assert_eq!(
            (c[0].mime_type.as_deref(), c[0].blob.as_deref()),
            (Some("image/png"), Some("AQ=="))
        );
        let c = contents("a://x", None, ResourceBody::Json(json!({"a": 1}))).unwrap();
        assert_eq!(c[0].text.as_deref(), Some(r#"{"a":1}"#));
        assert!(contents("a://x", None, ResourceBody::Contents(vec![])).is_err());
    }
}
