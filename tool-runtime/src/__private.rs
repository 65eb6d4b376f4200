//! What `#[tool]`-generated code reaches through `::tool_runtime::__private`, so users never
//! add serde_json, schemars or inventory for the macro's sake. Not public API.

pub use core::clone::Clone;
pub use core::option::Option::{self, None, Some};
pub use core::result::Result::{self, Err, Ok};
pub use core::time::Duration;
pub use std::boxed::Box;
pub use std::string::String;

pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json::{self, Value};

pub use crate::schema::{input_schema_for, output_schema_for};
pub use crate::tool::Rate;
pub use crate::tool::Violation;
pub use crate::tool::context::FromCallContext;
pub use crate::tool::definition::{
    Annotations, Guard, ParamHint, ParsedCall, ToolDescriptor, ToolRegistration,
};
pub use crate::tool::options::OptionsDescriptor;
pub use crate::tool::parsed::ParsedArgs;
pub use crate::tool::state::{StateKey, StateMap};
pub use crate::{CallContext, ToolError, blocking};
pub use futures_util::future::BoxFuture;
pub use std::borrow::Cow;

/// The annotations `#[tool(annotations(...))]` writes, each hint set or left unsaid
/// ([`Annotations`] is `#[non_exhaustive]`, so a user's crate cannot write it as a literal).
#[must_use]
pub const fn annotations(
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
) -> Annotations {
    Annotations {
        read_only,
        destructive,
        idempotent,
        open_world,
    }
}

/// Deserializes validated arguments into the generated args struct.
pub fn decode<A: serde::de::DeserializeOwned>(args: Value) -> Result<A, ToolError> {
    serde_json::from_value(args).map_err(|e| {
        ToolError::invalid_arguments(vec![Violation::new("", "decode", e.to_string())])
    })
}

/// Serializes a tool's result.
pub fn encode<T: serde::Serialize>(value: &T) -> Result<Value, ToolError> {
    serde_json::to_value(value)
        .map_err(|e| ToolError::internal(format_args!("the result does not serialize: {e}")))
}

/// A tool fn's `Result<T, E>` taken apart: `T` is described and serialized, `E` converted
/// into a [`ToolError`] (through [`Marker`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool result",
    note = "a tool returns `T` or `Result<T, E>` where `E: Into<ToolError>` and `T: Serialize + JsonSchema`"
)]
pub trait IntoToolResult {
    /// The success type.
    type Ok;
    /// The error type.
    type Err;
    /// The result itself.
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
}

impl<T, E> IntoToolResult for Result<T, E> {
    type Ok = T;
    type Err = E;
    fn into_result(self) -> Self {
        self
    }
}

/// A tool's error type converts into a [`ToolError`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error type",
    label = "`ToolError` has no `From<{Self}>`",
    note = "for an error type of your crate, implement `From<{Self}> for tool_runtime::ToolError`, choosing the error's kind (`ToolError::failed(..)`, `ToolError::not_found(..)`, ...)",
    note = "for another crate's, convert in the fn: `.map_err(|e| ToolError::failed(e.to_string()))?`, or return `Result<T, String>`",
    note = "`String`, `&'static str`, `std::io::Error` and, with the `anyhow` feature, `anyhow::Error` convert already"
)]
pub trait ToolErrorType {}
// Not recommended: the error names this trait, in the words above, and not `From`.
#[diagnostic::do_not_recommend]
impl<E: Into<ToolError>> ToolErrorType for E {}

/// Spanned at a tool's error type by the generated code: the one place an error type without
/// the conversion is reported, in the words of [`ToolErrorType`].
pub const fn assert_error<E: ToolErrorType>() {}

/// Converting an error whose type has `Into<ToolError>`.
pub trait Convertible<E> {
    /// `E::into`.
    fn convert(&self, e: E) -> ToolError;
}

impl<E: Into<ToolError>> Convertible<E> for &Marker<E> {
    fn convert(&self, e: E) -> ToolError {
        e.into()
    }
}

/// The stand-in for an error type without the conversion (never run: the build has failed).
pub trait Unconvertible<E> {
    /// Any error.
    fn convert(&self, e: E) -> ToolError;
}

impl<E> Unconvertible<E> for Marker<E> {
    fn convert(&self, _: E) -> ToolError {
        ToolError::internal("the tool's error type does not convert into ToolError")
    }
}

