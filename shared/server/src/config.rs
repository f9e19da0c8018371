//! Configuration from the environment (DESIGN.md, "Configuration").
//!
//! A deployed function calls [`Config::from_env`] once at start-up and
//! refuses to start when a required setting is missing; only the local server
//! has defaults ([`Config::local`]). The JWT secret is wrapped so it can never
//! be printed by accident.

use std::fmt;
use std::time::Duration;

use draftline_contract::cursor::{CursorKey, KeySource};

/// The HS256 secret used by `draftline serve` and `draftline token` when none is configured.
pub const LOCAL_DEV_SECRET: &str = "draftline-local-development-secret-do-not-use-in-production";
/// The issuer used locally when none is configured.
pub const LOCAL_ISSUER: &str = "draftline-local";
/// The default table name.
pub const DEFAULT_TABLE: &str = "draftline";
/// The default retention of idempotency keys.
pub const DEFAULT_IDEMPOTENCY_TTL: Duration = Duration::from_secs(86_400);
/// The default lease of a key whose work leaves DynamoDB (a draft in the
/// ERP): longer than a call may take ([`DEFAULT_CALL_DEADLINE`]), so a live
/// worker never loses its lease, short enough that the retry of a crashed
/// one waits little.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(15);
/// How far back a draft looks for an open agent draft of the same items.
pub const DEFAULT_NEAR_DUPLICATE_WINDOW: Duration = Duration::from_secs(86_400);
/// The longest a review session lasts when `DRAFTLINE_SESSION_MAX_HOURS` is not set.
pub const DEFAULT_SESSION_MAX_HOURS: u64 = 8;
/// The default time limit of one call: below the 10 s default of the
/// Lambda template and the 15 s `maxDuration` of `vercel.json`.
pub const DEFAULT_CALL_DEADLINE: Duration = Duration::from_secs(9);

/// A secret value whose `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    /// The secret itself, for the one place that needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Which ERP holds the documents (`DRAFTLINE_ERP`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErpSettings {
    /// `builtin`: the demo ERP in draftline's own table (the default).
    Builtin,
    /// `tryton`: a Tryton database over its REST API.
    Tryton(TrytonSettings),
}

/// How to reach a Tryton database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrytonSettings {
    /// `DRAFTLINE_TRYTON_URL`: the server's base URL (`http://127.0.0.1:8000`).
    pub url: String,
    /// `DRAFTLINE_TRYTON_DATABASE`: the database; its name is also the one
    /// tenant id it serves.
    pub database: String,
    /// `DRAFTLINE_TRYTON_KEY`: the REST bearer key (a secret).
    pub key: Secret,
    /// `DRAFTLINE_TRYTON_TENANT`: the one tenant id this database serves;
    /// unset means the database name.
    pub tenant: Option<String>,
}

impl ErpSettings {
    /// Reads `DRAFTLINE_ERP` and the variables of the backend it names.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        match get("DRAFTLINE_ERP").as_deref().map(str::trim) {
            None | Some("builtin") => Ok(Self::Builtin),
            Some("tryton") => {
                let url = get("DRAFTLINE_TRYTON_URL").ok_or(ConfigError::Missing("DRAFTLINE_TRYTON_URL"))?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(ConfigError::Invalid {
                        name: "DRAFTLINE_TRYTON_URL",
                        reason: "must be an absolute http(s) URL".into(),
                    });
                }
                https_off_loopback("DRAFTLINE_TRYTON_URL", &url, "the ERP's REST key and every document")?;
                let database =
                    get("DRAFTLINE_TRYTON_DATABASE").ok_or(ConfigError::Missing("DRAFTLINE_TRYTON_DATABASE"))?;
                if database.is_empty()
                    || !database
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                {
                    return Err(ConfigError::Invalid {
                        name: "DRAFTLINE_TRYTON_DATABASE",
                        reason: "must be letters, digits, '_' and '-'".into(),
                    });
                }
                let key = get("DRAFTLINE_TRYTON_KEY").ok_or(ConfigError::Missing("DRAFTLINE_TRYTON_KEY"))?;
                let tenant = get("DRAFTLINE_TRYTON_TENANT").map(|t| t.trim().to_owned());
                if let Some(tenant) = &tenant
                    && draftline_contract::identity::TenantId::parse(tenant).is_err()
                {
                    return Err(ConfigError::Invalid {
                        name: "DRAFTLINE_TRYTON_TENANT",
                        reason: "must be a tenant id (letters, digits, '-', '_', '.')".into(),
                    });
                }
                Ok(Self::Tryton(TrytonSettings {
                    url: url.trim_end_matches('/').to_owned(),
                    database,
                    key: Secret::new(key),
                    tenant,
                }))
            }
            Some(other) => Err(ConfigError::Invalid {
                name: "DRAFTLINE_ERP",
                reason: format!("'{other}' is not an ERP backend; allowed: builtin, tryton"),
            }),
        }
    }
}

