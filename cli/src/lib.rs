//! # draftline-cli
//!
//! The `draftline` command (see `main.rs`) and the local server it starts,
//! as a library so the tests start exactly the same server.
//!
//! - [`start_local`]: the embedded DynamoDB engine (or another endpoint), the
//!   table from `infra/`, the demo data, and every function on one loopback port.
//! - [`demo_token`] / [`token_for`]: HS256 tokens with the local defaults.
//! - [`policy`]: `draftline policy show|set|schema`, and the demo's policy seed.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use draftline_contract::clock::{Clock, SystemClock};
use draftline_contract::settings::{ConfigError, Source};
use draftline_dynamo::Db;
use draftline_erp_backends::{Backend, ErpSettings};
use draftline_erp_builtin::seed::{Seeded, seed_demo};
use draftline_erp_tryton::{LocalTryton, TrytonSettings};
use draftline_infra::EmbeddedDynamo;
use draftline_review::settings::ReviewSettings;
use draftline_server::App;
use draftline_server::auth::mint::mint_hs256;
use draftline_server::config::{Config, LOCAL_DEV_SECRET, LOCAL_ISSUER};
use draftline_server::events::mail::{LocalMailbox, Mailer};
use draftline_server::events::sweep::Sweeper;
use draftline_server::runtime::local;
use draftline_server::storage::DynamoTable;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub mod notify;
pub mod policy;
pub mod shapes;

pub use shapes::Shape;

/// Which ERP the local server's tools use.
#[derive(Clone, Debug, Default)]
pub enum LocalErp {
    /// The demo ERP in draftline's own table, seeded on start (or whatever
    /// `DRAFTLINE_ERP` and its variables name in the environment).
    #[default]
    Builtin,
    /// A Tryton database that is already served (the tests' pool databases).
    Tryton(TrytonSettings),
    /// A trytond this process starts with the demo database (installed into
    /// the cache on first use) and stops when it stops: `serve --erp tryton`.
    LocalTryton,
}

/// How to start the local server.
#[derive(Clone, Default)]
pub struct LocalOptions {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Keep the data in this directory across restarts: the embedded
    /// engine's `dynamodb.sqlite` and, with a local Tryton, its `tryton/`
    /// databases (everything in memory or a temporary directory if `None`).
    pub data: Option<PathBuf>,
    /// Use this DynamoDB API instead of the embedded engine.
    pub dynamodb_endpoint: Option<String>,
    /// The ERP behind the tools.
    pub erp: LocalErp,
    /// The clock (tests inject one).
    pub clock: Option<Arc<dyn Clock>>,
    /// A per-user call budget per minute (else `DRAFTLINE_RATE_LIMIT_PER_MINUTE`).
    pub rate_limit_per_minute: Option<u32>,
    /// The time limit of one call (else `DRAFTLINE_CALL_DEADLINE_SECONDS` or the default).
    pub call_deadline: Option<std::time::Duration>,
    /// The lease of a key whose work leaves DynamoDB (else `DRAFTLINE_LEASE_SECONDS` or the default).
    pub lease: Option<std::time::Duration>,
    /// Turn the near-duplicate question off (tests that draft the same items many times).
    pub no_near_duplicate_check: bool,
    /// Settings that win over the environment's (tests set `OTEL_*` here).
    pub settings: Vec<(String, String)>,
    /// Deliver the outbox's events beside the server (`None`: leave them).
    pub sweep: Option<Sweep>,
}

/// The outbox sweeper `draftline serve` runs beside its server, on a
/// DynamoDB client of its own (so the calls' request counts stay theirs).
#[derive(Clone, Debug)]
pub struct Sweep {
    /// How often it sweeps.
    pub every: std::time::Duration,
    /// How often it asks an ERP whose people decide in its own workflow
    /// (Tryton) for the decisions made there.
    pub poll_every: std::time::Duration,
    /// Where webhooks may go.
    pub reach: draftline_server::events::endpoint::Reach,
    /// Where e-mail goes (`None`: kept on the review pages' `/review/mail`).
    pub mailer: Option<Mailer>,
    /// How long a claimed delivery is the sweeper's (`None`: the default).
    pub lease: Option<std::time::Duration>,
}

