//! Production tokens: RS256 and ES256 from an identity provider's JWKS.
//!
//! A local JWKS server (real HTTP on 127.0.0.1, counting its requests) serves
//! a key set the test can rotate; keys are generated at test time. The app is
//! built with only a JWKS URL (no HS256 secret) and served by the local
//! server on a loopback port, against the embedded DynamoDB engine.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use bytes::Bytes;
use draftline_cli::shapes::shaped_claims;
use draftline_cli::{Shape, demo_spec, shaped_token};
use draftline_contract::clock::SystemClock;
use draftline_dynamo::Db;
use draftline_server::App;
use draftline_server::auth::JwksCache;
use draftline_server::auth::issuers::IssuerSettings;
use draftline_server::auth::jwks::{ManualTicker, REFRESH_INTERVAL};
use draftline_server::auth::mint::TokenClaims;
use draftline_server::config::{Config, LOCAL_DEV_SECRET};
use draftline_server::runtime::local;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::pkcs8::{EncodePrivateKey, LineEnding};
use rsa::pkcs1::EncodeRsaPrivateKey;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::helpers::{Reply, TestApp, spawn_app};

/// The identity provider's issuer.
const ISSUER: &str = "https://id.draftline.test";

/// A signing key of the identity provider, and its public JWK.
struct IdpKey {
    kid: &'static str,
    alg: Algorithm,
    encoding: EncodingKey,
    jwk: Jwk,
}

impl IdpKey {
    fn rsa(kid: &'static str) -> Self {
        let private = <rsa::PrivateKey as rsa::Generate>::generate();
        let pem = private.to_pkcs1_pem(rsa::pkcs1::LineEnding::LF).unwrap();
        Self::from_encoding(
            kid,
            Algorithm::RS256,
            EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap(),
        )
    }

    fn es256(kid: &'static str) -> Self {
        let private = <p256::SecretKey as p256::elliptic_curve::Generate>::generate();
        let pem = private.to_pkcs8_pem(LineEnding::LF).unwrap();
        Self::from_encoding(kid, Algorithm::ES256, EncodingKey::from_ec_pem(pem.as_bytes()).unwrap())
    }

    fn from_encoding(kid: &'static str, alg: Algorithm, encoding: EncodingKey) -> Self {
        draftline_contract::crypto::install_crypto_provider();
        let mut jwk = Jwk::from_encoding_key(&encoding, alg).unwrap();
        jwk.common.key_id = Some(kid.to_owned());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        Self {
            kid,
            alg,
            encoding,
            jwk,
        }
    }

    /// A token of demo user `user` for `resource`, signed with this key under `kid`.
    fn token_as(&self, kid: &str, user: &str, resource: &str) -> String {
        self.token_of(ISSUER, kid, user, resource)
    }

    /// [`Self::token_as`], saying it was issued by `issuer`.
    fn token_of(&self, issuer: &str, kid: &str, user: &str, resource: &str) -> String {
        let spec = demo_spec(user).unwrap();
        let claims = TokenClaims::new(
            issuer,
            resource,
            &spec.sub,
            &spec.tenant,
            &spec.branch,
            &spec.branch_code,
            &spec.scope,
            spec.roles,
            600,
        );
        self.sign(kid, &claims)
    }

    /// `claims`, signed with this key under `kid`.
    fn sign(&self, kid: &str, claims: &TokenClaims) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(kid.to_owned());
        header.typ = Some("at+jwt".to_owned());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }

    fn token(&self, user: &str, resource: &str) -> String {
        self.token_as(self.kid, user, resource)
    }
}

/// The keys of the tests, generated once per test run (RSA generation is slow unoptimised).
struct Keys {
    rsa_1: IdpKey,
    rsa_2: IdpKey,
    ec_1: IdpKey,
    /// Never published.
    stranger: IdpKey,
}

static KEYS: LazyLock<Keys> = LazyLock::new(|| Keys {
    rsa_1: IdpKey::rsa("rsa-2026-11"),
    rsa_2: IdpKey::rsa("rsa-2026-12"),
    ec_1: IdpKey::es256("ec-2026-11"),
    stranger: IdpKey::es256("stranger"),
});

async fn keys() -> &'static Keys {
    tokio::task::spawn_blocking(|| &*KEYS).await.unwrap()
}