/// The review pages: how people sign in and what they may decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewSettings {
    /// `DRAFTLINE_SESSION_SECRET` (at least 32 bytes): the key material of
    /// the signed session cookies and their CSRF tokens. Without it the JWT
    /// secret is used; a deployed review function with neither refuses to start.
    pub session_secret: Option<Secret>,
    /// Sign-in with OpenID Connect (`DRAFTLINE_OIDC_*`); `None`: not configured.
    pub oidc: Option<OidcSettings>,
    /// `DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL`: whether the person an agent
    /// drafted for may approve that draft themselves (four eyes off). Default false.
    pub allow_self_approval: bool,
    /// `DRAFTLINE_SESSION_MAX_HOURS` (1-24, default 8): the longest a review
    /// session lasts; one opened with an access token also ends at its `exp`.
    pub session_max: Duration,
    /// The demo sign-in page that lists the demo people. Never read from
    /// the environment: only [`Config::local`] (`draftline serve`) turns it
    /// on, so no deployed function can offer it.
    pub demo_sign_in: bool,
}

/// OpenID Connect sign-in (authorization code with PKCE) against the
/// identity provider that issues the access tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcSettings {
    /// `DRAFTLINE_OIDC_ISSUER`: the provider's issuer URL (discovery at
    /// `<issuer>/.well-known/openid-configuration`).
    pub issuer: String,
    /// `DRAFTLINE_OIDC_CLIENT_ID`: this deployment's client at the provider.
    pub client_id: String,
    /// `DRAFTLINE_OIDC_CLIENT_SECRET`: the client's secret; unset for a
    /// public client (PKCE only).
    pub client_secret: Option<Secret>,
    /// `DRAFTLINE_OIDC_SCOPES`: the scopes asked for (space-separated;
    /// `openid` is always included).
    pub scopes: Vec<String>,
}

/// The scopes sign-in asks for when `DRAFTLINE_OIDC_SCOPES` is not set.
pub const DEFAULT_OIDC_SCOPES: &str = "openid purchasing:read purchasing:approve sales:read sales:approve";

