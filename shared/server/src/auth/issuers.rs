//! The identity providers a deployment trusts (docs/identity.md).
//!
//! A deployment names them in a settings file (`DRAFTLINE_ISSUERS`, JSON):
//!
//! ```json
//! {"issuers": [
//!   {"issuer": "https://acme.okta.com/oauth2/default",
//!    "jwks_url": "https://acme.okta.com/oauth2/default/v1/keys",
//!    "audiences": ["https://tools.acme.example"]}
//! ]}
//! ```
//!
//! Each entry is an `iss` and how its tokens are verified: RS256/ES256
//! against its `jwks_url`, or (`"hs256": true`) HS256 with the
//! deployment's `DRAFTLINE_JWT_SECRET`. `audiences` are the `aud` values its
//! tokens may carry (none given: the deployment's `DRAFTLINE_RESOURCE`).
//! Without the file, the single-issuer settings (`DRAFTLINE_ISSUER`,
//! `DRAFTLINE_JWKS_URL`, `DRAFTLINE_JWT_SECRET`) are its one entry.
//! A file that does not parse, or an entry that could never verify a
//! token, stops the deployment at start with the entry's path.

use serde::Deserialize;

use super::claims::ClaimMapping;
use draftline_contract::identity::TenantId;
use draftline_contract::settings::ConfigError;
use draftline_contract::settings::url::check_secure_url;

/// The variable that names the settings file.
pub const VARIABLE: &str = "DRAFTLINE_ISSUERS";

/// One trusted issuer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerSettings {
    /// The `iss` its tokens carry, exactly.
    pub issuer: String,
    /// Where its RS256/ES256 signing keys are published.
    #[serde(default)]
    pub jwks_url: Option<String>,
    /// Whether its tokens are HS256, signed with `DRAFTLINE_JWT_SECRET`.
    #[serde(default)]
    pub hs256: bool,
    /// The `aud` values its tokens may carry, in their normal form
    /// ([`crate::auth::normalize_resource`]); empty: the deployment's
    /// resource alone.
    #[serde(default)]
    pub audiences: Vec<String>,
    /// The tenants its tokens may name. Required in a settings file unless
    /// its mapping fixes the tenant: another company's identity provider
    /// can never name this deployment's tenants. Empty: any (the
    /// single-issuer settings, the deployment's own issuer).
    #[serde(default)]
    pub tenants: Vec<String>,
    /// Where its tokens keep draftline's identity facts (default:
    /// draftline's own claims).
    #[serde(default)]
    pub claims: ClaimMapping,
}

impl IssuerSettings {
    /// The one issuer of the single-issuer settings (`DRAFTLINE_ISSUER`),
    /// verified with `jwks_url` and/or the deployment's secret (`hs256`):
    /// the deployment's own, in draftline's own claims, naming any tenant.
    pub fn single(issuer: String, jwks_url: Option<String>, hs256: bool) -> Self {
        Self {
            issuer,
            jwks_url,
            hs256,
            audiences: Vec::new(),
            tenants: Vec::new(),
            claims: ClaimMapping::default(),
        }
    }

    /// The tenants its tokens may name (`None`: any).
    pub fn bound_tenants(&self) -> Option<Vec<String>> {
        match self.claims.fixed_tenant() {
            Some(fixed) => Some(vec![fixed.to_owned()]),
            None => (!self.tenants.is_empty()).then(|| self.tenants.clone()),
        }
    }
}

/// The settings file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IssuersFile {
    issuers: Vec<IssuerSettings>,
}

/// The issuers of the settings file at `path`.
pub fn read(path: &str) -> Result<Vec<IssuerSettings>, ConfigError> {
    let text =
        std::fs::read_to_string(path).map_err(|err| invalid(format!("the file '{path}' cannot be read: {err}")))?;
    parse(&text)
}

/// The issuers of a settings file's `text`, each checked.
pub fn parse(text: &str) -> Result<Vec<IssuerSettings>, ConfigError> {
    let file: IssuersFile = serde_json::from_str(text).map_err(|err| invalid(format!("not a settings file: {err}")))?;
    if file.issuers.is_empty() {
        return Err(invalid(
            "issuers: lists no issuer, so no token could be verified".to_owned(),
        ));
    }
    let mut issuers = Vec::with_capacity(file.issuers.len());
    for (at, mut entry) in file.issuers.into_iter().enumerate() {
        let path = |field: &str| format!("issuers[{at}].{field}");
        if entry.issuer.trim().is_empty() {
            return Err(invalid(format!("{}: is empty", path("issuer"))));
        }
        if issuers.iter().any(|seen: &IssuerSettings| seen.issuer == entry.issuer) {
            return Err(invalid(format!(
                "{}: '{}' is listed twice",
                path("issuer"),
                entry.issuer
            )));
        }
        match (&entry.jwks_url, entry.hs256) {
            (Some(url), false) => check_secure_url(VARIABLE, url, "the keys its tokens are verified with")
                .map_err(|err| invalid(format!("{}: {err}", path("jwks_url"))))?,
            (None, true) => {}
            (Some(_), true) => {
                return Err(invalid(format!(
                    "{}: names both a jwks_url and hs256; an issuer signs one way",
                    path("jwks_url")
                )));
            }
            (None, false) => {
                return Err(invalid(format!(
                    "{}: is missing (or set \"hs256\": true), so its tokens could not be verified",
                    path("jwks_url")
                )));
            }
        }
        if let Some(problem) = entry.claims.problem(&path("claims")) {
            return Err(invalid(problem));
        }
        if entry.claims.fixed_tenant().is_none() && entry.tenants.is_empty() {
            return Err(invalid(format!(
                "{}: names no tenant, and its claims may name any: list the tenants its tokens may name (or fix \
                 one in claims.tenant)",
                path("tenants")
            )));
        }
        for (i, tenant) in entry.tenants.iter().enumerate() {
            TenantId::parse(tenant).map_err(|err| invalid(format!("{}: {err}", path(&format!("tenants[{i}]")))))?;
        }
        for (i, audience) in entry.audiences.iter_mut().enumerate() {
            *audience = crate::auth::normalize_resource(audience);
            if !(audience.starts_with("https://") || audience.starts_with("http://")) {
                return Err(invalid(format!(
                    "{}: '{audience}' is not an absolute http(s) URL",
                    path(&format!("audiences[{i}]"))
                )));
            }
        }
        issuers.push(entry);
    }
    Ok(issuers)
}

