//! Validation: a value walked against the compiled nodes.

use std::collections::HashSet;

use super::error::{ErrorKind, ValidationError};
use super::instance::{Instance, equals};
use super::number::Num;
use super::{Id, Keywords, Schema, Validator};

/// How many subschemas may apply to one value within another without reading further into
/// it: more than any schema without a reference loop needs.
const MAX_DEPTH: u32 = 64;

/// One validation of one value.
pub(super) struct Run<'v, 'i, I> {
    validator: &'v Validator,
    /// `None` to stop at the first failure.
    errors: Option<Vec<ValidationError<'v, 'i>>>,
    /// Where the walk is in the value.
    path: Vec<Step<'i>>,
    _instance: std::marker::PhantomData<&'i I>,
}

#[derive(Clone, Copy)]
enum Step<'i> {
    Key(&'i str),
    Index(usize),
}

impl<'v, 'i, I: Instance> Run<'v, 'i, I> {
    pub(super) fn new(validator: &'v Validator, collect: bool) -> Self {
        Self {
            validator,
            errors: collect.then(Vec::new),
            path: Vec::new(),
            _instance: std::marker::PhantomData,
        }
    }

    pub(super) fn into_errors(self) -> Vec<ValidationError<'v, 'i>> {
        self.errors.unwrap_or_default()
    }

    fn collecting(&self) -> bool {
        self.errors.is_some()
    }

    /// Records a failure of `instance`; `false`, for the caller to return.
    fn fail(&mut self, instance: &'i I, kind: ErrorKind<'v, 'i>) -> bool {
        if let Some(errors) = &mut self.errors {
            errors.push(ValidationError {
                path: pointer(&self.path),
                instance: instance.to_value(),
                kind,
            });
        }
        false
    }

    /// A run of its own over the same place, stopping at the first failure.
    fn quiet(&self) -> Run<'v, 'i, I> {
        Run::new(self.validator, false)
    }

    /// A run of its own over the same place, collecting what `self` would.
    fn branch(&self) -> Run<'v, 'i, I> {
        if !self.collecting() {
            return self.quiet();
        }
        Run {
            validator: self.validator,
            errors: Some(Vec::new()),
            path: self.path.clone(),
            _instance: std::marker::PhantomData,
        }
    }

    /// Whether `value`, at `step` within the current value, satisfies node `id`. The path is
    /// kept only for the errors' pointers.
    fn within(&mut self, step: Step<'i>, id: Id, value: &'i I) -> bool {
        if !self.collecting() {
            return self.check(id, value, 0);
        }
        self.path.push(step);
        let valid = self.check(id, value, 0);
        self.path.pop();
        valid
    }

    /// Whether `instance` satisfies node `id`; `depth` counts the subschemas applied to this
    /// very value.
    pub(super) fn check(&mut self, id: Id, instance: &'i I, depth: u32) -> bool {
        let validator = self.validator;
        match &validator.nodes[id] {
            Schema::True => true,
            Schema::False => self.fail(instance, ErrorKind::FalseSchema),
            Schema::Keywords(_) if depth > MAX_DEPTH => self.fail(instance, ErrorKind::TooDeep),
            Schema::Keywords(k) => self.keywords(k, instance, depth),
        }
    }