impl ReviewSettings {
    /// Reads the `DRAFTLINE_SESSION_SECRET`, `DRAFTLINE_OIDC_*` and
    /// `DRAFTLINE_REVIEW_*` variables. The demo sign-in is always off here.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let session_secret = get("DRAFTLINE_SESSION_SECRET").map(Secret::new);
        if let Some(secret) = &session_secret
            && secret.expose().len() < 32
        {
            return Err(ConfigError::Invalid {
                name: "DRAFTLINE_SESSION_SECRET",
                reason: "must be at least 32 bytes".into(),
            });
        }
        let oidc = match (get("DRAFTLINE_OIDC_ISSUER"), get("DRAFTLINE_OIDC_CLIENT_ID")) {
            (None, None) => None,
            (None, Some(_)) => return Err(ConfigError::Missing("DRAFTLINE_OIDC_ISSUER")),
            (Some(_), None) => return Err(ConfigError::Missing("DRAFTLINE_OIDC_CLIENT_ID")),
            (Some(issuer), Some(client_id)) => {
                let issuer = issuer.trim().trim_end_matches('/').to_owned();
                if !(issuer.starts_with("https://") || issuer.starts_with("http://")) {
                    return Err(ConfigError::Invalid {
                        name: "DRAFTLINE_OIDC_ISSUER",
                        reason: "must be an absolute http(s) URL".into(),
                    });
                }
                https_off_loopback(
                    "DRAFTLINE_OIDC_ISSUER",
                    &issuer,
                    "sign-in codes, the client secret and the provider's keys",
                )?;
                let mut scopes = vec!["openid".to_owned()];
                let asked = get("DRAFTLINE_OIDC_SCOPES").unwrap_or_else(|| DEFAULT_OIDC_SCOPES.to_owned());
                for scope in asked.split_whitespace() {
                    if !scopes.iter().any(|s| s == scope) {
                        scopes.push(scope.to_owned());
                    }
                }
                Some(OidcSettings {
                    issuer,
                    client_id: client_id.trim().to_owned(),
                    client_secret: get("DRAFTLINE_OIDC_CLIENT_SECRET").map(Secret::new),
                    scopes,
                })
            }
        };
        let allow_self_approval = match get("DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL").as_deref().map(str::trim) {
            None | Some("false" | "0" | "no") => false,
            Some("true" | "1" | "yes") => true,
            Some(other) => {
                return Err(ConfigError::Invalid {
                    name: "DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL",
                    reason: format!("'{other}' is not true or false"),
                });
            }
        };
        let session_max = match get("DRAFTLINE_SESSION_MAX_HOURS") {
            None => Duration::from_secs(DEFAULT_SESSION_MAX_HOURS * 3600),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(hours) if (1..=24).contains(&hours) => Duration::from_secs(hours * 3600),
                _ => {
                    return Err(ConfigError::Invalid {
                        name: "DRAFTLINE_SESSION_MAX_HOURS",
                        reason: format!("'{v}' is not a number of hours between 1 and 24"),
                    });
                }
            },
        };
        Ok(Self {
            session_secret,
            oidc,
            allow_self_approval,
            session_max,
            demo_sign_in: false,
        })
    }
}

/// Everything a function needs to know about its deployment.
#[derive(Debug, Clone)]
pub struct Config {
    /// `DRAFTLINE_TABLE`.
    pub table: String,
    /// `DRAFTLINE_DYNAMODB_ENDPOINT`; `None` means AWS.
    pub dynamodb_endpoint: Option<String>,
    /// `DRAFTLINE_RESOURCE`: this deployment's canonical URL and required `aud`.
    pub resource: String,
    /// `DRAFTLINE_ISSUER`: the accepted `iss`.
    pub issuer: String,
    /// `DRAFTLINE_JWKS_URL`: JWKS for RS256/ES256 tokens.
    pub jwks_url: Option<String>,
    /// `DRAFTLINE_JWT_SECRET`: HS256 secret.
    pub jwt_secret: Option<Secret>,
    /// `DRAFTLINE_IDEMPOTENCY_TTL_SECONDS`.
    pub idempotency_ttl: Duration,
    /// `DRAFTLINE_CURSOR_SECRET` (optional, at least 32 bytes): the key
    /// material pagination cursors are sealed with; without it the JWT
    /// secret is used (see [`draftline_contract::cursor::CursorKey::from_config`]).
    pub cursor_secret: Option<Secret>,
    /// `DRAFTLINE_RATE_LIMIT_PER_MINUTE`: tool calls one user may make per
    /// minute (across all instances); `None` enforces no budget.
    pub rate_limit_per_minute: Option<u32>,
    /// `DRAFTLINE_CALL_DEADLINE_SECONDS`: the most one call may take, audit
    /// included; set it below the platform's function timeout. Under Lambda
    /// the invocation's own deadline lowers it further.
    pub call_deadline: Duration,
    /// `DRAFTLINE_LEASE_SECONDS`: how long a claimed key is held for work
    /// that leaves DynamoDB before another call may take it over.
    pub lease: Duration,
    /// `DRAFTLINE_ERP` and its backend's settings.
    pub erp: ErpSettings,
    /// `DRAFTLINE_NEAR_DUPLICATE_HOURS`: how far back a draft looks for an
    /// open agent draft of the same items before it asks a person (0: never).
    pub near_duplicate_window: Option<Duration>,
    /// The review pages' settings.
    pub review: ReviewSettings,
}

