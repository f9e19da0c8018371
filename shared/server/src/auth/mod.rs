//! Authentication: a bearer JWT in, a [`Caller`] out (DESIGN.md, "Identity").
//!
//! - [`Authenticator`] checks the algorithm against an allowlist *before*
//!   choosing a key (so `alg: none` and HS256-with-a-public-key confusion are
//!   refused), then verifies signature, `iss`, `aud`, `exp` and `nbf` with 30 s
//!   of leeway, and turns the claims into a [`Caller`].
//! - [`jwks`]: the per-instance JWKS cache for RS256/ES256 tokens.
//! - [`mint`]: HS256 tokens for the local server, the CLI and the tests.

pub mod claims;
pub mod issuers;
pub mod jwks;
pub mod mint;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::HeaderMap;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, errors::ErrorKind};
use serde::Deserialize;

use draftline_contract::error::{AuthFailure, ToolError};
use draftline_contract::identity::Caller;
use draftline_contract::settings::Secret;
use issuers::IssuerSettings;

pub use jwks::JwksCache;

/// Leeway for `exp` and `nbf`, in seconds.
pub const LEEWAY_SECONDS: u64 = 30;

/// Verifies bearer tokens for one deployment, of each issuer it trusts
/// ([`issuers`]).
#[derive(Debug)]
pub struct Authenticator {
    issuers: Vec<Trusted>,
    /// `DRAFTLINE_JWT_SECRET`, for the issuers that sign HS256.
    hs256: Option<DecodingKey>,
}

/// One trusted issuer: the audiences its tokens may carry, its keys, and
/// the checks of each allowed algorithm, built once (not per call).
#[derive(Debug)]
struct Trusted {
    issuer: String,
    audiences: Vec<String>,
    /// The tenants its tokens may name (`None`: any).
    tenants: Option<Vec<String>>,
    mapping: claims::ClaimMapping,
    jwks: Option<JwksCache>,
    hs256: bool,
    validations: [(Algorithm, Validation); 3],
}

impl Trusted {
    fn new(settings: IssuerSettings, resource: &str) -> Self {
        let validation = |alg| {
            let mut validation = Validation::new(alg);
            validation.leeway = LEEWAY_SECONDS;
            validation.validate_nbf = true;
            validation.set_issuer(&[&settings.issuer]);
            // The audience is compared in `verify`, both sides in one normal form.
            validation.validate_aud = false;
            validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
            (alg, validation)
        };
        let audiences = if settings.audiences.is_empty() {
            vec![resource.to_owned()]
        } else {
            settings.audiences.clone()
        };
        Self {
            tenants: settings.bound_tenants(),
            mapping: settings.claims.clone(),
            validations: [
                validation(Algorithm::HS256),
                validation(Algorithm::RS256),
                validation(Algorithm::ES256),
            ],
            audiences,
            jwks: settings.jwks_url.map(JwksCache::new),
            hs256: settings.hs256,
            issuer: settings.issuer,
        }
    }
}

impl Authenticator {
    /// An authenticator of tokens for `resource` from `issuers` (a
    /// deployment's [`crate::config::Config::issuers`]): HS256 for
    /// those signing with `jwt_secret`, RS256/ES256 for those with a JWKS
    /// URL.
    pub fn new(issuers: &[IssuerSettings], resource: &str, jwt_secret: Option<&Secret>) -> Self {
        draftline_contract::crypto::install_crypto_provider();
        Self {
            issuers: (issuers.iter())
                .map(|settings| Trusted::new(settings.clone(), resource))
                .collect(),
            hs256: jwt_secret.and_then(|s| DecodingKey::from_secret(s.expose().as_bytes()).ok()),
        }
    }

    /// The issuer that verifies `token`: the one whose `iss` it names.
    /// With one issuer there is nothing to choose, and the token's `iss`
    /// is checked once, as it is verified.
    fn trusted(&self, token: &str) -> Result<&Trusted, ToolError> {
        if let [only] = self.issuers.as_slice() {
            return Ok(only);
        }
        let claimed = claimed_issuer(token)?;
        (self.issuers.iter())
            .find(|trusted| trusted.issuer == claimed)
            .ok_or(ToolError::Unauthenticated(AuthFailure::WrongIssuer))
    }

