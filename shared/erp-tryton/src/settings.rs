//! How to reach one Tryton database: URL, database, REST key, the tenant it
//! serves, and the timeouts of every request; read from a deployment's
//! settings by [`TrytonSettings::from_source`] (`DRAFTLINE_TRYTON_*`).

use std::time::Duration;

use draftline_contract::identity::TenantId;
use draftline_contract::settings::{ConfigError, Secret, Source};

/// A Tryton REST key (`res.user.application`, application `rest`): a
/// [`Secret`], shown as `***` by `Debug`; [`Secret::expose`] is only called
/// to build the `Authorization` header.
pub type TrytonKey = Secret;

/// Why settings were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(String);

/// Where one Tryton database is and how long to wait for it.
#[derive(Debug, Clone)]
pub struct TrytonSettings {
    /// The trytond base URL, `http://127.0.0.1:8000` (no trailing slash needed).
    pub url: String,
    /// The database name; every REST path starts with it.
    pub database: String,
    /// The REST bearer key.
    pub key: TrytonKey,
    /// The one tenant this database serves; `None` means the database name.
    /// A call of any other tenant sees nothing.
    pub tenant: Option<String>,
    /// How long a TCP connection may take (2 s).
    pub connect_timeout: Duration,
    /// How long a whole request may take, body included (5 s), counted
    /// from when it is sent (not while it waits for an in-flight slot).
    pub request_timeout: Duration,
    /// How many requests one backend instance sends at once (4); more wait
    /// their turn in order. Tryton's own server runs Python under one lock
    /// per process: fifty requests sent at once all share it, each takes as
    /// long as all of them together, and every one meets its timeout. A
    /// queue on draftline's side keeps each request as fast as Tryton is and
    /// the wait inside the call's deadline.
    pub max_in_flight: usize,
}

/// Whether `name` may be a Tryton database name (it starts every REST path).
pub(crate) fn is_database_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// How long one request to Tryton may take unless set otherwise.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

impl TrytonSettings {
    /// Reads `DRAFTLINE_TRYTON_URL`, `DRAFTLINE_TRYTON_DATABASE`,
    /// `DRAFTLINE_TRYTON_KEY` (a secret) and the optional
    /// `DRAFTLINE_TRYTON_TENANT` and `DRAFTLINE_TRYTON_REQUEST_TIMEOUT_SECONDS`
    /// (the most one request may take, [`DEFAULT_REQUEST_TIMEOUT`] if unset)
    /// from `source`.
    /// Plain http is refused off loopback (the key and every document
    /// would cross the wire in clear).
    pub fn from_source(source: &Source) -> Result<Self, ConfigError> {
        let url = source
            .secure_url("DRAFTLINE_TRYTON_URL", "the ERP's REST key and every document")?
            .ok_or(ConfigError::Missing("DRAFTLINE_TRYTON_URL"))?;
        let database = source.required("DRAFTLINE_TRYTON_DATABASE")?;
        if !is_database_name(&database) {
            return Err(ConfigError::Invalid {
                name: "DRAFTLINE_TRYTON_DATABASE",
                reason: "must be letters, digits, '_' and '-'".into(),
            });
        }
        let key = source.required("DRAFTLINE_TRYTON_KEY")?;
        let mut settings = Self::new(url.trim_end_matches('/'), database, TrytonKey::new(key));
        if let Some(tenant) = source.get("DRAFTLINE_TRYTON_TENANT") {
            let tenant = tenant.trim();
            if TenantId::parse(tenant).is_err() {
                return Err(ConfigError::Invalid {
                    name: "DRAFTLINE_TRYTON_TENANT",
                    reason: "must be a tenant id (letters, digits, '-', '_', '.')".into(),
                });
            }
            settings = settings.serving(tenant);
        }
        if let Some(seconds) = source.bounded("DRAFTLINE_TRYTON_REQUEST_TIMEOUT_SECONDS", 0.1..=60.0_f64, "seconds")? {
            settings.request_timeout = Duration::from_secs_f64(seconds);
        }
        Ok(settings)
    }

    /// Settings with the default timeouts, serving the tenant named like the database.
    pub fn new(url: impl Into<String>, database: impl Into<String>, key: TrytonKey) -> Self {
        Self {
            url: url.into(),
            database: database.into(),
            key,
            tenant: None,
            connect_timeout: Duration::from_secs(2),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_in_flight: 4,
        }
    }

    /// The same settings serving `tenant` instead (a pool database `demo_3`
    /// serving tenant `demo`).
    pub fn serving(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }

    /// The tenant served, checked.
    pub fn tenant_id(&self) -> Result<TenantId, SettingsError> {
        let name = self.tenant.as_deref().unwrap_or(&self.database);
        TenantId::parse(name).map_err(|e| SettingsError(format!("tenant of the Tryton backend: {e}")))
    }

