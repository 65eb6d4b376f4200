//! The tree of a parsed request body ([`crate::tool::parsed`]) as `jsonschema` reads it, through
//! its custom-representation traits: the HTTP fast path's arguments are validated without a
//! `serde_json::Value`.

use std::borrow::Cow;

use jsonschema::JsonType;
use jsonschema::json::{Array, Json, Node as JsonNode, NodeIdentity, Object};
use serde_json::{Number, Value};

use crate::tool::parsed::Node;

/// The tree as a `jsonschema` instance representation.
pub(crate) struct Parsed;

impl Json for Parsed {
    type Node<'a> = &'a Node<'a>;
    type PreparedKey = String;
    type StringBuffer = Node<'static>;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(
        buffer: &mut Node<'static>,
        string: &str,
        f: impl for<'x> FnOnce(&'x Node<'x>) -> T,
    ) -> T {
        *buffer = Node::String(Cow::Owned(string.to_owned()));
        f(buffer)
    }
}

impl<'a> JsonNode<'a, Parsed> for &'a Node<'a> {
    type Object = &'a [(Cow<'a, str>, Node<'a>)];
    type Array = &'a [Node<'a>];
    type Number = &'a Number;

    fn as_object(&self) -> Option<Self::Object> {
        match self {
            Node::Object(members) => Some(members),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<Self::Array> {
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }
    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self {
            Node::String(s) => Some(Cow::Borrowed(s.as_ref())),
            _ => None,
        }
    }
    fn as_number(&self) -> Option<&'a Number> {
        match self {
            Node::Number(n) => Some(n),
            _ => None,
        }
    }
    fn as_boolean(&self) -> Option<bool> {
        match self {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }
    fn json_type(&self) -> JsonType {
        match self {
            Node::Null => JsonType::Null,
            Node::Bool(_) => JsonType::Boolean,
            Node::Number(_) => JsonType::Number,
            Node::String(_) => JsonType::String,
            Node::Array(_) => JsonType::Array,
            Node::Object(_) => JsonType::Object,
        }
    }
    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(Node::to_value(self))
    }
    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(
            std::ptr::from_ref::<Node<'a>>(*self) as usize
        ))
    }
}

pub(crate) struct Members<'a>(std::slice::Iter<'a, (Cow<'a, str>, Node<'a>)>);

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, &'a Node<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k.as_ref(), v))
    }
}

impl<'a> Object<'a, Parsed> for &'a [(Cow<'a, str>, Node<'a>)] {
    type Node = &'a Node<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;
    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    fn get(&self, key: &String) -> Option<&'a Node<'a>> {
        self.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    fn members(&self) -> Members<'a> {
        Members(self.iter())
    }
}

impl<'a> Array<'a, Parsed> for &'a [Node<'a>] {
    type Node = &'a Node<'a>;
    type ElementsIter = std::slice::Iter<'a, Node<'a>>;
    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    fn elements(&self) -> Self::ElementsIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn satisfies_the_validators_representation_contract() {
        let text = jsonschema::json::conformance::document().to_string();
        let node = Node::parse(text.as_bytes()).expect("parses");
        jsonschema::json::conformance::assert_conformance::<Parsed>(&&node);
    }
}