fn invalid(reason: String) -> ConfigError {
    ConfigError::Invalid { name: VARIABLE, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str) -> String {
        match parse(text) {
            Err(ConfigError::Invalid { reason, .. }) => reason,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_file_lists_each_issuer_with_its_keys_and_audiences_in_normal_form() {
        let issuers = parse(
            r#"{"issuers": [
                {"issuer": "https://a.example", "jwks_url": "https://a.example/keys", "tenants": ["acme"],
                 "audiences": ["HTTPS://Tools.Example.com:443/"]},
                {"issuer": "draftline-local", "hs256": true, "claims": {"tenant": {"fixed": "demo"}}}
            ]}"#,
        )
        .unwrap();
        assert_eq!(issuers.len(), 2);
        assert_eq!(issuers[0].audiences, ["https://tools.example.com"]);
        assert_eq!(issuers[0].jwks_url.as_deref(), Some("https://a.example/keys"));
        assert!(issuers[1].hs256 && issuers[1].audiences.is_empty());
        assert_eq!(issuers[0].bound_tenants(), Some(vec!["acme".to_owned()]));
        assert_eq!(issuers[1].bound_tenants(), Some(vec!["demo".to_owned()]));
    }

    #[test]
    fn an_entry_that_could_never_verify_a_token_is_refused_with_its_path() {
        assert!(reason(r#"{"issuers": []}"#).contains("no issuer"));
        assert!(reason(r#"{"issuers": [{"issuer": "x"}]}"#).starts_with("issuers[0].jwks_url: is missing"));
        assert!(
            reason(
                r#"{"issuers": [{"issuer": "x", "hs256": true, "tenants": ["a"]}, {"issuer": "x", "hs256": true}]}"#
            )
            .starts_with("issuers[1].issuer: 'x' is listed twice")
        );
        assert!(
            reason(r#"{"issuers": [{"issuer": "x", "jwks_url": "http://idp.example/keys"}]}"#)
                .starts_with("issuers[0].jwks_url:")
        );
        assert!(
            reason(r#"{"issuers": [{"issuer": "x", "hs256": true, "tenants": ["a"], "audiences": ["tools"]}]}"#)
                .starts_with("issuers[0].audiences[0]:")
        );
        assert!(reason(r#"{"issuers": [{"issuer": "x", "hs256": true, "tenant": "a"}]}"#).contains("unknown field"));
        assert!(
            reason(r#"{"issuers": [{"issuer": "x", "hs256": true}]}"#)
                .starts_with("issuers[0].tenants: names no tenant")
        );
        assert!(
            reason(
                r#"{"issuers": [{"issuer": "x", "hs256": true, "tenants": ["a"],
                                    "claims": {"branch": {"from": "groups", "map": {}}}}]}"#
            )
            .starts_with("issuers[0].claims.branch.map: has no entries")
        );
        assert!(
            reason(r#"{"issuers": [{"issuer": "x", "hs256": true, "tenants": ["a"], "claims": {"user": "a..b"}}]}"#)
                .contains("'a..b' is not a claim path")
        );
        // Inside a form of its own (a role map, a group map) too.
        assert!(
            reason(
                r#"{"issuers": [{"issuer": "x", "hs256": true, "tenants": ["a"],
                    "claims": {"scopes": {"from": "realm..roles", "map": {"r": "s"}}}}]}"#
            )
            .contains("scopes.from: 'realm..roles' is not a claim path")
        );
        assert!(
            reason(
                r#"{"issuers": [{"issuer": "x", "hs256": true, "tenants": ["a"],
                    "claims": {"branch": {"from": ".groups", "map": {"g": {"id": "B-1", "code": "B"}}}}}]}"#
            )
            .contains("branch.from: '.groups' is not a claim path")
        );
        assert!(reason("issuers: []").starts_with("not a settings file"));
    }

    #[test]
    fn the_provider_entries_of_docs_identity_md_are_accepted() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/identity.md")).unwrap();
        let section = doc.split("### One entry per provider").nth(1).unwrap();
        let json = section.split("```json").nth(1).unwrap().split("```").next().unwrap();
        let issuers = parse(json).unwrap();
        assert_eq!(issuers.len(), 5);
        assert!(
            issuers
                .iter()
                .all(|entry| entry.bound_tenants() == Some(vec!["acme".to_owned()]))
        );
    }
}
