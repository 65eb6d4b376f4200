//! Application state handed to tools as `State<T>` parameters.
//!
//! State is registered once when the registry is built (`RegistryBuilder::state`), replacing the
//! global `init_*()` functions such code tends to grow. Every tool declares the state types it
//! needs, so a missing one is reported when the registry is built, naming the tool and the type,
//! never as a panic at call time.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Shared application state of type `T`, injected into a tool; never part of any schema.
///
/// ```
/// use tool_runtime::prelude::*;
///
/// struct Counter(std::sync::atomic::AtomicU64);
///
/// /// Count calls.
/// #[tool]
/// async fn bump(counter: State<Counter>) -> u64 {
///     counter.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
/// }
/// ```
pub struct State<T: ?Sized>(Arc<T>);

impl<T> State<T> {
    /// Wraps a value, for calling a tool's fn directly in tests.
    pub fn new(value: T) -> Self {
        Self(Arc::new(value))
    }
}

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "State<{}>", std::any::type_name::<T>())
    }
}

/// Names a state type a tool needs: its `TypeId` and its name for error messages.
#[derive(Clone, Copy)]
pub struct StateKey {
    type_id: fn() -> TypeId,
    type_name: fn() -> &'static str,
}

impl StateKey {
    /// The key of state type `T`.
    #[must_use]
    pub const fn of<T: 'static>() -> Self {
        Self {
            type_id: TypeId::of::<T>,
            type_name: std::any::type_name::<T>,
        }
    }

    /// The `TypeId` of the state type.
    #[must_use]
    pub fn type_id(&self) -> TypeId {
        (self.type_id)()
    }

    /// The Rust name of the state type, such as `demo_app::store::devices::Devices`.
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        (self.type_name)()
    }
}

impl fmt::Debug for StateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.type_name())
    }
}

impl PartialEq for StateKey {
    fn eq(&self, other: &Self) -> bool {
        self.type_id() == other.type_id()
    }
}

/// The state registered with a registry, by type.
#[derive(Default, Clone)]
pub struct StateMap {
    map: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// The registered types' names, for the hint when an `Arc<T>` stands where a `T` is needed.
    names: Vec<&'static str>,
}

impl StateMap {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.map.insert(TypeId::of::<T>(), value);
        self.names.push(std::any::type_name::<T>());
    }

    /// Whether an `Arc` of the type named `type_name` was registered.
    pub(crate) fn holds_arc_of(&self, type_name: &str) -> bool {
        self.names.iter().any(|n| {
            n.strip_prefix("alloc::sync::Arc<")
                .and_then(|rest| rest.strip_suffix('>'))
                == Some(type_name)
        })
    }

    pub(crate) fn contains(&self, key: &StateKey) -> bool {
        self.map.contains_key(&key.type_id())
    }

    /// The state of type `T`, if it was registered.
    #[must_use]
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        let any = Arc::clone(self.map.get(&TypeId::of::<T>())?);
        any.downcast::<T>().ok().map(State)
    }
}

impl fmt::Debug for StateMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateMap")
            .field("types", &self.names)
            .finish_non_exhaustive()
    }
}