/// The identity provider's JWKS endpoint: serves the published keys, counts requests.
struct JwksServer {
    addr: SocketAddr,
    published: Arc<Mutex<Vec<Jwk>>>,
    fetches: Arc<AtomicUsize>,
    behaviour: Arc<Behaviour>,
    down: tokio::sync::watch::Sender<bool>,
    server: JoinHandle<()>,
}

/// How the test provider answers, beyond the published keys.
#[derive(Default)]
struct Behaviour {
    /// Bytes of padding added to the body (an oversize key set).
    padding: AtomicUsize,
    /// While set, a fetch is held unanswered until `release` is notified.
    hold: std::sync::atomic::AtomicBool,
    release: tokio::sync::Notify,
}

fn jwks_response(
    published: &Mutex<Vec<Jwk>>,
    fetches: &AtomicUsize,
    behaviour: &Behaviour,
    request: &Request<Incoming>,
) -> Response<Full<Bytes>> {
    let mut response = if request.uri().path() == "/.well-known/jwks.json" {
        fetches.fetch_add(1, Ordering::SeqCst);
        let mut body = json!({"keys": published.lock().unwrap().clone()});
        let padding = behaviour.padding.load(Ordering::SeqCst);
        if padding > 0 {
            body["padding"] = json!("x".repeat(padding));
        }
        Response::new(Full::new(Bytes::from(body.to_string())))
    } else {
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = http::StatusCode::NOT_FOUND;
        response
    };
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

impl JwksServer {
    async fn start(keys: &[&IdpKey]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let published = Arc::new(Mutex::new(keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()));
        let fetches = Arc::new(AtomicUsize::new(0));
        let behaviour = Arc::new(Behaviour::default());
        let (down, mut went_down) = tokio::sync::watch::channel(false);
        let (set, count, how) = (published.clone(), fetches.clone(), behaviour.clone());
        let server = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                let stream = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => return,
                    },
                    changed = went_down.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        // Down: open connections are cut.
                        connections.abort_all();
                        continue;
                    }
                };
                if *went_down.borrow() {
                    // Down, but the port stays ours: every connection is closed at once.
                    drop(stream);
                    continue;
                }
                let (set, count, how) = (set.clone(), count.clone(), how.clone());
                connections.spawn(async move {
                    let service = service_fn(move |request: Request<Incoming>| {
                        let (set, count, how) = (set.clone(), count.clone(), how.clone());
                        async move {
                            let response = jwks_response(&set, &count, &how, &request);
                            if how.hold.load(Ordering::SeqCst) {
                                how.release.notified().await;
                            }
                            Ok::<_, Infallible>(response)
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self {
            addr,
            published,
            fetches,
            behaviour,
            down,
            server,
        }
    }

    /// Removes the key `kid` from the published set.
    fn withdraw(&self, kid: &str) {
        self.published
            .lock()
            .unwrap()
            .retain(|jwk| jwk.common.key_id.as_deref() != Some(kid));
    }

    /// Replaces the published set with exactly `jwks`.
    fn publish_exactly(&self, jwks: Vec<Jwk>) {
        *self.published.lock().unwrap() = jwks;
    }

    fn url(&self) -> String {
        format!("http://{}/.well-known/jwks.json", self.addr)
    }

    /// Adds a key to the published set (rotation: the new key appears next to the old one).
    fn publish(&self, key: &IdpKey) {
        self.published.lock().unwrap().push(key.jwk.clone());
    }

    /// How many times the set was fetched.
    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }

    /// Takes the provider down: open connections are cut and new ones closed
    /// unanswered (the port stays bound so no other test can take it).
    fn go_down(&self) {
        self.down.send_replace(true);
    }
}

impl Drop for JwksServer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// An app that accepts only the identity provider's tokens, served on a loopback port.
struct JwksApp {
    resource: String,
    http: reqwest::Client,
    server: JoinHandle<std::io::Result<()>>,
}

impl Drop for JwksApp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl JwksApp {
    /// Serves a new app (its own, empty JWKS cache) on `store`'s table.
    async fn start(store: &TestApp, jwks_url: String) -> Self {
        Self::start_with(store, |config| {
            config.jwt_secret = None;
            config.issuers = vec![IssuerSettings::single(ISSUER.to_owned(), Some(jwks_url), false)];
        })
        .await
    }

    /// Serves a new app on `store`'s table, its local settings changed by
    /// `configure`.
    async fn start_with(store: &TestApp, configure: impl FnOnce(&mut Config)) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let resource = format!("http://{}", listener.local_addr().unwrap());
        let endpoint = store.server.app.config().dynamodb_endpoint.clone().unwrap();
        let mut config = Config::local(resource.clone(), endpoint);
        config.table = store.server.app.config().table.clone();
        configure(&mut config);
        let db = Db::connect(&config.table, config.dynamodb_endpoint.as_deref()).await;
        let app = Arc::new(App::with_parts(
            draftline_erp::catalogue(std::sync::Arc::new(draftline_erp_builtin::BuiltinErp::new(db.clone()))),
            config,
            db,
            Arc::new(SystemClock),
        ));
        let server = tokio::spawn(local::serve(listener, app));
        Self {
            resource,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(15))
                .build()
                .unwrap(),
            server,
        }
    }

    /// Reads stock of BRG-0042 with `token`.
    async fn read_stock(&self, token: &str) -> Reply {
        self.post("inventory_get_stock", token, &[], json!({"item_code": "BRG-0042"}))
            .await
    }

    /// Drafts the README's purchase order with `token` under `key`.
    async fn draft_po(&self, token: &str, key: &str) -> Reply {
        let order = json!({"vendor_code": "V-00231", "needed_by": "2026-12-15", "client_ref": key, "note": null,
                           "lines": [{"item_code": "BRG-0042", "qty": 1, "uom": "BOX"}]});
        self.post("purchasing_create_po_draft", token, &[("idempotency-key", key)], order)
            .await
    }

    /// Calls `tool` with `token`, `headers` and `body`.
    async fn post(&self, tool: &str, token: &str, headers: &[(&str, &str)], body: serde_json::Value) -> Reply {
        let mut request = self
            .http
            .post(format!("{}/api/{tool}", self.resource))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.to_string());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("the app answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.json().await.unwrap();
        Reply { status, headers, body }
    }
}

