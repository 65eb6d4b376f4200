//! Bearer-token authentication from a TOML file.
//!
//! ```toml
//! [[tokens]]
//! token = "alice-token"      # or token_sha256 = "<hex SHA-256 of the token>"
//! principal = "alice"
//! roles = ["admin"]
//! scopes = ["devices:read"]  # the OAuth scopes it grants; none if left out
//! ```
//!
//! Tokens are compared as SHA-256 digests in constant time, so neither a token's content nor
//! its length leaks through timing.

use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::front::requester::Identity;

/// The accepted tokens.
#[derive(Clone)]
pub struct Auth {
    entries: Vec<([u8; 32], Identity)>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("tokens", &self.entries.len())
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    tokens: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    token: Option<String>,
    token_sha256: Option<String>,
    principal: String,
    #[serde(default)]
    roles: Vec<String>,
    #[serde(default)]
    scopes: Vec<String>,
}

impl Auth {
    /// Reads an auth file.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read auth file {}: {e}", path.display()))?;
        Self::from_toml(&text).map_err(|e| format!("auth file {}: {e}", path.display()))
    }

    /// Parses the TOML of an auth file.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        if file.tokens.is_empty() {
            return Err("no [[tokens]] entries".into());
        }
        let mut entries = Vec::new();
        for (i, e) in file.tokens.into_iter().enumerate() {
            let digest = match (e.token, e.token_sha256) {
                (Some(t), None) if !t.is_empty() => Sha256::digest(t.as_bytes()).into(),
                (None, Some(hex)) => parse_hex(&hex)
                    .ok_or_else(|| format!("tokens[{i}]: token_sha256 must be 64 hex digits"))?,
                _ => {
                    return Err(format!(
                        "tokens[{i}] ({}): give exactly one of `token` or `token_sha256`",
                        e.principal
                    ));
                }
            };
            entries.push((
                digest,
                Identity {
                    principal: e.principal,
                    roles: e.roles,
                    scopes: e.scopes,
                },
            ));
        }
        Ok(Self { entries })
    }

    /// The identity of a presented token, comparing against every entry in constant time.
    #[must_use]
    pub fn check(&self, token: &str) -> Option<&Identity> {
        let presented: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        for (digest, identity) in &self.entries {
            if bool::from(digest.ct_eq(&presented)) {
                found = Some(identity);
            }
        }
        found
    }
}

fn parse_hex(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.trim();
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_hashed_tokens_authenticate() {
        // sha256("bob-token")
        let auth = Auth::from_toml(
            r#"
            [[tokens]]
            token = "alice-token"
            principal = "alice"
            roles = ["admin"]

            [[tokens]]
            token_sha256 = "6b4a4f3d2a4a8d1c5b0d5ce7b0e2d1b9f2e0a8f1ad1c0c2c8b7d6b1a0f9e8d7c"
            principal = "nobody"
            "#,
        )
        .unwrap();
        assert_eq!(auth.check("alice-token").unwrap().principal, "alice");
        assert!(auth.check("alice-token ").is_none());
        assert!(auth.check("").is_none());
        let hashed = crate::tool::hex(&Sha256::digest(b"bob-token"));
        let auth = Auth::from_toml(&format!(
            "[[tokens]]\ntoken_sha256 = \"{hashed}\"\nprincipal = \"bob\"\n"
        ))
        .unwrap();
        assert_eq!(auth.check("bob-token").unwrap().principal, "bob");
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        assert!(
            Auth::from_toml("[[tokens]]\nprincipal = \"x\"\n")
                .unwrap_err()
                .contains("exactly one")
        );
        assert!(
            Auth::from_toml("[[tokens]]\ntoken_sha256 = \"ab\"\nprincipal = \"x\"\n")
                .unwrap_err()
                .contains("64 hex")
        );
        assert!(
            Auth::from_toml("tokens = []")
                .unwrap_err()
                .contains("no [[tokens]]")
        );
        assert!(
            Auth::from_toml("[[tokens]]\ntoken = \"t\"\nprincipal = \"x\"\nrole = []\n").is_err()
        );
    }
}
