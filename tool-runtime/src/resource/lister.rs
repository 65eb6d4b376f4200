//! A template's list fn: what `#[resource(list = f)]` names.

use futures_util::future::BoxFuture;

use crate::resource::Listed;
use crate::tool::complete::{Async, Plain};
use crate::tool::context::{CallContext, FromCallContext};
use crate::tool::error::ToolError;

/// What a template's `list` fn answers.
pub trait ListOutput {
    /// The listed resources, or the error converted.
    ///
    /// # Errors
    /// The fn's.
    fn into_listed(self) -> Result<Vec<Listed>, ToolError>;
}

impl ListOutput for Vec<Listed> {
    fn into_listed(self) -> Result<Vec<Listed>, ToolError> {
        Ok(self)
    }
}

impl<E: Into<ToolError>> ListOutput for Result<Vec<Listed>, E> {
    fn into_listed(self) -> Result<Vec<Listed>, ToolError> {
        self.map_err(Into::into)
    }
}

/// A template's list fn, as `#[resource(list = f)]` names it: `async fn f(…) -> Vec<Listed>`
/// (or `Result<Vec<Listed>, E>` with `E: Into<ToolError>`, or a plain fn) whose parameters the
/// pipeline supplies (`State<T>`, `CallContext`, …; up to four). Implemented for every such
/// fn; `M` tells the kinds apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource list fn",
    label = "`list = ...` names a fn returning the template's resources",
    note = "write `async fn f(store: State<Store>) -> Vec<Listed>` (or `-> Result<Vec<Listed>, E>` with `E: Into<ToolError>`, or a plain `fn`), taking only what the pipeline supplies: `State<T>`, `CallContext`, types implementing `FromCallContext`"
)]
pub trait Lister<M> {
    /// Runs it.
    fn run(self, ctx: CallContext) -> BoxFuture<'static, Result<Vec<Listed>, ToolError>>;
}

macro_rules! list_fn {
    ($($a:ident),*) => {
        impl<F, Fut, $($a,)*> Lister<(Async, $($a,)*)> for F
        where
            F: FnOnce($($a),*) -> Fut + Send + 'static,
            Fut: core::future::Future + Send + 'static,
            Fut::Output: ListOutput,
            $($a: FromCallContext + Send + 'static,)*
        {
            #[allow(non_snake_case, unused_variables)]
            fn run(self, ctx: CallContext) -> BoxFuture<'static, Result<Vec<Listed>, ToolError>> {
                Box::pin(async move {
                    $(let $a = <$a as FromCallContext>::from_context(&ctx)?;)*
                    self($($a),*).await.into_listed()
                })
            }
        }

        impl<F, R, $($a,)*> Lister<(Plain, $($a,)*)> for F
        where
            F: FnOnce($($a),*) -> R + Send + 'static,
            R: ListOutput,
            $($a: FromCallContext + Send + 'static,)*
        {
            #[allow(non_snake_case, unused_variables)]
            fn run(self, ctx: CallContext) -> BoxFuture<'static, Result<Vec<Listed>, ToolError>> {
                Box::pin(async move {
                    $(let $a = <$a as FromCallContext>::from_context(&ctx)?;)*
                    self($($a),*).into_listed()
                })
            }
        }
    };
}

list_fn!();
list_fn!(A1);
list_fn!(A1, A2);
list_fn!(A1, A2, A3);
list_fn!(A1, A2, A3, A4);