/// buyer-sby's claims in `tenant` as `issuer` would issue them for `resource`.
fn claims(issuer: &str, tenant: &str, resource: &str) -> TokenClaims {
    TokenClaims::new(
        issuer,
        resource,
        "buyer-sby",
        tenant,
        "SBY-01",
        "SBY",
        "inventory:read",
        vec![],
        600,
    )
}

/// `claims` signed HS256 with the local development secret.
fn hs256(claims: &TokenClaims) -> String {
    draftline_server::auth::mint::mint_hs256(LOCAL_DEV_SECRET, claims).unwrap()
}

fn assert_unauthenticated(reply: &Reply, case: &str) {
    assert_eq!(reply.status, 401, "{case}: {:?}", reply.body);
    assert_eq!(reply.error_code(), "UNAUTHENTICATED", "{case}");
    assert!(reply.header("www-authenticate").is_some(), "{case}");
}

#[tokio::test]
async fn rs256_and_es256_tokens_of_the_identity_provider_are_accepted_with_one_fetch() {
    let keys = keys().await;
    let store = spawn_app().await;
    let idp = JwksServer::start(&[&keys.rsa_1, &keys.ec_1]).await;
    let app = JwksApp::start(&store, idp.url()).await;
    assert_eq!(idp.fetches(), 0, "nothing is fetched before the first call");

    let rs256 = app.read_stock(&keys.rsa_1.token("buyer-sby", &app.resource)).await;
    assert_eq!(rs256.status, 200, "{:?}", rs256.body);
    assert_eq!(rs256.body["data"]["branch_id"], "SBY-01");
    let es256 = app.read_stock(&keys.ec_1.token("buyer-jkt", &app.resource)).await;
    assert_eq!(es256.status, 200, "{:?}", es256.body);
    assert_eq!(es256.body["data"]["branch_id"], "JKT-01");
    for _ in 0..3 {
        let again = app.read_stock(&keys.ec_1.token("buyer-sby", &app.resource)).await;
        assert_eq!(again.status, 200);
    }
    assert_eq!(idp.fetches(), 1, "the key set is fetched once per warm instance");

    // A local development token is refused where only the identity provider is trusted.
    let local = hs256(&claims(ISSUER, "demo", &app.resource));
    assert_unauthenticated(&app.read_stock(&local).await, "hs256 without a secret");
}