    #[allow(clippy::too_many_lines)] // One block per kind of value.
    fn keywords(&mut self, k: &'v Keywords, instance: &'i I, depth: u32) -> bool {
        let mut valid = true;
        // Records a failure, and stops unless every failure is wanted.
        macro_rules! fail {
            ($kind:expr) => {{
                valid = self.fail(instance, $kind);
                if !self.collecting() {
                    return false;
                }
            }};
        }
        macro_rules! apply {
            ($result:expr) => {{
                if !$result {
                    valid = false;
                    if !self.collecting() {
                        return false;
                    }
                }
            }};
        }
        if let Some(types) = k.types
            && !types.admit(instance)
        {
            fail!(ErrorKind::Type(types));
        }
        if let Some(options) = &k.enumeration
            && !options.iter().any(|o| equals(instance, o))
        {
            fail!(ErrorKind::Enum(options));
        }
        if let Some(expected) = &k.constant
            && !equals(instance, expected)
        {
            fail!(ErrorKind::Const(expected));
        }
        if let Some(members) = instance.members() {
            let count = members.len() as u64;
            // Members named by `properties`: when they are as many as the names of `required`
            // among them, and those are all of `required`, it holds (member names are unique).
            let mut named_required = 0;
            if k.reads_members() {
                let mut unexpected = Vec::new();
                for (name, value) in members {
                    let mut named = false;
                    if let Some(i) = k.properties.iter().position(|(n, _)| **n == *name) {
                        named = true;
                        named_required += usize::from(k.property_required[i]);
                        apply!(self.within(Step::Key(name), k.properties[i].1, value));
                    }
                    for (pattern, id) in &k.patterns {
                        if pattern.is_match(name) {
                            named = true;
                            apply!(self.within(Step::Key(name), *id, value));
                        }
                    }
                    if named {
                        continue;
                    }
                    match k.additional {
                        Some(id) if matches!(self.validator.nodes[id], Schema::False) => {
                            if !self.collecting() {
                                return false;
                            }
                            unexpected.push(name);
                        }
                        Some(id) => apply!(self.within(Step::Key(name), id, value)),
                        None => {}
                    }
                }
                if !unexpected.is_empty() {
                    fail!(ErrorKind::AdditionalProperties(unexpected));
                }
            }
            let all_present =
                named_required == k.required.len() && k.required_named == k.required.len();
            if !all_present {
                for name in &k.required {
                    if instance.get(name).is_none() {
                        fail!(ErrorKind::Required(name));
                    }
                }
            }
            if let Some(min) = k.min_properties
                && count < min
            {
                fail!(ErrorKind::MinProperties(min));
            }
            if let Some(max) = k.max_properties
                && count > max
            {
                fail!(ErrorKind::MaxProperties(max));
            }
        } else if let Some(items) = instance.as_array() {
            let count = items.len() as u64;
            if !k.prefix.is_empty() || k.items.is_some() {
                for (i, item) in items.iter().enumerate() {
                    let id = match k.prefix.get(i) {
                        Some(id) => *id,
                        None => match k.items {
                            Some(id) if matches!(self.validator.nodes[id], Schema::False) => {
                                fail!(ErrorKind::AdditionalItems(k.prefix.len()));
                                break;
                            }
                            Some(id) => id,
                            None => break,
                        },
                    };
                    apply!(self.within(Step::Index(i), id, item));
                }
            }
            if let Some(min) = k.min_items
                && count < min
            {
                fail!(ErrorKind::MinItems(min));
            }
            if let Some(max) = k.max_items
                && count > max
            {
                fail!(ErrorKind::MaxItems(max));
            }
            if k.unique && !unique(items) {
                fail!(ErrorKind::UniqueItems);
            }
        } else if let Some(text) = instance.as_str() {
            if k.min_length.is_some() || k.max_length.is_some() {
                let length = text.chars().count() as u64;
                if let Some(min) = k.min_length
                    && length < min
                {
                    fail!(ErrorKind::MinLength(min));
                }
                if let Some(max) = k.max_length
                    && length > max
                {
                    fail!(ErrorKind::MaxLength(max));
                }
            }
            if let Some(pattern) = &k.pattern
                && !pattern.is_match(text)
            {
                fail!(ErrorKind::Pattern(pattern.as_str()));
            }
        } else if let Some(number) = instance.as_number() {
            let n = Num::of(number);
            if let Some(b) = &k.minimum
                && n.cmp(b.value).is_lt()
            {
                fail!(ErrorKind::Minimum(&b.written));
            }
            if let Some(b) = &k.maximum
                && n.cmp(b.value).is_gt()
            {
                fail!(ErrorKind::Maximum(&b.written));
            }
            if let Some(b) = &k.exclusive_minimum
                && n.cmp(b.value).is_le()
            {
                fail!(ErrorKind::ExclusiveMinimum(&b.written));
            }
            if let Some(b) = &k.exclusive_maximum
                && n.cmp(b.value).is_ge()
            {
                fail!(ErrorKind::ExclusiveMaximum(&b.written));
            }
            if let Some(b) = &k.multiple_of
                && !n.is_multiple_of(b.value)
            {
                fail!(ErrorKind::MultipleOf(&b.written));
            }
        }
        if let Some(id) = k.reference {
            apply!(self.check(id, instance, depth + 1));
        }
        for id in &k.all_of {
            apply!(self.check(*id, instance, depth + 1));
        }
        if !k.any_of.is_empty() {
            let mut said = Vec::new();
            let mut matched = false;
            for id in &k.any_of {
                let mut branch = self.branch();
                if branch.check(*id, instance, depth + 1) {
                    matched = true;
                    break;
                }
                said.push(branch.into_errors());
            }
            if !matched {
                fail!(ErrorKind::AnyOf(said));
            }
        }
        // A `oneOf` of distinct constants holds at once for a value that is one of them; for
        // any other, each branch is tried, for the errors each gives.
        let one_constant = k
            .one_of_constants
            .as_ref()
            .is_some_and(|constants| constants.iter().any(|c| equals(instance, c)));
        if !k.one_of.is_empty() && !one_constant {
            let mut said = Vec::new();
            let mut matched = 0;
            for id in &k.one_of {
                let mut branch = self.branch();
                if branch.check(*id, instance, depth + 1) {
                    matched += 1;
                    if matched > 1 {
                        break;
                    }
                } else if matched == 0 {
                    said.push(branch.into_errors());
                }
            }
            match matched {
                0 => fail!(ErrorKind::OneOfNone(said)),
                1 => {}
                _ => fail!(ErrorKind::OneOfMany),
            }
        }
        if let Some((id, schema)) = &k.not
            && self.quiet().check(*id, instance, depth + 1)
        {
            fail!(ErrorKind::Not(schema));
        }
        if let Some(id) = k.unevaluated
            && let Some(members) = instance.members()
        {
            let mut evaluated = vec![false; members.len()];
            self.evaluated_by_keywords(k, instance, &mut evaluated, depth);
            let mut unexpected = Vec::new();
            for ((name, value), done) in members.zip(evaluated) {
                if done {
                    continue;
                }
                if matches!(self.validator.nodes[id], Schema::False) {
                    if !self.collecting() {
                        return false;
                    }
                    unexpected.push(name);
                } else {
                    apply!(self.within(Step::Key(name), id, value));
                }
            }
            if !unexpected.is_empty() {
                fail!(ErrorKind::UnevaluatedProperties(unexpected));
            }
        }
        valid
    }

