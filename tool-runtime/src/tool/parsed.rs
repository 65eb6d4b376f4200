//! A request body parsed once into a tree that borrows its strings from the bytes, validated
//! by the schema validator (which reads it as it reads a `Value`) and
//! decoded straight into a tool's arguments: the HTTP fast path, which builds no
//! `serde_json::Value` (no map with a hashed key per member, no owned string per key and value)
//! for a `#[tool]` whose arguments validate; any other call makes its `Value` from the tree.
//!
//! It must be indistinguishable from the `Value` path. The tree therefore
//! - normalizes numbers as [`normalize_numbers`] does
//!   (`5.0` is the integer `5`), before validation, so both validate the same instance;
//! - refuses an object with a repeated key (`serde_json::Value` keeps the last one) or more
//!   than 64 members (keys are looked up linearly), so the caller takes the `Value` path;
//! - decodes as `serde_json::Value`'s own deserializer does (structs from objects or arrays,
//!   enums from a string or a one-member object, options from null).
//!
//! Anything it does not handle makes the pipeline take the `Value` path: hooks that read
//! arguments, guards and observers see the same arguments they always did.
//! `tests/tests/suite/parsed_path.rs` checks that both paths give the same envelopes.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

/// The most members an object may have in the tree.
const MAX_MEMBERS: usize = 64;

/// One JSON value, borrowing strings from the parsed bytes where it can.
#[derive(Debug, Default, PartialEq)]
pub(crate) enum Node<'a> {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    /// Members in document order; keys are unique.
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// Parses `bytes`; `None` if they are not JSON or repeat a key in an object (the `Value`
    /// path then parses them and reports what is wrong).
    pub(crate) fn parse(bytes: &'a [u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok()
    }

    /// The same value as a `serde_json::Value`.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::String(s) => Value::String(s.to_string()),
            Node::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

/// A tool's arguments as parsed by the HTTP front end, for `#[tool]`-generated code to decode.
/// Not public API.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct ParsedArgs<'a> {
    pub(crate) node: &'a Node<'a>,
}

impl fmt::Debug for ParsedArgs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.node.fmt(f)
    }
}

impl ParsedArgs<'_> {
    /// The arguments decoded into `A`; `None` when they do not decode (the pipeline then takes
    /// the `Value` path, which reports why).
    #[must_use]
    pub fn decode<A: de::DeserializeOwned>(self) -> Option<A> {
        A::deserialize(self.node).ok()
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node<'de>, E> {
        // Exactly what the `Value` path does to the same number.
        Ok(match integral(v) {
            Some(i) => Node::Number(i.into()),
            None => Number::from_f64(v).map_or(Node::Null, Node::Number),
        })
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let mut members: Vec<(Cow<'de, str>, Node<'de>)> = Vec::new();
        while let Some(Key(key)) = map.next_key()? {
            // Looking keys up is linear (here and in the validator), which is fastest for the
            // small objects arguments are; larger ones take the `Value` path, so a body of many
            // keys costs no quadratic time. A repeated key does too: the `Value` path keeps the
            // last value, as it always has.
            if members.len() == MAX_MEMBERS || members.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom("repeated key or a large object"));
            }
            members.push((key, map.next_value()?));
        }
        Ok(Node::Object(members))
    }
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Decoding from the tree, as `serde_json::Value`'s deserializer decodes from a value.
impl<'de> Deserializer<'de> for &'de Node<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Node::Null => visitor.visit_unit(),
            Node::Bool(b) => visitor.visit_bool(*b),
            Node::Number(n) => n.deserialize_any(visitor),
            Node::String(Cow::Borrowed(s)) => visitor.visit_borrowed_str(s),
            Node::String(Cow::Owned(s)) => visitor.visit_str(s),
            Node::Array(items) => {
                let mut seq = de::value::SeqDeserializer::new(items.iter());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Node::Object(members) => {
                let mut map =
                    de::value::MapDeserializer::new(members.iter().map(|(k, v)| (KeyRef(k), v)));
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Node::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self {
            // A unit variant: `"name"`.
            Node::String(s) => {
                visitor.visit_enum(de::value::StrDeserializer::<Self::Error>::new(s))
            }
            // Any other variant: `{"name": content}`.
            Node::Object(members) => match members.as_slice() {
                [(variant, content)] => visitor.visit_enum(Variant { variant, content }),
                _ => Err(de::Error::invalid_value(
                    de::Unexpected::Map,
                    &"a map with a single key",
                )),
            },
            _ => Err(de::Error::invalid_type(
                unexpected(self),
                &"a string or a map",
            )),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

fn unexpected<'a>(node: &'a Node<'_>) -> de::Unexpected<'a> {
    match node {
        Node::Null => de::Unexpected::Unit,
        Node::Bool(b) => de::Unexpected::Bool(*b),
        Node::Number(_) => de::Unexpected::Other("number"),
        Node::String(s) => de::Unexpected::Str(s),
        Node::Array(_) => de::Unexpected::Seq,
        Node::Object(_) => de::Unexpected::Map,
    }
}

impl<'de> de::IntoDeserializer<'de, serde_json::Error> for &'de Node<'de> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

/// An object key, handed to the visitor borrowed when the key is.
struct KeyRef<'de>(&'de Cow<'de, str>);

impl<'de> de::IntoDeserializer<'de, serde_json::Error> for KeyRef<'de> {
    type Deserializer = de::value::BorrowedStrDeserializer<'de, serde_json::Error>;
    fn into_deserializer(self) -> Self::Deserializer {
        de::value::BorrowedStrDeserializer::new(self.0)
    }
}

/// `{"variant": content}` as serde's enum access.
struct Variant<'de> {
    variant: &'de Cow<'de, str>,
    content: &'de Node<'de>,
}

impl<'de> de::EnumAccess<'de> for Variant<'de> {
    type Error = serde_json::Error;
    type Variant = &'de Node<'de>;
    fn variant_seed<S: de::DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), Self::Error> {
        let name = seed.deserialize(de::value::BorrowedStrDeserializer::<Self::Error>::new(
            self.variant,
        ))?;
        Ok((name, self.content))
    }
}