/// A running local server. Dropping it stops the server, the engine and a
/// local Tryton.
pub struct LocalServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The app it serves (tests read its round-trip counts and table).
    pub app: Arc<App>,
    /// The ERP behind the tools (tests read its request count).
    pub backend: Backend,
    /// What seeding the built-in backend did (`None` on another backend).
    pub seeded: Option<Seeded>,
    /// The review pages' settings (tests seal sessions with their keys).
    pub review: ReviewSettings,
    /// The Tryton database behind the tools, when there is one: its base URL,
    /// database and REST key, for a person (or a test) to look at directly.
    pub tryton: Option<TrytonSettings>,
    server: JoinHandle<std::io::Result<()>>,
    sweeper: Option<JoinHandle<()>>,
    poller: Option<JoinHandle<()>>,
    _engine: Option<EmbeddedDynamo>,
    _local_tryton: Option<LocalTrytonRun>,
}

impl LocalServer {
    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The trytond this server started (`LocalErp::LocalTryton`): its web
    /// client and the demo people's Tryton sign-ins.
    pub fn local_tryton(&self) -> Option<&LocalTryton> {
        self._local_tryton.as_ref().and_then(|run| run.tryton.as_ref())
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        self.server.abort();
        for task in [&self.sweeper, &self.poller].into_iter().flatten() {
            task.abort();
        }
    }
}

/// A trytond started for this server, and the temporary directory of its
/// databases when they are not kept (removed after trytond stopped).
struct LocalTrytonRun {
    tryton: Option<LocalTryton>,
    scratch: Option<tempfile::TempDir>,
}

impl Drop for LocalTrytonRun {
    fn drop(&mut self) {
        // trytond first, then the directory it was serving.
        drop(self.tryton.take());
        drop(self.scratch.take());
    }
}

/// The local server's settings source: the environment over local
/// defaults for what a deployment must set (resource, issuer, the
/// development secret, the session secret). [`start_local`] adds overrides
/// for what it decides itself (the engine it started, the Tryton it
/// started). Every owner parses it as in a deployment, so a malformed
/// variable is refused.
///
/// The review pages' sessions are not signed with the public development
/// secret: a page on another local port could compute a session cookie and
/// its CSRF token from it. Unless `DRAFTLINE_SESSION_SECRET` is set, each
/// process signs them with its own random secret, so a restart signs
/// everyone out.
pub fn local_source(resource: &str) -> Source {
    let source = Source::env()
        .or("DRAFTLINE_RESOURCE", resource)
        .or("DRAFTLINE_JWT_SECRET", LOCAL_DEV_SECRET)
        .or("DRAFTLINE_SESSION_SECRET", process_session_secret());
    // A settings file of issuers (docs/identity.md) names them all.
    match source.get(draftline_server::auth::issuers::VARIABLE) {
        Some(_) => source,
        None => source.or("DRAFTLINE_ISSUER", LOCAL_ISSUER),
    }
}

/// This process's random session secret (32 bytes from the thread's
/// CSPRNG, hex), the same for every server the process starts.
fn process_session_secret() -> &'static str {
    static SECRET: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SECRET.get_or_init(|| {
        rand::random::<[u8; 32]>()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    })
}

/// `source` pointing the tools at one Tryton database.
fn with_tryton(source: Source, settings: &TrytonSettings) -> Source {
    let source = source
        .with("DRAFTLINE_ERP", "tryton")
        .with("DRAFTLINE_TRYTON_URL", settings.url.as_str())
        .with("DRAFTLINE_TRYTON_DATABASE", settings.database.as_str())
        .with("DRAFTLINE_TRYTON_KEY", settings.key.expose());
    let source = match &settings.tenant {
        Some(tenant) => source.with("DRAFTLINE_TRYTON_TENANT", tenant.as_str()),
        None => source,
    };
    if settings.request_timeout == draftline_erp_tryton::settings::DEFAULT_REQUEST_TIMEOUT {
        return source;
    }
    source.with(
        "DRAFTLINE_TRYTON_REQUEST_TIMEOUT_SECONDS",
        settings.request_timeout.as_secs_f64().to_string(),
    )
}

/// Every owner's settings from `source`, in the order a deployed function
/// reads them: the server's, the ERP's, the review pages'.
fn local_settings(source: &Source) -> Result<(Config, ErpSettings, ReviewSettings), ConfigError> {
    Ok((
        Config::from_source(source)?,
        ErpSettings::from_source(source)?,
        ReviewSettings::from_source(source)?,
    ))
}

