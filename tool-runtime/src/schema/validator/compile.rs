//! A schema document compiled into a flat list of nodes.

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value};

use super::pattern::PatternError;
use super::{Bound, CompileError, Id, Keywords, Num, Pattern, Schema, Types};

/// The keywords of draft 2020-12 this validator does not know: a schema using one is refused,
/// never validated without it.
const UNSUPPORTED: [&str; 17] = [
    "contains",
    "minContains",
    "maxContains",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "additionalItems",
];

pub(super) fn compile(root: &Value) -> Result<Vec<Schema>, CompileError> {
    let mut compiler = Compiler {
        root,
        nodes: Vec::new(),
        places: Vec::new(),
        seen: HashMap::new(),
        pending: VecDeque::new(),
        at: String::new(),
    };
    compiler.schema(root)?;
    compiler.run()?;
    if let Some(id) = in_place_loop(&compiler.nodes) {
        return Err(CompileError::Invalid {
            at: compiler.places[id].clone(),
            message: "its references loop back to it without reading into the value".into(),
        });
    }
    Ok(compiler.nodes)
}

/// A node that applies to the very value it is given through a loop of references and
/// `allOf`/`anyOf`/`oneOf`/`not` (`{"$ref": "#"}` at the root): a schema with no meaning, whose
/// validation would never end. `None` when every loop reads into the value (a recursive type's
/// `properties` or `items`).
fn in_place_loop(nodes: &[Schema]) -> Option<Id> {
    #[derive(Clone, Copy, PartialEq)]
    enum Visit {
        New,
        Open,
        Done,
    }
    fn visit(nodes: &[Schema], id: Id, marks: &mut [Visit]) -> Option<Id> {
        match marks[id] {
            Visit::Open => return Some(id),
            Visit::Done => return None,
            Visit::New => {}
        }
        marks[id] = Visit::Open;
        if let Schema::Keywords(k) = &nodes[id] {
            let next = k
                .reference
                .iter()
                .chain(&k.all_of)
                .chain(&k.any_of)
                .chain(&k.one_of)
                .chain(k.not.as_ref().map(|(id, _)| id));
            for id in next {
                if let Some(found) = visit(nodes, *id, marks) {
                    return Some(found);
                }
            }
        }
        marks[id] = Visit::Done;
        None
    }
    let mut marks = vec![Visit::New; nodes.len()];
    (0..nodes.len()).find_map(|id| visit(nodes, id, &mut marks))
}

struct Compiler<'s> {
    root: &'s Value,
    nodes: Vec<Schema>,
    /// Where each node is in the schema, as a JSON pointer.
    places: Vec<String>,
    /// The node of each subschema compiled, by its address in the document: a `$ref` to it
    /// reuses it, and a recursive one finds it.
    seen: HashMap<*const Value, Id>,
    /// Nodes made and not yet compiled.
    pending: VecDeque<(Id, &'s Value)>,
    /// Where in the schema the compiler is, as a JSON pointer.
    at: String,
}

impl<'s> Compiler<'s> {
    fn invalid(&self, keyword: &str, message: impl Into<String>) -> CompileError {
        CompileError::Invalid {
            at: format!(
                "{}/{}",
                self.at,
                crate::tool::error::escape_pointer(keyword)
            ),
            message: message.into(),
        }
    }

    /// Compiles `schema` found at `step` below the current place.
    fn at(&mut self, step: &str, schema: &'s Value) -> Result<Id, CompileError> {
        let len = self.at.len();
        self.at.push('/');
        self.at.push_str(&crate::tool::error::escape_pointer(step));
        let id = self.schema(schema);
        self.at.truncate(len);
        id
    }

    /// The node of `schema`: the one it already has, or a new one, compiled later by
    /// [`Compiler::run`] (no recursion, however deep the schema).
    #[allow(clippy::unnecessary_wraps)] // As every step that compiles a subschema.
    fn schema(&mut self, schema: &'s Value) -> Result<Id, CompileError> {
        let address = std::ptr::from_ref(schema);
        if let Some(id) = self.seen.get(&address) {
            return Ok(*id);
        }
        let id = self.nodes.len();
        self.nodes.push(Schema::True);
        self.places.push(self.at.clone());
        self.seen.insert(address, id);
        self.pending.push_back((id, schema));
        Ok(id)
    }

