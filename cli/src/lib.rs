//! # draftline-cli
//!
//! The `draftline` command (see `main.rs`) and the local server it starts,
//! as a library so the tests start exactly the same server.
//!
//! - [`start_local`]: the embedded DynamoDB engine (or another endpoint), the
//!   table from `infra/`, the demo data, and every function on one loopback port.
//! - [`demo_token`] / [`token_for`]: HS256 tokens with the local defaults.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use draftline_contract::clock::{Clock, SystemClock};
use draftline_dynamo::Db;
use draftline_erp_builtin::seed::{Seeded, seed_demo};
use draftline_infra::EmbeddedDynamo;
use draftline_server::App;
use draftline_server::auth::mint::{TokenClaims, mint_hs256};
use draftline_server::config::{Config, LOCAL_DEV_SECRET, LOCAL_ISSUER, Secret};
use draftline_server::runtime::local;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// How to start the local server.
#[derive(Clone, Default)]
pub struct LocalOptions {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Persist the embedded engine's data in this file (in memory if `None`).
    pub data: Option<PathBuf>,
    /// Use this DynamoDB API instead of the embedded engine.
    pub dynamodb_endpoint: Option<String>,
    /// The clock (tests inject one).
    pub clock: Option<Arc<dyn Clock>>,
    /// A per-user call budget per minute (else `DRAFTLINE_RATE_LIMIT_PER_MINUTE`).
    pub rate_limit_per_minute: Option<u32>,
    /// The time limit of one call (else `DRAFTLINE_CALL_DEADLINE_SECONDS` or the default).
    pub call_deadline: Option<std::time::Duration>,
    /// Turn the near-duplicate question off (tests that draft the same items many times).
    pub no_near_duplicate_check: bool,
}

/// A running local server. Dropping it stops the server and the engine.
pub struct LocalServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The app it serves (tests read its round-trip counts and table).
    pub app: Arc<App>,
    /// What seeding did.
    pub seeded: Seeded,
    server: JoinHandle<std::io::Result<()>>,
    _engine: Option<EmbeddedDynamo>,
}

