//! The server's settings (DESIGN.md, "Configuration"): table, token
//! verification, limits and deadlines.
//!
//! A deployed function reads [`Config::from_source`] over the environment
//! ([`Source::env`]) once at start-up and refuses to start when a required
//! setting is missing; only the local server has defaults ([`Config::local`],
//! and the defaults layer of its [`Source`]). The ERP backends and the review pages
//! parse their own settings from the same [`Source`]; the server knows none
//! of them. Secrets are wrapped ([`Secret`]) so they can never be printed by
//! accident.

use std::time::Duration;

use crate::auth::issuers::{self, IssuerSettings};
use crate::export::ExportSettings;
use draftline_contract::cursor::{CursorKey, KeySource};
pub use draftline_contract::settings::{ConfigError, Secret, Source};

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
/// How long a warm instance uses a tenant's policy before reading it again:
/// the longest a `draftline policy set` takes to apply.
pub const DEFAULT_POLICY_CACHE: Duration = Duration::from_secs(30);
/// The default time limit of one call: below the 10 s default of the
/// Lambda template and the 15 s `maxDuration` of `vercel.json`.
pub const DEFAULT_CALL_DEADLINE: Duration = Duration::from_secs(9);

/// Everything the server needs to know about its deployment.
#[derive(Debug, Clone)]
pub struct Config {
    /// `DRAFTLINE_TABLE`.
    pub table: String,
    /// `DRAFTLINE_DYNAMODB_ENDPOINT`; `None` means AWS.
    pub dynamodb_endpoint: Option<String>,
    /// `DRAFTLINE_RESOURCE`: this deployment's canonical URL and required `aud`.
    pub resource: String,
    /// The trusted issuers, each with how its tokens are verified: those
    /// of the `DRAFTLINE_ISSUERS` file, or else the one of
    /// `DRAFTLINE_ISSUER`, verified with `DRAFTLINE_JWKS_URL` and/or
    /// `DRAFTLINE_JWT_SECRET` ([`IssuerSettings::single`]). Never empty.
    pub issuers: Vec<IssuerSettings>,
    /// `DRAFTLINE_JWT_SECRET`: HS256 secret.
    pub jwt_secret: Option<Secret>,
    /// `DRAFTLINE_IDEMPOTENCY_TTL_SECONDS`.
    pub idempotency_ttl: Duration,
    /// `DRAFTLINE_CURSOR_SECRET` (optional, at least 32 bytes): the key
    /// material pagination cursors are sealed with; without it the JWT
    /// secret is used (see [`Config::cursor_key`]).
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
    /// `DRAFTLINE_NEAR_DUPLICATE_HOURS`: how far back a draft looks for an
    /// open agent draft of the same items before it asks a person (0: never).
    pub near_duplicate_window: Option<Duration>,
    /// `DRAFTLINE_POLICY_CACHE_SECONDS`: how long a warm instance uses a
    /// tenant's policy before reading it again (0: every draft reads it),
    /// so the longest a policy change takes to apply.
    pub policy_cache: Duration,
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` and the other `OTEL_*` variables:
    /// where each call's spans are exported; `None`: nowhere.
    pub export: Option<ExportSettings>,
}

impl Config {
    /// Reads the server's settings from `source`.
    pub fn from_source(source: &Source) -> Result<Self, ConfigError> {
        let resource = source
            .url("DRAFTLINE_RESOURCE")?
            .ok_or(ConfigError::Missing("DRAFTLINE_RESOURCE"))?;
        let jwt_secret = source.secret_of_at_least("DRAFTLINE_JWT_SECRET", 32)?;
        let issuers = Self::issuers_of(source, jwt_secret.is_some())?;
        if let Some(at) = issuers.iter().position(|entry| entry.hs256)
            && jwt_secret.is_none()
        {
            return Err(ConfigError::Invalid {
                name: issuers::VARIABLE,
                reason: format!(
                    "issuers[{at}].hs256: its tokens are signed with DRAFTLINE_JWT_SECRET, which is not set"
                ),
            });
        }
        if jwt_secret.as_ref().is_some_and(|s| s.expose() == LOCAL_DEV_SECRET)
            && !draftline_contract::settings::url::is_loopback_url(&resource)
        {
            return Err(ConfigError::Unsafe {
                name: "DRAFTLINE_JWT_SECRET",
                reason: "it is draftline's public local-development secret (printed in the source and the README), \
                         so anyone could mint tokens for this deployment. It is accepted only when \
                         DRAFTLINE_RESOURCE is a loopback URL; set a secret of your own (at least 32 random bytes)"
                    .into(),
            });
        }
        let cursor_secret = source.secret_of_at_least("DRAFTLINE_CURSOR_SECRET", 32)?;
        if jwt_secret.is_none() && cursor_secret.is_none() {
            return Err(ConfigError::NoCursorSecret);
        }
        let idempotency_ttl = source
            .bounded("DRAFTLINE_IDEMPOTENCY_TTL_SECONDS", 60..=30 * 86_400_u64, "seconds")?
            .map_or(DEFAULT_IDEMPOTENCY_TTL, Duration::from_secs);
        let rate_limit_per_minute = source.bounded("DRAFTLINE_RATE_LIMIT_PER_MINUTE", 1..=100_000_u32, "calls")?;
        let call_deadline = source
            .bounded("DRAFTLINE_CALL_DEADLINE_SECONDS", 1.0..=900.0_f64, "seconds")?
            .map_or(DEFAULT_CALL_DEADLINE, Duration::from_secs_f64);
        let lease = source
            .number(
                "DRAFTLINE_LEASE_SECONDS",
                &format!(
                    "seconds between 2 and 3600 longer than the call deadline ({} s)",
                    call_deadline.as_secs_f64()
                ),
                |secs: &u64| (2..=3600).contains(secs) && Duration::from_secs(*secs) > call_deadline,
            )?
            .map_or(DEFAULT_LEASE, Duration::from_secs);
        let near_duplicate_window = match source.number(
            "DRAFTLINE_NEAR_DUPLICATE_HOURS",
            "hours between 0 (never ask) and 720",
            |hours: &u64| *hours <= 24 * 30,
        )? {
            None => Some(DEFAULT_NEAR_DUPLICATE_WINDOW),
            Some(0) => None,
            Some(hours) => Some(Duration::from_secs(hours * 3600)),
        };
        let policy_cache = source
            .bounded("DRAFTLINE_POLICY_CACHE_SECONDS", 0..=300_u64, "seconds")?
            .map_or(DEFAULT_POLICY_CACHE, Duration::from_secs);
        Ok(Self {
            policy_cache,
            export: ExportSettings::from_source(source)?,
            near_duplicate_window,
            lease,
            call_deadline,
            rate_limit_per_minute,
            table: source
                .get("DRAFTLINE_TABLE")
                .unwrap_or_else(|| DEFAULT_TABLE.to_owned()),
            dynamodb_endpoint: source.get("DRAFTLINE_DYNAMODB_ENDPOINT"),
            resource: crate::auth::normalize_resource(&resource),
            issuers,
            jwt_secret,
            idempotency_ttl,
            cursor_secret,
        })
    }

    /// The issuer settings: `DRAFTLINE_ISSUERS`' file, or the single issuer
    /// of `DRAFTLINE_ISSUER` and `DRAFTLINE_JWKS_URL` (not both ways).
    /// With no file, a deployment without `jwt_secret` needs a JWKS.
    fn issuers_of(source: &Source, jwt_secret: bool) -> Result<Vec<IssuerSettings>, ConfigError> {
        let jwks_url = source.secure_url("DRAFTLINE_JWKS_URL", "the keys every token is verified with")?;
        let Some(path) = source.get(issuers::VARIABLE) else {
            let issuer = source.required("DRAFTLINE_ISSUER")?;
            if jwks_url.is_none() && !jwt_secret {
                return Err(ConfigError::NoVerifier);
            }
            return Ok(vec![IssuerSettings::single(issuer, jwks_url, jwt_secret)]);
        };
        if let Some(single) = ["DRAFTLINE_ISSUER", "DRAFTLINE_JWKS_URL"]
            .into_iter()
            .find(|name| source.get(name).is_some())
        {
            return Err(ConfigError::Invalid {
                name: issuers::VARIABLE,
                reason: format!("{single} is set too; with a settings file, name every issuer in the file"),
            });
        }
        // A value that is the settings themselves (an environment of a
        // function, which ships no file) is read as is.
        if path.trim_start().starts_with('{') {
            issuers::parse(&path)
        } else {
            issuers::read(&path)
        }
    }

    /// The local server's configuration: defaults for everything, `resource`
    /// from the port it listens on.
    pub fn local(resource: String, dynamodb_endpoint: String) -> Self {
        Self {
            table: DEFAULT_TABLE.to_owned(),
            dynamodb_endpoint: Some(dynamodb_endpoint),
            resource: crate::auth::normalize_resource(&resource),
            issuers: vec![IssuerSettings::single(LOCAL_ISSUER.to_owned(), None, true)],
            jwt_secret: Some(Secret::new(LOCAL_DEV_SECRET)),
            idempotency_ttl: DEFAULT_IDEMPOTENCY_TTL,
            cursor_secret: None,
            rate_limit_per_minute: None,
            call_deadline: DEFAULT_CALL_DEADLINE,
            lease: DEFAULT_LEASE,
            near_duplicate_window: Some(DEFAULT_NEAR_DUPLICATE_WINDOW),
            policy_cache: DEFAULT_POLICY_CACHE,
            export: None,
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
            (None, None) => {
                let first = self.issuers.first();
                let issuer = first.map_or("", |entry| entry.issuer.as_str());
                let jwks_url = first.and_then(|entry| entry.jwks_url.as_deref()).unwrap_or_default();
                (format!("{issuer}|{jwks_url}").into_bytes(), KeySource::PublicFacts)
            }
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

    fn parse(env: &HashMap<&'static str, String>) -> Result<Config, ConfigError> {
        Config::from_source(&Source::map(env.clone()))
    }

    /// `text` as a settings file of its own, removed with the returned guard.
    fn issuers_file(text: &str) -> (String, impl Drop) {
        struct Remove(std::path::PathBuf);
        impl Drop for Remove {
            fn drop(&mut self) {
                let _ = std::fs::remove_file(&self.0);
            }
        }
        let path = std::env::temp_dir().join(format!("draftline-issuers-{}.json", ulid::Ulid::new()));
        std::fs::write(&path, text).unwrap();
        (path.display().to_string(), Remove(path))
    }

    #[test]
    fn the_single_issuer_settings_are_one_trusted_issuer() {
        let config = parse(&full()).unwrap();
        let trusted = &config.issuers;
        assert_eq!(trusted.len(), 1);
        assert_eq!(trusted[0].issuer, "https://id.example.com");
        assert!(trusted[0].hs256 && trusted[0].jwks_url.is_none() && trusted[0].audiences.is_empty());
    }

    #[test]
    fn a_settings_file_names_every_trusted_issuer() {
        let (path, _file) = issuers_file(
            r#"{"issuers": [{"issuer": "https://a.example", "jwks_url": "https://a.example/keys", "tenants": ["acme"]},
                            {"issuer": "https://b.example", "hs256": true, "tenants": ["acme"]}]}"#,
        );
        let mut env = full();
        env.remove("DRAFTLINE_ISSUER");
        env.insert("DRAFTLINE_ISSUERS", path.clone());
        let config = parse(&env).unwrap();
        let names: Vec<&str> = config.issuers.iter().map(|i| i.issuer.as_str()).collect();
        assert_eq!(names, ["https://a.example", "https://b.example"]);

        // With a file, no issuer is named beside it.
        env.insert("DRAFTLINE_ISSUER", "https://id.example.com".to_owned());
        assert!(
            parse(&env)
                .unwrap_err()
                .to_string()
                .contains("DRAFTLINE_ISSUER is set too")
        );
        env.remove("DRAFTLINE_ISSUER");
        // An HS256 issuer needs the deployment's secret.
        env.remove("DRAFTLINE_JWT_SECRET");
        env.insert("DRAFTLINE_CURSOR_SECRET", "c".repeat(40));
        let err = parse(&env).unwrap_err().to_string();
        assert!(
            err.contains("issuers[1].hs256") && err.contains("DRAFTLINE_JWT_SECRET"),
            "{err}"
        );
        // The settings themselves in the variable (a function's environment).
        env.insert(
            "DRAFTLINE_ISSUERS",
            r#"{"issuers": [{"issuer": "https://c.example", "jwks_url": "https://c.example/keys", "tenants": ["acme"]}]}"#
                .to_owned(),
        );
        assert_eq!(parse(&env).unwrap().issuers[0].issuer, "https://c.example");
        // A file that is not there stops the start, naming it.
        env.insert("DRAFTLINE_ISSUERS", format!("{path}.missing"));
        assert!(parse(&env).unwrap_err().to_string().contains("cannot be read"));
    }

    #[test]
    fn each_required_variable_is_named_when_missing() {
        for name in ["DRAFTLINE_RESOURCE", "DRAFTLINE_ISSUER"] {
            let mut env = full();
            env.remove(name);
            let err = parse(&env).unwrap_err();
            assert!(err.to_string().contains(name), "{err}");
        }
        let mut env = full();
        env.remove("DRAFTLINE_JWT_SECRET");
        let err = parse(&env).unwrap_err();
        assert!(err.to_string().contains("DRAFTLINE_JWKS_URL"));
        assert!(err.to_string().contains("DRAFTLINE_JWT_SECRET"));
    }

    #[test]
    fn a_jwks_only_deployment_needs_a_cursor_secret() {
        let mut env = full();
        env.remove("DRAFTLINE_JWT_SECRET");
        env.insert("DRAFTLINE_JWKS_URL", "https://id.example.com/jwks".to_owned());
        let err = parse(&env).unwrap_err();
        assert_eq!(err, ConfigError::NoCursorSecret);
        assert!(err.to_string().contains("DRAFTLINE_CURSOR_SECRET"));
        env.insert("DRAFTLINE_CURSOR_SECRET", "c".repeat(32));
        assert!(parse(&env).is_ok());
    }

    #[test]
    fn the_call_budget_is_optional_and_checked() {
        let mut env = full();
        assert_eq!(parse(&env).unwrap().rate_limit_per_minute, None);
        env.insert("DRAFTLINE_RATE_LIMIT_PER_MINUTE", "120".to_owned());
        assert_eq!(parse(&env).unwrap().rate_limit_per_minute, Some(120));
        for bad in ["0", "-5", "lots"] {
            env.insert("DRAFTLINE_RATE_LIMIT_PER_MINUTE", bad.to_owned());
            let err = parse(&env).unwrap_err();
            assert!(err.to_string().contains("DRAFTLINE_RATE_LIMIT_PER_MINUTE"), "{err}");
        }
    }

    #[test]
    fn numbers_are_refused_with_their_range_in_words() {
        for (name, value, message) in [
            (
                "DRAFTLINE_IDEMPOTENCY_TTL_SECONDS",
                "59",
                "DRAFTLINE_IDEMPOTENCY_TTL_SECONDS is invalid: '59' is not a number of seconds between 60 and 2592000",
            ),
            (
                "DRAFTLINE_RATE_LIMIT_PER_MINUTE",
                " lots",
                "DRAFTLINE_RATE_LIMIT_PER_MINUTE is invalid: ' lots' is not a number of calls between 1 and 100000",
            ),
            (
                "DRAFTLINE_CALL_DEADLINE_SECONDS",
                "0.5",
                "DRAFTLINE_CALL_DEADLINE_SECONDS is invalid: '0.5' is not a number of seconds between 1 and 900",
            ),
            (
                "DRAFTLINE_LEASE_SECONDS",
                "9",
                "DRAFTLINE_LEASE_SECONDS is invalid: '9' is not a number of seconds between 2 and 3600 longer than \
                 the call deadline (9 s)",
            ),
            (
                "DRAFTLINE_NEAR_DUPLICATE_HOURS",
                "721",
                "DRAFTLINE_NEAR_DUPLICATE_HOURS is invalid: '721' is not a number of hours between 0 (never ask) and 720",
            ),
        ] {
            let mut env = full();
            env.insert(name, value.to_owned());
            assert_eq!(parse(&env).unwrap_err().to_string(), message);
        }
        let mut env = full();
        env.insert("DRAFTLINE_CALL_DEADLINE_SECONDS", "2.5".to_owned());
        env.insert("DRAFTLINE_LEASE_SECONDS", "3".to_owned());
        env.insert("DRAFTLINE_NEAR_DUPLICATE_HOURS", "0".to_owned());
        let config = parse(&env).unwrap();
        assert_eq!(config.call_deadline, Duration::from_millis(2500));
        assert_eq!(config.lease, Duration::from_secs(3));
        assert_eq!(config.near_duplicate_window, None);
    }

    #[test]
    fn plain_http_off_loopback_and_the_public_local_secret_are_refused_with_the_variable_named() {
        let unsafe_with = |extra: &[(&'static str, &str)], base: HashMap<&'static str, String>| {
            let mut env = base;
            for (k, v) in extra {
                env.insert(k, (*v).to_owned());
            }
            parse(&env)
        };
        let cases: [(&[(&'static str, &str)], &str); 2] = [
            (
                &[("DRAFTLINE_JWKS_URL", "http://id.example.com/jwks")],
                "DRAFTLINE_JWKS_URL",
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
        ] {
            assert!(unsafe_with(extra, local.clone()).is_ok(), "{extra:?}");
        }
        assert!(unsafe_with(&[("DRAFTLINE_JWKS_URL", "https://id.example.com/jwks")], full()).is_ok());
    }

    #[test]
    fn the_server_reads_no_erp_or_review_setting() {
        let mut env = full();
        env.insert("DRAFTLINE_ERP", "odoo".to_owned());
        env.insert("DRAFTLINE_SESSION_MAX_HOURS", "99".to_owned());
        assert!(parse(&env).is_ok());
    }

    #[test]
    fn the_secret_never_appears_in_debug_output() {
        let config = parse(&full()).unwrap();
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