    /// The base of every model path, `<url>/<database>/rest/model/`, checked.
    pub(crate) fn model_base(&self) -> Result<http::Uri, SettingsError> {
        if !is_database_name(&self.database) {
            return Err(SettingsError(format!(
                "Tryton database '{}' must be letters, digits, '_' and '-'",
                self.database.chars().take(64).collect::<String>()
            )));
        }
        let url = self.url.trim_end_matches('/');
        let base: http::Uri = format!("{url}/{}/rest/model/", self.database)
            .parse()
            .map_err(|e| SettingsError(format!("Tryton URL '{url}': {e}")))?;
        if !matches!(base.scheme_str(), Some("http" | "https")) || base.host().is_none() || base.query().is_some() {
            return Err(SettingsError(format!(
                "Tryton URL '{url}' must be an absolute http(s) URL"
            )));
        }
        Ok(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_env(env: &[(&str, &str)]) -> Result<TrytonSettings, ConfigError> {
        TrytonSettings::from_source(&Source::map(env.iter().copied()))
    }

    #[test]
    fn a_deployment_names_its_url_database_and_key() {
        assert_eq!(from_env(&[]).unwrap_err(), ConfigError::Missing("DRAFTLINE_TRYTON_URL"));
        let mut env = vec![
            ("DRAFTLINE_TRYTON_URL", "http://127.0.0.1:8000/"),
            ("DRAFTLINE_TRYTON_DATABASE", "demo"),
        ];
        assert_eq!(
            from_env(&env).unwrap_err(),
            ConfigError::Missing("DRAFTLINE_TRYTON_KEY")
        );
        env.push(("DRAFTLINE_TRYTON_KEY", "k3y-never-shown"));
        let settings = from_env(&env).unwrap();
        assert_eq!(settings.url, "http://127.0.0.1:8000");
        assert_eq!(settings.tenant_id().unwrap().as_str(), "demo");
        assert!(!format!("{settings:?}").contains("k3y-never-shown"));
        env.push(("DRAFTLINE_TRYTON_TENANT", " acme "));
        assert_eq!(from_env(&env).unwrap().tenant.as_deref(), Some("acme"));
        for (name, bad) in [
            ("DRAFTLINE_TRYTON_URL", "erp.example.com"),
            ("DRAFTLINE_TRYTON_DATABASE", "de/mo"),
            ("DRAFTLINE_TRYTON_TENANT", "a tenant"),
        ] {
            let mut env = env.clone();
            env.retain(|(n, _)| *n != name);
            env.push((name, bad));
            let err = from_env(&env).unwrap_err();
            assert!(err.to_string().starts_with(&format!("{name} is invalid")), "{err}");
        }
    }

    #[test]
    fn plain_http_off_loopback_is_refused_as_unsafe() {
        let err = from_env(&[
            ("DRAFTLINE_TRYTON_URL", "http://erp.example.com:8000"),
            ("DRAFTLINE_TRYTON_DATABASE", "demo"),
            ("DRAFTLINE_TRYTON_KEY", "k"),
        ])
        .unwrap_err();
        assert!(
            matches!(
                &err,
                ConfigError::Unsafe {
                    name: "DRAFTLINE_TRYTON_URL",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("REST key"), "{err}");
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let settings = TrytonSettings::new("http://127.0.0.1:8000/", "demo", TrytonKey::new("s3cret-key"));
        let shown = format!("{settings:?}");
        assert!(!shown.contains("s3cret-key"), "{shown}");
        assert!(shown.contains("key: Secret(***)"), "{shown}");
    }

    #[test]
    fn the_tenant_is_the_database_unless_told_otherwise() {
        let settings = TrytonSettings::new("http://127.0.0.1:8000", "demo_3", TrytonKey::new("k"));
        assert_eq!(settings.tenant_id().unwrap().as_str(), "demo_3");
        assert_eq!(settings.serving("demo").tenant_id().unwrap().as_str(), "demo");
    }

    #[test]
    fn paths_are_built_from_a_checked_url_and_database() {
        let settings = TrytonSettings::new("http://127.0.0.1:8000/", "demo", TrytonKey::new("k"));
        assert_eq!(
            settings.model_base().unwrap().to_string(),
            "http://127.0.0.1:8000/demo/rest/model/"
        );
        for bad in ["", "de/mo", "demo?x", "../x"] {
            let settings = TrytonSettings::new("http://127.0.0.1:8000", bad, TrytonKey::new("k"));
            assert!(settings.model_base().is_err(), "{bad}");
        }
        let settings = TrytonSettings::new("ftp://host", "demo", TrytonKey::new("k"));
        assert!(settings.model_base().is_err());
    }
}
