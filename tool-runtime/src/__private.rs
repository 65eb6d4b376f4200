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

pub use crate::layers::limits::Rate;
pub use crate::schema::{input_schema_for, output_schema_for};
pub use crate::tool::context::FromCallContext;
pub use crate::tool::definition::{
    Annotations, Guard, ParamHint, ParsedCall, ToolDescriptor, ToolRegistration,
};
pub use crate::tool::parsed::ParsedArgs;
pub use crate::tool::state::{StateKey, StateMap};
pub use crate::{BoxFuture, CallContext, ToolError, Violation, blocking};
pub use std::borrow::Cow;

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
