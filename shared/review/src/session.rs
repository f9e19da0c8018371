//! A person's session: stateless, in a signed cookie (serverless: any
//! instance can read it, none has to remember it).
//!
//! - **Format.** `v1.<payload>.<tag>`, both base64url; the payload is the
//!   JSON of tenant, branch, branch code, user, scopes, roles, expiry, a
//!   random session id and how the person signed in; the tag is
//!   HMAC-SHA256 over the payload under a key derived from
//!   `DRAFTLINE_SESSION_SECRET` (else the JWT secret) for this deployment
//!   (resource and table). A changed, cut or foreign cookie does not open.
//! - **Cookie.** `HttpOnly; SameSite=Lax; Path=/`, `Secure` with the
//!   `__Host-` name prefix on any deployment that is not loopback http
//!   (`draftline serve`), [`SESSION_HOURS`] long. Signing out clears it;
//!   a stolen cookie lives until it expires (no server-side state).
//! - **CSRF.** Every form carries a token: the HMAC of the session id under
//!   the same key, with its own purpose label. A post without it, or with
//!   the token of another session, is refused.
//! - **Other sealed values** (the OpenID Connect state of a sign-in in
//!   progress) use the same key under their own purpose label.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use draftline_contract::cursor::{CursorKey, KeySource};
use draftline_contract::identity::{BranchCode, BranchId, Caller, Scopes, TenantId, UserId};
use draftline_server::config::{Config, ConfigError};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// How long a session lasts.
pub const SESSION_HOURS: i64 = 8;

const SESSION_PURPOSE: &[u8] = b"draftline/review-session/v1";
const CSRF_PURPOSE: &[u8] = b"draftline/review-csrf/v1";
const VERSION: &str = "v1";

/// How the person signed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignedInWith {
    /// The demo sign-in page of `draftline serve`.
    Demo,
    /// OpenID Connect against the deployment's identity provider.
    Oidc,
}

/// A signed-in person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Who, where and what they may do, as verified at sign-in.
    pub person: Caller,
    /// Until when (epoch seconds).
    pub expires_at: i64,
    /// Random, per sign-in: what CSRF tokens are bound to.
    pub id: String,
    /// How they signed in.
    pub via: SignedInWith,
}

impl Session {
    /// A new session for `person`, from `now`.
    pub fn start(person: Caller, via: SignedInWith, now: DateTime<Utc>) -> Self {
        Self {
            person,
            expires_at: now.timestamp().saturating_add(SESSION_HOURS * 3600),
            id: ulid::Ulid::new().to_string(),
            via,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Payload {
    tenant: String,
    branch: String,
    branch_code: String,
    user: String,
    scope: String,
    roles: Vec<String>,
    exp: i64,
    sid: String,
    via: SignedInWith,
}

/// The keys and cookie rules of one deployment.
#[derive(Debug, Clone)]
pub struct SessionKeys {
    key: CursorKey,
    secure: bool,
}

/// Whether two byte strings are equal, in time independent of where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl SessionKeys {
    /// The keys of `config`'s deployment: from `DRAFTLINE_SESSION_SECRET`,
    /// else the JWT secret; neither set is a configuration error naming the
    /// session secret.
    pub fn of(config: &Config) -> Result<Self, ConfigError> {
        let (material, source) = match (&config.review.session_secret, &config.jwt_secret) {
            (Some(secret), _) => (secret.expose(), KeySource::CursorSecret),
            (None, Some(secret)) => (secret.expose(), KeySource::JwtSecret),
            (None, None) => return Err(ConfigError::Missing("DRAFTLINE_SESSION_SECRET")),
        };
        let context = format!("review-session|{}|{}", config.resource, config.table);
        Ok(Self {
            key: CursorKey::derive(material.as_bytes(), context.as_bytes(), source),
            secure: !is_loopback_http(&config.resource),
        })
    }

    /// Whether cookies are `Secure` (everywhere but loopback http).
    pub fn secure(&self) -> bool {
        self.secure
    }

    /// The session cookie's name (`__Host-` prefixed when `Secure`).
    pub fn session_cookie(&self) -> &'static str {
        if self.secure {
            "__Host-draftline_session"
        } else {
            "draftline_session"
        }
    }

    /// The name of the cookie that holds a sign-in in progress.
    pub fn sign_in_cookie(&self) -> &'static str {
        if self.secure {
            "__Host-draftline_sign_in"
        } else {
            "draftline_sign_in"
        }
    }

