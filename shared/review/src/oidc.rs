//! Signing in with OpenID Connect: authorization code with PKCE (S256)
//! against the identity provider that issues draftline's access tokens
//! (`openidconnect`).
//!
//! 1. `GET /review/signin/oidc?next=…` discovers the provider once per warm
//!    instance (`<issuer>/.well-known/openid-configuration`), then
//!    redirects to its authorization endpoint with a fresh PKCE challenge,
//!    `state`, `nonce`, the configured scopes and `resource` (RFC 8707: the
//!    access token must be for this deployment). The verifier, state,
//!    nonce and where to go next travel in a sealed, `HttpOnly` sign-in
//!    cookie for ten minutes: nothing is stored server-side.
//! 2. `GET /review/callback?code=…&state=…` checks `state` against the
//!    cookie (constant time), exchanges the code with the verifier (and
//!    the client secret, if any), verifies the ID token (signature from the
//!    provider's keys, issuer, audience = client id, expiry, nonce), then
//!    verifies the **access token** with draftline's own verifier
//!    (`DRAFTLINE_ISSUER`, `DRAFTLINE_JWKS_URL`, audience
//!    `DRAFTLINE_RESOURCE`): the person's tenant, branch and scopes come
//!    from it, exactly as a tool call's do. The two tokens must name the
//!    same subject. Then the session starts.
//!
//! The provider's signing keys are held as the API's are, in a
//! [`JwksCache`] of its `jwks_uri`: an ID token signed with a `kid` the
//! cache does not know (the provider rotated its keys) makes one refetch,
//! at most once a minute, so sign-in survives a rotation without a cold
//! start.
//!
//! Its requests go over `draftline-http`, the one HTTP client every
//! function links (openidconnect takes any async client: [`OidcHttp`]). It
//! follows no redirects (SSRF), gives up after five seconds, and reads at
//! most 1 MiB of an answer.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use draftline_contract::ToolError;
use draftline_contract::settings::ConfigError;
use draftline_server::App;
use draftline_server::auth::JwksCache;
use draftline_server::auth::jwks::signing_key_of;
use draftline_server::config::Config;
use http::{HeaderMap, HeaderValue, Request, Response};
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreJsonWebKey, CoreJsonWebKeySet, CoreProviderMetadata,
};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce, OAuth2TokenResponse, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, Scope, TokenResponse,
};
use serde::{Deserialize, Serialize};

use crate::session::{Session, SignedInWith};
use crate::settings::OidcSettings;
use crate::web::{self, Fields};
use crate::{ReviewPages, anonymous_page, html};

/// How long a sign-in may take at the provider.
const SIGN_IN_SECONDS: i64 = 600;
const SIGN_IN_PURPOSE: &[u8] = b"draftline/review-sign-in/v1";

/// The relying party of one deployment.
pub struct Oidc {
    issuer: IssuerUrl,
    client_id: ClientId,
    client_secret: Option<String>,
    scopes: Vec<String>,
    redirect: RedirectUrl,
    resource: String,
    http: OidcHttp,
    discovered: tokio::sync::OnceCell<Discovered>,
}

/// The provider as discovered once per warm instance: its metadata, and
/// its signing keys, which follow its rotations.
struct Discovered {
    metadata: CoreProviderMetadata,
    keys: JwksCache,
}

