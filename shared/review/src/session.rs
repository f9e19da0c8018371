//! A person's session: stateless, in a signed cookie (serverless: any
//! instance can read it, none has to remember it).
//!
//! - **Format.** `v1.<payload>.<tag>`, both base64url; the payload is the
//!   JSON of tenant, branch, branch code, user, scopes, roles, expiry, a
//!   random session id and how the person signed in; the tag is
//!   HMAC-SHA256 over the payload under a key derived from
//!   `DRAFTLINE_SESSION_SECRET` (else the JWT secret) for this deployment
//!   (resource and table). A changed, cut or foreign cookie does not open.
//! - **Lifetime.** A session ends at the configured maximum
//!   (`DRAFTLINE_SESSION_MAX_HOURS`, default [`SESSION_HOURS`]) and, when
//!   it was opened with an access token (OpenID Connect), no later than
//!   that token's `exp`: a session never outlives what opened it.
//! - **Sign-out revokes.** Signing out writes the session id to the table
//!   ([`revoke`]: one item, removed by DynamoDB's TTL when the session
//!   would have ended anyway), and every page checks it ([`is_revoked`]),
//!   so a copied cookie replayed after sign-out is sent to sign in.
//! - **Cookie.** `HttpOnly; SameSite=Lax; Path=/`, `Secure` with the
//!   `__Host-` name prefix on any deployment that is not loopback http.
//!   On loopback http (`draftline serve`) cookies carry no port, so their
//!   names carry it (`draftline_session_3000`): another local server on
//!   127.0.0.1 neither reads nor overwrites them by name.
//! - **CSRF.** Every form carries a token: the HMAC of the session id under
//!   the same key, with its own purpose label. A post without it, or with
//!   the token of another session, is refused. The sign-in form, before
//!   any session exists, carries the HMAC of a random pre-session cookie
//!   instead ([`SessionKeys::pre_session_token`]).
//! - **Other sealed values** (the OpenID Connect state of a sign-in in
//!   progress) use the same key under their own purpose label.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use draftline_contract::ToolError;
use draftline_contract::cursor::{CursorKey, KeySource};
use draftline_contract::identity::{Caller, Named};
use draftline_contract::settings::ConfigError;
use draftline_contract::store::{Attributes, TableKey, Value, Write};
use draftline_server::config::Config;
use draftline_server::storage::Table;

use crate::settings::ReviewSettings;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// How long a session lasts at most when `DRAFTLINE_SESSION_MAX_HOURS` is not set.
pub const SESSION_HOURS: i64 = crate::settings::DEFAULT_SESSION_MAX_HOURS as i64;

/// How long a pre-session cookie (the sign-in form's CSRF anchor) lasts.
pub const PRE_SESSION_SECONDS: i64 = 3600;

const SESSION_PURPOSE: &[u8] = b"draftline/review-session/v1";
const CSRF_PURPOSE: &[u8] = b"draftline/review-csrf/v1";
const PRE_SESSION_PURPOSE: &[u8] = b"draftline/review-pre-session/v1";
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
    /// A new session for `person`, from `now`, of the longest lifetime
    /// ([`SESSION_HOURS`]); see [`Session::start_bounded`].
    pub fn start(person: Caller, via: SignedInWith, now: DateTime<Utc>) -> Self {
        Self::start_bounded(person, via, now, SESSION_HOURS * 3600, None)
    }

    /// A new session for `person`, from `now`, lasting `max_seconds` and
    /// ending no later than `until` (epoch seconds: the `exp` of the access
    /// token it was opened with).
    pub fn start_bounded(
        person: Caller,
        via: SignedInWith,
        now: DateTime<Utc>,
        max_seconds: i64,
        until: Option<i64>,
    ) -> Self {
        let longest = now.timestamp().saturating_add(max_seconds);
        Self {
            person,
            expires_at: until.map_or(longest, |until| until.min(longest)),
            id: ulid::Ulid::new().to_string(),
            via,
        }
    }
}

fn revoked_key(session: &Session) -> TableKey {
    TableKey {
        pk: format!("T#{}#SESSION#{}", session.person.tenant(), session.id),
        sk: "REVOKED".to_owned(),
    }
}