    /// `Set-Cookie` for cookie `name` holding `value` for `max_age` seconds.
    pub fn cookie(&self, name: &str, value: &str, max_age: i64) -> String {
        let secure = if self.secure { "; Secure" } else { "" };
        format!("{name}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}")
    }

    /// `Set-Cookie` that removes cookie `name`.
    pub fn clear(&self, name: &str) -> String {
        self.cookie(name, "", 0)
    }

    /// `Set-Cookie` for `session`, alive until it expires (as of `now`).
    pub fn session_set_cookie(&self, session: &Session, now: DateTime<Utc>) -> String {
        let left = session.expires_at.saturating_sub(now.timestamp()).max(0);
        self.cookie(self.session_cookie(), &self.seal_session(session), left)
    }

    /// Seals `value` for `purpose`.
    pub fn seal<T: Serialize>(&self, purpose: &[u8], value: &T) -> String {
        let json = serde_json::to_vec(value).unwrap_or_default();
        let payload = URL_SAFE_NO_PAD.encode(json);
        let tag = URL_SAFE_NO_PAD.encode(self.key.tag(purpose, payload.as_bytes()));
        format!("{VERSION}.{payload}.{tag}")
    }

    /// Opens a value sealed for `purpose`; `None` for anything else.
    pub fn open<T: DeserializeOwned>(&self, purpose: &[u8], sealed: &str) -> Option<T> {
        if sealed.len() > 4096 {
            return None;
        }
        let mut parts = sealed.split('.');
        let (version, payload, tag) = (parts.next()?, parts.next()?, parts.next()?);
        if version != VERSION || parts.next().is_some() {
            return None;
        }
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        if !same(&tag, &self.key.tag(purpose, payload.as_bytes())) {
            return None;
        }
        let json = URL_SAFE_NO_PAD.decode(payload).ok()?;
        serde_json::from_slice(&json).ok()
    }

    /// The cookie value of `session`.
    pub fn seal_session(&self, session: &Session) -> String {
        let person = &session.person;
        self.seal(
            SESSION_PURPOSE,
            &Payload {
                tenant: person.tenant().to_string(),
                branch: person.branch().to_string(),
                branch_code: person.branch_code().to_string(),
                user: person.user().to_string(),
                scope: person.scopes().to_string(),
                roles: person.roles().to_vec(),
                exp: session.expires_at,
                sid: session.id.clone(),
                via: session.via,
            },
        )
    }

    /// The session a cookie value holds, if it was sealed here and has not
    /// expired at `now`.
    pub fn open_session(&self, cookie: &str, now: DateTime<Utc>) -> Option<Session> {
        let payload: Payload = self.open(SESSION_PURPOSE, cookie)?;
        if payload.exp <= now.timestamp() || payload.sid.is_empty() {
            return None;
        }
        let person = Caller::from_verified(
            TenantId::parse(&payload.tenant).ok()?,
            BranchId::parse(&payload.branch).ok()?,
            BranchCode::parse(&payload.branch_code).ok()?,
            UserId::parse(&payload.user).ok()?,
            payload.roles,
            Scopes::from_claim(&payload.scope),
        );
        Some(Session {
            person,
            expires_at: payload.exp,
            id: payload.sid,
            via: payload.via,
        })
    }