#[tokio::test]
async fn each_trusted_issuer_verifies_its_own_tokens_its_own_way_and_an_unlisted_one_none() {
    let keys = keys().await;
    let store = spawn_app().await;
    let idp = JwksServer::start(&[&keys.rsa_1]).await;
    let issuers = draftline_server::auth::issuers::parse(&format!(
        r#"{{"issuers": [{{"issuer": "{ISSUER}", "jwks_url": "{}", "tenants": ["demo"]}},
                         {{"issuer": "draftline-local", "hs256": true, "claims": {{"tenant": {{"fixed": "demo"}}}}}}]}}"#,
        idp.url()
    ))
    .unwrap();
    let app = JwksApp::start_with(&store, |config| config.issuers = issuers).await;
    let hs256 = |issuer: &str| hs256(&claims(issuer, "demo", &app.resource));

    let idp_token = app.read_stock(&keys.rsa_1.token("buyer-sby", &app.resource)).await;
    assert_eq!(idp_token.status, 200, "{:?}", idp_token.body);
    let local = app.read_stock(&hs256("draftline-local")).await;
    assert_eq!(local.status, 200, "{:?}", local.body);
    // The identity provider's issuer signs RS256/ES256: an HS256 token
    // naming it is refused, though the deployment has an HS256 secret.
    assert_unauthenticated(&app.read_stock(&hs256(ISSUER)).await, "hs256 in the IdP's name");
    // The identity provider may name the demo tenant only.
    let globex = claims(ISSUER, "globex", &app.resource);
    let other_tenant = app.read_stock(&keys.rsa_1.sign(keys.rsa_1.kid, &globex)).await;
    assert_unauthenticated(&other_tenant, "a tenant the issuer may not name");
    assert!(
        other_tenant.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tenant 'globex'"),
        "{:?}",
        other_tenant.body
    );
    // An issuer not listed: refused before any key is fetched.
    let fetched = idp.fetches();
    let foreign = keys
        .rsa_1
        .token_of("https://other.example", keys.rsa_1.kid, "buyer-sby", &app.resource);
    assert_unauthenticated(&app.read_stock(&foreign).await, "an unlisted issuer");
    assert_eq!(idp.fetches(), fetched, "no key set was fetched for it");

    let metadata: serde_json::Value = app
        .http
        .get(format!("{}/.well-known/oauth-protected-resource", app.resource))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["authorization_servers"], json!([ISSUER, "draftline-local"]));
}

#[tokio::test]
async fn a_token_signed_by_a_key_outside_the_key_set_is_401() {
    let keys = keys().await;
    let store = spawn_app().await;
    let idp = JwksServer::start(&[&keys.rsa_1, &keys.ec_1]).await;
    let app = JwksApp::start(&store, idp.url()).await;

    let unknown_kid = app.read_stock(&keys.stranger.token("buyer-sby", &app.resource)).await;
    assert_unauthenticated(&unknown_kid, "unknown kid");
    // A published kid on a token signed by another key: the signature does not verify.
    let forged = app
        .read_stock(&keys.stranger.token_as(keys.ec_1.kid, "buyer-sby", &app.resource))
        .await;
    assert_unauthenticated(&forged, "published kid, other key");
    assert!(forged.message().contains("signature"), "{}", forged.message());
    // A published RSA kid claimed by an ES256 token: algorithm confusion.
    let confused = app
        .read_stock(&keys.stranger.token_as(keys.rsa_1.kid, "buyer-sby", &app.resource))
        .await;
    assert_unauthenticated(&confused, "rsa kid, es256 token");
    // A good key, but a token for another deployment.
    let elsewhere = app
        .read_stock(&keys.rsa_1.token("buyer-sby", "https://elsewhere.example.com"))
        .await;
    assert_unauthenticated(&elsewhere, "wrong audience");
}