/// Records that `session` was signed out: one item, kept until the session
/// would have ended (DynamoDB's TTL removes it then).
pub async fn revoke(table: &dyn Table, session: &Session, now: DateTime<Utc>) -> Result<(), ToolError> {
    let TableKey { pk, sk } = revoked_key(session);
    let item = Attributes::from([
        ("pk".to_owned(), Value::S(pk)),
        ("sk".to_owned(), Value::S(sk)),
        ("kind".to_owned(), Value::s("revoked_session")),
        ("revoked_at".to_owned(), Value::n(now.timestamp())),
        ("expires_at".to_owned(), Value::n(session.expires_at.saturating_add(60))),
    ]);
    let written = table
        .write(Write::PutIf(item, None), "You were not signed out.")
        .await?;
    written.map_err(|_| ToolError::internal("an unconditional put was refused"))
}

/// Whether `session` was signed out (one strongly consistent read).
pub async fn is_revoked(table: &dyn Table, session: &Session) -> Result<bool, ToolError> {
    let found = table
        .get(vec![revoked_key(session)], "Nothing was read or changed.")
        .await?;
    Ok(!found.is_empty())
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
    /// The cookie names: `__Host-` prefixed when `Secure`, with the port
    /// on loopback http.
    names: CookieNames,
    /// The longest a session lasts, in seconds.
    max_seconds: i64,
}

#[derive(Debug, Clone)]
struct CookieNames {
    session: String,
    sign_in: String,
    pre_session: String,
}