    /// Marks the members of `instance` that node `id`, valid on it, evaluates: what its own
    /// keywords name, and what the subschemas applied to the same object evaluate.
    fn evaluated(&self, id: Id, instance: &'i I, marks: &mut [bool], depth: u32) {
        if depth > MAX_DEPTH {
            return;
        }
        let Schema::Keywords(k) = &self.validator.nodes[id] else {
            return;
        };
        if k.unevaluated.is_some() {
            // Its own `unevaluatedProperties` took every member the rest left.
            marks.fill(true);
            return;
        }
        self.evaluated_by_keywords(k, instance, marks, depth);
    }

    /// [`Run::evaluated`] for the keywords of one schema, its `unevaluatedProperties` aside.
    fn evaluated_by_keywords(&self, k: &Keywords, instance: &'i I, marks: &mut [bool], depth: u32) {
        if let Some(members) = instance.members() {
            for ((name, _), mark) in members.zip(marks.iter_mut()) {
                if k.additional.is_some()
                    || k.properties.iter().any(|(n, _)| **n == *name)
                    || k.patterns.iter().any(|(p, _)| p.is_match(name))
                {
                    *mark = true;
                }
            }
        }
        let valid = |id: Id| self.quiet().check(id, instance, depth + 1);
        for id in k.reference.iter().chain(&k.all_of) {
            self.evaluated(*id, instance, marks, depth + 1);
        }
        for id in k.any_of.iter().chain(&k.one_of) {
            if valid(*id) {
                self.evaluated(*id, instance, marks, depth + 1);
            }
        }
    }
}

/// Whether no two items are equal (JSON equality).
fn unique<I: Instance>(items: &[I]) -> bool {
    // Pairwise for a few; by a canonical text for more.
    if items.len() <= 16 {
        let values: Vec<_> = items.iter().map(Instance::to_value).collect();
        return values.iter().enumerate().all(|(i, a)| {
            values[i + 1..]
                .iter()
                .all(|b| !super::number::json_eq(a, b))
        });
    }
    let mut seen = HashSet::with_capacity(items.len());
    items
        .iter()
        .all(|item| seen.insert(canonical(&item.to_value())))
}

/// A text equal for equal values: members sorted by name, numbers by value.
fn canonical(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Number(n) => match Num::of(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) if Num::Float(f).is_integer() && f.abs() < 1.7e38 => {
                #[allow(clippy::cast_possible_truncation)]
                let i = f as i128;
                i.to_string()
            }
            Num::Float(f) => format!("{f:e}"),
        },
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", inner.join(","))
        }
        Value::Object(map) => {
            let mut inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), canonical(v)))
                .collect();
            inner.sort();
            format!("{{{}}}", inner.join(","))
        }
        other => other.to_string(),
    }
}

/// The JSON pointer of a place in the value.
fn pointer(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in path {
        out.push('/');
        match step {
            Step::Key(name) => out.push_str(&crate::tool::error::escape_pointer(name)),
            Step::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}
