//! What `#[tool]`-generated code reaches through `::tool_runtime::__private`, so users never
//! add serde_json, schemars or inventory for the macro's sake. Not public API.

pub use core::clone::Clone;
pub use core::option::Option::{self, None, Some};
pub use core::result::Result::{self, Err, Ok};
pub use core::time::Duration;
pub use std::boxed::Box;
pub use std::string::String;

pub use crate::tool::{TaskDetach, TaskMode};
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
use crate::resource::ResourceOutput;
pub use crate::resource::{
    CacheScope, Listed, ResourceBody, ResourceContents, ResourceDescriptor, ResourceRegistration,
};
pub use crate::tool::complete::{Completer, Completing};

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

/// The schema validator, for the tests and the fuzz target that hold it to the JSON Schema Test
/// Suite and to the `jsonschema` crate.
pub mod validator {
    pub use crate::schema::validator::{
        CompileError, ErrorKind, Types, ValidationError, Validator,
    };
}