/// Every parameter a caller supplies must be deserializable and describable.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "this type must implement `serde::Deserialize` and `schemars::JsonSchema`",
    note = "derive them on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`; to have the pipeline supply it instead, use `State<T>` or `CallContext`"
)]
pub trait ToolParam {}
impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> ToolParam for T {}

/// Spanned at a parameter's type by the generated code: the one place a type without the
/// derives is reported, in the words of [`ToolParam`].
pub const fn assert_param<T: ToolParam>() {}

/// A type, for the generated code to read, describe, write or convert a value of it through
/// without asking for its traits a second time. The methods of [`Readable`], [`Writable`] and
/// [`Convertible`] are implemented for `&Marker<T>` where `T` has the traits; those of
/// [`Unreadable`], [`Unwritable`] and [`Unconvertible`] for `Marker<T>` whatever `T` is, and are
/// chosen otherwise (autoref specialization): they compile and are never run, since the
/// `assert_*` fn spanned at the type fails the build first.
#[derive(Debug)]
pub struct Marker<T>(core::marker::PhantomData<T>);

impl<T> Marker<T> {
    /// The marker.
    #[must_use]
    pub const fn new() -> Self {
        Self(core::marker::PhantomData)
    }
}

impl<T> Default for Marker<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Reading and describing a parameter whose type has the derives.
pub trait Readable<T> {
    /// serde's `Deserialize`.
    fn read<'de, D: serde::Deserializer<'de>>(&self, d: D) -> Result<T, D::Error>;
    /// schemars' `JsonSchema`.
    fn describe(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
}

impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> Readable<T> for &Marker<T> {
    fn read<'de, D: serde::Deserializer<'de>>(&self, d: D) -> Result<T, D::Error> {
        T::deserialize(d)
    }
    fn describe(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<T>()
    }
}

/// The stand-in for a type without the derives (never run: the build has failed).
pub trait Unreadable<T> {
    /// Refuses.
    fn read<'de, D: serde::Deserializer<'de>>(&self, d: D) -> Result<T, D::Error>;
    /// Any schema.
    fn describe(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
}

impl<T> Unreadable<T> for Marker<T> {
    fn read<'de, D: serde::Deserializer<'de>>(&self, _: D) -> Result<T, D::Error> {
        Err(serde::de::Error::custom(
            "the parameter's type cannot be read",
        ))
    }
    fn describe(&self, _: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::Schema::default()
    }
}

/// Every tool result must be serializable and describable.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool result",
    label = "this type must implement `serde::Serialize` and `schemars::JsonSchema`",
    note = "derive them on your type: `#[derive(serde::Serialize, schemars::JsonSchema)]`"
)]
pub trait ToolOutput {}
impl<T: serde::Serialize + schemars::JsonSchema> ToolOutput for T {}

/// Spanned at the return type by the generated code: the one place a result type without
/// the derives is reported, in the words of [`ToolOutput`].
pub const fn assert_output<T: ToolOutput>() {}

/// Encoding and describing a result whose type has the derives.
pub trait Writable<T> {
    /// [`encode`].
    fn encode(&self, value: &T) -> Result<Value, ToolError>;
    /// [`output_schema_for`].
    fn describe(&self) -> Value;
    /// Whether the result is content blocks.
    fn content(&self) -> bool;
}

impl<T: serde::Serialize + schemars::JsonSchema> Writable<T> for &Marker<T> {
    fn content(&self) -> bool {
        crate::tool::content::is_content::<T>()
    }
    fn encode(&self, value: &T) -> Result<Value, ToolError> {
        encode(value)
    }
    fn describe(&self) -> Value {
        output_schema_for::<T>()
    }
}

/// The stand-in for a result type without the derives (never run: the build has failed).
pub trait Unwritable<T> {
    /// Refuses.
    fn encode(&self, value: &T) -> Result<Value, ToolError>;
    /// Any schema.
    fn describe(&self) -> Value;
    /// Not content.
    fn content(&self) -> bool;
}

impl<T> Unwritable<T> for Marker<T> {
    fn content(&self) -> bool {
        false
    }
    fn encode(&self, _: &T) -> Result<Value, ToolError> {
        Err(ToolError::internal(
            "the tool's result type cannot be written",
        ))
    }
    fn describe(&self) -> Value {
        Value::Null
    }
}
/// Spanned at an injected parameter's type.
pub const fn assert_injected<T: FromCallContext>() {}

