//! The JWKS cache of one warm instance.
//!
//! Keys are fetched on first use and kept for the life of the instance. A
//! token naming an unknown `kid` (key rotation) makes the cache fetch the set
//! again, at most once per [`REFRESH_INTERVAL`], so a flood of forged `kid`s
//! cannot hammer the identity provider. The first load is not a refetch: an
//! instance that starts just before a rotation may refetch at once.
//!
//! If the set cannot be fetched and the key is not cached, the call fails with
//! 503 DEPENDENCY_UNAVAILABLE, not 401: the token may be perfectly good. After
//! a failed fetch the cache waits [`FAILURE_BACKOFF`] before trying again, so
//! requests queued behind a hanging identity provider are answered at once.
//!
//! Time comes from a [`Ticker`] so tests can move it instead of sleeping.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey};
use tokio::sync::Mutex;

use crate::error::{AuthFailure, ToolError};

/// Minimum time between two refetches of the JWKS for unknown `kid`s.
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(60);

/// Time to wait after a failed fetch before trying again; also the
/// `Retry-After` of the 503 it causes.
pub const FAILURE_BACKOFF: Duration = Duration::from_secs(5);

/// A monotonic time source for the cache's rate limit.
pub trait Ticker: Send + Sync + 'static {
    /// Now.
    fn now(&self) -> Instant;
}

/// The system's monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemTicker;

impl Ticker for SystemTicker {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// The system's monotonic clock moved forward by hand; for tests.
#[derive(Debug, Clone, Default)]
pub struct ManualTicker(Arc<std::sync::Mutex<Duration>>);

impl ManualTicker {
    /// A ticker showing the system's time.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the ticker forward.
    pub fn advance(&self, by: Duration) {
        let mut offset = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *offset += by;
    }
}

impl Ticker for ManualTicker {
    fn now(&self) -> Instant {
        Instant::now() + *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What the cache knows, and when it may ask again.
#[derive(Default)]
struct Cached {
    keys: HashMap<String, (Algorithm, DecodingKey)>,
    /// Whether a set was ever fetched.
    loaded: bool,
    /// No fetch before this instant (`None`: fetch whenever needed).
    quiet_until: Option<Instant>,
    /// Whether the last fetch failed (an unknown `kid` is then a 503, not a 401).
    last_fetch_failed: bool,
}

/// Keys of one identity provider, by `kid`.
pub struct JwksCache {
    url: String,
    http: reqwest::Client,
    ticker: Arc<dyn Ticker>,
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
        Self::with_ticker(url, Arc::new(SystemTicker))
    }

    /// A cache for the JWKS at `url` that tells time by `ticker`.
    pub fn with_ticker(url: String, ticker: Arc<dyn Ticker>) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(3))
            .build()
            .unwrap_or_default();
        Self {
            url,
            http,
            ticker,
            cached: Mutex::new(Cached::default()),
        }
    }

    /// The key for `kid`, which must be usable with `alg`.
    pub async fn key(&self, kid: &str, alg: Algorithm) -> Result<DecodingKey, ToolError> {
        // One fetch at a time: callers queued behind it find its result.
        let mut cached = self.cached.lock().await;
        if !cached.keys.contains_key(kid) {
            let now = self.ticker.now();
            if cached.quiet_until.is_none_or(|until| now >= until) {
                match self.fetch().await {
                    Ok(keys) => {
                        cached.keys = keys;
                        // The first load does not count against the refetch limit.
                        cached.quiet_until = cached.loaded.then(|| now + REFRESH_INTERVAL);
                        cached.loaded = true;
                        cached.last_fetch_failed = false;
                    }
                    Err(cause) => {
                        cached.quiet_until = Some(now + FAILURE_BACKOFF);
                        cached.last_fetch_failed = true;
                        return Err(unavailable(Some(cause)));
                    }
                }
            } else if cached.last_fetch_failed {
                return Err(unavailable(None));
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

/// The 503 of a JWKS that could not be fetched; `cause` goes to the log only.
fn unavailable(cause: Option<Box<dyn std::error::Error + Send + Sync>>) -> ToolError {
    ToolError::DependencyUnavailable {
        message: "The identity provider's signing keys could not be fetched, so the access token could not be \
                  checked. Nothing was read or written. Retry the same call in a few seconds."
            .into(),
        retry_after_seconds: FAILURE_BACKOFF.as_secs(),
        cause,
    }
}