impl<'de> de::VariantAccess<'de> for &'de Node<'de> {
    type Error = serde_json::Error;
    fn unit_variant(self) -> Result<(), Self::Error> {
        match self {
            Node::Null => Ok(()),
            other => Err(de::Error::invalid_type(unexpected(other), &"unit variant")),
        }
    }
    fn newtype_variant_seed<S: de::DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        seed.deserialize(self)
    }
    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self {
            Node::Array(_) => self.deserialize_any(visitor),
            other => Err(de::Error::invalid_type(unexpected(other), &"tuple variant")),
        }
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self {
            Node::Object(_) => self.deserialize_any(visitor),
            other => Err(de::Error::invalid_type(
                unexpected(other),
                &"struct variant",
            )),
        }
    }
}

/// Rewrites numbers with integral values (`5.0`) as integers, as JSON Schema reads them, so the
/// Rust integer parameters accept what the schema accepted.
pub(crate) fn normalize_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(i) = n.as_f64().and_then(integral) {
                *value = Value::from(i);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_numbers),
        Value::Object(map) => map.values_mut().for_each(normalize_numbers),
        _ => {}
    }
}

/// The integer a float stands for, when it is integral and survives the round trip exactly.
pub(crate) fn integral(f: f64) -> Option<i64> {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_precision_loss,
        clippy::float_cmp
    )]
    // Reason: only values that survive the round trip exactly are rewritten.
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        let i = f as i64;
        if i as f64 == f {
            return Some(i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Node<'_> {
        Node::parse(text.as_bytes()).expect("parses")
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let node = parse(r#"{"a": "plain", "b\u0062": "esc\"aped"}"#);
        let Node::Object(members) = &node else {
            panic!("an object")
        };
        assert!(matches!(members[0].0, Cow::Borrowed("a")));
        assert!(matches!(members[0].1, Node::String(Cow::Borrowed("plain"))));
        assert!(matches!(members[1].0, Cow::Owned(ref k) if k == "bb"));
        assert_eq!(node.to_value(), json!({"a": "plain", "bb": "esc\"aped"}));
    }

    #[test]
    fn numbers_are_normalized_as_the_value_path_does() {
        let text = "[5.0, -0.0, 1.5, 1e300, 9007199254740992.0, 18446744073709551615, -3]";
        let mut value: Value = serde_json::from_str(text).unwrap();
        normalize_numbers(&mut value);
        assert_eq!(parse(text).to_value(), value);
        assert_eq!(parse("[5.0]").to_value(), json!([5]));
    }

    #[test]
    fn repeated_keys_and_bad_json_are_left_to_the_value_path() {
        assert!(Node::parse(br#"{"a": 1, "a": 2}"#).is_none());
        assert!(Node::parse(br#"{"a": {"b": 1, "b\u0000": 2, "b": 3}}"#).is_none());
        assert!(Node::parse(br#"{"a": 1,}"#).is_none());
        assert!(Node::parse(b"{\"a\": \"\xff\"}").is_none());
    }

    #[test]
    fn large_objects_are_left_to_the_value_path() {
        let object = |n: usize| {
            let members: Vec<String> = (0..n).map(|i| format!("\"k{i}\": {i}")).collect();
            format!("{{{}}}", members.join(","))
        };
        assert!(Node::parse(object(MAX_MEMBERS).as_bytes()).is_some());
        assert!(Node::parse(object(MAX_MEMBERS + 1).as_bytes()).is_none());
        let nested = format!("{{\"a\": [{}]}}", object(MAX_MEMBERS + 1));
        assert!(Node::parse(nested.as_bytes()).is_none());
    }

    #[test]
    fn integral_floats_become_integers() {
        let mut x = json!({"a": 5.0, "b": [1.5, 2.0], "c": 1e300});
        normalize_numbers(&mut x);
        assert_eq!(x, json!({"a": 5, "b": [1.5, 2], "c": 1e300}));
    }
}