    /// Authenticates the request's `Authorization` header.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, ToolError> {
        self.verify(headers).await.map(|verified| verified.caller)
    }

    /// Authenticates the request's `Authorization` header and says until
    /// when the token is valid. The token's own `iss`, read before it is
    /// verified, only chooses whose keys and checks verify it; of several
    /// trusted issuers, a token of none is refused before any key is
    /// fetched.
    #[tracing::instrument(name = "authenticate", skip_all)]
    pub async fn verify(&self, headers: &HeaderMap) -> Result<Verified, ToolError> {
        let token = bearer_token(headers)?;
        let alg = header_algorithm(token)?;
        let trusted = self.trusted(token)?;
        let fetched;
        let key = match alg {
            Algorithm::HS256 => self
                .hs256
                .as_ref()
                .filter(|_| trusted.hs256)
                .ok_or(ToolError::Unauthenticated(AuthFailure::DisallowedAlgorithm))?,
            Algorithm::RS256 | Algorithm::ES256 => {
                let jwks = trusted
                    .jwks
                    .as_ref()
                    .ok_or(ToolError::Unauthenticated(AuthFailure::DisallowedAlgorithm))?;
                let kid = jsonwebtoken::decode_header(token)
                    .ok()
                    .and_then(|h| h.kid)
                    .ok_or(ToolError::Unauthenticated(AuthFailure::BadSignature))?;
                fetched = jwks.key(&kid, alg).await?;
                &fetched
            }
            _ => return Err(ToolError::Unauthenticated(AuthFailure::DisallowedAlgorithm)),
        };
        let validation = (trusted.validations.iter())
            .find_map(|(allowed, validation)| (*allowed == alg).then_some(validation))
            .ok_or(ToolError::Unauthenticated(AuthFailure::DisallowedAlgorithm))?;
        let data = jsonwebtoken::decode::<serde_json::Value>(token, key, validation).map_err(|e| {
            let failure = match e.kind() {
                ErrorKind::ExpiredSignature => AuthFailure::Expired,
                ErrorKind::ImmatureSignature => AuthFailure::NotYetValid,
                ErrorKind::InvalidIssuer => AuthFailure::WrongIssuer,
                ErrorKind::InvalidAudience => AuthFailure::WrongAudience,
                ErrorKind::InvalidSignature => AuthFailure::BadSignature,
                ErrorKind::InvalidAlgorithm => AuthFailure::DisallowedAlgorithm,
                ErrorKind::MissingRequiredClaim(_) | ErrorKind::InvalidClaimFormat(_) | ErrorKind::Json(_) => {
                    AuthFailure::BadClaims
                }
                _ => AuthFailure::Malformed,
            };
            ToolError::Unauthenticated(failure)
        })?;
        let claims = data.claims;
        let audience = claims.get("aud").map(Audience::of).unwrap_or_default();
        if !trusted.audiences.iter().any(|wanted| audience.contains(wanted)) {
            return Err(ToolError::Unauthenticated(AuthFailure::WrongAudience));
        }
        // Checked by `jsonwebtoken`; kept for who needs to know how long
        // the token lives (a review session opened with it ends then).
        let expires_at = claims
            .get("exp")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or_default();
        Ok(Verified {
            caller: trusted.mapping.caller(&claims, trusted.tenants.as_deref())?,
            expires_at,
        })
    }
}

/// A verified token: who it names, and until when it is valid.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The caller the token names.
    pub caller: Caller,
    /// The token's `exp` (epoch seconds).
    pub expires_at: i64,
}

/// A resource URL in the one form both the configured `DRAFTLINE_RESOURCE`
/// and a token's `aud` are compared in: scheme and host lowercased, the
/// scheme's default port dropped, trailing slashes removed.
pub fn normalize_resource(url: &str) -> String {
    let url = url.trim();
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.trim_end_matches('/').to_owned();
    };
    let scheme = scheme.to_ascii_lowercase();
    let (authority, path) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
    let mut authority = authority.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "https" => Some(":443"),
        "http" => Some(":80"),
        _ => None,
    };
    if let Some(port) = default_port
        && let Some(bare) = authority.strip_suffix(port)
    {
        authority = bare.to_owned();
    }
    format!("{scheme}://{authority}{path}").trim_end_matches('/').to_owned()
}

/// The origin (`scheme://host[:port]`) of a resource URL, without its path:
/// where a deployment's pages (`/review`) live.
pub fn origin_of(resource: &str) -> &str {
    let Some((_, rest)) = resource.split_once("://") else {
        return resource.trim_end_matches('/');
    };
    match rest.find('/') {
        Some(at) => &resource[..resource.len() - rest.len() + at],
        None => resource.trim_end_matches('/'),
    }
}

