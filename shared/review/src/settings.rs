//! The review pages' own settings: how people sign in, how long a session
//! lasts and what they may decide, parsed from the deployment's
//! [`Source`] ([`ReviewSettings::from_source`]).

use std::time::Duration;

use draftline_contract::settings::{ConfigError, Secret, Source, url};

/// The longest a review session lasts when `DRAFTLINE_SESSION_MAX_HOURS` is not set.
pub const DEFAULT_SESSION_MAX_HOURS: u64 = 8;

/// The scopes sign-in asks for when `DRAFTLINE_OIDC_SCOPES` is not set.
pub const DEFAULT_OIDC_SCOPES: &str = "openid purchasing:read purchasing:approve sales:read sales:approve";

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
    /// the settings' source: only [`ReviewSettings::local`] (`draftline
    /// serve`) turns it on, so no deployed function can offer it.
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

impl OidcSettings {
    /// Reads `DRAFTLINE_OIDC_*`: `None` when neither the issuer nor the
    /// client id is set; one without the other is refused.
    pub fn from_source(source: &Source) -> Result<Option<Self>, ConfigError> {
        let (issuer, client_id) = match (
            source.get("DRAFTLINE_OIDC_ISSUER"),
            source.get("DRAFTLINE_OIDC_CLIENT_ID"),
        ) {
            (None, None) => return Ok(None),
            (None, Some(_)) => return Err(ConfigError::Missing("DRAFTLINE_OIDC_ISSUER")),
            (Some(_), None) => return Err(ConfigError::Missing("DRAFTLINE_OIDC_CLIENT_ID")),
            (Some(issuer), Some(client_id)) => (issuer, client_id),
        };
        let issuer = issuer.trim().trim_end_matches('/').to_owned();
        url::check_secure_url(
            "DRAFTLINE_OIDC_ISSUER",
            &issuer,
            "sign-in codes, the client secret and the provider's keys",
        )?;
        let mut scopes = vec!["openid".to_owned()];
        let asked = source
            .get("DRAFTLINE_OIDC_SCOPES")
            .unwrap_or_else(|| DEFAULT_OIDC_SCOPES.to_owned());
        for scope in asked.split_whitespace() {
            if !scopes.iter().any(|s| s == scope) {
                scopes.push(scope.to_owned());
            }
        }
        Ok(Some(Self {
            issuer,
            client_id: client_id.trim().to_owned(),
            client_secret: source.secret("DRAFTLINE_OIDC_CLIENT_SECRET"),
            scopes,
        }))
    }
}

impl ReviewSettings {
    /// Reads `DRAFTLINE_SESSION_SECRET`, `DRAFTLINE_OIDC_*`,
    /// `DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL` and
    /// `DRAFTLINE_SESSION_MAX_HOURS`. The demo sign-in is always off here.
    pub fn from_source(source: &Source) -> Result<Self, ConfigError> {
        let session_secret = source.secret_of_at_least("DRAFTLINE_SESSION_SECRET", 32)?;
        let oidc = OidcSettings::from_source(source)?;
        let allow_self_approval = source.flag("DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL")?.unwrap_or(false);
        let session_max = source
            .bounded("DRAFTLINE_SESSION_MAX_HOURS", 1..=24_u64, "hours")?
            .unwrap_or(DEFAULT_SESSION_MAX_HOURS);
        Ok(Self {
            session_secret,
            oidc,
            allow_self_approval,
            session_max: Duration::from_secs(session_max * 3600),
            demo_sign_in: false,
        })
    }

    /// The local server's review pages when nothing is set: the demo
    /// sign-in on, everything else its default.
    pub fn local() -> Self {
        Self {
            session_secret: None,
            oidc: None,
            allow_self_approval: false,
            session_max: Duration::from_secs(DEFAULT_SESSION_MAX_HOURS * 3600),
            demo_sign_in: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(env: &HashMap<&'static str, String>) -> Result<ReviewSettings, ConfigError> {
        ReviewSettings::from_source(&Source::map(env.clone()))
    }

    #[test]
    fn review_settings_are_read_and_checked_and_the_demo_sign_in_never_comes_from_the_environment() {
        let mut env = HashMap::new();
        let review = parse(&env).unwrap();
        assert!(!review.demo_sign_in);
        assert!(!review.allow_self_approval);
        assert_eq!(review.oidc, None);
        assert_eq!(review.session_max, Duration::from_secs(8 * 3600));
        env.insert("DRAFTLINE_OIDC_CLIENT_ID", "draftline-review".to_owned());
        assert_eq!(parse(&env).unwrap_err(), ConfigError::Missing("DRAFTLINE_OIDC_ISSUER"));
        env.insert("DRAFTLINE_OIDC_ISSUER", "https://id.example.com/".to_owned());
        env.insert("DRAFTLINE_OIDC_CLIENT_SECRET", "oidc-s3cret-never-shown".to_owned());
        env.insert("DRAFTLINE_SESSION_SECRET", "s".repeat(32));
        env.insert("DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL", "true".to_owned());
        env.insert("DRAFTLINE_SESSION_MAX_HOURS", "2".to_owned());
        // Whatever the environment says, a deployed function has no demo sign-in.
        env.insert("DRAFTLINE_DEMO_SIGN_IN", "true".to_owned());
        let review = parse(&env).unwrap();
        let oidc = review.oidc.clone().unwrap();
        assert_eq!(oidc.issuer, "https://id.example.com");
        assert_eq!(oidc.scopes[0], "openid");
        assert!(review.allow_self_approval);
        assert!(!review.demo_sign_in);
        assert_eq!(review.session_max, Duration::from_secs(2 * 3600));
        assert!(!format!("{review:?}").contains("oidc-s3cret-never-shown"));
        for (name, bad, message) in [
            (
                "DRAFTLINE_SESSION_SECRET",
                "short",
                "DRAFTLINE_SESSION_SECRET is invalid: must be at least 32 bytes",
            ),
            (
                "DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL",
                "maybe",
                "DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL is invalid: 'maybe' is not true or false",
            ),
            (
                "DRAFTLINE_OIDC_ISSUER",
                "id.example.com",
                "DRAFTLINE_OIDC_ISSUER is invalid: must be an absolute http(s) URL",
            ),
            (
                "DRAFTLINE_SESSION_MAX_HOURS",
                "25",
                "DRAFTLINE_SESSION_MAX_HOURS is invalid: '25' is not a number of hours between 1 and 24",
            ),
        ] {
            let mut env = env.clone();
            env.insert(name, bad.to_owned());
            assert_eq!(parse(&env).unwrap_err().to_string(), message);
        }
        assert!(ReviewSettings::local().demo_sign_in);
    }

    #[test]
    fn an_identity_provider_over_plain_http_is_refused_off_loopback() {
        let mut env = HashMap::from([
            ("DRAFTLINE_OIDC_ISSUER", "http://id.example.com".to_owned()),
            ("DRAFTLINE_OIDC_CLIENT_ID", "c".to_owned()),
        ]);
        let err = parse(&env).unwrap_err();
        assert!(
            matches!(
                &err,
                ConfigError::Unsafe {
                    name: "DRAFTLINE_OIDC_ISSUER",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().starts_with("DRAFTLINE_OIDC_ISSUER is unsafe"), "{err}");
        env.insert("DRAFTLINE_OIDC_ISSUER", "http://localhost:4000".to_owned());
        assert!(parse(&env).is_ok());
    }
}