/// Whether two byte strings are equal, in time independent of where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl SessionKeys {
    /// The keys of `config`'s deployment with the review `settings`: from
    /// `DRAFTLINE_SESSION_SECRET`, else the JWT secret; neither set is a
    /// configuration error naming the session secret.
    pub fn of(config: &Config, settings: &ReviewSettings) -> Result<Self, ConfigError> {
        let (material, source) = match (&settings.session_secret, &config.jwt_secret) {
            (Some(secret), _) => (secret.expose(), KeySource::CursorSecret),
            (None, Some(secret)) => (secret.expose(), KeySource::JwtSecret),
            (None, None) => return Err(ConfigError::Missing("DRAFTLINE_SESSION_SECRET")),
        };
        let context = format!("review-session|{}|{}", config.resource, config.table);
        let loopback = loopback_http_port(&config.resource);
        let secure = loopback.is_none();
        let name = |base: &str| match loopback {
            None => format!("__Host-{base}"),
            Some(port) => format!("{base}_{port}"),
        };
        Ok(Self {
            key: CursorKey::derive(material.as_bytes(), context.as_bytes(), source),
            secure,
            names: CookieNames {
                session: name("draftline_session"),
                sign_in: name("draftline_sign_in"),
                pre_session: name("draftline_pre_session"),
            },
            max_seconds: i64::try_from(settings.session_max.as_secs()).unwrap_or(SESSION_HOURS * 3600),
        })
    }

    /// The longest a session of this deployment lasts, in seconds.
    pub fn max_session_seconds(&self) -> i64 {
        self.max_seconds
    }

    /// Whether cookies are `Secure` (everywhere but loopback http).
    pub fn secure(&self) -> bool {
        self.secure
    }

    /// The session cookie's name (`__Host-` prefixed when `Secure`; with
    /// the port on loopback http: `draftline_session_3000`).
    pub fn session_cookie(&self) -> &str {
        &self.names.session
    }

    /// The name of the cookie that holds a sign-in in progress.
    pub fn sign_in_cookie(&self) -> &str {
        &self.names.sign_in
    }

    /// The name of the pre-session cookie that anchors the sign-in form's
    /// CSRF token.
    pub fn pre_session_cookie(&self) -> &str {
        &self.names.pre_session
    }

    /// `Set-Cookie` for a new pre-session cookie, and its value.
    pub fn new_pre_session(&self) -> (String, String) {
        let value = URL_SAFE_NO_PAD.encode(rand::random::<[u8; 24]>());
        let cookie = self.cookie(self.pre_session_cookie(), &value, PRE_SESSION_SECONDS);
        (cookie, value)
    }

    /// The sign-in form's CSRF token for pre-session cookie `pre`.
    pub fn pre_session_token(&self, pre: &str) -> String {
        URL_SAFE_NO_PAD.encode(self.key.tag(PRE_SESSION_PURPOSE, pre.as_bytes()))
    }

    /// Whether `token` is the sign-in form's token of pre-session cookie `pre`.
    pub fn pre_session_matches(&self, pre: Option<&str>, token: Option<&str>) -> bool {
        match (pre, token) {
            (Some(pre), Some(token)) if !pre.is_empty() && pre.len() <= 64 => {
                same(token.as_bytes(), self.pre_session_token(pre).as_bytes())
            }
            _ => false,
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
        let named = Named {
            tenant: &payload.tenant,
            branch: &payload.branch,
            branch_code: &payload.branch_code,
            user: &payload.user,
            scope: &payload.scope,
        };
        let person = Caller::named(named, payload.roles).ok()?;
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

/// The port of an `http://` resource on a loopback host (the only place
/// cookies go without `Secure`), 80 when it names none; `None` elsewhere.
fn loopback_http_port(resource: &str) -> Option<u16> {
    let rest = resource.strip_prefix("http://")?;
    let authority = rest.split('/').next().unwrap_or_default();
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6.split_once(']')?;
            (host, after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let loopback =
        host == "localhost" || host == "::1" || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        return None;
    }
    match port {
        None => Some(80),
        Some(port) => port.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use draftline_contract::identity::{BranchCode, BranchId, Scopes, TenantId, UserId};

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
        let config = Config::local(resource.into(), "http://127.0.0.1:1".into());
        let mut settings = ReviewSettings::local();
        settings.session_secret = Some(draftline_contract::settings::Secret::new("s".repeat(32)));
        SessionKeys::of(&config, &settings).unwrap()
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
    fn local_cookie_names_carry_the_port_and_deployed_ones_the_host_prefix() {
        let local = keys("http://127.0.0.1:3000");
        assert_eq!(local.session_cookie(), "draftline_session_3000");
        assert_eq!(local.sign_in_cookie(), "draftline_sign_in_3000");
        assert_eq!(local.pre_session_cookie(), "draftline_pre_session_3000");
        assert_eq!(
            keys("http://localhost:8080/").session_cookie(),
            "draftline_session_8080"
        );
        assert_eq!(keys("http://[::1]:3100").session_cookie(), "draftline_session_3100");
        let deployed = keys("https://review.example.com");
        assert_eq!(deployed.session_cookie(), "__Host-draftline_session");
        assert_eq!(deployed.pre_session_cookie(), "__Host-draftline_pre_session");
    }

    #[test]
    fn a_sign_in_token_is_bound_to_its_pre_session_cookie() {
        let keys = keys("http://127.0.0.1:3000");
        let (cookie, pre) = keys.new_pre_session();
        assert!(
            cookie.starts_with(&format!("draftline_pre_session_3000={pre};")),
            "{cookie}"
        );
        let token = keys.pre_session_token(&pre);
        assert!(keys.pre_session_matches(Some(&pre), Some(&token)));
        let (_, other) = keys.new_pre_session();
        assert_ne!(pre, other);
        assert!(!keys.pre_session_matches(Some(&other), Some(&token)));
        assert!(!keys.pre_session_matches(None, Some(&token)));
        assert!(!keys.pre_session_matches(Some(&pre), None));
        assert!(!keys.pre_session_matches(Some(""), Some(&keys.pre_session_token(""))));
        // Another deployment's key makes other tokens.
        assert!(!keys_for_other().pre_session_matches(Some(&pre), Some(&token)));
    }

    #[test]
    fn a_session_ends_at_its_maximum_or_its_tokens_expiry_whichever_is_first() {
        let now = Utc::now();
        let max = 8 * 3600;
        let long = Session::start_bounded(
            person("a"),
            SignedInWith::Oidc,
            now,
            max,
            Some(now.timestamp() + 9 * 3600),
        );
        assert_eq!(long.expires_at, now.timestamp() + max);
        let short = Session::start_bounded(person("a"), SignedInWith::Oidc, now, max, Some(now.timestamp() + 300));
        assert_eq!(short.expires_at, now.timestamp() + 300);
        let demo = Session::start_bounded(person("a"), SignedInWith::Demo, now, 3600, None);
        assert_eq!(demo.expires_at, now.timestamp() + 3600);
        // A cookie of the short session stops opening at the token's expiry.
        let keys = keys("http://127.0.0.1:3000");
        let cookie = keys.seal_session(&short);
        assert!(
            keys.open_session(&cookie, now + chrono::Duration::seconds(299))
                .is_some()
        );
        assert!(
            keys.open_session(&cookie, now + chrono::Duration::seconds(300))
                .is_none()
        );
    }

    #[test]
    fn without_a_session_or_jwt_secret_the_session_secret_is_missing() {
        let mut config = Config::local("https://r.example".into(), "http://127.0.0.1:1".into());
        config.jwt_secret = None;
        assert_eq!(
            SessionKeys::of(&config, &ReviewSettings::local()).unwrap_err(),
            ConfigError::Missing("DRAFTLINE_SESSION_SECRET")
        );
    }
}
