//! The JWKS cache of one warm instance.
//!
//! Keys are fetched on first use, kept for the life of the instance, and
//! refetched when a token names an unknown `kid` (key rotation), at most once
//! per [`REFRESH_INTERVAL`] so a flood of forged `kid`s cannot hammer the
//! identity provider. If the JWKS cannot be fetched and the key is not cached,
//! the call fails with 503 DEPENDENCY_UNAVAILABLE, not 401: the token may be
//! perfectly good.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey};
use tokio::sync::Mutex;

use crate::error::{AuthFailure, ToolError};

/// Minimum time between two fetches of the JWKS.
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(60);

#[derive(Default)]
struct Cached {
    keys: HashMap<String, (Algorithm, DecodingKey)>,
    fetched_at: Option<Instant>,
}

/// Keys of one identity provider, by `kid`.
pub struct JwksCache {
    url: String,
    http: reqwest::Client,
    cached: Mutex<Cached>,
}

impl std::fmt::Debug for JwksCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwksCache")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl JwksCache {
    /// A cache for the JWKS at `url`; nothing is fetched yet.
    pub fn new(url: String) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(3))
            .build()
            .unwrap_or_default();
        Self {
            url,
            http,
            cached: Mutex::new(Cached::default()),
        }
    }

    /// The key for `kid`, which must be usable with `alg`.
    pub async fn key(&self, kid: &str, alg: Algorithm) -> Result<DecodingKey, ToolError> {
        let mut cached = self.cached.lock().await;
        if !cached.keys.contains_key(kid) {
            let may_fetch = cached.fetched_at.is_none_or(|at| at.elapsed() >= REFRESH_INTERVAL);
            if may_fetch {
                match self.fetch().await {
                    Ok(keys) => {
                        cached.keys = keys;
                        cached.fetched_at = Some(Instant::now());
                    }
                    Err(cause) => {
                        return Err(ToolError::DependencyUnavailable {
                            message: "The identity provider's signing keys could not be fetched, so the access \
                                      token could not be checked. Nothing was read or written. Retry the same call \
                                      in a few seconds."
                                .into(),
                            retry_after_seconds: 5,
                            cause: Some(cause),
                        });
                    }
                }
            }
        }
        match cached.keys.get(kid) {
            Some((key_alg, key)) if *key_alg == alg => Ok(key.clone()),
            Some(_) => Err(ToolError::Unauthenticated(AuthFailure::DisallowedAlgorithm)),
            None => Err(ToolError::Unauthenticated(AuthFailure::BadSignature)),
        }
    }

    async fn fetch(
        &self,
    ) -> Result<HashMap<String, (Algorithm, DecodingKey)>, Box<dyn std::error::Error + Send + Sync>> {
        let set: JwkSet = self
            .http
            .get(&self.url)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let mut keys = HashMap::new();
        for jwk in &set.keys {
            let Some(kid) = jwk.common.key_id.clone() else {
                continue;
            };
            let alg = match &jwk.algorithm {
                AlgorithmParameters::RSA(_) => Algorithm::RS256,
                AlgorithmParameters::EllipticCurve(ec) if ec.curve == jsonwebtoken::jwk::EllipticCurve::P256 => {
                    Algorithm::ES256
                }
                // Other key types are not on the allowlist.
                _ => continue,
            };
            if let Ok(key) = DecodingKey::from_jwk(jwk) {
                keys.insert(kid, (alg, key));
            }
        }
        tracing::info!(keys = keys.len(), "fetched JWKS");
        Ok(keys)
    }
}