/// A setting is missing or malformed; the message names the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A required variable is not set.
    #[error("{0} is not set; draftline cannot start without it (see DESIGN.md, Configuration)")]
    Missing(&'static str),
    /// Tokens are verified by JWKS only, and no secret seals pagination cursors.
    #[error(
        "DRAFTLINE_CURSOR_SECRET is not set; a deployment that verifies tokens with DRAFTLINE_JWKS_URL only needs it \
         (at least 32 bytes) to seal pagination cursors"
    )]
    NoCursorSecret,
    /// Neither way of verifying tokens is configured.
    #[error(
        "neither DRAFTLINE_JWKS_URL nor DRAFTLINE_JWT_SECRET is set; draftline cannot verify tokens without one of them"
    )]
    NoVerifier,
    /// A variable is set to something unusable.
    #[error("{name} is invalid: {reason}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// Why.
        reason: String,
    },
    /// A variable is set to something that would work, unsafely.
    #[error("{name} is unsafe: {reason}; draftline refuses to start with it")]
    Unsafe {
        /// The variable.
        name: &'static str,
        /// Why.
        reason: String,
    },
}

/// Refuses a plain `http://` URL off loopback for `name`, which carries `what`.
fn https_off_loopback(name: &'static str, url: &str, what: &str) -> Result<(), ConfigError> {
    let plain = url
        .trim()
        .get(..7)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"));
    if plain && !crate::edge::origin::is_loopback_url(url) {
        return Err(ConfigError::Unsafe {
            name,
            reason: format!(
                "'{}' is plain http off loopback, which would put {what} on the wire in clear (and let anyone on \
                 the way change it). Use an https:// URL; plain http is accepted only for a loopback host \
                 (127.0.0.1, ::1, localhost)",
                url.chars().take(120).collect::<String>()
            ),
        });
    }
    Ok(())
}

