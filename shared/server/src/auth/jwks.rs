//! The JWKS cache of one warm instance.
//!
//! - **Single flight, never in the way.** One fetch runs at a time (a
//!   `tokio` mutex held only by the fetching call); the key set itself sits
//!   behind a plain lock that is never held across an `await`, so a call
//!   whose key is cached is answered at once even while another call waits
//!   on the identity provider.
//! - **Maximum age.** A set is fresh for the provider's `Cache-Control:
//!   max-age`, clamped to [[`MIN_MAX_AGE`], [`MAX_MAX_AGE`]] (default
//!   [`DEFAULT_MAX_AGE`]). A stale set is refreshed by the next call that
//!   needs it, while other calls keep using it; if the refresh fails, the
//!   stale set serves for at most [`STALE_IF_ERROR`] more, then calls fail
//!   with 503. So a key the provider withdrew stops verifying within
//!   max-age (plus the grace only while the provider is unreachable).
//! - **Rate limit.** A token naming an unknown `kid` (key rotation) makes
//!   the cache fetch the set again, at most once per [`REFRESH_INTERVAL`],
//!   so a flood of forged `kid`s cannot hammer the provider. The first load
//!   is not a refetch.
//! - **What a key may be used for.** A JWK is used only if its `use` is
//!   absent or `sig`, its `key_ops` (if any) include `verify`, and its `alg`
//!   (if any) is the one its key type implies (RS256 for RSA, ES256 for
//!   P-256); a token must name that same algorithm.
//! - **Bounded.** The set's body may be at most [`MAX_JWKS_BYTES`]; the
//!   fetch times out after [`FETCH_TIMEOUT`].
//!
//! - **Shared.** The review pages' sign-in verifies the identity provider's
//!   ID tokens with its own JWT library, and takes their keys from a cache
//!   of this type too ([`JwksCache::jwk`], [`signing_key_of`]), so sign-in
//!   survives a key rotation the same way.
//!
//! If the set cannot be fetched and no usable set is cached, the call fails
//! with 503 DEPENDENCY_UNAVAILABLE, not 401: the token may be perfectly good.
//! After a failed fetch the cache waits [`FAILURE_BACKOFF`] before trying
//! again, so requests queued behind a hanging identity provider are answered
//! at once. Time comes from a [`Ticker`] so tests can move it instead of
//! sleeping.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};

use draftline_contract::error::{AuthFailure, ToolError};

/// Minimum time between two refetches of the JWKS for unknown `kid`s.
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(60);

/// Time to wait after a failed fetch before trying again; also the
/// `Retry-After` of the 503 it causes.
pub const FAILURE_BACKOFF: Duration = Duration::from_secs(5);

/// How long a set is fresh when the provider sends no `max-age`.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(300);
/// The shortest freshness honoured (a provider sending `max-age=0` is not refetched per call).
pub const MIN_MAX_AGE: Duration = Duration::from_secs(60);
/// The longest freshness honoured.
pub const MAX_MAX_AGE: Duration = Duration::from_secs(3600);
/// How long a stale set still serves while its refresh fails.
pub const STALE_IF_ERROR: Duration = Duration::from_secs(600);
/// The largest JWKS body read.
pub const MAX_JWKS_BYTES: usize = 64 * 1024;
/// The time limit of one fetch.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(3);

/// A monotonic time source for the cache's rate limit.
pub trait Ticker: Send + Sync + 'static {
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

/// One usable key: what verifies with it, and the JWK it came from (for a
/// verifier with a JWT library of its own: the review pages' ID tokens).
#[derive(Clone)]
struct Usable {
    key: DecodingKey,
    jwk: Arc<Jwk>,
}

/// One fetched key set.
struct KeySet {
    keys: HashMap<String, (Algorithm, Usable)>,
    fetched_at: Instant,
    max_age: Duration,
}