/// How long one request to the identity provider may take, connection
/// included.
const OIDC_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest answer read from the identity provider (its metadata, keys
/// and token answers are a few KiB).
const OIDC_MAX_BODY: usize = 1 << 20;

/// openidconnect's HTTP client: `draftline-http`, with the sign-in's limits.
struct OidcHttp(draftline_http::Client);

impl<'c> openidconnect::AsyncHttpClient<'c> for OidcHttp {
    type Error = draftline_http::Error;
    type Future = Pin<Box<dyn Future<Output = Result<openidconnect::HttpResponse, draftline_http::Error>> + Send + 'c>>;

    fn call(&'c self, request: openidconnect::HttpRequest) -> Self::Future {
        let (parts, body) = request.into_parts();
        let request = http::Request::from_parts(parts, Bytes::from(body));
        let limits = draftline_http::Limits {
            timeout: Some(OIDC_TIMEOUT),
            max_body: OIDC_MAX_BODY,
        };
        Box::pin(async move {
            let answer = self.0.send(request, limits).await?;
            let (parts, body) = answer.into_parts();
            Ok(http::Response::from_parts(parts, body.to_vec()))
        })
    }
}

/// A sign-in in progress, sealed in its cookie.
#[derive(Serialize, Deserialize)]
struct InProgress {
    state: String,
    nonce: String,
    verifier: String,
    next: String,
    exp: i64,
}

impl Oidc {
    /// The relying party for `settings` in `config`'s deployment (redirect
    /// URI `<resource origin>/review/callback`). Makes no request.
    pub fn new(settings: &OidcSettings, config: &Config) -> Result<Self, ConfigError> {
        let invalid = |name: &'static str, reason: String| ConfigError::Invalid { name, reason };
        let issuer =
            IssuerUrl::new(settings.issuer.clone()).map_err(|e| invalid("DRAFTLINE_OIDC_ISSUER", e.to_string()))?;
        let origin = draftline_server::auth::origin_of(&config.resource);
        let redirect = RedirectUrl::new(format!("{origin}/review/callback"))
            .map_err(|e| invalid("DRAFTLINE_RESOURCE", e.to_string()))?;
        let http = OidcHttp(draftline_http::Client::new(OIDC_TIMEOUT));
        Ok(Self {
            issuer,
            client_id: ClientId::new(settings.client_id.clone()),
            client_secret: settings.client_secret.as_ref().map(|s| s.expose().to_owned()),
            scopes: settings.scopes.clone(),
            redirect,
            resource: config.resource.clone(),
            http,
            discovered: tokio::sync::OnceCell::new(),
        })
    }

    /// The provider, discovered once per warm instance (a failed discovery
    /// is tried again on the next sign-in).
    async fn discovered(&self) -> Result<&Discovered, ToolError> {
        self.discovered
            .get_or_try_init(|| async {
                let metadata = CoreProviderMetadata::discover_async(self.issuer.clone(), &self.http)
                    .await
                    .map_err(|e| {
                        ToolError::dependency(
                            format!("OpenID Connect discovery failed: {e}"),
                            "Nobody was signed in; try again in a moment.",
                        )
                    })?;
                let keys = JwksCache::new(metadata.jwks_uri().url().to_string());
                Ok(Discovered { metadata, keys })
            })
            .await
    }

    /// The provider's key that signed `id_token` (compact JWS), from the
    /// key cache: a `kid` it does not know makes one refetch, at most once
    /// a minute. `None` for a token that names no `kid` or an algorithm
    /// other than RS256 or ES256: openidconnect then decides with the keys
    /// of discovery.
    async fn id_token_keys(&self, id_token: &str) -> Result<Option<CoreJsonWebKeySet>, ToolError> {
        let Some((kid, alg)) = signing_key_of(id_token) else {
            return Ok(None);
        };
        let jwk = self
            .discovered()
            .await?
            .keys
            .jwk(&kid, alg)
            .await
            .map_err(|err| match err {
                ToolError::DependencyUnavailable { .. } => ToolError::dependency(
                    "the identity provider's signing keys could not be fetched",
                    "Nobody was signed in; try again in a moment.",
                ),
                _ => sign_in_failed(
                    "The ID token is signed with a key the identity provider does not publish. Nobody was signed in."
                        .into(),
                ),
            })?;
        let key: CoreJsonWebKey = serde_json::to_value(&jwk)
            .and_then(serde_json::from_value)
            .map_err(|e| sign_in_failed(format!("The ID token's key is not usable ({e}). Nobody was signed in.")))?;
        Ok(Some(CoreJsonWebKeySet::new(vec![key])))
    }

    /// The client, verifying ID tokens with `keys` (else with the keys of
    /// discovery).
    async fn client(
        &self,
        keys: Option<CoreJsonWebKeySet>,
    ) -> Result<
        CoreClient<
            openidconnect::EndpointSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointMaybeSet,
            openidconnect::EndpointMaybeSet,
        >,
        ToolError,
    > {
        let mut metadata = self.discovered().await?.metadata.clone();
        if let Some(keys) = keys {
            metadata = metadata.set_jwks(keys);
        }
        Ok(CoreClient::from_provider_metadata(
            metadata,
            self.client_id.clone(),
            self.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(self.redirect.clone()))
    }
}

/// A sign-in that did not go through: 403 with what happened.
fn sign_in_failed(message: String) -> ToolError {
    ToolError::Forbidden {
        scope: "sign-in".to_owned(),
        message,
    }
}

fn failure_page(err: &ToolError, request_id: &str) -> Response<Bytes> {
    if err.status().is_server_error() {
        tracing::error!(request_id, error = %err, "sign-in failed");
    }
    let main = format!(
        "<h1>Sign-in failed</h1>{}<p><a href=\"/review/signin\">Start again</a></p><p class=\"muted\">Reference: \
         <code>{}</code></p>",
        html::notice("error", &err.public_message()),
        html::text(request_id)
    );
    anonymous_page(err.status(), "Sign-in failed", &main)
}

/// `GET /review/signin/oidc`.
pub async fn start(app: &App, pages: &ReviewPages, request: &Request<Bytes>, request_id: &str) -> Response<Bytes> {
    let Some(oidc) = &pages.oidc else {
        let err = ToolError::NotFound("This deployment has no OpenID Connect sign-in configured.".into());
        return crate::anonymous_error(&err, request_id);
    };
    let query = Fields::of_query(request.uri());
    let client = match oidc.client(None).await {
        Ok(client) => client,
        Err(err) => return failure_page(&err, request_id),
    };
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut authorize = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .set_pkce_challenge(challenge)
        .add_extra_param("resource", oidc.resource.clone());
    for scope in &oidc.scopes {
        if scope != "openid" {
            authorize = authorize.add_scope(Scope::new(scope.clone()));
        }
    }
    let (url, state, nonce) = authorize.url();
    let now = app.clock().now();
    let in_progress = InProgress {
        state: state.secret().clone(),
        nonce: nonce.secret().clone(),
        verifier: verifier.secret().clone(),
        next: web::safe_next(query.get("next")),
        exp: now.timestamp().saturating_add(SIGN_IN_SECONDS),
    };
    let sealed = pages.keys.seal(SIGN_IN_PURPOSE, &in_progress);
    let mut response = web::found(url.as_str());
    web::set_cookie(
        &mut response,
        &pages.keys.cookie(pages.keys.sign_in_cookie(), &sealed, SIGN_IN_SECONDS),
    );
    response
}

/// `GET /review/callback`.
pub async fn callback(app: &App, pages: &ReviewPages, request: &Request<Bytes>, request_id: &str) -> Response<Bytes> {
    let Some(oidc) = &pages.oidc else {
        let err = ToolError::NotFound("This deployment has no OpenID Connect sign-in configured.".into());
        return crate::anonymous_error(&err, request_id);
    };
    match finish(app, pages, oidc, request).await {
        Ok((session, next)) => {
            let now = app.clock().now();
            let mut response = web::see_other(&next);
            web::set_cookie(&mut response, &pages.keys.session_set_cookie(&session, now));
            web::set_cookie(&mut response, &pages.keys.clear(pages.keys.sign_in_cookie()));
            tracing::info!(request_id, person = %session.person.user(), "signed in (OpenID Connect)");
            response
        }
        Err(err) => {
            let mut response = failure_page(&err, request_id);
            web::set_cookie(&mut response, &pages.keys.clear(pages.keys.sign_in_cookie()));
            response
        }
    }
}

async fn finish(
    app: &App,
    pages: &ReviewPages,
    oidc: &Oidc,
    request: &Request<Bytes>,
) -> Result<(Session, String), ToolError> {
    let query = Fields::of_query(request.uri());
    if let Some(error) = query.get("error") {
        return Err(sign_in_failed(format!(
            "The identity provider did not sign you in ({}{}). Nobody was signed in.",
            error.chars().take(64).collect::<String>(),
            query
                .get("error_description")
                .map(|d| format!(": {}", d.chars().take(200).collect::<String>()))
                .unwrap_or_default()
        )));
    }
    let now = app.clock().now();
    let in_progress: InProgress = web::cookie(request.headers(), pages.keys.sign_in_cookie())
        .and_then(|sealed| pages.keys.open(SIGN_IN_PURPOSE, sealed))
        .filter(|p: &InProgress| p.exp > now.timestamp())
        .ok_or_else(|| {
            sign_in_failed(
                "This sign-in expired or was started in another browser. Start again. Nobody was signed in.".into(),
            )
        })?;
    let (Some(code), Some(state)) = (query.get("code"), query.get("state")) else {
        return Err(sign_in_failed(
            "The identity provider sent no code. Start again. Nobody was signed in.".into(),
        ));
    };
    let same_state = state.len() == in_progress.state.len()
        && state
            .bytes()
            .zip(in_progress.state.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if !same_state {
        return Err(sign_in_failed(
            "This answer does not belong to the sign-in this browser started. Start again. Nobody was signed in."
                .into(),
        ));
    }
    let client = oidc.client(None).await?;
    let unavailable = |e: String| ToolError::dependency(e, "Nobody was signed in; try again in a moment.");
    let tokens = client
        .exchange_code(AuthorizationCode::new(code.to_owned()))
        .map_err(|e| unavailable(format!("no token endpoint: {e}")))?
        .set_pkce_verifier(PkceCodeVerifier::new(in_progress.verifier.clone()))
        .add_extra_param("resource", oidc.resource.clone())
        .request_async(&oidc.http)
        .await
        .map_err(|e| match e {
            openidconnect::RequestTokenError::ServerResponse(refused) => sign_in_failed(format!(
                "The identity provider refused the sign-in code ({}). Start again. Nobody was signed in.",
                refused.error()
            )),
            other => unavailable(format!("token request failed: {other}")),
        })?;
    let id_token = tokens
        .id_token()
        .ok_or_else(|| sign_in_failed("The identity provider sent no ID token. Nobody was signed in.".into()))?;
    let verifying = oidc.client(oidc.id_token_keys(&id_token.to_string()).await?).await?;
    let claims = id_token
        .claims(&verifying.id_token_verifier(), &Nonce::new(in_progress.nonce.clone()))
        .map_err(|e| sign_in_failed(format!("The ID token does not verify ({e}). Nobody was signed in.")))?;
    // Tenant, branch and scopes: from the access token, verified exactly as
    // a tool call's.
    let mut headers = HeaderMap::new();
    let bearer = HeaderValue::from_str(&format!("Bearer {}", tokens.access_token().secret()))
        .map_err(|_| sign_in_failed("The access token is not a token. Nobody was signed in.".into()))?;
    headers.insert(http::header::AUTHORIZATION, bearer);
    let verified = app.authenticator().verify(&headers).await.map_err(|err| match err {
        ToolError::DependencyUnavailable { .. } => err,
        other => sign_in_failed(format!(
            "The access token for this deployment does not verify: {} Nobody was signed in.",
            other.public_message().split(". ").next().unwrap_or_default()
        )),
    })?;
    let person = verified.caller;
    if person.user().as_str() != claims.subject().as_str() {
        return Err(sign_in_failed(
            "The ID token and the access token name different people. Nobody was signed in.".into(),
        ));
    }
    // The session lasts no longer than the access token it was opened with.
    let session = Session::start_bounded(
        person,
        SignedInWith::Oidc,
        now,
        pages.keys.max_session_seconds(),
        Some(verified.expires_at),
    );
    if session.expires_at <= now.timestamp() {
        return Err(sign_in_failed(
            "The access token expires now, so no session could start. Nobody was signed in.".into(),
        ));
    }
    Ok((session, in_progress.next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redirect_is_the_callback_of_the_resource_origin() {
        let config = Config::local("https://tools.example.com/mcp".into(), "http://127.0.0.1:1".into());
        let settings = OidcSettings {
            issuer: "https://id.example.com".into(),
            client_id: "draftline".into(),
            client_secret: None,
            scopes: vec!["openid".into()],
        };
        let oidc = Oidc::new(&settings, &config).unwrap();
        assert_eq!(oidc.redirect.as_str(), "https://tools.example.com/review/callback");
        assert_eq!(oidc.resource, "https://tools.example.com/mcp");
    }
}
