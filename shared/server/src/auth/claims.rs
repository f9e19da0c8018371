//! Where an issuer's tokens keep draftline's identity facts
//! (docs/identity.md): the tenant, the branch (id and code), the user and
//! the scopes, each read from a claim path, a fixed value or a map. An
//! issuer that issues draftline's own shape needs none of it: the default
//! is `tenant_id`, `branch_id`, `branch_code`, `sub` and `scope`.
//!
//! A claim path is a claim's name (`tid`), a namespaced claim, which is
//! one name however many dots its URL has (`https://acme.example/branch`),
//! or names joined by dots into nested objects (`realm_access.roles`).
//! What a path finds must be there and of its type: a token that lacks it
//! is refused naming the path, never given a default.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use draftline_contract::error::ToolError;
use draftline_contract::identity::{BranchCode, BranchId, Caller, Named, TenantId};

/// A claim path, checked when the settings are read.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct ClaimPath {
    text: String,
    segments: Vec<String>,
}

impl TryFrom<String> for ClaimPath {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        let segments: Vec<String> = if text.starts_with("https://") || text.starts_with("http://") {
            vec![text.clone()]
        } else {
            text.split('.').map(str::to_owned).collect()
        };
        if segments.iter().any(|segment| segment.trim().is_empty()) {
            return Err(format!(
                "'{text}' is not a claim path (names joined by dots, or one namespaced claim's URL)"
            ));
        }
        Ok(Self { text, segments })
    }
}

impl ClaimPath {
    fn of(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            segments: vec![text.to_owned()],
        }
    }

    /// What the path finds in `claims`, if anything.
    fn find<'a>(&self, claims: &'a Value) -> Option<&'a Value> {
        self.segments
            .iter()
            .try_fold(claims, |value, segment| value.get(segment))
    }

    /// The string at the path.
    fn text<'a>(&self, claims: &'a Value) -> Result<&'a str, ToolError> {
        match self.find(claims) {
            Some(Value::String(text)) => Ok(text),
            found => Err(self.refused(found, "a string")),
        }
    }

    /// The strings at the path: a list of strings, or one string of
    /// space-separated words (`scope`, Entra ID's `scp`).
    fn words<'a>(&self, claims: &'a Value) -> Result<Vec<&'a str>, ToolError> {
        match self.find(claims) {
            Some(Value::String(text)) => Ok(text.split_whitespace().collect()),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
                Ok(items.iter().filter_map(Value::as_str).collect())
            }
            found => Err(self.refused(found, "a string or a list of strings")),
        }
    }

    fn refused(&self, found: Option<&Value>, wanted: &str) -> ToolError {
        let problem = match found {
            None => "is missing".to_owned(),
            Some(_) => format!("is not {wanted}"),
        };
        ToolError::UnmappedClaim(format!("claim '{}' {problem}", self.text))
    }
}

/// Where the tenant comes from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "raw::Tenant")]
pub enum TenantFrom {
    /// A claim.
    Claim(ClaimPath),
    /// The same tenant for every token of the issuer.
    Fixed {
        /// The tenant.
        fixed: String,
    },
}

/// A branch, as a map names it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BranchOf {
    /// Its id (`SBY-01`).
    pub id: String,
    /// Its printed code (`SBY`).
    pub code: String,
}

/// Where the branch comes from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "raw::Branch")]
pub enum BranchFrom {
    /// Two claims: the id and the code.
    Claims {
        /// The branch id's claim.
        id: ClaimPath,
        /// The branch code's claim.
        code: ClaimPath,
    },
    /// A group or role claim (`from`) and the branch of each group.
    Map {
        /// The groups' claim.
        from: ClaimPath,
        /// The branch of each group.
        map: BTreeMap<String, BranchOf>,
    },
}

/// Where the scopes come from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "raw::Scopes")]
pub enum ScopesFrom {
    /// A claim of space-separated scopes or a list of them (`scope`,
    /// `scp`, `permissions`).
    Claim(ClaimPath),
    /// A role claim (`from`) and the scopes each role grants
    /// (space-separated).
    Roles {
        /// The roles' claim.
        from: ClaimPath,
        /// The scopes of each role.
        map: BTreeMap<String, String>,
    },
}

/// The mapping's forms as a settings file writes them, claim paths as
/// text: an untagged enum of checked paths would refuse a path that does
/// not parse as "matches no form", where this names the path.
mod raw {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::{BranchFrom, BranchOf, ClaimPath, ScopesFrom, TenantFrom};

