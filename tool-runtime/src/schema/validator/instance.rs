//! The two representations a validator reads: `serde_json::Value`, and the HTTP front end's
//! parsed tree ([`Node`]), which the fast path validates without building a `Value`.

use std::borrow::Cow;

use serde_json::{Number, Value};

use crate::tool::parsed::Node;

/// The kind of a JSON value.
pub(crate) enum Kind<'a> {
    Null,
    Boolean,
    Object,
    Array,
    String,
    Number(&'a Number),
}

/// One JSON value, as the validator reads it.
pub(crate) trait Instance: Sized {
    fn kind(&self) -> Kind<'_>;
    /// The members of an object, in document order.
    fn members(&self) -> Option<impl ExactSizeIterator<Item = (&str, &Self)>>;
    fn get(&self, key: &str) -> Option<&Self>;
    fn as_array(&self) -> Option<&[Self]>;
    fn as_str(&self) -> Option<&str>;
    fn as_number(&self) -> Option<&Number>;
    fn is_null(&self) -> bool;
    fn as_bool(&self) -> Option<bool>;
    /// The value as a `Value`: for messages, and for comparisons with the schema's values.
    fn to_value(&self) -> Cow<'_, Value>;
}

impl Instance for Value {
    fn kind(&self) -> Kind<'_> {
        match self {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Boolean,
            Value::Object(_) => Kind::Object,
            Value::Array(_) => Kind::Array,
            Value::String(_) => Kind::String,
            Value::Number(n) => Kind::Number(n),
        }
    }
    fn members(&self) -> Option<impl ExactSizeIterator<Item = (&str, &Self)>> {
        self.as_object()
            .map(|map| map.iter().map(|(k, v)| (k.as_str(), v)))
    }
    fn get(&self, key: &str) -> Option<&Self> {
        self.as_object()?.get(key)
    }
    fn as_array(&self) -> Option<&[Self]> {
        Value::as_array(self).map(Vec::as_slice)
    }
    fn as_str(&self) -> Option<&str> {
        Value::as_str(self)
    }
    fn as_number(&self) -> Option<&Number> {
        Value::as_number(self)
    }
    fn is_null(&self) -> bool {
        Value::is_null(self)
    }
    fn as_bool(&self) -> Option<bool> {
        Value::as_bool(self)
    }
    fn to_value(&self) -> Cow<'_, Value> {
        Cow::Borrowed(self)
    }
}

impl Instance for Node<'_> {
    fn kind(&self) -> Kind<'_> {
        match self {
            Node::Null => Kind::Null,
            Node::Bool(_) => Kind::Boolean,
            Node::Object(_) => Kind::Object,
            Node::Array(_) => Kind::Array,
            Node::String(_) => Kind::String,
            Node::Number(n) => Kind::Number(n),
        }
    }
    fn members(&self) -> Option<impl ExactSizeIterator<Item = (&str, &Self)>> {
        match self {
            Node::Object(members) => Some(members.iter().map(|(k, v)| (k.as_ref(), v))),
            _ => None,
        }
    }
    fn get(&self, key: &str) -> Option<&Self> {
        match self {
            Node::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<&[Self]> {
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }
    fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(s) => Some(s),
            _ => None,
        }
    }
    fn as_number(&self) -> Option<&Number> {
        match self {
            Node::Number(n) => Some(n),
            _ => None,
        }
    }
    fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }
    fn as_bool(&self) -> Option<bool> {
        match self {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn to_value(&self) -> Cow<'_, Value> {
        Cow::Owned(Node::to_value(self))
    }
}

/// JSON equality of an instance and a schema's value: numbers by value, objects whatever their
/// members' order.
pub(crate) fn equals<I: Instance>(instance: &I, value: &Value) -> bool {
    match value {
        Value::Null => instance.is_null(),
        Value::Bool(b) => instance.as_bool() == Some(*b),
        Value::String(s) => instance.as_str() == Some(s.as_str()),
        Value::Number(n) => instance.as_number().is_some_and(|m| {
            super::number::Num::of(m)
                .cmp(super::number::Num::of(n))
                .is_eq()
        }),
        Value::Array(items) => instance.as_array().is_some_and(|mine| {
            mine.len() == items.len() && mine.iter().zip(items).all(|(a, b)| equals(a, b))
        }),
        Value::Object(map) => instance.members().is_some_and(|members| {
            members.len() == map.len()
                && members
                    .into_iter()
                    .all(|(k, v)| map.get(k).is_some_and(|w| equals(v, w)))
        }),
    }
}