#[tokio::test]
async fn a_rotated_key_is_accepted_after_one_refetch() {
    let keys = keys().await;
    let store = spawn_app().await;
    let idp = JwksServer::start(&[&keys.rsa_1, &keys.ec_1]).await;
    let app = JwksApp::start(&store, idp.url()).await;
    assert_eq!(
        app.read_stock(&keys.rsa_1.token("buyer-sby", &app.resource))
            .await
            .status,
        200
    );
    assert_eq!(idp.fetches(), 1);

    // The identity provider rotates: the new key is published next to the old one.
    idp.publish(&keys.rsa_2);
    let rotated = app.read_stock(&keys.rsa_2.token("buyer-sby", &app.resource)).await;
    assert_eq!(rotated.status, 200, "{:?}", rotated.body);
    assert_eq!(idp.fetches(), 2, "one refetch for the new kid");
    for key in [&keys.rsa_1, &keys.rsa_2, &keys.ec_1] {
        assert_eq!(app.read_stock(&key.token("buyer-sby", &app.resource)).await.status, 200);
    }
    assert_eq!(idp.fetches(), 2, "known kids are served from the cache");
}

#[tokio::test]
async fn unknown_kids_refetch_the_key_set_at_most_once_per_minute() {
    let keys = keys().await;
    let store = spawn_app().await;
    let idp = JwksServer::start(&[&keys.rsa_1]).await;
    let app = JwksApp::start(&store, idp.url()).await;
    assert_eq!(
        app.read_stock(&keys.rsa_1.token("buyer-sby", &app.resource))
            .await
            .status,
        200
    );
    assert_eq!(idp.fetches(), 1);

    // A flood of forged kids, some concurrent: one refetch, then the cache answers.
    let forged: Vec<String> = (0..12)
        .map(|i| {
            keys.stranger
                .token_as(&format!("forged-{i}"), "buyer-sby", &app.resource)
        })
        .collect();
    let replies = futures::future::join_all(forged.iter().map(|t| app.read_stock(t))).await;
    for (i, reply) in replies.iter().enumerate() {
        assert_unauthenticated(reply, &format!("forged kid {i}"));
    }
    assert_eq!(idp.fetches(), 2, "at most one refetch within the minute");

    // A key published within that minute is not fetched for yet: the limit holds.
    idp.publish(&keys.ec_1);
    assert_unauthenticated(
        &app.read_stock(&keys.ec_1.token("buyer-sby", &app.resource)).await,
        "new kid within the minute",
    );
    assert_eq!(idp.fetches(), 2);
}

#[tokio::test]
async fn the_refetch_limit_opens_again_once_a_minute_has_passed() {
    let keys = keys().await;
    let idp = JwksServer::start(&[&keys.rsa_1]).await;
    let ticker = ManualTicker::new();
    let cache = JwksCache::with_ticker(idp.url(), Arc::new(ticker.clone()));

    assert!(cache.key(keys.rsa_1.kid, Algorithm::RS256).await.is_ok());
    assert!(cache.key("forged-1", Algorithm::RS256).await.is_err());
    assert_eq!(idp.fetches(), 2, "first load, then one refetch");
    idp.publish(&keys.ec_1);
    ticker.advance(REFRESH_INTERVAL - Duration::from_secs(1));
    assert!(cache.key(keys.ec_1.kid, Algorithm::ES256).await.is_err());
    assert_eq!(idp.fetches(), 2, "59 s later: still within the minute");

    ticker.advance(Duration::from_secs(1));
    assert!(cache.key(keys.ec_1.kid, Algorithm::ES256).await.is_ok());
    assert_eq!(idp.fetches(), 3, "a minute later: one more refetch");
    for i in 0..5 {
        assert!(cache.key(&format!("forged-{i}"), Algorithm::RS256).await.is_err());
    }
    assert_eq!(idp.fetches(), 3);
    // The key found is usable with its own algorithm only.
    assert!(cache.key(keys.ec_1.kid, Algorithm::RS256).await.is_err());
}