/// The `aud` claim: one string or an array of them, normalized.
#[derive(Debug, Default)]
struct Audience(Vec<String>);

impl Audience {
    fn contains(&self, resource: &str) -> bool {
        self.0.iter().any(|aud| aud == resource)
    }
}

impl Audience {
    /// The `aud` claim's value: one string or a list of them (anything
    /// else names no audience).
    fn of(value: &serde_json::Value) -> Self {
        let values = match value {
            serde_json::Value::String(one) => vec![one.as_str()],
            serde_json::Value::Array(many) => many.iter().filter_map(serde_json::Value::as_str).collect(),
            _ => Vec::new(),
        };
        Self(values.into_iter().map(normalize_resource).collect())
    }
}

fn bearer_token(headers: &HeaderMap) -> Result<&str, ToolError> {
    let value = headers
        .get(http::header::AUTHORIZATION)
        .ok_or(ToolError::Unauthenticated(AuthFailure::Missing))?
        .to_str()
        .map_err(|_| ToolError::Unauthenticated(AuthFailure::Malformed))?;
    let (scheme, token) = value
        .split_once(' ')
        .ok_or(ToolError::Unauthenticated(AuthFailure::Malformed))?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() || token.len() > 8192 {
        return Err(ToolError::Unauthenticated(AuthFailure::Malformed));
    }
    Ok(token)
}

/// The `iss` a token says it has, read without verifying it: it only
/// chooses whose keys verify the token, which then checks it again.
fn claimed_issuer(token: &str) -> Result<String, ToolError> {
    #[derive(Deserialize)]
    struct Claimed {
        iss: String,
    }
    let payload = token
        .split('.')
        .nth(1)
        .ok_or(ToolError::Unauthenticated(AuthFailure::Malformed))?;
    let raw = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| ToolError::Unauthenticated(AuthFailure::Malformed))?;
    let claimed: Claimed =
        serde_json::from_slice(&raw).map_err(|_| ToolError::Unauthenticated(AuthFailure::BadClaims))?;
    Ok(claimed.iss)
}

/// Reads `alg` from the JOSE header without trusting anything else in it.
fn header_algorithm(token: &str) -> Result<Algorithm, ToolError> {
    #[derive(Deserialize)]
    struct Jose {
        alg: String,
    }
    let malformed = || ToolError::Unauthenticated(AuthFailure::Malformed);
    let header = token.split('.').next().ok_or_else(malformed)?;
    let raw = URL_SAFE_NO_PAD.decode(header).map_err(|_| malformed())?;
    let jose: Jose = serde_json::from_slice(&raw).map_err(|_| malformed())?;
    match jose.alg.as_str() {
        "HS256" => Ok(Algorithm::HS256),
        "RS256" => Ok(Algorithm::RS256),
        "ES256" => Ok(Algorithm::ES256),
        _ => Err(ToolError::Unauthenticated(AuthFailure::DisallowedAlgorithm)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alg_none_is_refused_before_any_key_is_chosen() {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        let token = format!("{header}.e30.");
        assert!(matches!(
            header_algorithm(&token),
            Err(ToolError::Unauthenticated(AuthFailure::DisallowedAlgorithm))
        ));
    }

    #[test]
    fn resource_urls_compare_in_one_normal_form() {
        for same in [
            "https://tools.example.com",
            "https://tools.example.com/",
            "HTTPS://Tools.Example.com:443/",
        ] {
            assert_eq!(normalize_resource(same), "https://tools.example.com", "{same}");
        }
        assert_eq!(normalize_resource("http://127.0.0.1:3000/"), "http://127.0.0.1:3000");
        assert_eq!(normalize_resource("https://h.example/mcp/"), "https://h.example/mcp");
        assert_ne!(
            normalize_resource("https://h.example/a"),
            normalize_resource("https://h.example/b")
        );
    }

    #[test]
    fn the_origin_of_a_resource_drops_its_path() {
        assert_eq!(origin_of("https://h.example/mcp"), "https://h.example");
        assert_eq!(origin_of("http://127.0.0.1:3000"), "http://127.0.0.1:3000");
        assert_eq!(origin_of("https://h.example/"), "https://h.example");
    }

    #[test]
    fn a_header_that_is_not_bearer_is_malformed() {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert!(matches!(
            bearer_token(&headers),
            Err(ToolError::Unauthenticated(AuthFailure::Malformed))
        ));
    }
}