    #[derive(Deserialize)]
    #[serde(untagged, deny_unknown_fields)]
    pub enum Tenant {
        Claim(String),
        Fixed { fixed: String },
    }

    #[derive(Deserialize)]
    #[serde(untagged, deny_unknown_fields)]
    pub enum Branch {
        Claims {
            id: String,
            code: String,
        },
        Map {
            from: String,
            map: BTreeMap<String, BranchOf>,
        },
    }

    #[derive(Deserialize)]
    #[serde(untagged, deny_unknown_fields)]
    pub enum Scopes {
        Claim(String),
        Roles {
            from: String,
            map: BTreeMap<String, String>,
        },
    }

    /// `text` as a claim path, or why not, naming `field`.
    fn path(field: &str, text: String) -> Result<ClaimPath, String> {
        ClaimPath::try_from(text).map_err(|why| format!("{field}: {why}"))
    }

    impl TryFrom<Tenant> for TenantFrom {
        type Error = String;
        fn try_from(raw: Tenant) -> Result<Self, String> {
            Ok(match raw {
                Tenant::Claim(claim) => Self::Claim(path("tenant", claim)?),
                Tenant::Fixed { fixed } => Self::Fixed { fixed },
            })
        }
    }

    impl TryFrom<Branch> for BranchFrom {
        type Error = String;
        fn try_from(raw: Branch) -> Result<Self, String> {
            Ok(match raw {
                Branch::Claims { id, code } => Self::Claims {
                    id: path("branch.id", id)?,
                    code: path("branch.code", code)?,
                },
                Branch::Map { from, map } => Self::Map {
                    from: path("branch.from", from)?,
                    map,
                },
            })
        }
    }

    impl TryFrom<Scopes> for ScopesFrom {
        type Error = String;
        fn try_from(raw: Scopes) -> Result<Self, String> {
            Ok(match raw {
                Scopes::Claim(claim) => Self::Claim(path("scopes", claim)?),
                Scopes::Roles { from, map } => Self::Roles {
                    from: path("scopes.from", from)?,
                    map,
                },
            })
        }
    }
}

/// Where one issuer's tokens keep each identity fact.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimMapping {
    /// The tenant.
    #[serde(default = "default_tenant")]
    pub tenant: TenantFrom,
    /// The branch.
    #[serde(default = "default_branch")]
    pub branch: BranchFrom,
    /// The user.
    #[serde(default = "default_user")]
    pub user: ClaimPath,
    /// The scopes.
    #[serde(default = "default_scopes")]
    pub scopes: ScopesFrom,
}

impl Default for ClaimMapping {
    fn default() -> Self {
        Self {
            tenant: default_tenant(),
            branch: default_branch(),
            user: default_user(),
            scopes: default_scopes(),
        }
    }
}

fn default_tenant() -> TenantFrom {
    TenantFrom::Claim(ClaimPath::of("tenant_id"))
}

fn default_branch() -> BranchFrom {
    BranchFrom::Claims {
        id: ClaimPath::of("branch_id"),
        code: ClaimPath::of("branch_code"),
    }
}

fn default_user() -> ClaimPath {
    ClaimPath::of("sub")
}

fn default_scopes() -> ScopesFrom {
    ScopesFrom::Claim(ClaimPath::of("scope"))
}

impl ClaimMapping {
    /// What is wrong with it, as a path under `at` (`issuers[0].claims`),
    /// for a mapping that could never map a token.
    pub fn problem(&self, at: &str) -> Option<String> {
        if let TenantFrom::Fixed { fixed } = &self.tenant
            && let Err(err) = TenantId::parse(fixed)
        {
            return Some(format!("{at}.tenant.fixed: {err}"));
        }
        if let BranchFrom::Map { map, .. } = &self.branch {
            if map.is_empty() {
                return Some(format!(
                    "{at}.branch.map: has no entries, so no token could name a branch"
                ));
            }
            for (group, branch) in map {
                if let Err(err) = BranchId::parse(&branch.id).and_then(|_| BranchCode::parse(&branch.code)) {
                    return Some(format!("{at}.branch.map.{group}: {err}"));
                }
            }
        }
        if let ScopesFrom::Roles { map, .. } = &self.scopes
            && map.is_empty()
        {
            return Some(format!(
                "{at}.scopes.map: has no entries, so no token could hold a scope"
            ));
        }
        None
    }