/// Coerces `#[tool(guard = f)]` to a [`Guard`], so a fn of another signature is reported at
/// the path with the signature a guard needs.
pub const fn guard(f: Guard) -> Guard {
    f
}

/// Boxes a tool's call future.
pub fn boxed<F>(fut: F) -> BoxFuture<'static, Result<Value, ToolError>>
where
    F: core::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    Box::pin(fut)
}

// ---- `#[resource]` and `#[prompt]` ----

pub use std::collections::BTreeMap;

pub use crate::prompt::{PromptDescriptor, PromptRegistration, PromptReply};
pub use crate::resource::{
    CacheScope, Listed, ResourceBody, ResourceContents, ResourceDescriptor, ResourceRegistration,
};
pub use crate::tool::complete::{Completer, Completing};

/// A resource template variable or prompt argument: read from the text the URI or the wire
/// carries.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read from a URI variable or prompt argument",
    label = "this type must implement `serde::Deserialize`",
    note = "strings, numbers, bools and enums of unit variants (`#[derive(serde::Deserialize)]`) read from text; to have the pipeline supply it instead, use `State<T>` or `CallContext`"
)]
pub trait TextParam: serde::de::DeserializeOwned {}
// Not recommended: the error names this trait, in the words above.
#[diagnostic::do_not_recommend]
impl<T: serde::de::DeserializeOwned> TextParam for T {}

/// Reads the parameter `name` from its text: as a string first (`String`, enums), then as
/// JSON (numbers, bools); absent, from `null` (an `Option` is `None`, anything else is
/// missing). A value that does not read is `invalid_arguments` with a violation at `/{name}`
/// that says what was expected.
///
/// # Errors
/// As said.
pub fn from_text<T: TextParam>(name: &str, text: Option<&String>) -> Result<T, ToolError> {
    let invalid = |keyword: &str, message: String| {
        ToolError::invalid_arguments(vec![Violation::new(format!("/{name}"), keyword, message)])
    };
    let Some(text) = text else {
        return T::deserialize(Value::Null)
            .map_err(|_| invalid("required", format!("`{name}` is required")));
    };
    match T::deserialize(Value::String(text.clone())) {
        Ok(value) => Ok(value),
        Err(as_string) => match serde_json::from_str::<Value>(text) {
            Ok(json) => T::deserialize(json)
                .map_err(|e| invalid("type", format!("`{name}` is `{text}`: {e}"))),
            Err(_) => Err(invalid(
                "type",
                format!("`{name}` is `{text}`: {as_string}"),
            )),
        },
    }
}

/// A resource fn's return types with contents of their own: text, bytes, contents.
pub trait IntoResourceBody {
    /// The body.
    fn into_body(self) -> ResourceBody;
}

impl IntoResourceBody for String {
    fn into_body(self) -> ResourceBody {
        ResourceBody::Text(self)
    }
}

impl IntoResourceBody for &'static str {
    fn into_body(self) -> ResourceBody {
        ResourceBody::Text(self.to_owned())
    }
}

impl IntoResourceBody for Vec<u8> {
    fn into_body(self) -> ResourceBody {
        ResourceBody::Blob(self)
    }
}

impl IntoResourceBody for bytes::Bytes {
    fn into_body(self) -> ResourceBody {
        ResourceBody::Blob(self.into())
    }
}

impl IntoResourceBody for ResourceContents {
    fn into_body(self) -> ResourceBody {
        ResourceBody::Contents(vec![self])
    }
}

impl IntoResourceBody for Vec<ResourceContents> {
    fn into_body(self) -> ResourceBody {
        ResourceBody::Contents(self)
    }
}

impl IntoResourceBody for ResourceBody {
    fn into_body(self) -> ResourceBody {
        self
    }
}

/// A resource fn's value with contents of its own (chosen first).
pub trait KnownBody<T> {
    /// [`IntoResourceBody::into_body`].
    ///
    /// # Errors
    /// Never.
    fn body(&self, value: T) -> Result<ResourceBody, ToolError>;
}

impl<T: IntoResourceBody> KnownBody<T> for &&Marker<T> {
    fn body(&self, value: T) -> Result<ResourceBody, ToolError> {
        Ok(value.into_body())
    }
}