impl LocalServer {
    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The local configuration: DESIGN.md defaults, each overridable by its environment variable.
pub fn local_config(resource: String, endpoint: String) -> Config {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let mut config = Config::local(env("DRAFTLINE_RESOURCE").unwrap_or(resource), endpoint);
    if let Some(table) = env("DRAFTLINE_TABLE") {
        config.table = table;
    }
    if let Some(issuer) = env("DRAFTLINE_ISSUER") {
        config.issuer = issuer;
    }
    if let Some(secret) = env("DRAFTLINE_JWT_SECRET") {
        config.jwt_secret = Some(Secret::new(secret));
    }
    config.jwks_url = env("DRAFTLINE_JWKS_URL");
    if let Some(secret) = env("DRAFTLINE_CURSOR_SECRET") {
        config.cursor_secret = Some(Secret::new(secret));
    }
    config.rate_limit_per_minute = env("DRAFTLINE_RATE_LIMIT_PER_MINUTE")
        .and_then(|v| v.trim().parse().ok())
        .filter(|n: &u32| *n > 0);
    if let Some(ttl) = env("DRAFTLINE_IDEMPOTENCY_TTL_SECONDS").and_then(|v| v.parse().ok()) {
        config.idempotency_ttl = std::time::Duration::from_secs(ttl);
    }
    if let Some(hours) = env("DRAFTLINE_NEAR_DUPLICATE_HOURS").and_then(|v| v.trim().parse::<u64>().ok()) {
        config.near_duplicate_window = (hours > 0).then(|| std::time::Duration::from_secs(hours.saturating_mul(3600)));
    }
    if let Some(secs) = env("DRAFTLINE_CALL_DEADLINE_SECONDS").and_then(|v| v.parse::<f64>().ok())
        && (1.0..=900.0).contains(&secs)
    {
        config.call_deadline = std::time::Duration::from_secs_f64(secs);
    }
    config
}

/// Starts the local server: engine, table, demo data, every function.
pub async fn start_local(options: LocalOptions) -> anyhow::Result<LocalServer> {
    let (engine, endpoint) = match options.dynamodb_endpoint {
        Some(endpoint) => (None, endpoint),
        None => {
            let engine = EmbeddedDynamo::start(options.data.as_deref())
                .await
                .context("starting the embedded DynamoDB engine")?;
            let endpoint = engine.endpoint();
            (Some(engine), endpoint)
        }
    };
    let listener = TcpListener::bind(("127.0.0.1", options.port))
        .await
        .with_context(|| format!("binding 127.0.0.1:{}", options.port))?;
    let addr = listener.local_addr()?;
    let mut config = local_config(format!("http://{addr}"), endpoint);
    if options.rate_limit_per_minute.is_some() {
        config.rate_limit_per_minute = options.rate_limit_per_minute;
    }
    if let Some(deadline) = options.call_deadline {
        config.call_deadline = deadline;
    }
    if options.no_near_duplicate_check {
        config.near_duplicate_window = None;
    }
    let db = Db::connect(&config.table, config.dynamodb_endpoint.as_deref()).await;
    draftline_infra::create_table(db.client(), db.table())
        .await
        .context("creating the table")?;
    let seeded = seed_demo(&db).await.context("seeding the demo data")?;
    let clock = options.clock.unwrap_or_else(|| Arc::new(SystemClock));
    let registry = draftline_erp_backends::catalogue(&config, &db)?;
    let app = Arc::new(App::with_parts(registry, config, db, clock));
    let server = tokio::spawn(local::serve(listener, app.clone()));
    Ok(LocalServer {
        addr,
        app,
        seeded,
        server,
        _engine: engine,
    })
}

/// What a token should say.
#[derive(Debug, Clone)]
pub struct TokenSpec {
    /// Subject.
    pub sub: String,
    /// Tenant.
    pub tenant: String,
    /// Branch id.
    pub branch: String,
    /// Branch code.
    pub branch_code: String,
    /// Space-separated scopes.
    pub scope: String,
    /// Roles.
    pub roles: Vec<String>,
}

/// A token for `spec`, signed with the local secret (or `DRAFTLINE_JWT_SECRET`),
/// issued by the local issuer (or `DRAFTLINE_ISSUER`), for `resource`.
pub fn token_for(spec: &TokenSpec, resource: &str, ttl_seconds: i64) -> anyhow::Result<String> {
    let secret = std::env::var("DRAFTLINE_JWT_SECRET").unwrap_or_else(|_| LOCAL_DEV_SECRET.to_owned());
    let issuer = std::env::var("DRAFTLINE_ISSUER").unwrap_or_else(|_| LOCAL_ISSUER.to_owned());
    let claims = TokenClaims::new(
        &issuer,
        resource,
        &spec.sub,
        &spec.tenant,
        &spec.branch,
        &spec.branch_code,
        &spec.scope,
        spec.roles.clone(),
        ttl_seconds,
    );
    Ok(mint_hs256(&secret, &claims)?)
}

/// The token spec of a demo user.
pub fn demo_spec(user: &str) -> anyhow::Result<TokenSpec> {
    let known: Vec<&str> = draftline_erp::demo::USERS.iter().map(|u| u.sub).collect();
    let u = draftline_erp::demo::user(user)
        .with_context(|| format!("'{user}' is not a demo user; demo users: {}", known.join(", ")))?;
    Ok(TokenSpec {
        sub: u.sub.into(),
        tenant: draftline_erp::demo::TENANT.into(),
        branch: u.branch_id.into(),
        branch_code: u.branch_code.into(),
        scope: u.scope.into(),
        roles: u.roles.iter().map(|r| (*r).to_owned()).collect(),
    })
}

/// A one-hour token for a demo user.
pub fn demo_token(user: &str, resource: &str) -> anyhow::Result<String> {
    token_for(&demo_spec(user)?, resource, 3600)
}
