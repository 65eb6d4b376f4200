//! Completions: the values a client may offer for a prompt argument or a resource template
//! variable while its user types (`#[arg(complete = f)]`).

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::tool::context::CallContext;
use crate::tool::error::ToolError;
use crate::tool::state::State;

/// The most values one completion answers with, as MCP allows.
pub(crate) const MAX_COMPLETIONS: usize = 100;

/// What a completion fn is asked: the argument, what the user typed so far, the other
/// arguments already given, and the caller's context (its state included).
///
/// ```
/// use tool_runtime::tool::Completing;
///
/// async fn colours(c: Completing) -> Vec<String> {
///     ["red", "green", "blue"]
///         .into_iter()
///         .filter(|name| name.starts_with(c.value()))
///         .map(str::to_owned)
///         .collect()
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Completing {
    pub(crate) argument: Arc<str>,
    pub(crate) value: String,
    pub(crate) others: BTreeMap<String, String>,
    pub(crate) ctx: CallContext,
}

impl Completing {
    /// The argument or variable being completed.
    #[must_use]
    pub fn argument(&self) -> &str {
        &self.argument
    }

    /// What the user typed so far.
    #[must_use]
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Another argument's value, when the client sent it as context.
    #[must_use]
    pub fn arg(&self, name: &str) -> Option<&str> {
        self.others.get(name).map(String::as_str)
    }

    /// The caller's context.
    #[must_use]
    pub fn context(&self) -> &CallContext {
        &self.ctx
    }

    /// Registered state of type `T`.
    #[must_use]
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.ctx.state::<T>()
    }
}

/// A completion fn, as `#[arg(complete = f)]` wraps it.
pub type Completer = fn(Completing) -> BoxFuture<'static, Result<Vec<String>, ToolError>>;

/// A completion's answer: at most 100 values, the total when more were found,
/// and whether there are more.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values, in the completion fn's order.
    pub values: Vec<String>,
    /// How many values there were, when it is more than were sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u32>,
    /// Whether values were left out.
    pub has_more: bool,
}

impl Completion {
    /// `values`, cut to the first 100.
    #[must_use]
    pub fn of(mut values: Vec<String>) -> Self {
        let total = values.len();
        let has_more = total > MAX_COMPLETIONS;
        values.truncate(MAX_COMPLETIONS);
        Self {
            values,
            total: has_more.then(|| u32::try_from(total).unwrap_or(u32::MAX)),
            has_more,
        }
    }
}

/// What a completion is asked for: a prompt by name, or a resource template by its URI
/// template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// A prompt's argument.
    Prompt(String),
    /// A resource template's variable.
    Resource(String),
}

/// The completer named `argument` in `table`, run.
pub(crate) fn run(
    table: &[(&'static str, Completer)],
    completing: Completing,
) -> Option<BoxFuture<'static, Result<Vec<String>, ToolError>>> {
    table
        .iter()
        .find(|(name, _)| **name == *completing.argument)
        .map(|(_, f)| f(completing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_are_capped_with_a_total() {
        let few = Completion::of(vec!["a".into()]);
        assert_eq!((few.total, few.has_more), (None, false));
        let many = Completion::of((0..150).map(|i| i.to_string()).collect());
        assert_eq!(many.values.len(), MAX_COMPLETIONS);
        assert_eq!((many.total, many.has_more), (Some(150), true));
    }
}

/// What a completion fn answers.
pub trait CompletionOutput {
    /// The values, or the error converted.
    ///
    /// # Errors
    /// The fn's.
    fn into_values(self) -> Result<Vec<String>, ToolError>;
}

impl CompletionOutput for Vec<String> {
    fn into_values(self) -> Result<Vec<String>, ToolError> {
        Ok(self)
    }
}

impl<E: Into<ToolError>> CompletionOutput for Result<Vec<String>, E> {
    fn into_values(self) -> Result<Vec<String>, ToolError> {
        self.map_err(Into::into)
    }
}

/// Marks a completion or resource list fn that is `async`.
#[derive(Debug)]
pub enum Async {}
/// Marks a completion or resource list fn that is plain.
#[derive(Debug)]
pub enum Plain {}

/// A completion fn, as `#[arg(complete = f)]` names it: `async fn f(c: Completing) ->
/// Vec<String>` (or `Result<Vec<String>, E>` with `E: Into<ToolError>`, or a plain fn).
/// Implemented for every such fn; `M` tells the kinds apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a completion fn",
    label = "`complete = ...` names a fn taking `Completing` and returning the values",
    note = "write `async fn f(c: Completing) -> Vec<String>` (or `-> Result<Vec<String>, E>` with `E: Into<ToolError>`, or a plain `fn`)"
)]
pub trait CompleteFn<M> {
    /// Runs it.
    fn run(self, completing: Completing) -> BoxFuture<'static, Result<Vec<String>, ToolError>>;
}

impl<F, Fut> CompleteFn<Async> for F
where
    F: FnOnce(Completing) -> Fut,
    Fut: core::future::Future + Send + 'static,
    Fut::Output: CompletionOutput,
{
    fn run(self, completing: Completing) -> BoxFuture<'static, Result<Vec<String>, ToolError>> {
        let fut = self(completing);
        Box::pin(async move { fut.await.into_values() })
    }
}

impl<F, R> CompleteFn<Plain> for F
where
    F: FnOnce(Completing) -> R,
    R: CompletionOutput,
{
    fn run(self, completing: Completing) -> BoxFuture<'static, Result<Vec<String>, ToolError>> {
        let values = self(completing).into_values();
        Box::pin(core::future::ready(values))
    }
}