/// Starts trytond with the demo database, in `data/tryton` or a temporary
/// directory (blocking: the first run installs Tryton, ~2 min).
async fn start_local_tryton(data: Option<&Path>) -> anyhow::Result<(LocalTrytonRun, TrytonSettings)> {
    let (dir, scratch) = match data {
        Some(data) => (data.join("tryton"), None),
        None => {
            let scratch = tempfile::Builder::new()
                .prefix("draftline-tryton-")
                .tempdir()
                .context("creating a temporary directory for the Tryton database")?;
            (scratch.path().to_owned(), Some(scratch))
        }
    };
    let tryton = tokio::task::spawn_blocking(move || {
        let cache = LocalTryton::default_cache_dir()?;
        LocalTryton::start(&cache, &dir, &["demo"], None)
    })
    .await
    .context("starting trytond")?
    .context("starting trytond")?;
    let db = tryton
        .databases()
        .first()
        .context("trytond serves no database")?
        .clone();
    let settings = TrytonSettings::new(tryton.url(), db.name, db.key).serving(draftline_erp::demo::TENANT);
    Ok((
        LocalTrytonRun {
            tryton: Some(tryton),
            scratch,
        },
        settings,
    ))
}

/// Starts the local server: engine, table, ERP (seeding the built-in one),
/// every function.
pub async fn start_local(options: LocalOptions) -> anyhow::Result<LocalServer> {
    if let Some(data) = &options.data {
        if data.is_file() {
            anyhow::bail!(
                "--data takes a directory now; move {} to {}/dynamodb.sqlite",
                data.display(),
                data.display()
            );
        }
        std::fs::create_dir_all(data).with_context(|| format!("creating {}", data.display()))?;
    }
    let (engine, endpoint) = match options.dynamodb_endpoint {
        Some(endpoint) => (None, endpoint),
        None => {
            let file = options.data.as_ref().map(|d| d.join("dynamodb.sqlite"));
            let engine = EmbeddedDynamo::start(file.as_deref())
                .await
                .context("starting the embedded DynamoDB engine")?;
            let endpoint = engine.endpoint();
            (Some(engine), endpoint)
        }
    };
    let (local_tryton, tryton) = match options.erp {
        LocalErp::Builtin => (None, None),
        LocalErp::Tryton(settings) => (None, Some(settings)),
        LocalErp::LocalTryton => {
            let (run, settings) = start_local_tryton(options.data.as_deref()).await?;
            (Some(run), Some(settings))
        }
    };
    let listener = TcpListener::bind(("127.0.0.1", options.port))
        .await
        .with_context(|| format!("binding 127.0.0.1:{}", options.port))?;
    let addr = listener.local_addr()?;
    let mut source = local_source(&format!("http://{addr}")).with("DRAFTLINE_DYNAMODB_ENDPOINT", endpoint);
    if let Some(settings) = &tryton {
        source = with_tryton(source, settings);
    }
    for (name, value) in &options.settings {
        source = source.with(name, value.as_str());
    }
    let (mut config, erp, mut review) = local_settings(&source).context("reading the configuration")?;
    if options.rate_limit_per_minute.is_some() {
        config.rate_limit_per_minute = options.rate_limit_per_minute;
    }
    if let Some(deadline) = options.call_deadline {
        config.call_deadline = deadline;
    }
    if let Some(lease) = options.lease {
        config.lease = lease;
    }
    if options.no_near_duplicate_check {
        config.near_duplicate_window = None;
    }
    // The review pages' demo sign-in: only this local server offers it,
    // never a deployed function (no environment variable can turn it on).
    review.demo_sign_in = true;
    let tryton = match &erp {
        ErpSettings::Tryton(settings) => Some(settings.clone()),
        ErpSettings::Builtin => None,
    };
    let db = Db::connect(&config.table, config.dynamodb_endpoint.as_deref()).await;
    draftline_infra::create_table(db.client(), db.table())
        .await
        .context("creating the table")?;
    let seeded = match erp {
        ErpSettings::Builtin => Some(seed_demo(&db).await.context("seeding the demo data")?),
        ErpSettings::Tryton(_) => None,
    };
    let clock = options.clock.unwrap_or_else(|| Arc::new(SystemClock));
    let backend = Backend::connect(&erp, &db)?;
    let pages = draftline_review::ReviewPages::new(&config, &review, backend.erp())?;
    // Without an SMTP server, the sweeper's mail is kept for the pages.
    let mailbox = LocalMailbox::default();
    let pages = match &options.sweep {
        Some(Sweep { mailer: None, .. }) => pages.with_mailbox(mailbox.clone()),
        _ => pages,
    };
    if seeded.is_some() {
        draftline_review::demo::seed_trail(&DynamoTable::new(db.clone()), backend.erp().as_ref())
            .await
            .context("seeding the demo drafts' audit trail")?;
    }
    // The policy is draftline's own record, whichever ERP holds the
    // documents: the demo tenant's agents are held to it on both.
    policy::seed_demo(&db, clock.now())
        .await
        .context("seeding the demo tenant's agent policy")?;
    let app =
        Arc::new(App::with_parts(backend.catalogue(), config, db, Arc::clone(&clock)).with_pages(Arc::new(pages)));
    // The trytond it started links its agent drafts to this server's run pages.
    if let Some(tryton) = local_tryton.as_ref().and_then(|run| run.tryton.as_ref()) {
        tokio::task::spawn_blocking(tryton.review_url_setter(app.review_pages()))
            .await
            .context("telling Tryton where the review pages are")?
            .context("telling Tryton where the review pages are")?;
    }
    let server = tokio::spawn(local::serve(listener, app.clone()));
    // The background work (delivery, and Tryton's decisions) shares one
    // DynamoDB client of its own, so the calls' request counts stay theirs.
    let (sweeper, poller) = match options.sweep {
        Some(sweep) => {
            let own = Db::connect(&app.config().table, app.config().dynamodb_endpoint.as_deref()).await;
            let table: Arc<dyn draftline_server::storage::Table> = Arc::new(DynamoTable::new(own));
            let poller = match &tryton {
                Some(tryton) => {
                    let poller = draftline_review::poll::Poller::new(
                        Arc::clone(&table),
                        backend.erp(),
                        tryton.tenant_id()?,
                        app.review_pages().to_owned(),
                        Arc::clone(&clock),
                    );
                    Some(tokio::spawn(poller.run(sweep.poll_every)))
                }
                None => None,
            };
            let mailer = sweep.mailer.unwrap_or(Mailer::Local(mailbox));
            let mut sweeper = Sweeper::new(table, clock, sweep.reach)
                .with_mailer(mailer)
                .with_exporter(app.exporter().cloned());
            if let Some(lease) = sweep.lease {
                sweeper = sweeper.with_lease(lease);
            }
            (Some(tokio::spawn(sweeper.run(sweep.every))), poller)
        }
        None => (None, None),
    };
    Ok(LocalServer {
        addr,
        app,
        backend,
        seeded,
        review,
        tryton,
        server,
        sweeper,
        poller,
        _engine: engine,
        _local_tryton: local_tryton,
    })
}