    /// Compiles every node made, and those their keywords make, until none is left: outer
    /// schemas before inner ones, so a refusal names the outermost keyword.
    fn run(&mut self) -> Result<(), CompileError> {
        while let Some((id, schema)) = self.pending.pop_front() {
            self.at.clone_from(&self.places[id]);
            self.nodes[id] = match schema {
                Value::Bool(true) => Schema::True,
                Value::Bool(false) => Schema::False,
                Value::Object(map) => {
                    let (keywords, asserting) = self.keywords(map, id == 0)?;
                    if asserting {
                        Schema::Keywords(Box::new(keywords))
                    } else {
                        Schema::True
                    }
                }
                _ => {
                    return Err(CompileError::Invalid {
                        at: self.at.clone(),
                        message: format!("a schema is an object or a boolean, not {schema}"),
                    });
                }
            };
        }
        Ok(())
    }

    #[allow(clippy::too_many_lines)] // One arm per keyword.
    /// The keywords of one schema object, and whether any of them asserts anything.
    fn keywords(
        &mut self,
        map: &'s Map<String, Value>,
        root: bool,
    ) -> Result<(Keywords, bool), CompileError> {
        let mut k = Keywords::default();
        let mut asserting = false;
        for (keyword, value) in map {
            match keyword.as_str() {
                "type" => k.types = Some(self.types(value)?),
                "enum" => {
                    let Value::Array(options) = value else {
                        return Err(self.invalid(keyword, "`enum` is an array"));
                    };
                    k.enumeration = Some(options.clone());
                }
                "const" => k.constant = Some(value.clone()),
                "properties" => {
                    for (name, sub) in self.object(keyword, value)? {
                        let id = self.at_two(keyword, name, sub)?;
                        k.properties.push((name.as_str().into(), id));
                    }
                }
                "patternProperties" => {
                    for (source, sub) in self.object(keyword, value)? {
                        let pattern = Pattern::new(source).map_err(|e| self.pattern(keyword, e))?;
                        let id = self.at_two(keyword, source, sub)?;
                        k.patterns.push((pattern, id));
                    }
                }
                "additionalProperties" => k.additional = Some(self.at(keyword, value)?),
                "unevaluatedProperties" => k.unevaluated = Some(self.at(keyword, value)?),
                "required" => {
                    let names = value.as_array().and_then(|names| {
                        names.iter().map(|n| n.as_str().map(Box::from)).collect()
                    });
                    k.required = names
                        .filter(|names: &Vec<Box<str>>| {
                            names
                                .iter()
                                .enumerate()
                                .all(|(i, n)| !names[..i].contains(n))
                        })
                        .ok_or_else(|| {
                            self.invalid(keyword, "`required` is an array of distinct strings")
                        })?;
                }
                "minProperties" => k.min_properties = Some(self.count(keyword, value)?),
                "maxProperties" => k.max_properties = Some(self.count(keyword, value)?),
                "prefixItems" => k.prefix = self.list(keyword, value)?,
                "items" => {
                    if value.is_array() {
                        return Err(self.invalid(
                            keyword,
                            "`items` is one schema in draft 2020-12 (a tuple is `prefixItems`)",
                        ));
                    }
                    k.items = Some(self.at(keyword, value)?);
                }
                "minItems" => k.min_items = Some(self.count(keyword, value)?),
                "maxItems" => k.max_items = Some(self.count(keyword, value)?),
                "uniqueItems" => {
                    k.unique = value
                        .as_bool()
                        .ok_or_else(|| self.invalid(keyword, "`uniqueItems` is a boolean"))?;
                }
                "minLength" => k.min_length = Some(self.count(keyword, value)?),
                "maxLength" => k.max_length = Some(self.count(keyword, value)?),
                "pattern" => {
                    let source = value
                        .as_str()
                        .ok_or_else(|| self.invalid(keyword, "`pattern` is a string"))?;
                    k.pattern = Some(Pattern::new(source).map_err(|e| self.pattern(keyword, e))?);
                }
                "minimum" => k.minimum = Some(self.bound(keyword, value)?),
                "maximum" => k.maximum = Some(self.bound(keyword, value)?),
                "exclusiveMinimum" => k.exclusive_minimum = Some(self.bound(keyword, value)?),
                "exclusiveMaximum" => k.exclusive_maximum = Some(self.bound(keyword, value)?),
                "multipleOf" => {
                    let bound = self.bound(keyword, value)?;
                    if bound.value.cmp(Num::Int(0)).is_le() {
                        return Err(self.invalid(keyword, "`multipleOf` is greater than 0"));
                    }
                    k.multiple_of = Some(bound);
                }
                "allOf" => k.all_of = self.list(keyword, value)?,
                "anyOf" => k.any_of = self.list(keyword, value)?,
                "oneOf" => {
                    k.one_of = self.list(keyword, value)?;
                    k.one_of_constants = constants_only(value);
                }
                "not" => k.not = Some((self.at(keyword, value)?, value.clone())),
                "$ref" => k.reference = Some(self.reference(value)?),
                "$defs" | "definitions" => {
                    // Compiled where they are referenced; checked to be schemas here.
                    self.object(keyword, value)?;
                    continue;
                }
                "$id" if !root => return Err(self.unsupported(keyword, None)),
                "$schema"
                    if !value.as_str().is_some_and(|uri| {
                        uri.trim_end_matches('#') == crate::schema::DRAFT_2020_12
                    }) =>
                {
                    return Err(self.unsupported(
                        keyword,
                        Some(format!("{value}: only draft 2020-12 is read")),
                    ));
                }
                unsupported if UNSUPPORTED.contains(&unsupported) => {
                    return Err(self.unsupported(keyword, None));
                }
                // Annotations, `$schema`, the root's `$id`, and keywords draft 2020-12 does not
                // define: nothing to assert.
                _ => continue,
            }
            asserting = true;
        }
        k.property_required = k
            .properties
            .iter()
            .map(|(name, _)| k.required.contains(name))
            .collect();
        k.required_named = k.property_required.iter().filter(|r| **r).count();
        Ok((k, asserting))
    }