impl Config {
    /// Reads a deployed function's configuration from the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the configuration through `lookup` (the environment, or a map in tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let resource = get("DRAFTLINE_RESOURCE").ok_or(ConfigError::Missing("DRAFTLINE_RESOURCE"))?;
        if !(resource.starts_with("https://") || resource.starts_with("http://")) {
            return Err(ConfigError::Invalid {
                name: "DRAFTLINE_RESOURCE",
                reason: "must be an absolute http(s) URL".into(),
            });
        }
        let issuer = get("DRAFTLINE_ISSUER").ok_or(ConfigError::Missing("DRAFTLINE_ISSUER"))?;
        let jwks_url = get("DRAFTLINE_JWKS_URL");
        if let Some(url) = &jwks_url {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(ConfigError::Invalid {
                    name: "DRAFTLINE_JWKS_URL",
                    reason: "must be an absolute http(s) URL".into(),
                });
            }
            https_off_loopback("DRAFTLINE_JWKS_URL", url, "the keys every token is verified with")?;
        }
        let jwt_secret = get("DRAFTLINE_JWT_SECRET").map(Secret::new);
        if jwks_url.is_none() && jwt_secret.is_none() {
            return Err(ConfigError::NoVerifier);
        }
        if jwt_secret.as_ref().is_some_and(|s| s.expose() == LOCAL_DEV_SECRET)
            && !crate::edge::origin::is_loopback_url(&resource)
        {
            return Err(ConfigError::Unsafe {
                name: "DRAFTLINE_JWT_SECRET",
                reason: "it is draftline's public local-development secret (printed in the source and the README), \
                         so anyone could mint tokens for this deployment. It is accepted only when \
                         DRAFTLINE_RESOURCE is a loopback URL; set a secret of your own (at least 32 random bytes)"
                    .into(),
            });
        }
        if let Some(secret) = &jwt_secret
            && secret.expose().len() < 32
        {
            return Err(ConfigError::Invalid {
                name: "DRAFTLINE_JWT_SECRET",
                reason: "must be at least 32 bytes".into(),
            });
        }
        let cursor_secret = get("DRAFTLINE_CURSOR_SECRET").map(Secret::new);
        if let Some(secret) = &cursor_secret
            && secret.expose().len() < 32
        {
            return Err(ConfigError::Invalid {
                name: "DRAFTLINE_CURSOR_SECRET",
                reason: "must be at least 32 bytes".into(),
            });
        }
        if jwt_secret.is_none() && cursor_secret.is_none() {
            return Err(ConfigError::NoCursorSecret);
        }
        let idempotency_ttl = match get("DRAFTLINE_IDEMPOTENCY_TTL_SECONDS") {
            None => DEFAULT_IDEMPOTENCY_TTL,
            Some(v) => match v.trim().parse::<u64>() {
                Ok(secs) if (60..=30 * 86_400).contains(&secs) => Duration::from_secs(secs),
                _ => {
                    return Err(ConfigError::Invalid {
                        name: "DRAFTLINE_IDEMPOTENCY_TTL_SECONDS",
                        reason: format!("'{v}' is not a number of seconds between 60 and 2592000"),
                    });
                }
            },
        };
        let rate_limit_per_minute = match get("DRAFTLINE_RATE_LIMIT_PER_MINUTE") {
            None => None,
            Some(v) => match v.trim().parse::<u32>() {
                Ok(n) if (1..=100_000).contains(&n) => Some(n),
                _ => {
                    return Err(ConfigError::Invalid {
                        name: "DRAFTLINE_RATE_LIMIT_PER_MINUTE",
                        reason: format!("'{v}' is not a number of calls between 1 and 100000"),
                    });
                }
            },
        };
        let call_deadline = match get("DRAFTLINE_CALL_DEADLINE_SECONDS") {
            None => DEFAULT_CALL_DEADLINE,
            Some(v) => match v.trim().parse::<f64>() {
                Ok(secs) if (1.0..=900.0).contains(&secs) => Duration::from_secs_f64(secs),
                _ => {
                    return Err(ConfigError::Invalid {
                        name: "DRAFTLINE_CALL_DEADLINE_SECONDS",
                        reason: format!("'{v}' is not a number of seconds between 1 and 900"),
                    });
                }
            },
        };
        let lease = match get("DRAFTLINE_LEASE_SECONDS") {
            None => DEFAULT_LEASE,
            Some(v) => match v.trim().parse::<u64>() {
                Ok(secs) if (2..=3600).contains(&secs) && Duration::from_secs(secs) > call_deadline => {
                    Duration::from_secs(secs)
                }
                _ => {
                    return Err(ConfigError::Invalid {
                        name: "DRAFTLINE_LEASE_SECONDS",
                        reason: format!(
                            "'{v}' is not a number of seconds between 2 and 3600 longer than the call deadline ({} s)",
                            call_deadline.as_secs_f64()
                        ),
                    });
                }
            },
        };
        let near_duplicate_window = match get("DRAFTLINE_NEAR_DUPLICATE_HOURS") {
            None => Some(DEFAULT_NEAR_DUPLICATE_WINDOW),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(0) => None,
                Ok(hours) if hours <= 24 * 30 => Some(Duration::from_secs(hours * 3600)),
                _ => {
                    return Err(ConfigError::Invalid {
                        name: "DRAFTLINE_NEAR_DUPLICATE_HOURS",
                        reason: format!("'{v}' is not a number of hours between 0 (never ask) and 720"),
                    });
                }
            },
        };
        let erp = ErpSettings::from_lookup(get)?;
        let review = ReviewSettings::from_lookup(get)?;
        Ok(Self {
            review,
            near_duplicate_window,
            erp,
            lease,
            call_deadline,
            rate_limit_per_minute,
            table: get("DRAFTLINE_TABLE").unwrap_or_else(|| DEFAULT_TABLE.to_owned()),
            dynamodb_endpoint: get("DRAFTLINE_DYNAMODB_ENDPOINT"),
            resource: crate::auth::normalize_resource(&resource),
            issuer,
            jwks_url,
            jwt_secret,
            idempotency_ttl,
            cursor_secret,
        })
    }

    /// The local server's configuration: defaults for everything, `resource`
    /// from the port it listens on.
    pub fn local(resource: String, dynamodb_endpoint: String) -> Self {
        Self {
            table: DEFAULT_TABLE.to_owned(),
            dynamodb_endpoint: Some(dynamodb_endpoint),
            resource: crate::auth::normalize_resource(&resource),
            issuer: LOCAL_ISSUER.to_owned(),
            jwks_url: None,
            jwt_secret: Some(Secret::new(LOCAL_DEV_SECRET)),
            idempotency_ttl: DEFAULT_IDEMPOTENCY_TTL,
            cursor_secret: None,
            rate_limit_per_minute: None,
            call_deadline: DEFAULT_CALL_DEADLINE,
            lease: DEFAULT_LEASE,
            erp: ErpSettings::Builtin,
            near_duplicate_window: Some(DEFAULT_NEAR_DUPLICATE_WINDOW),
            review: ReviewSettings {
                session_secret: None,
                oidc: None,
                allow_self_approval: false,
                session_max: Duration::from_secs(DEFAULT_SESSION_MAX_HOURS * 3600),
                demo_sign_in: true,
            },
        }
    }
}

