//! One trytond for the whole test binary, serving a pool of fresh copies of
//! the demo database: `demo_1` is shared by the read-only tests, `demo_2` by
//! the tests of what Tryton refuses the tools' key (which change nothing),
//! every test that writes takes its own. Each database serves tenant `demo`, so the
//! values of `draftline_erp::demo` apply as they are.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use draftline_contract::identity::{BranchCode, BranchId, Caller, Scopes, TenantId, UserId};
use draftline_erp::port::Scope;
use draftline_erp_tryton::{LocalTryton, TrytonErp, TrytonSettings};
use serde_json::Value;

/// Databases in the pool: two shared, the rest one per writing test.
const POOL: usize = 13;

struct Pool {
    tryton: LocalTryton,
    next: AtomicUsize,
}

fn pool() -> &'static Pool {
    static POOL_CELL: OnceLock<Pool> = OnceLock::new();
    POOL_CELL.get_or_init(|| {
        let cache = std::env::var_os("DRAFTLINE_TRYTON_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| LocalTryton::default_cache_dir().expect("a cache dir"));
        let data = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tryton-pool");
        let started = std::time::Instant::now();
        let tryton = LocalTryton::start_pool(&cache, &data, POOL).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("tryton pool of {POOL} databases ready in {:.1?}", started.elapsed());
        Pool {
            tryton,
            // demo_1 and demo_2 are shared.
            next: AtomicUsize::new(2),
        }
    })
}

/// A database of the pool: its settings, serving tenant `demo`.
pub struct Database {
    /// Settings (tenant `demo`).
    pub settings: TrytonSettings,
}

impl Database {
    /// A new backend instance (empty caches, request counter at 0).
    pub fn erp(&self) -> TrytonErp {
        TrytonErp::new(&self.settings).expect("valid settings")
    }

    /// Tryton's own REST, outside the adapter: `GET /model/<model>`.
    pub async fn raw_search(&self, model: &str, domain: Value, fields: &[&str]) -> Vec<Value> {
        let (status, body) = self.raw("GET", model, Some(domain), fields, None).await;
        assert_eq!(status, 200, "{body}");
        body.as_array().cloned().unwrap_or_default()
    }

    /// The same database as Tryton user `login` sees it through Tryton's
    /// own REST (a person the seed made, e.g. `approver-sby`): a REST key
    /// of that user's own, written into the database as setup.sh writes
    /// the tools' key (trytond looks keys up on every request).
    pub fn as_user(&self, login: &str) -> Database {
        let key = pool()
            .tryton
            .rest_key_for(&self.settings.database, login)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut settings = self.settings.clone();
        settings.key = key;
        Database { settings }
    }

    /// Tryton's own REST: any request (`GET`, `POST`, `PUT`, `DELETE`) on
    /// `/model/<path>`, where `path` is `<model>`, `<model>/<id>` or
    /// `<model>/<id>/<button or method>`; the status and the body (JSON, or
    /// the text as a string).
    /// `POST /model/<path>` with `body` (a create, or a button or method).
    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.raw("POST", path, None, &[], Some(body)).await
    }

    /// `PUT /model/<path>` with `body` (a write).
    pub async fn put(&self, path: &str, body: &Value) -> (u16, Value) {
        self.raw("PUT", path, None, &[], Some(body)).await
    }

    /// `DELETE /model/<path>`.
    pub async fn delete(&self, path: &str) -> (u16, Value) {
        self.raw("DELETE", path, None, &[], None).await
    }

    pub async fn raw(
        &self,
        method: &str,
        model: &str,
        domain: Option<Value>,
        fields: &[&str],
        body: Option<&Value>,
    ) -> (u16, Value) {
        let b64 = |v: &Value| URL_SAFE.encode(v.to_string());
        let mut url = reqwest::Url::parse(&format!(
            "{}/{}/rest/model/{model}",
            self.settings.url, self.settings.database
        ))
        .unwrap();
        {
            let mut query = url.query_pairs_mut();
            if let Some(domain) = &domain {
                query.append_pair("d", &b64(domain));
            }
            for f in fields {
                query.append_pair("f", f);
            }
        }
        draftline_contract::crypto::install_crypto_provider();
        let client = reqwest::Client::new();
        let mut request = match method {
            "GET" => client.get(url),
            "POST" => client.post(url),
            "PUT" => client.put(url),
            "DELETE" => client.delete(url),
            other => panic!("no such method here: {other}"),
        }
        .bearer_auth(self.settings.key.expose())
        .header("X-Tryton-Context", b64(&serde_json::json!({"company": 1})));
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }
}