    /// A pattern the crate cannot express is a keyword this validator cannot check.
    fn pattern(&self, keyword: &str, e: PatternError) -> CompileError {
        match e {
            PatternError::Inexpressible(why) => self.unsupported(keyword, Some(why)),
            PatternError::Invalid(why) => self.invalid(keyword, why),
        }
    }

    fn unsupported(&self, keyword: &str, detail: Option<String>) -> CompileError {
        CompileError::Unsupported {
            keyword: keyword.to_owned(),
            at: self.at.clone(),
            detail,
        }
    }

    /// Compiles `schema` two steps below the current place (`properties/name`).
    fn at_two(&mut self, first: &str, second: &str, schema: &'s Value) -> Result<Id, CompileError> {
        let len = self.at.len();
        self.at.push('/');
        self.at.push_str(first);
        let id = self.at(second, schema);
        self.at.truncate(len);
        id
    }

    fn object(
        &self,
        keyword: &str,
        value: &'s Value,
    ) -> Result<&'s Map<String, Value>, CompileError> {
        value
            .as_object()
            .ok_or_else(|| self.invalid(keyword, format!("`{keyword}` is an object of schemas")))
    }

    fn list(&mut self, keyword: &str, value: &'s Value) -> Result<Vec<Id>, CompileError> {
        let Some(schemas) = value.as_array().filter(|s| !s.is_empty()) else {
            return Err(self.invalid(
                keyword,
                format!("`{keyword}` is a non-empty array of schemas"),
            ));
        };
        schemas
            .iter()
            .enumerate()
            .map(|(i, schema)| self.at_two(keyword, &i.to_string(), schema))
            .collect()
    }

    fn types(&self, value: &Value) -> Result<Types, CompileError> {
        let bit = |name: &Value| name.as_str().and_then(Types::named);
        let bits = match value {
            // Distinct names, at least one.
            Value::Array(names) => names.iter().map(bit).try_fold(0, |all, b| {
                let b = b?;
                (all & b == 0).then_some(all | b)
            }),
            one => bit(one),
        }
        .filter(|bits| *bits != 0);
        bits.map(Types).ok_or_else(|| {
            self.invalid(
                "type",
                format!("`type` is a type name or a list of distinct ones, not {value}"),
            )
        })
    }

    /// A non-negative integer (`2.0` counts).
    fn count(&self, keyword: &str, value: &Value) -> Result<u64, CompileError> {
        value
            .as_u64()
            .or_else(|| {
                let f = value.as_f64()?;
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
            })
            .ok_or_else(|| self.invalid(keyword, format!("`{keyword}` is a non-negative integer")))
    }

    fn bound(&self, keyword: &str, value: &Value) -> Result<Bound, CompileError> {
        let written = value
            .as_number()
            .ok_or_else(|| self.invalid(keyword, format!("`{keyword}` is a number")))?;
        Ok(Bound {
            value: Num::of(written),
            written: written.clone(),
        })
    }

    /// The node a `$ref` points at: a JSON pointer into this document.
    fn reference(&mut self, value: &'s Value) -> Result<Id, CompileError> {
        let Some(target) = value.as_str() else {
            return Err(self.invalid("$ref", "`$ref` is a string"));
        };
        let outside = |why: &str| Some(format!("to `{target}`: {why}"));
        let Some(fragment) = target.strip_prefix('#') else {
            return Err(self.unsupported(
                "$ref",
                outside("only references within the schema are resolved"),
            ));
        };
        let pointer = percent_encoding::percent_decode_str(fragment)
            .decode_utf8()
            .map_err(|_| self.invalid("$ref", format!("`{target}` is not UTF-8")))?;
        if !(pointer.is_empty() || pointer.starts_with('/')) {
            return Err(self.unsupported("$ref", outside("anchors are not resolved")));
        }
        let Some(schema) = self.root.pointer(&pointer) else {
            return Err(self.invalid("$ref", format!("`{target}` points at nothing")));
        };
        // Errors within the target say where the target is.
        let here = std::mem::replace(&mut self.at, pointer.into_owned());
        let id = self.schema(schema);
        self.at = here;
        id
    }
}

