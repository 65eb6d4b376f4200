//! The keys a JWT's signature is checked with: one PEM public key from configuration, or the
//! issuer's JSON Web Key Set, fetched when first needed and again when a token names a key the
//! set in hand lacks (a rotated key), at most once per refresh floor, so that tokens naming
//! made-up keys cannot make this server hammer the identity provider.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};

use super::fetch::{self, FetchError};

/// One verification key.
pub(crate) struct Key {
    kid: Option<String>,
    /// The one algorithm the key is for, when its JWK says (`alg`).
    alg: Option<Algorithm>,
    decoding: DecodingKey,
}

/// Where the keys come from.
pub(crate) enum Source {
    /// One PEM public key.
    Pem,
    /// A JWKS at this URL.
    Jwks(url::Url),
    /// The JWKS the issuer's metadata names (`jwks_uri`).
    Discover,
}

/// The key set in hand and how to get it again.
pub(crate) struct Keys {
    pub(crate) source: Source,
    set: RwLock<Arc<Vec<Key>>>,
    /// When the set was last fetched (or tried), against the refresh floor; held across the
    /// fetch, so that concurrent requests naming a new key wait for one fetch.
    fetched: tokio::sync::Mutex<Option<Instant>>,
    pub(crate) floor: Duration,
}

/// What [`Keys::find`] found.
pub(crate) enum Found {
    Key(DecodingKey),
    /// No key has that id (or fits that algorithm) in the set in hand.
    Missing,
}

impl Keys {
    pub(crate) fn pem(pem: &[u8]) -> Result<Self, String> {
        let key = DecodingKey::from_rsa_pem(pem)
            .or_else(|_| DecodingKey::from_ec_pem(pem))
            .or_else(|_| DecodingKey::from_ed_pem(pem))
            .map_err(|e| {
                format!("the public key is not an RSA, EC or Ed25519 public key in PEM: {e}")
            })?;
        Ok(Self::with(
            Source::Pem,
            vec![Key {
                kid: None,
                alg: None,
                decoding: key,
            }],
            Duration::MAX,
        ))
    }

    pub(crate) fn fetched(source: Source, floor: Duration) -> Self {
        Self::with(source, Vec::new(), floor)
    }

    fn with(source: Source, keys: Vec<Key>, floor: Duration) -> Self {
        Self {
            source,
            set: RwLock::new(Arc::new(keys)),
            fetched: tokio::sync::Mutex::new(None),
            floor,
        }
    }

    /// The key for a token signed with `alg` under `kid`: the key with that id, whose type fits
    /// `alg`; without a `kid`, the one key of the set that fits, if there is exactly one.
    pub(crate) fn find(&self, kid: Option<&str>, alg: Algorithm) -> Found {
        let set = Arc::clone(
            &self
                .set
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let fits = |k: &&Key| k.decoding.family() == alg.family() && k.alg.is_none_or(|a| a == alg);
        let mut candidates = set.iter().filter(fits);
        let found = match kid {
            Some(kid) => candidates.find(|k| k.kid.as_deref() == Some(kid)),
            None => match (candidates.next(), candidates.next()) {
                (Some(only), None) => Some(only),
                _ => None,
            },
        };
        found.map_or(Found::Missing, |k| Found::Key(k.decoding.clone()))
    }

    /// Fetches the set again, unless it was fetched within the refresh floor (then `Ok(false)`,
    /// the set unchanged). `jwks_uri` says where, for a set found through the issuer's metadata.
    pub(crate) async fn refresh(
        &self,
        client: &reqwest::Client,
        jwks_uri: impl AsyncFnOnce() -> Result<url::Url, FetchError>,
    ) -> Result<bool, FetchError> {
        let url = match &self.source {
            Source::Pem => return Ok(false),
            Source::Jwks(url) => Some(url.clone()),
            Source::Discover => None,
        };
        let mut fetched = self.fetched.lock().await;
        if fetched.is_some_and(|at| at.elapsed() < self.floor) {
            return Ok(false);
        }
        *fetched = Some(Instant::now());
        let url = match url {
            Some(url) => url,
            None => jwks_uri().await?,
        };
        let document = fetch::get_json(client, &url).await?;
        let set: JwkSet = serde_json::from_value(document)
            .map_err(|e| format!("{url}: not a JSON Web Key Set: {e}"))?;
        let keys: Vec<Key> = set
            .keys
            .iter()
            .filter(|jwk| {
                // Signing keys only; never a shared secret (`oct`), which would let a token
                // signed with HMAC and the public key pass as the issuer's.
                !matches!(
                    jwk.common.public_key_use,
                    Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
                ) && !matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_))
            })
            .filter_map(|jwk| {
                let key = DecodingKey::from_jwk(jwk).ok()?;
                if key.family() == AlgorithmFamily::Hmac {
                    return None;
                }
                Some(Key {
                    kid: jwk.common.key_id.clone(),
                    alg: jwk
                        .common
                        .key_algorithm
                        .and_then(|a| a.to_string().parse().ok()),
                    decoding: key,
                })
            })
            .collect();
        if keys.is_empty() {
            return Err(format!(
                "{url}: the key set holds no signing key this server can use"
            ));
        }
        *self
            .set
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(keys);
        Ok(true)
    }
}