    /// The CSRF token of `session`'s forms.
    pub fn csrf_token(&self, session: &Session) -> String {
        URL_SAFE_NO_PAD.encode(self.key.tag(CSRF_PURPOSE, session.id.as_bytes()))
    }

    /// Whether `token` is `session`'s CSRF token.
    pub fn csrf_matches(&self, session: &Session, token: Option<&str>) -> bool {
        token.is_some_and(|token| same(token.as_bytes(), self.csrf_token(session).as_bytes()))
    }
}

/// `http://` on a loopback host: the only place cookies go without `Secure`.
fn is_loopback_http(resource: &str) -> bool {
    let Some(rest) = resource.strip_prefix("http://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(host, _)| host),
    };
    host == "localhost" || host == "::1" || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(user: &str) -> Caller {
        Caller::from_verified(
            TenantId::parse("demo").unwrap(),
            BranchId::parse("SBY-01").unwrap(),
            BranchCode::parse("SBY").unwrap(),
            UserId::parse(user).unwrap(),
            vec!["purchasing_manager".into()],
            Scopes::from_claim("purchasing:read purchasing:approve"),
        )
    }

    fn keys(resource: &str) -> SessionKeys {
        let mut config = Config::local(resource.into(), "http://127.0.0.1:1".into());
        config.review.session_secret = Some(draftline_server::config::Secret::new("s".repeat(32)));
        SessionKeys::of(&config).unwrap()
    }

    #[test]
    fn a_session_opens_where_it_was_sealed_until_it_expires() {
        let keys = keys("http://127.0.0.1:3000");
        let now = Utc::now();
        let session = Session::start(person("approver-sby"), SignedInWith::Demo, now);
        let cookie = keys.seal_session(&session);
        assert_eq!(keys.open_session(&cookie, now), Some(session.clone()));
        let later = now + chrono::Duration::hours(SESSION_HOURS) + chrono::Duration::seconds(1);
        assert_eq!(keys.open_session(&cookie, later), None);
        // Another deployment (resource) derives another key.
        assert_eq!(keys_for_other().open_session(&cookie, now), None);
        // A changed payload does not open.
        let (head, tag) = cookie.rsplit_once('.').unwrap();
        let forged = format!("{}x.{tag}", head);
        assert_eq!(keys.open_session(&forged, now), None);
        assert_eq!(keys.open_session("garbage", now), None);
    }

    fn keys_for_other() -> SessionKeys {
        keys("http://127.0.0.1:3001")
    }

    #[test]
    fn a_csrf_token_is_bound_to_its_session() {
        let keys = keys("http://127.0.0.1:3000");
        let now = Utc::now();
        let one = Session::start(person("approver-sby"), SignedInWith::Demo, now);
        let other = Session::start(person("approver-sby"), SignedInWith::Demo, now);
        let token = keys.csrf_token(&one);
        assert!(keys.csrf_matches(&one, Some(&token)));
        assert!(!keys.csrf_matches(&other, Some(&token)));
        assert!(!keys.csrf_matches(&one, None));
        assert!(!keys.csrf_matches(&one, Some("")));
    }

    #[test]
    fn cookies_are_secure_except_on_loopback_http() {
        assert!(!keys("http://127.0.0.1:3000").secure());
        assert!(!keys("http://localhost:3000").secure());
        assert!(keys("https://review.example.com").secure());
        assert!(keys("http://review.example.com").secure());
        let cookie = keys("https://review.example.com").cookie("__Host-draftline_session", "v", 60);
        assert_eq!(
            cookie,
            "__Host-draftline_session=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure"
        );
    }

    #[test]
    fn without_a_session_or_jwt_secret_the_session_secret_is_missing() {
        let mut config = Config::local("https://r.example".into(), "http://127.0.0.1:1".into());
        config.jwt_secret = None;
        assert_eq!(
            SessionKeys::of(&config).unwrap_err(),
            ConfigError::Missing("DRAFTLINE_SESSION_SECRET")
        );
    }
}