/// The most branches of a `oneOf` read as one set of constants: finding them distinct compares
/// each pair, so a larger one is checked branch by branch.
const MAX_CONSTANT_BRANCHES: usize = 64;

/// The keywords a branch of constants may have besides `const`: annotations only.
const ANNOTATIONS: [&str; 8] = [
    "title",
    "description",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "default",
];

/// The constants of `branches` (a `oneOf`'s) when each branch is `const` and annotations only
/// (and a `type` its constant is of, as schemars writes an enum's variants), and no two
/// constants are equal: then exactly one branch holds for a value that is one of them, and none
/// for any other.
fn constants_only(branches: &Value) -> Option<Vec<Value>> {
    let branches = branches.as_array()?;
    if branches.is_empty() || branches.len() > MAX_CONSTANT_BRANCHES {
        return None;
    }
    let mut constants: Vec<Value> = Vec::with_capacity(branches.len());
    for branch in branches {
        let branch = branch.as_object()?;
        let constant = branch.get("const")?;
        let typed = branch
            .get("type")
            .is_none_or(|types| type_admits(types, constant));
        if !typed
            || !branch
                .keys()
                .all(|key| key == "const" || key == "type" || ANNOTATIONS.contains(&key.as_str()))
            || constants
                .iter()
                .any(|seen| super::instance::equals(constant, seen))
        {
            return None;
        }
        constants.push(constant.clone());
    }
    Some(constants)
}

/// Whether the `type` keyword's value `types` (a name or a list of names) admits `constant`.
fn type_admits(types: &Value, constant: &Value) -> bool {
    let admits = |name: &Value| match (name.as_str(), constant) {
        (Some("null"), Value::Null)
        | (Some("boolean"), Value::Bool(_))
        | (Some("object"), Value::Object(_))
        | (Some("array"), Value::Array(_))
        | (Some("number"), Value::Number(_))
        | (Some("string"), Value::String(_)) => true,
        (Some("integer"), Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    };
    match types {
        Value::Array(names) => names.iter().any(admits),
        name => admits(name),
    }
}