#[tokio::test]
async fn an_unreachable_key_set_is_503_dependency_unavailable_not_401() {
    let keys = keys().await;
    let store = spawn_app().await;
    let idp = JwksServer::start(&[&keys.rsa_1, &keys.ec_1]).await;
    let warm = JwksApp::start(&store, idp.url()).await;
    assert_eq!(
        warm.read_stock(&keys.rsa_1.token("buyer-sby", &warm.resource))
            .await
            .status,
        200
    );

    idp.go_down();
    let cold = JwksApp::start(&store, idp.url()).await;
    let unknown_to_warm = keys.rsa_2.token("buyer-sby", &warm.resource);
    for (case, app, token) in [
        ("cold instance", &cold, keys.rsa_1.token("buyer-sby", &cold.resource)),
        ("warm instance, uncached kid", &warm, unknown_to_warm.clone()),
        // Right after the failure the cache does not hammer the provider, and still says 503.
        ("warm instance, again", &warm, unknown_to_warm),
    ] {
        let reply = app.read_stock(&token).await;
        assert_eq!(reply.status, 503, "{case}: {:?}", reply.body);
        assert_eq!(reply.error_code(), "DEPENDENCY_UNAVAILABLE", "{case}");
        assert_eq!(reply.body["error"]["retryable"], true, "{case}");
        assert_eq!(reply.header("retry-after"), Some("5"), "{case}");
        assert_eq!(reply.body["error"]["retryAfterSeconds"], 5, "{case}");
        assert!(reply.message().contains("Nothing was read or written"), "{case}");
        assert!(
            reply.header("www-authenticate").is_none(),
            "{case}: not an auth failure"
        );
    }
    assert_eq!(idp.fetches(), 1, "nothing was served while down");
    // A cached key keeps working through the outage.
    let cached = warm.read_stock(&keys.ec_1.token("buyer-sby", &warm.resource)).await;
    assert_eq!(cached.status, 200, "{:?}", cached.body);
}

#[tokio::test]
async fn a_key_the_provider_withdrew_stops_verifying_once_the_set_is_past_its_max_age() {
    use draftline_server::auth::jwks::DEFAULT_MAX_AGE;
    let keys = keys().await;
    let idp = JwksServer::start(&[&keys.rsa_1, &keys.rsa_2]).await;
    let ticker = ManualTicker::new();
    let cache = JwksCache::with_ticker(idp.url(), Arc::new(ticker.clone()));
    assert!(cache.key(keys.rsa_2.kid, Algorithm::RS256).await.is_ok());
    idp.withdraw(keys.rsa_2.kid);
    ticker.advance(DEFAULT_MAX_AGE - Duration::from_secs(1));
    assert!(
        cache.key(keys.rsa_2.kid, Algorithm::RS256).await.is_ok(),
        "within its max age the set is used as fetched"
    );
    assert_eq!(idp.fetches(), 1);
    ticker.advance(Duration::from_secs(1));
    assert!(
        cache.key(keys.rsa_2.kid, Algorithm::RS256).await.is_err(),
        "past its max age the set is fetched again and the withdrawn key is gone"
    );
    assert_eq!(idp.fetches(), 2);
    assert!(cache.key(keys.rsa_1.kid, Algorithm::RS256).await.is_ok());
    assert_eq!(idp.fetches(), 2);
}

#[tokio::test]
async fn a_jwk_for_encryption_or_for_another_algorithm_never_verifies_a_token() {
    use jsonwebtoken::jwk::{KeyAlgorithm, KeyOperations};
    let keys = keys().await;
    let idp = JwksServer::start(&[]).await;
    let mut for_encryption = keys.rsa_1.jwk.clone();
    for_encryption.common.public_key_use = Some(PublicKeyUse::Encryption);
    let mut other_alg = keys.rsa_2.jwk.clone();
    other_alg.common.key_algorithm = Some(KeyAlgorithm::RS384);
    let mut wrapping_only = keys.ec_1.jwk.clone();
    wrapping_only.common.key_operations = Some(vec![KeyOperations::WrapKey]);
    idp.publish_exactly(vec![for_encryption, other_alg, wrapping_only]);
    let cache = JwksCache::new(idp.url());
    for (kid, alg) in [
        (keys.rsa_1.kid, Algorithm::RS256),
        (keys.rsa_2.kid, Algorithm::RS256),
        (keys.ec_1.kid, Algorithm::ES256),
    ] {
        assert!(cache.key(kid, alg).await.is_err(), "{kid}");
    }
    // The same keys marked for signatures with their own algorithm verify.
    let mut signing = keys.rsa_2.jwk.clone();
    signing.common.key_algorithm = Some(KeyAlgorithm::RS256);
    idp.publish_exactly(vec![signing]);
    let fresh = JwksCache::new(idp.url());
    assert!(fresh.key(keys.rsa_2.kid, Algorithm::RS256).await.is_ok());
}