/// Any other serializable value, sent as JSON.
pub trait JsonBody<T> {
    /// The value as JSON.
    ///
    /// # Errors
    /// The value does not serialize.
    fn body(&self, value: T) -> Result<ResourceBody, ToolError>;
}

impl<T: serde::Serialize> JsonBody<T> for &Marker<T> {
    fn body(&self, value: T) -> Result<ResourceBody, ToolError> {
        encode(&value).map(ResourceBody::Json)
    }
}

/// A type a resource cannot answer with: named in the error of the one method chosen for it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a resource's contents",
    label = "a resource returns text, bytes, contents or a serializable value",
    note = "return `String` or `&'static str` (text), `Vec<u8>` or `bytes::Bytes` (a blob), `ResourceContents`, `Vec<ResourceContents>` or `ResourceBody` (as given), or a type deriving `serde::Serialize` (JSON); or `Result<_, E>` of one, `E: Into<ToolError>`"
)]
pub trait ResourceOutput {}

/// The stand-in for a type that is none of those: its bound fails the build, in the words of
/// [`ResourceOutput`].
pub trait NoBody<T> {
    /// Never compiles.
    ///
    /// # Errors
    /// Never runs.
    fn body(&self, value: T) -> Result<ResourceBody, ToolError>
    where
        T: ResourceOutput;
}

impl<T> NoBody<T> for Marker<T> {
    fn body(&self, _: T) -> Result<ResourceBody, ToolError>
    where
        T: ResourceOutput,
    {
        Err(ToolError::internal(
            "the resource's contents cannot be written",
        ))
    }
}

/// A prompt fn's return type: messages.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt's messages",
    label = "a prompt returns `String`, `&str`, `PromptMessage`, `Vec<PromptMessage>` or `PromptReply`",
    note = "or `Result<_, E>` of one of them, where `E: Into<ToolError>`"
)]
pub trait PromptOutput {
    /// The messages.
    fn into_reply(self) -> PromptReply;
}

// Not recommended: the error names this trait, in the words above, and not `From`.
#[diagnostic::do_not_recommend]
impl<T: Into<PromptReply>> PromptOutput for T {
    fn into_reply(self) -> PromptReply {
        self.into()
    }
}

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

/// Marks a completion or list fn that is `async`.
#[derive(Debug)]
pub enum Async {}
/// Marks a completion or list fn that is plain.
#[derive(Debug)]
pub enum Plain {}

/// A completion fn: `async fn f(c: Completing) -> Vec<String>` (or `Result<Vec<String>, E>`,
/// or a plain fn).
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

/// Runs the completion fn `f`.
pub fn complete_with<M, F: CompleteFn<M>>(
    f: F,
    completing: Completing,
) -> BoxFuture<'static, Result<Vec<String>, ToolError>> {
    f.run(completing)
}

/// A template's list fn: `async fn f(…) -> Vec<Listed>` (or `Result<Vec<Listed>, E>`, or a
/// plain fn) whose parameters the pipeline supplies (`State<T>`, `CallContext`, …; up to four).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource list fn",
    label = "`list = ...` names a fn returning the template's resources",
    note = "write `async fn f(store: State<Store>) -> Vec<Listed>` (or `-> Result<Vec<Listed>, E>` with `E: Into<ToolError>`, or a plain `fn`), taking only what the pipeline supplies: `State<T>`, `CallContext`, types implementing `FromCallContext`"
)]
pub trait ListFn<M> {
    /// Runs it.
    fn run(self, ctx: CallContext) -> BoxFuture<'static, Result<Vec<Listed>, ToolError>>;
}

macro_rules! list_fn {
    ($($a:ident),*) => {
        impl<F, Fut, $($a,)*> ListFn<(Async, $($a,)*)> for F
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

        impl<F, R, $($a,)*> ListFn<(Plain, $($a,)*)> for F
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

/// Runs the list fn `f`.
pub fn list_with<M, F: ListFn<M>>(
    f: F,
    ctx: CallContext,
) -> BoxFuture<'static, Result<Vec<Listed>, ToolError>> {
    f.run(ctx)
}

/// The schema validator, for the tests and the fuzz target that hold it to the JSON Schema Test
/// Suite and to the `jsonschema` crate.
pub mod validator {
    pub use crate::schema::validator::{
        CompileError, ErrorKind, Types, ValidationError, Validator,
    };
}
