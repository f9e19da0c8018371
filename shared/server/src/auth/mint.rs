//! HS256 access tokens for local use: the `draftline token` command, the
//! local server's hint, and the tests. Production tokens come from an
//! identity provider (RS256/ES256 via JWKS).

use jsonwebtoken::{EncodingKey, Header};
use serde::Serialize;

/// What a minted token says.
#[derive(Debug, Clone, Serialize)]
pub struct TokenClaims {
    /// Issuer.
    pub iss: String,
    /// Audience: the resource URL of the deployment.
    pub aud: String,
    /// The user.
    pub sub: String,
    /// Expiry (seconds since the epoch).
    pub exp: i64,
    /// Not before.
    pub nbf: i64,
    /// Issued at.
    pub iat: i64,
    /// Space-separated scopes.
    pub scope: String,
    /// Tenant.
    pub tenant_id: String,
    pub branch_id: String,
    pub branch_code: String,
    pub roles: Vec<String>,
}

impl TokenClaims {
    /// Claims valid from now for `ttl_seconds`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        issuer: &str,
        audience: &str,
        sub: &str,
        tenant: &str,
        branch_id: &str,
        branch_code: &str,
        scope: &str,
        roles: Vec<String>,
        ttl_seconds: i64,
    ) -> Self {
        let now = chrono::Utc::now().timestamp();
        Self {
            iss: issuer.to_owned(),
            aud: audience.to_owned(),
            sub: sub.to_owned(),
            exp: now + ttl_seconds,
            nbf: now,
            iat: now,
            scope: scope.to_owned(),
            tenant_id: tenant.to_owned(),
            branch_id: branch_id.to_owned(),
            branch_code: branch_code.to_owned(),
            roles,
        }
    }
}

/// Signs `claims` ([`TokenClaims`], or any provider's shape) with HS256 and `secret`.
pub fn mint_hs256(secret: &str, claims: &impl Serialize) -> Result<String, jsonwebtoken::errors::Error> {
    draftline_contract::crypto::install_crypto_provider();
    let mut header = Header::new(jsonwebtoken::Algorithm::HS256);
    header.typ = Some("at+jwt".to_owned());
    let key = EncodingKey::from_secret(secret.as_bytes())?;
    jsonwebtoken::encode(&header, claims, &key)
}