    /// The tenant it names fixed, if it does.
    pub fn fixed_tenant(&self) -> Option<&str> {
        match &self.tenant {
            TenantFrom::Fixed { fixed } => Some(fixed),
            TenantFrom::Claim(_) => None,
        }
    }

    /// The caller `claims` name, when the issuer may name its tenant
    /// (`tenants`: those it is configured for; `None`: any, the
    /// deployment's own issuer).
    pub fn caller(&self, claims: &Value, tenants: Option<&[String]>) -> Result<Caller, ToolError> {
        let tenant = match &self.tenant {
            TenantFrom::Fixed { fixed } => fixed.as_str(),
            TenantFrom::Claim(path) => path.text(claims)?,
        };
        if tenants.is_some_and(|allowed| !allowed.iter().any(|t| t == tenant)) {
            return Err(ToolError::UnmappedClaim(format!(
                "tenant '{tenant}' is not one this token's issuer may name"
            )));
        }
        let (branch, code) = self.branch(claims)?;
        let user = self.user.text(claims)?;
        let scopes = match &self.scopes {
            ScopesFrom::Claim(path) => match path.find(claims) {
                // Space-separated already (`scope`): as it is.
                Some(Value::String(text)) => text.clone(),
                _ => path.words(claims)?.join(" "),
            },
            ScopesFrom::Roles { from, map } => {
                let granted = from.words(claims)?.into_iter().filter_map(|role| map.get(role));
                granted.map(String::as_str).collect::<Vec<_>>().join(" ")
            }
        };
        let roles = match claims.get("roles") {
            None => Vec::new(),
            Some(_) => ClaimPath::of("roles")
                .words(claims)?
                .into_iter()
                .map(str::to_owned)
                .collect(),
        };
        let named = Named {
            tenant,
            branch: &branch,
            branch_code: &code,
            user,
            scope: &scopes,
        };
        Caller::named(named, roles).map_err(|(what, err)| ToolError::UnmappedClaim(format!("{what}: {err}")))
    }