impl Config {
    /// The key that seals this deployment's pagination cursors:
    /// HMAC-SHA256 over the resource URL and table, keyed by
    /// `DRAFTLINE_CURSOR_SECRET`, else `DRAFTLINE_JWT_SECRET`, else by the
    /// public deployment facts (see [`KeySource::PublicFacts`]).
    pub fn cursor_key(&self) -> CursorKey {
        let (material, source) = match (&self.cursor_secret, &self.jwt_secret) {
            (Some(secret), _) => (secret.expose().as_bytes().to_vec(), KeySource::CursorSecret),
            (None, Some(secret)) => (secret.expose().as_bytes().to_vec(), KeySource::JwtSecret),
            (None, None) => (
                format!("{}|{}", self.issuer, self.jwks_url.as_deref().unwrap_or_default()).into_bytes(),
                KeySource::PublicFacts,
            ),
        };
        let context = format!("{}|{}", self.resource, self.table);
        CursorKey::derive(&material, context.as_bytes(), source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn full() -> HashMap<&'static str, String> {
        HashMap::from([
            ("DRAFTLINE_RESOURCE", "https://erp-tools.example.com".to_owned()),
            ("DRAFTLINE_ISSUER", "https://id.example.com".to_owned()),
            ("DRAFTLINE_JWT_SECRET", "x".repeat(40)),
        ])
    }

    #[test]
    fn each_required_variable_is_named_when_missing() {
        for name in ["DRAFTLINE_RESOURCE", "DRAFTLINE_ISSUER"] {
            let mut env = full();
            env.remove(name);
            let err = Config::from_lookup(|k| env.get(k).cloned()).unwrap_err();
            assert!(err.to_string().contains(name), "{err}");
        }
        let mut env = full();
        env.remove("DRAFTLINE_JWT_SECRET");
        let err = Config::from_lookup(|k| env.get(k).cloned()).unwrap_err();
        assert!(err.to_string().contains("DRAFTLINE_JWKS_URL"));
        assert!(err.to_string().contains("DRAFTLINE_JWT_SECRET"));
    }

    #[test]
    fn a_jwks_only_deployment_needs_a_cursor_secret() {
        let mut env = full();
        env.remove("DRAFTLINE_JWT_SECRET");
        env.insert("DRAFTLINE_JWKS_URL", "https://id.example.com/jwks".to_owned());
        let err = Config::from_lookup(|k| env.get(k).cloned()).unwrap_err();
        assert_eq!(err, ConfigError::NoCursorSecret);
        assert!(err.to_string().contains("DRAFTLINE_CURSOR_SECRET"));
        env.insert("DRAFTLINE_CURSOR_SECRET", "c".repeat(32));
        assert!(Config::from_lookup(|k| env.get(k).cloned()).is_ok());
    }

    #[test]
    fn the_call_budget_is_optional_and_checked() {
        let mut env = full();
        assert_eq!(
            Config::from_lookup(|k| env.get(k).cloned())
                .unwrap()
                .rate_limit_per_minute,
            None
        );
        env.insert("DRAFTLINE_RATE_LIMIT_PER_MINUTE", "120".to_owned());
        assert_eq!(
            Config::from_lookup(|k| env.get(k).cloned())
                .unwrap()
                .rate_limit_per_minute,
            Some(120)
        );
        for bad in ["0", "-5", "lots"] {
            env.insert("DRAFTLINE_RATE_LIMIT_PER_MINUTE", bad.to_owned());
            let err = Config::from_lookup(|k| env.get(k).cloned()).unwrap_err();
            assert!(err.to_string().contains("DRAFTLINE_RATE_LIMIT_PER_MINUTE"), "{err}");
        }
    }

    #[test]
    fn the_tryton_backend_needs_its_url_database_and_key() {
        let mut env = full();
        env.insert("DRAFTLINE_ERP", "tryton".to_owned());
        let err = Config::from_lookup(|k| env.get(k).cloned()).unwrap_err();
        assert_eq!(err, ConfigError::Missing("DRAFTLINE_TRYTON_URL"));
        env.insert("DRAFTLINE_TRYTON_URL", "http://127.0.0.1:8000/".to_owned());
        env.insert("DRAFTLINE_TRYTON_DATABASE", "demo".to_owned());
        let err = Config::from_lookup(|k| env.get(k).cloned()).unwrap_err();
        assert_eq!(err, ConfigError::Missing("DRAFTLINE_TRYTON_KEY"));
        env.insert("DRAFTLINE_TRYTON_KEY", "k3y-never-shown".to_owned());
        let config = Config::from_lookup(|k| env.get(k).cloned()).unwrap();
        assert!(matches!(&config.erp, ErpSettings::Tryton(t) if t.url == "http://127.0.0.1:8000"));
        assert!(!format!("{config:?}").contains("k3y-never-shown"));
        env.insert("DRAFTLINE_ERP", "odoo".to_owned());
        assert!(Config::from_lookup(|k| env.get(k).cloned()).is_err());
    }

    #[test]
    fn review_settings_are_read_and_checked_and_the_demo_sign_in_never_comes_from_the_environment() {
        let mut env = full();
        let review = Config::from_lookup(|k| env.get(k).cloned()).unwrap().review;
        assert!(!review.demo_sign_in);
        assert!(!review.allow_self_approval);
        assert_eq!(review.oidc, None);
        env.insert("DRAFTLINE_OIDC_CLIENT_ID", "draftline-review".to_owned());
        let err = Config::from_lookup(|k| env.get(k).cloned()).unwrap_err();
        assert_eq!(err, ConfigError::Missing("DRAFTLINE_OIDC_ISSUER"));
        env.insert("DRAFTLINE_OIDC_ISSUER", "https://id.example.com/".to_owned());
        env.insert("DRAFTLINE_OIDC_CLIENT_SECRET", "oidc-s3cret-never-shown".to_owned());
        env.insert("DRAFTLINE_SESSION_SECRET", "s".repeat(32));
        env.insert("DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL", "true".to_owned());
        // Whatever the environment says, a deployed function has no demo sign-in.
        env.insert("DRAFTLINE_DEMO_SIGN_IN", "true".to_owned());
        let config = Config::from_lookup(|k| env.get(k).cloned()).unwrap();
        let oidc = config.review.oidc.clone().unwrap();
        assert_eq!(oidc.issuer, "https://id.example.com");
        assert_eq!(oidc.scopes[0], "openid");
        assert!(config.review.allow_self_approval);
        assert!(!config.review.demo_sign_in);
        assert!(!format!("{config:?}").contains("oidc-s3cret-never-shown"));
        for (name, bad) in [
            ("DRAFTLINE_SESSION_SECRET", "short"),
            ("DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL", "maybe"),
            ("DRAFTLINE_OIDC_ISSUER", "id.example.com"),
        ] {
            let mut env = env.clone();
            env.insert(name, bad.to_owned());
            let err = Config::from_lookup(|k| env.get(k).cloned()).unwrap_err();
            assert!(err.to_string().contains(name), "{err}");
        }
        assert!(
            Config::local("http://127.0.0.1:1".into(), "http://127.0.0.1:2".into())
                .review
                .demo_sign_in
        );
    }

    #[test]
    fn plain_http_off_loopback_and_the_public_local_secret_are_refused_with_the_variable_named() {
        let unsafe_with = |extra: &[(&'static str, &str)], base: HashMap<&'static str, String>| {
            let mut env = base;
            for (k, v) in extra {
                env.insert(k, (*v).to_owned());
            }
            Config::from_lookup(|k| env.get(k).cloned())
        };
        let cases: [(&[(&'static str, &str)], &str); 4] = [
            (
                &[("DRAFTLINE_JWKS_URL", "http://id.example.com/jwks")],
                "DRAFTLINE_JWKS_URL",
            ),
            (
                &[
                    ("DRAFTLINE_ERP", "tryton"),
                    ("DRAFTLINE_TRYTON_URL", "http://erp.example.com:8000"),
                    ("DRAFTLINE_TRYTON_DATABASE", "demo"),
                    ("DRAFTLINE_TRYTON_KEY", "k"),
                ],
                "DRAFTLINE_TRYTON_URL",
            ),
            (
                &[
                    ("DRAFTLINE_OIDC_ISSUER", "http://id.example.com"),
                    ("DRAFTLINE_OIDC_CLIENT_ID", "c"),
                ],
                "DRAFTLINE_OIDC_ISSUER",
            ),
            (&[("DRAFTLINE_JWT_SECRET", LOCAL_DEV_SECRET)], "DRAFTLINE_JWT_SECRET"),
        ];
        for (extra, name) in cases {
            let err = unsafe_with(extra, full()).unwrap_err();
            assert!(
                matches!(&err, ConfigError::Unsafe { name: n, .. } if *n == name),
                "{name}: {err}"
            );
            assert!(err.to_string().starts_with(&format!("{name} is unsafe")), "{err}");
        }
        // A loopback host looks like one only when it is one.
        let err = unsafe_with(&[("DRAFTLINE_JWKS_URL", "http://127.0.0.1.example.com/jwks")], full()).unwrap_err();
        assert!(matches!(err, ConfigError::Unsafe { .. }), "{err}");
        // On loopback both are what local development uses, and https is fine anywhere.
        let mut local = full();
        local.insert("DRAFTLINE_RESOURCE", "http://127.0.0.1:3000".to_owned());
        for extra in [
            &[("DRAFTLINE_JWKS_URL", "http://127.0.0.1:4000/jwks")][..],
            &[("DRAFTLINE_JWKS_URL", "http://[::1]:4000/jwks")][..],
            &[("DRAFTLINE_JWT_SECRET", LOCAL_DEV_SECRET)][..],
            &[
                ("DRAFTLINE_OIDC_ISSUER", "http://localhost:4000"),
                ("DRAFTLINE_OIDC_CLIENT_ID", "c"),
            ][..],
        ] {
            assert!(unsafe_with(extra, local.clone()).is_ok(), "{extra:?}");
        }
        assert!(unsafe_with(&[("DRAFTLINE_JWKS_URL", "https://id.example.com/jwks")], full()).is_ok());
    }

    #[test]
    fn the_secret_never_appears_in_debug_output() {
        let env = full();
        let config = Config::from_lookup(|k| env.get(k).cloned()).unwrap();
        assert!(!format!("{config:?}").contains(&"x".repeat(40)));
        assert_eq!(config.idempotency_ttl, DEFAULT_IDEMPOTENCY_TTL);
    }

    #[test]
    fn the_key_comes_from_the_cursor_secret_then_the_jwt_secret() {
        let mut config = Config::local("http://127.0.0.1:1".into(), "http://127.0.0.1:2".into());
        let from_jwt = config.cursor_key();
        assert_eq!(from_jwt.source(), KeySource::JwtSecret);
        config.cursor_secret = Some(Secret::new("c".repeat(32)));
        let from_cursor = config.cursor_key();
        assert_eq!(from_cursor.source(), KeySource::CursorSecret);
        assert_ne!(from_jwt, from_cursor);
        assert!(!format!("{from_cursor:?}").contains("key:"));
        config.cursor_secret = None;
        config.jwt_secret = None;
        assert_eq!(config.cursor_key().source(), KeySource::PublicFacts);
    }
}
