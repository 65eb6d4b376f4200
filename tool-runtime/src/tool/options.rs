//! What the pipeline reads of every item it serves, a tool, a resource or a prompt alike: who
//! may call it, its limits, the state it needs, and where it was defined. One type, embedded in
//! [`ToolMeta`](super::ToolMeta), [`ResourceMeta`](crate::resource::ResourceMeta) and
//! [`PromptMeta`](crate::prompt::PromptMeta), so a resource read or a prompt get runs under
//! the same options as a tool call, copied whole.

use std::borrow::Cow;
use std::time::Duration;

use super::state::StateKey;

/// Who may call an item and under what limits: `#[tool(...)]`, `#[resource(...)]` and
/// `#[prompt(...)]` set these the same way.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ItemOptions {
    /// `roles(...)`: a caller needs one of these roles (checked by the
    /// [`RequireRoles`](crate::layers::policy::RequireRoles) policy). Empty: no role needed.
    pub roles: Vec<Cow<'static, str>>,
    /// `scopes(...)`: a caller authenticated by a token needs every one of these OAuth scopes
    /// (or scopes that [imply](crate::registry::RegistryBuilder::scope_implies) them). Unlike a
    /// role, a missing scope does not hide the item: a call is refused as
    /// [`INSUFFICIENT_SCOPE`](crate::ErrorKind::INSUFFICIENT_SCOPE), naming the scopes, so that
    /// the client can ask for them. Empty: no scope needed.
    pub scopes: Vec<Cow<'static, str>>,
    /// `timeout = "5s"`: the time limit of one call; `None` uses the registry's default.
    pub timeout: Option<Duration>,
    /// `rate = "10/min"`: calls per principal per period.
    pub rate: Option<Rate>,
    /// `concurrency = 4`: calls running at once.
    pub concurrency: Option<u32>,
    /// State types the item needs registered (its `State<T>` parameters).
    pub requires: Vec<StateKey>,
    /// Where the item is defined, for error messages (`crate::module at file:line`).
    pub defined_at: Cow<'static, str>,
}

/// The const form of [`ItemOptions`] the attribute macros write into their descriptors. Not
/// built by hand.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct OptionsDescriptor {
    #[doc(hidden)]
    pub roles: &'static [&'static str],
    #[doc(hidden)]
    pub scopes: &'static [&'static str],
    #[doc(hidden)]
    pub timeout: Option<Duration>,
    #[doc(hidden)]
    pub rate: Option<Rate>,
    #[doc(hidden)]
    pub concurrency: Option<u32>,
    #[doc(hidden)]
    pub requires: &'static [Option<StateKey>],
    #[doc(hidden)]
    pub defined_at: &'static str,
}

impl OptionsDescriptor {
    /// The options these describe.
    pub(crate) fn to_options(self) -> ItemOptions {
        ItemOptions {
            roles: self.roles.iter().map(|r| Cow::Borrowed(*r)).collect(),
            scopes: self.scopes.iter().map(|s| Cow::Borrowed(*s)).collect(),
            timeout: self.timeout,
            rate: self.rate,
            concurrency: self.concurrency,
            requires: self.requires.iter().filter_map(|k| *k).collect(),
            defined_at: Cow::Borrowed(self.defined_at),
        }
    }
}

/// A rate: `count` calls per `period`, as `"10/min"` writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Calls allowed per period (also the burst).
    pub count: u32,
    /// The period.
    pub per: Duration,
}

impl Rate {
    /// `"10/min"`, `"5/s"`, `"100/h"` (also `sec`, `second`, `m`, `minute`, `hour`).
    #[must_use]
    pub fn parse(text: &str) -> Option<Rate> {
        let (count, secs) = tool_grammar::rate(text)?;
        Some(Rate {
            count,
            per: Duration::from_secs(secs),
        })
    }
}