impl KeySet {
    fn fresh(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.fetched_at) < self.max_age
    }

    fn usable(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.fetched_at) < self.max_age + STALE_IF_ERROR
    }
}

/// What the cache knows, and when it may ask again.
#[derive(Default)]
struct State {
    set: Option<Arc<KeySet>>,
    /// No refetch for an unknown `kid` before this instant.
    quiet_until: Option<Instant>,
    /// No fetch at all before this instant (after a failure).
    backoff_until: Option<Instant>,
}

/// What a look-up in the cached set found.
enum Found {
    Key(Usable),
    WrongAlgorithm,
    Missing,
}

/// Keys of one identity provider, by `kid`.
pub struct JwksCache {
    url: String,
    http: draftline_http::Client,
    ticker: Arc<dyn Ticker>,
    state: RwLock<State>,
    fetching: tokio::sync::Mutex<()>,
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
        let http = draftline_http::Client::new(FETCH_TIMEOUT);
        Self {
            url,
            http,
            ticker,
            state: RwLock::new(State::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    fn state(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn state_mut(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn find(set: &KeySet, kid: &str, alg: Algorithm) -> Found {
        match set.keys.get(kid) {
            Some((key_alg, key)) if *key_alg == alg => Found::Key(key.clone()),
            Some(_) => Found::WrongAlgorithm,
            None => Found::Missing,
        }
    }

    /// The key for `kid`, which must be usable with `alg`.
    pub async fn key(&self, kid: &str, alg: Algorithm) -> Result<DecodingKey, ToolError> {
        self.usable(kid, alg).await.map(|usable| usable.key)
    }

    /// The JWK of `kid`, under the same rules as [`Self::key`] (an unknown
    /// `kid` makes one refetch, at most once per [`REFRESH_INTERVAL`]): for
    /// a verifier with a JWT library of its own.
    pub async fn jwk(&self, kid: &str, alg: Algorithm) -> Result<Jwk, ToolError> {
        self.usable(kid, alg).await.map(|usable| Jwk::clone(&usable.jwk))
    }

    async fn usable(&self, kid: &str, alg: Algorithm) -> Result<Usable, ToolError> {
        let now = self.ticker.now();
        let cached = self.state().set.clone();
        if let Some(set) = &cached {
            let found = Self::find(set, kid, alg);
            match found {
                Found::Key(key) if set.fresh(now) => return Ok(key),
                // Stale but usable: refresh it here unless another call is
                // already doing so, in which case this call does not wait.
                Found::Key(key) if set.usable(now) => match self.fetching.try_lock() {
                    Ok(_guard) => return self.refresh_stale(kid, alg, key).await,
                    Err(_busy) => return Ok(key),
                },
                Found::WrongAlgorithm if set.fresh(now) => {
                    return Err(ToolError::Unauthenticated(AuthFailure::DisallowedAlgorithm));
                }
                _ => {}
            }
        }
        // Unknown kid, no set yet, or a set too old to use: one fetch at a
        // time, and callers queued behind it find its result.
        let _guard = self.fetching.lock().await;
        self.fetch_for(kid, alg).await
    }

    /// Refreshes a stale set for a call whose key it holds; on failure the
    /// stale key still serves (the set is within [`STALE_IF_ERROR`]).
    async fn refresh_stale(&self, kid: &str, alg: Algorithm, stale: Usable) -> Result<Usable, ToolError> {
        let now = self.ticker.now();
        if self.state().backoff_until.is_some_and(|until| now < until) {
            return Ok(stale);
        }
        match self.fetch().await {
            Ok(set) => {
                let found = Self::find(&set, kid, alg);
                self.install(set);
                match found {
                    Found::Key(key) => Ok(key),
                    Found::WrongAlgorithm => Err(ToolError::Unauthenticated(AuthFailure::DisallowedAlgorithm)),
                    // The provider withdrew the key.
                    Found::Missing => Err(ToolError::Unauthenticated(AuthFailure::BadSignature)),
                }
            }
            Err(cause) => {
                tracing::warn!(error = %cause, "JWKS refresh failed; the cached set serves a little longer");
                self.state_mut().backoff_until = Some(now + FAILURE_BACKOFF);
                Ok(stale)
            }
        }
    }

    /// With the fetch lock held: finds `kid`, fetching the set if it may.
    async fn fetch_for(&self, kid: &str, alg: Algorithm) -> Result<Usable, ToolError> {
        let now = self.ticker.now();
        let (set, may_refetch, backing_off) = {
            let state = self.state();
            (
                state.set.clone(),
                state.quiet_until.is_none_or(|until| now >= until),
                state.backoff_until.is_some_and(|until| now < until),
            )
        };
        // Another call may have fetched while this one waited.
        if let Some(set) = set.as_ref().filter(|s| s.usable(now)) {
            match Self::find(set, kid, alg) {
                Found::Key(key) => return Ok(key),
                Found::WrongAlgorithm => return Err(ToolError::Unauthenticated(AuthFailure::DisallowedAlgorithm)),
                // The last fetch failed: the kid may be a new key the
                // provider could not give us, so the token may be good.
                Found::Missing if backing_off => return Err(unavailable(None)),
                Found::Missing if !may_refetch => {
                    return Err(ToolError::Unauthenticated(AuthFailure::BadSignature));
                }
                Found::Missing => {}
            }
        } else if backing_off {
            return Err(unavailable(None));
        }
        match self.fetch().await {
            Ok(fetched) => {
                let found = Self::find(&fetched, kid, alg);
                let first = self.state().set.is_none();
                self.install(fetched);
                if !first {
                    self.state_mut().quiet_until = Some(now + REFRESH_INTERVAL);
                }
                match found {
                    Found::Key(key) => Ok(key),
                    Found::WrongAlgorithm => Err(ToolError::Unauthenticated(AuthFailure::DisallowedAlgorithm)),
                    Found::Missing => Err(ToolError::Unauthenticated(AuthFailure::BadSignature)),
                }
            }
            Err(cause) => {
                self.state_mut().backoff_until = Some(now + FAILURE_BACKOFF);
                Err(unavailable(Some(cause)))
            }
        }
    }

    fn install(&self, set: KeySet) {
        let mut state = self.state_mut();
        state.set = Some(Arc::new(set));
        state.backoff_until = None;
    }

    async fn fetch(&self) -> Result<KeySet, Box<dyn std::error::Error + Send + Sync>> {
        let request = http::Request::get(self.url.as_str())
            .header(http::header::ACCEPT, "application/json")
            .body(bytes::Bytes::new())?;
        let limits = draftline_http::Limits {
            timeout: Some(FETCH_TIMEOUT),
            max_body: MAX_JWKS_BYTES,
        };
        let response = self.http.send(request, limits).await?;
        if !response.status().is_success() {
            return Err(format!("the identity provider answered {}", response.status()).into());
        }
        let max_age = max_age(response.headers());
        let body = response.into_body();
        let set: JwkSet = serde_json::from_slice(&body)?;
        let fetched_at = self.ticker.now();
        let keys: HashMap<String, (Algorithm, Usable)> = set
            .keys
            .into_iter()
            .filter_map(|jwk| {
                let kid = jwk.common.key_id.clone()?;
                let alg = verification_algorithm(&jwk)?;
                let key = DecodingKey::from_jwk(&jwk).ok()?;
                Some((
                    kid,
                    (
                        alg,
                        Usable {
                            key,
                            jwk: Arc::new(jwk),
                        },
                    ),
                ))
            })
            .collect();
        tracing::info!(keys = keys.len(), max_age_s = max_age.as_secs(), "fetched JWKS");
        Ok(KeySet {
            keys,
            fetched_at,
            max_age,
        })
    }
}

/// The `kid` and algorithm (RS256 or ES256, the only ones accepted) a
/// compact JWS names in its header; `None` otherwise.
pub fn signing_key_of(token: &str) -> Option<(String, Algorithm)> {
    let header = jsonwebtoken::decode_header(token).ok()?;
    if !matches!(header.alg, Algorithm::RS256 | Algorithm::ES256) {
        return None;
    }
    Some((header.kid?, header.alg))
}

/// The algorithm a JWK may verify, or `None` if it is not a signature key
/// this server accepts (wrong `use`, `key_ops` without `verify`, an `alg`
/// other than its key type's, a key type off the allowlist).
pub fn verification_algorithm(jwk: &Jwk) -> Option<Algorithm> {
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != PublicKeyUse::Signature)
    {
        return None;
    }
    if jwk
        .common
        .key_operations
        .as_ref()
        .is_some_and(|ops| !ops.contains(&KeyOperations::Verify))
    {
        return None;
    }
    let (alg, named) = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => (Algorithm::RS256, KeyAlgorithm::RS256),
        AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P256 => {
            (Algorithm::ES256, KeyAlgorithm::ES256)
        }
        _ => return None,
    };
    match jwk.common.key_algorithm {
        Some(given) if given != named => None,
        _ => Some(alg),
    }
}

/// `Cache-Control: max-age`, clamped; the default without one.
fn max_age(headers: &http::HeaderMap) -> Duration {
    headers
        .get_all(http::header::CACHE_CONTROL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(|directive| directive.trim().strip_prefix("max-age=")?.trim().parse::<u64>().ok())
        .map_or(DEFAULT_MAX_AGE, |secs| {
            Duration::from_secs(secs).clamp(MIN_MAX_AGE, MAX_MAX_AGE)
        })
}

/// The 503 of a JWKS that could not be fetched; `cause` goes to the log only.
fn unavailable(cause: Option<Box<dyn std::error::Error + Send + Sync>>) -> ToolError {
    ToolError::DependencyUnavailable {
        message: "The identity provider's signing keys could not be fetched, so the access token could not be \
                  checked. Nothing was read or written. Retry the same call in a few seconds."
            .into(),
        retry_after_seconds: FAILURE_BACKOFF.as_secs(),
        cause,
        may_have_written: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_age_is_honoured_within_bounds() {
        let mut headers = http::HeaderMap::new();
        assert_eq!(max_age(&headers), DEFAULT_MAX_AGE);
        headers.insert(http::header::CACHE_CONTROL, "public, max-age=900".parse().unwrap());
        assert_eq!(max_age(&headers), Duration::from_secs(900));
        headers.insert(http::header::CACHE_CONTROL, "max-age=0".parse().unwrap());
        assert_eq!(max_age(&headers), MIN_MAX_AGE);
        headers.insert(http::header::CACHE_CONTROL, "max-age=86400".parse().unwrap());
        assert_eq!(max_age(&headers), MAX_MAX_AGE);
    }

    #[test]
    fn a_tokens_signing_key_is_its_kid_and_an_accepted_algorithm() {
        use base64::Engine as _;
        let token = |header: &str| {
            let encode = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
            format!("{}.{}.c2ln", encode(header), encode("{}"))
        };
        assert_eq!(
            signing_key_of(&token(r#"{"alg":"RS256","typ":"JWT","kid":"k-2"}"#)),
            Some(("k-2".to_owned(), Algorithm::RS256))
        );
        assert_eq!(
            signing_key_of(&token(r#"{"alg":"ES256","kid":"e"}"#)),
            Some(("e".to_owned(), Algorithm::ES256))
        );
        for refused in [
            token(r#"{"alg":"HS256","kid":"k"}"#),
            token(r#"{"alg":"none","kid":"k"}"#),
            token(r#"{"alg":"RS256"}"#),
            "not a token".to_owned(),
        ] {
            assert_eq!(signing_key_of(&refused), None, "{refused}");
        }
    }
}