#[tokio::test]
async fn an_oversize_key_set_is_not_read_and_is_503() {
    let keys = keys().await;
    let idp = JwksServer::start(&[&keys.rsa_1]).await;
    idp.behaviour.padding.store(200 * 1024, Ordering::SeqCst);
    let cache = JwksCache::new(idp.url());
    let err = cache.key(keys.rsa_1.kid, Algorithm::RS256).await.err().unwrap();
    assert_eq!(err.code().as_str(), "DEPENDENCY_UNAVAILABLE");
    idp.behaviour.padding.store(0, Ordering::SeqCst);
    let fine = JwksCache::new(idp.url());
    assert!(fine.key(keys.rsa_1.kid, Algorithm::RS256).await.is_ok());
}

#[tokio::test]
async fn a_cached_key_is_answered_while_a_refetch_waits_on_the_provider() {
    let keys = keys().await;
    let idp = JwksServer::start(&[&keys.rsa_1]).await;
    let cache = Arc::new(JwksCache::new(idp.url()));
    assert!(cache.key(keys.rsa_1.kid, Algorithm::RS256).await.is_ok());

    // An unknown kid makes the cache refetch, and the provider holds that answer.
    idp.behaviour.hold.store(true, Ordering::SeqCst);
    let waiting = {
        let cache = cache.clone();
        tokio::spawn(async move { cache.key("rotated-kid", Algorithm::RS256).await.is_ok() })
    };
    while idp.fetches() < 2 {
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The cached key does not wait behind that fetch.
    assert!(cache.key(keys.rsa_1.kid, Algorithm::RS256).await.is_ok());
    assert!(!waiting.is_finished(), "the refetch is still held by the provider");
    idp.behaviour.hold.store(false, Ordering::SeqCst);
    idp.behaviour.release.notify_waiters();
    assert!(!waiting.await.unwrap(), "the rotated kid is not in the set");
}

#[tokio::test]
async fn each_shape_the_token_command_mints_reads_stock_and_drafts_through_the_local_mappings() {
    // docs/identity.local.json, as `draftline serve` reads it from
    // DRAFTLINE_ISSUERS: one HS256 issuer per provider's shape.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/identity.local.json");
    let issuers = draftline_server::auth::issuers::read(path).unwrap();
    let store = spawn_app().await;
    // Each shape drafts the same order: no near-duplicate question.
    let app = JwksApp::start_with(&store, |config| {
        config.issuers = issuers;
        config.near_duplicate_window = None;
    })
    .await;
    let spec = demo_spec("buyer-sby").unwrap();
    for shape in Shape::ALL {
        let token = shaped_token(&spec, shape, &app.resource, 600).unwrap();
        let stock = app.read_stock(&token).await;
        assert_eq!(stock.status, 200, "{shape:?}: {:?}", stock.body);
        let key = format!("shape-{shape:?}").to_lowercase();
        let drafted = app.draft_po(&token, &key).await;
        assert_eq!(drafted.status, 201, "{shape:?}: {:?}", drafted.body);
        assert_eq!(drafted.body["data"]["drafted_on_behalf_of"], "buyer-sby", "{shape:?}");
        assert_eq!(drafted.body["data"]["branch_id"], "SBY-01", "{shape:?}");
        let audits = store.audit_items().await;
        // This shape's own draft's audit item (by its number), not an earlier one's.
        let number = drafted.body["data"]["po_number"].as_str().unwrap();
        let audit = audits
            .iter()
            .find(|a| a.get("document_number").map(String::as_str) == Some(number))
            .expect("the draft's audit item");
        assert_eq!(
            (
                audit.get("tenant_id").map(String::as_str),
                audit.get("branch_id").map(String::as_str),
                audit.get("on_behalf_of").map(String::as_str),
            ),
            (Some("demo"), Some("SBY-01"), Some("buyer-sby")),
            "{shape:?}: {audit:?}"
        );
    }
    // A shape under another shape's issuer does not map: the Okta issuer
    // reads the branch from `branch_id`, which a Keycloak-shaped token
    // lacks (it names a group).
    let keycloak = shaped_claims(&spec, Shape::Keycloak, "draftline-local-okta", &app.resource, 600);
    let keycloak = draftline_server::auth::mint::mint_hs256(LOCAL_DEV_SECRET, &keycloak).unwrap();
    let refused = app.read_stock(&keycloak).await;
    assert_unauthenticated(&refused, "a Keycloak shape under the Okta issuer");
    let message = refused.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("claim 'branch_id' is missing"), "{message}");
}