fn database(index: usize) -> Database {
    let pool = pool();
    let local = &pool.tryton.databases()[index];
    let settings = pool.tryton.settings(&local.name).unwrap().serving("demo");
    Database { settings }
}

/// The database the read-only tests share (never written to).
pub fn shared() -> Database {
    database(0)
}

/// The database the tests of refused requests share: what they try is
/// refused, so they change nothing (they read back that nothing changed).
pub fn refusals() -> Database {
    database(1)
}

/// A database of its own for a test that writes.
pub fn own() -> Database {
    let index = pool().next.fetch_add(1, Ordering::SeqCst);
    assert!(index < POOL, "the pool has {POOL} databases: raise POOL in helpers.rs");
    database(index)
}

/// The cache dir the pool uses.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("DRAFTLINE_TRYTON_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| LocalTryton::default_cache_dir().expect("a cache dir"))
}

/// A verified caller of the demo: `sub` in `branch` (`code`) with `scopes`.
pub struct Who {
    pub caller: Caller,
}

impl Who {
    pub fn new(tenant: &str, branch: &str, code: &str, sub: &str, scopes: &str) -> Self {
        Self {
            caller: Caller::from_verified(
                TenantId::parse(tenant).unwrap(),
                BranchId::parse(branch).unwrap(),
                BranchCode::parse(code).unwrap(),
                UserId::parse(sub).unwrap(),
                Vec::new(),
                Scopes::from_claim(scopes),
            ),
        }
    }

    pub fn scope(&self) -> Scope<'_> {
        Scope::of(&self.caller)
    }
}

/// The demo branch `branch` (`SBY-01`, `JKT-01`, `BDG-01`) of tenant `demo`.
pub fn branch(branch: &str) -> Who {
    let demo = draftline_erp::demo::BRANCHES
        .iter()
        .find(|b| b.id == branch)
        .expect("a demo branch");
    Who::new(
        "demo",
        demo.id,
        demo.code,
        "tester",
        "inventory:read purchasing:read purchasing:draft sales:read sales:draft finance:read",
    )
}

/// What a tool call needs besides its input.
pub struct Context {
    pub who: Who,
    pub agent: draftline_contract::request::AgentContext,
    pub cursors: draftline_contract::cursor::CursorKey,
    pub clock: draftline_contract::clock::SystemClock,
    pub draft_key: Option<String>,
    pub window: Option<std::time::Duration>,
}

impl Context {
    /// A call of `who` from agent run `run`, drafting under `draft_key`.
    pub fn new(who: Who, run: &str, draft_key: Option<&str>) -> Self {
        Self {
            who,
            agent: draftline_contract::request::AgentContext {
                run_id: Some(run.to_owned()),
                tool_call_id: Some(format!("{run}-call-1")),
                ..Default::default()
            },
            cursors: draftline_contract::cursor::CursorKey::from_secret(b"tryton tests", "tests"),
            clock: draftline_contract::clock::SystemClock,
            draft_key: draft_key.map(str::to_owned),
            window: None,
        }
    }

    pub fn call(&self) -> draftline_contract::Call<'_> {
        draftline_contract::Call {
            caller: &self.who.caller,
            clock: &self.clock,
            agent: &self.agent,
            request_id: "req-test",
            cursors: &self.cursors,
            draft_key: self.draft_key.as_deref(),
            decision: None,
            near_duplicate_window: self.window,
            review_pages: "http://127.0.0.1:3000/review",
            limits: &draftline_contract::policy::standing::NoPolicies,
            found: None,
        }
    }
}

/// Today (UTC) plus `days`.
pub fn in_days(days: i64) -> chrono::NaiveDate {
    chrono::Utc::now().date_naive() + chrono::Duration::days(days)
}

/// The number of the `n`th purchase order a test drafts in Surabaya: the
/// demo database holds its agent's drafts of the days before
/// (`demo::agent_purchase_orders`), so the branch's numbers go on after them.
pub fn sby_po(n: i64) -> String {
    format!("PO-SBY-{:06}", draftline_erp::demo::SURABAYA_AGENT_PO_COUNT + n)
}

/// The number of the `n`th quote a test drafts in Bandung, after the demo's
/// agent quotes (`demo::agent_quotes`).
pub fn bdg_quote(n: i64) -> String {
    format!("QT-BDG-{:06}", draftline_erp::demo::BANDUNG_AGENT_QUOTE_COUNT + n)
}
