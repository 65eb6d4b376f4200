//! The keys a gateway seals what it keeps for its users' accounts with (tokens, sign-ins under
//! way, registered clients): AES-256-GCM under a key with an id ([`TokenKeys`]), before the
//! records go to a [`TokenStore`](crate::toolset::TokenStore).

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::tool::error::{ErrorKind, ToolError};

/// The keys a gateway seals its users' tokens with: one that seals, each with an id written
/// beside every record it sealed, and older ones kept for opening what they sealed, so a key
/// can be replaced without signing everyone out. A record sealed under a key no longer given
/// reads as absent: its user is asked to connect again.
///
/// ```
/// use tool_runtime::mcp::TokenKeys;
/// let keys = TokenKeys::new("2026-11", &[7; 32])?.opening("2026-05", &[9; 32])?;
/// # Ok::<(), tool_runtime::ToolError>(())
/// ```
pub struct TokenKeys {
    sealing: (String, LessSafeKey),
    opening: Vec<(String, LessSafeKey)>,
}

impl TokenKeys {
    /// Seals with `key` (32 bytes), known as `id` (letters, digits, `-` and `_`).
    ///
    /// # Errors
    ///
    /// `invalid_request` when the key is not 32 bytes or the id is empty or has other
    /// characters.
    pub fn new(id: impl Into<String>, key: &[u8]) -> Result<Self, ToolError> {
        Ok(Self {
            sealing: Self::key(id.into(), key)?,
            opening: Vec::new(),
        })
    }

    /// Also opens records sealed with `key` under `id`, a key replaced by the sealing one.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn opening(mut self, id: impl Into<String>, key: &[u8]) -> Result<Self, ToolError> {
        self.opening.push(Self::key(id.into(), key)?);
        Ok(self)
    }

    /// Keys from the environment variable `var`: `ID:KEY` pairs separated by commas, each key
    /// 32 bytes in base64 (standard or URL-safe); the first seals, the others open.
    ///
    /// # Errors
    ///
    /// `invalid_request` naming the variable when it is unset or a pair is not of that form.
    pub fn from_env(var: &str) -> Result<Self, ToolError> {
        let bad = |why: &str| {
            ToolError::new(
                ErrorKind::INVALID_REQUEST,
                format!("{var}: {why}; write ID:KEY[,ID:KEY...], each KEY 32 bytes in base64"),
            )
        };
        let text = std::env::var(var).map_err(|_| bad("not set"))?;
        let mut keys: Option<Self> = None;
        for pair in text.split(',') {
            let (id, key) = pair.trim().split_once(':').ok_or_else(|| bad("no `:`"))?;
            let key = base64::engine::general_purpose::STANDARD
                .decode(key.trim())
                .or_else(|_| URL_SAFE_NO_PAD.decode(key.trim().trim_end_matches('=')))
                .map_err(|_| bad("a key is not base64"))?;
            keys = Some(match keys {
                None => Self::new(id, &key)?,
                Some(keys) => keys.opening(id, &key)?,
            });
        }
        keys.ok_or_else(|| bad("empty"))
    }

    fn key(id: String, key: &[u8]) -> Result<(String, LessSafeKey), ToolError> {
        let bad = |why: String| ToolError::new(ErrorKind::INVALID_REQUEST, why);
        if id.is_empty()
            || !id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(bad(format!(
                "`{id}` is no key id: write letters, digits, `-` and `_`"
            )));
        }
        let unbound = UnboundKey::new(&AES_256_GCM, key).map_err(|_| {
            bad(format!(
                "the token key `{id}` has {} bytes; it needs 32",
                key.len()
            ))
        })?;
        Ok((id, LessSafeKey::new(unbound)))
    }

    /// `plain` sealed for the record `name`: `ID.NONCE_AND_CIPHERTEXT` (base64). The name is
    /// bound in, so a record moved under another name does not open.
    pub(crate) fn seal(&self, name: &str, plain: &[u8]) -> Result<String, ToolError> {
        let (id, key) = &self.sealing;
        let mut nonce = [0_u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|e| ToolError::internal(format!("no nonce: {e}")))?;
        let mut sealed = plain.to_vec();
        key.seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(name.as_bytes()),
            &mut sealed,
        )
        .map_err(|_| ToolError::internal("sealing a token failed"))?;
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        Ok(format!("{id}.{}", URL_SAFE_NO_PAD.encode(bytes)))
    }

    /// What `sealed` holds, if one of these keys sealed it for the record `name`.
    pub(crate) fn open(&self, name: &str, sealed: &str) -> Option<Vec<u8>> {
        let (id, body) = sealed.split_once('.')?;
        let key = std::iter::once(&self.sealing)
            .chain(&self.opening)
            .find(|(known, _)| known == id)
            .map(|(_, key)| key)?;
        let bytes = URL_SAFE_NO_PAD.decode(body).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let mut sealed = sealed.to_vec();
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let plain = key
            .open_in_place(nonce, Aad::from(name.as_bytes()), &mut sealed)
            .ok()?;
        Some(plain.to_vec())
    }
}

impl std::fmt::Debug for TokenKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenKeys")
            .field("sealing", &self.sealing.0)
            .field(
                "opening",
                &self.opening.iter().map(|(id, _)| id).collect::<Vec<_>>(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_opens_under_its_own_name_and_any_key_still_given() {
        let old = TokenKeys::new("old", &[1; 32]).unwrap();
        let sealed = old.seal("token/a", b"secret").unwrap();
        assert!(sealed.starts_with("old.") && !sealed.contains("secret"));
        assert_eq!(old.open("token/a", &sealed).unwrap(), b"secret");
        assert!(
            old.open("token/b", &sealed).is_none(),
            "moved under another name"
        );
        let rotated = TokenKeys::new("new", &[2; 32])
            .unwrap()
            .opening("old", &[1; 32])
            .unwrap();
        assert_eq!(rotated.open("token/a", &sealed).unwrap(), b"secret");
        assert!(rotated.seal("token/a", b"x").unwrap().starts_with("new."));
        let forgotten = TokenKeys::new("new", &[2; 32]).unwrap();
        assert!(forgotten.open("token/a", &sealed).is_none());
        let mut altered = sealed.clone().into_bytes();
        let last = altered.len() - 2;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        assert!(
            old.open("token/a", std::str::from_utf8(&altered).unwrap())
                .is_none()
        );
        assert!(TokenKeys::new("k", &[0; 16]).is_err());
        assert!(TokenKeys::new("a b", &[0; 32]).is_err());
        assert_eq!(
            format!("{rotated:?}"),
            r#"TokenKeys { sealing: "new", opening: ["old"] }"#
        );
    }
}
