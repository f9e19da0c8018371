//! Tokens in each identity provider's shape, for trying a claim mapping
//! locally (`draftline token --shape`, docs/identity.md): the same person,
//! tenant, branch and scopes, written where Okta, Entra ID, Auth0, Cognito
//! or Keycloak put them, and signed HS256 with the local secret under the
//! shape's own issuer name. `docs/identity.local.json` trusts each issuer
//! with the mapping that reads its shape back.

use serde_json::{Value, json};

use crate::TokenSpec;

/// Where a token keeps draftline's identity facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// draftline's own claims: `tenant_id`, `branch_id`, `branch_code`, `scope`.
    Draftline,
    /// An Okta custom authorization server: `scp` as a list, the branch in custom claims.
    Okta,
    /// Microsoft Entra ID v2: `tid`, the person in `oid`, `scp` as a string, the branch as an app role.
    Entra,
    /// Auth0: namespaced custom claims, the scopes in `permissions`.
    Auth0,
    /// Amazon Cognito: the person in `username`, the branch as a group.
    Cognito,
    /// Keycloak: the branch as a group, the scopes as realm roles.
    Keycloak,
}

/// The namespace of the Auth0 shape's custom claims.
pub const AUTH0_NAMESPACE: &str = "https://draftline.local/";

impl Shape {
    /// Every shape.
    pub const ALL: [Shape; 6] = [
        Self::Draftline,
        Self::Okta,
        Self::Entra,
        Self::Auth0,
        Self::Cognito,
        Self::Keycloak,
    ];

    /// Its issuer in `docs/identity.local.json` (draftline's own shape:
    /// `None`, the deployment's issuer).
    pub fn issuer(self) -> Option<&'static str> {
        match self {
            Self::Draftline => None,
            Self::Okta => Some("draftline-local-okta"),
            Self::Entra => Some("draftline-local-entra"),
            Self::Auth0 => Some("draftline-local-auth0"),
            Self::Cognito => Some("draftline-local-cognito"),
            Self::Keycloak => Some("draftline-local-keycloak"),
        }
    }

    /// The claims of `spec` in this shape, besides `iss`, `aud` and the
    /// times. The branch names a provider's group or role after its code
    /// (`sby`), as the local mappings do.
    pub fn claims(self, spec: &TokenSpec) -> Value {
        let scopes: Vec<&str> = spec.scope.split_whitespace().collect();
        let group = spec.branch_code.to_lowercase();
        match self {
            Self::Draftline => json!({
                "sub": spec.sub,
                "scope": spec.scope,
                "tenant_id": spec.tenant,
                "branch_id": spec.branch,
                "branch_code": spec.branch_code,
                "roles": spec.roles,
            }),
            Self::Okta => json!({
                "sub": spec.sub,
                "cid": "0oa-draftline-local",
                "scp": scopes,
                "branch_id": spec.branch,
                "branch_code": spec.branch_code,
            }),
            Self::Entra => json!({
                "sub": format!("pairwise-{}", spec.sub),
                "ver": "2.0",
                "tid": "5c2f1c0e-7f3b-4d6a-9e8f-2d1b0a9c8e7f",
                "oid": spec.sub,
                "scp": spec.scope,
                "roles": [format!("{}.Branch", spec.branch_code)],
            }),
            Self::Auth0 => json!({
                "sub": spec.sub,
                "scope": "openid profile",
                "permissions": scopes,
                format!("{AUTH0_NAMESPACE}tenant"): spec.tenant,
                format!("{AUTH0_NAMESPACE}branch_id"): spec.branch,
                format!("{AUTH0_NAMESPACE}branch_code"): spec.branch_code,
            }),
            Self::Cognito => json!({
                "sub": format!("cognito-{}", spec.sub),
                "token_use": "access",
                "username": spec.sub,
                "scope": spec.scope,
                "cognito:groups": [group],
            }),
            Self::Keycloak => json!({
                "sub": format!("keycloak-{}", spec.sub),
                "preferred_username": spec.sub,
                "scope": "openid profile",
                "groups": [format!("/{group}")],
                "realm_access": {"roles": spec.roles},
            }),
        }
    }
}

/// `spec`'s claims in `shape`, issued by `issuer` for `resource`, valid
/// from now for `ttl_seconds`.
pub fn shaped_claims(spec: &TokenSpec, shape: Shape, issuer: &str, resource: &str, ttl_seconds: i64) -> Value {
    let now = chrono::Utc::now().timestamp();
    let mut claims = shape.claims(spec);
    if let Value::Object(map) = &mut claims {
        map.insert("iss".into(), issuer.into());
        map.insert("aud".into(), resource.into());
        map.insert("iat".into(), now.into());
        map.insert("nbf".into(), now.into());
        map.insert("exp".into(), now.saturating_add(ttl_seconds).into());
    }
    claims
}
