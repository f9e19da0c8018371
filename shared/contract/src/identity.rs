//! Who is calling: values parsed once from a verified token.
//!
//! A [`Caller`] can only be built by the authenticator (or by tests through
//! [`Caller::from_verified`]); tools receive it by reference and no tool input
//! can name a tenant, branch or user. Each identifier is a newtype whose
//! constructor checks its shape, so a value that exists is valid.

use std::collections::BTreeSet;
use std::fmt;

macro_rules! identifier {
    ($(#[$doc:meta])* $name:ident, $max:expr, $allowed:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// Parses the value, or says why it is not one.
            pub fn parse(value: &str) -> Result<Self, String> {
                let ok = !value.is_empty()
                    && value.len() <= $max
                    && value.chars().all($allowed);
                if ok {
                    Ok(Self(value.to_owned()))
                } else {
                    Err(format!(
                        "'{}' is not a valid {} (1-{} characters of {})",
                        value.chars().take(80).collect::<String>(),
                        stringify!($name),
                        $max,
                        "letters, digits, '-', '_', '.'"
                    ))
                }
            }

            /// The value as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

fn id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

identifier!(
    /// A tenant (company) id; the first segment of every DynamoDB key.
    TenantId, 64, id_char
);
identifier!(
    /// A branch id (`SBY-01`).
    BranchId, 64, id_char
);
identifier!(
    /// A branch's short code as printed on documents (`SBY`).
    BranchCode, 16, id_char
);
identifier!(
    /// The user a call is made on behalf of (the token's `sub`).
    UserId, 128, |c: char| id_char(c) || matches!(c, '@' | '|' | ':')
);

/// One OAuth scope (`purchasing:draft`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope(String);

impl Scope {
    /// Parses `<module>:<action>`.
    pub fn parse(value: &str) -> Result<Self, String> {
        let valid = value.split_once(':').is_some_and(|(m, a)| {
            !m.is_empty()
                && !a.is_empty()
                && value.len() <= 64
                && value
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, ':' | '_' | '.'))
        });
        if valid {
            Ok(Self(value.to_owned()))
        } else {
            Err(format!("'{value}' is not a scope of the form module:action"))
        }
    }

    /// The scope as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The set of scopes a token grants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scopes(BTreeSet<Scope>);

impl Scopes {
    /// Parses a space-separated `scope` claim; unknown-shaped entries are dropped.
    pub fn from_claim(claim: &str) -> Self {
        Self(claim.split_whitespace().filter_map(|s| Scope::parse(s).ok()).collect())
    }

    /// Whether `scope` is granted.
    pub fn grants(&self, scope: &str) -> bool {
        self.0.iter().any(|s| s.as_str() == scope)
    }

    /// The scopes, sorted.
    pub fn iter(&self) -> impl Iterator<Item = &Scope> {
        self.0.iter()
    }
}

impl fmt::Display for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let joined: Vec<&str> = self.0.iter().map(Scope::as_str).collect();
        f.write_str(&joined.join(" "))
    }
}

/// A caller's facts as a verified token (or a session sealed from one)
/// states them, before each is checked: what [`Caller::named`] reads.
#[derive(Debug, Clone, Copy)]
pub struct Named<'a> {
    /// The tenant (`demo`).
    pub tenant: &'a str,
    /// The branch id (`SBY-01`).
    pub branch: &'a str,
    /// The branch code (`SBY`).
    pub branch_code: &'a str,
    /// The user (`sub`).
    pub user: &'a str,
    /// The scopes, space-separated.
    pub scope: &'a str,
}

/// The verified identity of a call. Built from token claims only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    tenant: TenantId,
    branch: BranchId,
    branch_code: BranchCode,
    user: UserId,
    roles: Vec<String>,
    scopes: Scopes,
}

impl Caller {
    /// The caller a verified token names, with its `roles`; else the
    /// first fact that is not valid (`tenant`, `branch id`, `branch code`,
    /// `user`) and why.
    pub fn named(named: Named<'_>, roles: Vec<String>) -> Result<Self, (&'static str, String)> {
        let fact = |what: &'static str| move |err: String| (what, err);
        Ok(Self {
            tenant: TenantId::parse(named.tenant).map_err(fact("tenant"))?,
            branch: BranchId::parse(named.branch).map_err(fact("branch id"))?,
            branch_code: BranchCode::parse(named.branch_code).map_err(fact("branch code"))?,
            user: UserId::parse(named.user).map_err(fact("user"))?,
            roles,
            scopes: Scopes::from_claim(named.scope),
        })
    }

    /// Assembles a caller from claims that have already been verified.
    pub fn from_verified(
        tenant: TenantId,
        branch: BranchId,
        branch_code: BranchCode,
        user: UserId,
        roles: Vec<String>,
        scopes: Scopes,
    ) -> Self {
        Self {
            tenant,
            branch,
            branch_code,
            user,
            roles,
            scopes,
        }
    }

    /// The tenant (one ERP company): every key and query starts with it.
    pub fn tenant(&self) -> &TenantId {
        &self.tenant
    }
    /// The branch id (`SBY-01`).
    pub fn branch(&self) -> &BranchId {
        &self.branch
    }
    /// The branch code (`SBY`).
    pub fn branch_code(&self) -> &BranchCode {
        &self.branch_code
    }
    /// The user (token `sub`).
    pub fn user(&self) -> &UserId {
        &self.user
    }
    /// The roles claim.
    pub fn roles(&self) -> &[String] {
        &self.roles
    }
    /// The granted scopes.
    pub fn scopes(&self) -> &Scopes {
        &self.scopes
    }
    /// The person this call acts for, as the owner of what it counts.
    pub fn owner(&self) -> Owner<'_> {
        Owner {
            tenant: &self.tenant,
            branch: &self.branch,
            user: &self.user,
        }
    }
}

/// One person of one branch of one tenant: whose use a limit counts. An
/// agent run id names a run only within its owner's calls (two people's
/// calls under one id are two runs), so a run's counters are keyed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner<'a> {
    /// The tenant.
    pub tenant: &'a TenantId,
    /// The branch the person's calls are made in.
    pub branch: &'a BranchId,
    /// The person (the token's `sub`).
    pub user: &'a UserId,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_reject_key_separators_and_empty_values() {
        assert!(TenantId::parse("demo").is_ok());
        assert!(TenantId::parse("de#mo").is_err());
        assert!(TenantId::parse("").is_err());
        assert!(BranchId::parse("SBY-01").is_ok());
        assert!(BranchId::parse("SBY 01").is_err());
    }

    #[test]
    fn scopes_parse_the_space_separated_claim() {
        let scopes = Scopes::from_claim("purchasing:read  purchasing:draft bogus");
        assert!(scopes.grants("purchasing:draft"));
        assert!(!scopes.grants("bogus"));
        assert_eq!(scopes.to_string(), "purchasing:draft purchasing:read");
    }
}