    /// The branch id and code `claims` name.
    fn branch(&self, claims: &Value) -> Result<(String, String), ToolError> {
        match &self.branch {
            BranchFrom::Claims { id, code } => Ok((id.text(claims)?.to_owned(), code.text(claims)?.to_owned())),
            BranchFrom::Map { from, map } => {
                let mut branches = from.words(claims)?.into_iter().filter_map(|group| map.get(group));
                let Some(first) = branches.next() else {
                    return Err(ToolError::UnmappedClaim(format!(
                        "claim '{}' names no group that maps to a branch",
                        from.text
                    )));
                };
                if branches.any(|other| other != first) {
                    return Err(ToolError::UnmappedClaim(format!(
                        "claim '{}' names groups of more than one branch",
                        from.text
                    )));
                }
                Ok((first.id.clone(), first.code.clone()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mapping(json: Value) -> ClaimMapping {
        serde_json::from_value(json).unwrap()
    }

    fn refusal(result: Result<Caller, ToolError>) -> String {
        match result {
            Err(ToolError::UnmappedClaim(message)) => message,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn draftlines_own_shape_needs_no_mapping() {
        let claims = json!({"sub": "buyer-sby", "tenant_id": "demo", "branch_id": "SBY-01",
                            "branch_code": "SBY", "scope": "purchasing:read purchasing:draft", "roles": ["buyer"]});
        let caller = ClaimMapping::default().caller(&claims, None).unwrap();
        assert_eq!(caller.tenant().as_str(), "demo");
        assert_eq!(caller.branch().as_str(), "SBY-01");
        assert!(caller.scopes().grants("purchasing:draft"));
        assert_eq!(caller.roles(), ["buyer"]);
    }

    #[test]
    fn okta_entra_auth0_and_keycloak_shapes_map_onto_the_same_caller() {
        let okta = mapping(json!({"tenant": {"fixed": "acme"}, "scopes": "scp",
                                  "branch": {"id": "branch_id", "code": "branch_code"}}));
        let claims = json!({"sub": "u1", "scp": ["purchasing:read", "purchasing:draft"],
                            "branch_id": "SBY-01", "branch_code": "SBY"});
        let caller = okta.caller(&claims, Some(&["acme".to_owned()])).unwrap();
        assert!(caller.scopes().grants("purchasing:draft") && caller.tenant().as_str() == "acme");

        let entra = mapping(json!({"tenant": "tid", "user": "oid", "scopes": "scp",
                                   "branch": {"from": "roles", "map": {"Sby.Buyer": {"id": "SBY-01", "code": "SBY"}}}}));
        let claims = json!({"sub": "pairwise", "oid": "u2", "tid": "acme", "scp": "purchasing:read",
                            "roles": ["Sby.Buyer"]});
        let caller = entra.caller(&claims, Some(&["acme".to_owned()])).unwrap();
        assert_eq!((caller.user().as_str(), caller.branch().as_str()), ("u2", "SBY-01"));

        let auth0 = mapping(json!({"tenant": "https://acme.example/tenant", "scopes": "permissions",
                                   "branch": {"id": "https://acme.example/branch_id",
                                              "code": "https://acme.example/branch_code"}}));
        let claims = json!({"sub": "auth0|u3", "scope": "openid", "permissions": ["inventory:read"],
                            "https://acme.example/tenant": "acme", "https://acme.example/branch_id": "SBY-01",
                            "https://acme.example/branch_code": "SBY"});
        let caller = auth0.caller(&claims, Some(&["acme".to_owned()])).unwrap();
        assert!(caller.scopes().grants("inventory:read") && !caller.scopes().grants("openid"));

        let keycloak = mapping(json!({"tenant": {"fixed": "acme"},
                                      "branch": {"from": "groups", "map": {"/sby": {"id": "SBY-01", "code": "SBY"}}},
                                      "scopes": {"from": "realm_access.roles",
                                                 "map": {"buyer": "purchasing:read purchasing:draft"}}}));
        let claims = json!({"sub": "u4", "groups": ["/sby"], "realm_access": {"roles": ["buyer", "offline_access"]}});
        let caller = keycloak.caller(&claims, Some(&["acme".to_owned()])).unwrap();
        assert!(caller.scopes().grants("purchasing:draft") && !caller.scopes().grants("sales:read"));
    }

    #[test]
    fn a_missing_or_mistyped_claim_and_a_tenant_the_issuer_may_not_name_are_refused_naming_it() {
        let keycloak = mapping(json!({"scopes": {"from": "realm_access.roles", "map": {"buyer": "inventory:read"}}}));
        let base = json!({"sub": "u", "tenant_id": "acme", "branch_id": "SBY-01", "branch_code": "SBY"});
        assert_eq!(
            refusal(keycloak.caller(&base, None)),
            "claim 'realm_access.roles' is missing"
        );
        let mut typed = base.clone();
        typed["realm_access"] = json!({"roles": 7});
        assert_eq!(
            refusal(keycloak.caller(&typed, None)),
            "claim 'realm_access.roles' is not a string or a list of strings"
        );
        let mut other = base.clone();
        other["scope"] = json!("inventory:read");
        other["tenant_id"] = json!("globex");
        assert!(refusal(ClaimMapping::default().caller(&other, Some(&["acme".to_owned()]))).contains("'globex'"));
        other.as_object_mut().unwrap().remove("branch_code");
        other["tenant_id"] = json!("acme");
        assert_eq!(
            refusal(ClaimMapping::default().caller(&other, None)),
            "claim 'branch_code' is missing"
        );
        let groups = mapping(
            json!({"branch": {"from": "groups", "map": {"a": {"id": "SBY-01", "code": "SBY"},
                                                                           "b": {"id": "JKT-01", "code": "JKT"}}}}),
        );
        let mut both = base.clone();
        both["scope"] = json!("");
        both["groups"] = json!(["a", "b"]);
        assert!(refusal(groups.caller(&both, None)).contains("more than one branch"));
        both["groups"] = json!(["c"]);
        assert!(refusal(groups.caller(&both, None)).contains("no group"));
    }

    #[test]
    fn a_mapping_that_could_never_map_a_token_is_found_at_start() {
        let bad_path = serde_json::from_value::<ClaimMapping>(json!({"user": "realm..name"}));
        assert!(
            bad_path
                .unwrap_err()
                .to_string()
                .contains("'realm..name' is not a claim path")
        );
        let empty = mapping(json!({"branch": {"from": "groups", "map": {}}}));
        assert_eq!(
            empty.problem("issuers[0].claims").as_deref(),
            Some("issuers[0].claims.branch.map: has no entries, so no token could name a branch")
        );
        let roles = mapping(json!({"scopes": {"from": "roles", "map": {}}}));
        assert!(roles.problem("c").unwrap().starts_with("c.scopes.map"));
        assert_eq!(ClaimMapping::default().problem("c"), None);
    }
}
