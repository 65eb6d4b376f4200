//! OAuth scopes: what an item needs ([`ItemOptions::scopes`](crate::tool::ItemOptions::scopes)),
//! what a caller's token grants ([`Caller::scopes`](crate::Caller::scopes)), decided once in the
//! pipeline, so that every front end agrees.
//!
//! A scope, unlike a role, hides nothing: the item stays listed, and a call without its scopes
//! is refused as [`INSUFFICIENT_SCOPE`](crate::ErrorKind::INSUFFICIENT_SCOPE), naming every scope
//! the call needs, so that an OAuth client can ask its authorization server for them and call
//! again (a step-up). A scope may imply others
//! ([`RegistryBuilder::scope_implies`](crate::registry::RegistryBuilder::scope_implies)), as an
//! authorization server's hierarchy does: `devices:admin` granting `devices:write`, say.

use std::collections::HashMap;

use serde_json::json;

use crate::tool::context::CallContext;
use crate::tool::definition::ToolMeta;
use crate::tool::error::{ErrorKind, ToolError};

/// The scopes each scope implies, as configured.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScopeRules {
    implies: HashMap<String, Vec<String>>,
}

impl ScopeRules {
    /// `scope` implies each of `implied` (and what they imply in turn).
    pub(crate) fn imply(&mut self, scope: String, implied: impl IntoIterator<Item = String>) {
        self.implies.entry(scope).or_default().extend(implied);
    }

    /// Whether `granted` covers `needed`, directly or through implications. Each scope is
    /// visited once, so a circle of implications ends.
    fn covers(&self, granted: &[String], needed: &str) -> bool {
        if granted.iter().any(|g| g == needed) {
            return true;
        }
        if self.implies.is_empty() {
            return false;
        }
        let mut seen: Vec<&str> = granted.iter().map(String::as_str).collect();
        let mut next = seen.clone();
        while let Some(scope) = next.pop() {
            for implied in self.implies.get(scope).into_iter().flatten() {
                if implied == needed {
                    return true;
                }
                if !seen.contains(&implied.as_str()) {
                    seen.push(implied);
                    next.push(implied);
                }
            }
        }
        false
    }

    /// The refusal of a call of `item` by the caller of `ctx` whose token lacks a scope the
    /// item needs; `None` when the caller has them all or is not limited by scopes.
    pub(crate) fn refusal(&self, item: &ToolMeta, ctx: &CallContext) -> Option<ToolError> {
        let needed = &item.options.scopes;
        let granted = ctx.scopes()?;
        let missing: Vec<&str> = needed
            .iter()
            .map(|s| &**s)
            .filter(|s| !self.covers(granted, s))
            .collect();
        if missing.is_empty() {
            return None;
        }
        let has = if granted.is_empty() {
            "none".to_owned()
        } else {
            granted.join(" ")
        };
        Some(
            ToolError::new(
                ErrorKind::INSUFFICIENT_SCOPE,
                format!(
                    "`{}` needs the scope{} {}; the token grants {has}",
                    item.name,
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(" "),
                ),
            )
            .with_details(json!({ "scopes": needed })),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(scopes: &[&str]) -> Vec<String> {
        scopes.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn implications_are_followed_through_chains_and_circles() {
        let mut rules = ScopeRules::default();
        rules.imply("admin".into(), owned(&["write"]));
        rules.imply("write".into(), owned(&["read", "admin"]));
        assert!(rules.covers(&owned(&["admin"]), "read"));
        assert!(rules.covers(&owned(&["write"]), "admin"));
        assert!(!rules.covers(&owned(&["read"]), "write"));
        assert!(!rules.covers(&[], "read"));
    }
}