/// What a token should say.
#[derive(Debug, Clone)]
pub struct TokenSpec {
    /// Subject.
    pub sub: String,
    pub tenant: String,
    /// Branch id.
    pub branch: String,
    pub branch_code: String,
    /// Space-separated scopes.
    pub scope: String,
    pub roles: Vec<String>,
}

/// A token for `spec`, signed with the local secret (or `DRAFTLINE_JWT_SECRET`),
/// issued by the local issuer (or `DRAFTLINE_ISSUER`), for `resource`.
pub fn token_for(spec: &TokenSpec, resource: &str, ttl_seconds: i64) -> anyhow::Result<String> {
    shaped_token(spec, Shape::Draftline, resource, ttl_seconds)
}

/// A token for `spec` in `shape`, signed with the local secret (or
/// `DRAFTLINE_JWT_SECRET`), issued by the shape's local issuer (draftline's
/// own shape: the local issuer, or `DRAFTLINE_ISSUER`), for `resource`.
pub fn shaped_token(spec: &TokenSpec, shape: Shape, resource: &str, ttl_seconds: i64) -> anyhow::Result<String> {
    let secret = std::env::var("DRAFTLINE_JWT_SECRET").unwrap_or_else(|_| LOCAL_DEV_SECRET.to_owned());
    let issuer = match shape.issuer() {
        Some(issuer) => issuer.to_owned(),
        None => std::env::var("DRAFTLINE_ISSUER").unwrap_or_else(|_| LOCAL_ISSUER.to_owned()),
    };
    let claims = shapes::shaped_claims(spec, shape, &issuer, resource, ttl_seconds);
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
