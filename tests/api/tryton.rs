//! The Tryton side of the black-box suite: fresh demo databases for the
//! tests that run on the Tryton backend, and Tryton's own REST API to read
//! back what a tool did (never through draftline).
//!
//! Databases are handed out from batches: each batch is one trytond serving
//! [`BATCH`] fresh copies of the demo database (every copy must exist before
//! its trytond starts). A test takes a database of its own and never gives
//! it back; when a batch is used up the next one starts. Each database
//! serves tenant `demo`, so the demo users and their tokens apply as they are.

use std::path::PathBuf;
use std::sync::Mutex;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use draftline_erp_tryton::{LocalTryton, TrytonSettings};
use serde_json::{Value, json};

/// Databases per trytond.
const BATCH: usize = 12;

struct Pool {
    running: Vec<LocalTryton>,
    free: Vec<TrytonSettings>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    running: Vec::new(),
    free: Vec::new(),
});

fn cache_dir() -> PathBuf {
    std::env::var_os("DRAFTLINE_TRYTON_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| LocalTryton::default_cache_dir().expect("a cache dir"))
}

/// A fresh demo database of its own for one test (blocking: may start a
/// trytond with the next batch, a few seconds).
pub fn fresh_database() -> TrytonSettings {
    let mut pool = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if pool.free.is_empty() {
        let batch = pool.running.len() + 1;
        let data = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("api-tryton-{batch}"));
        let started = std::time::Instant::now();
        let tryton = LocalTryton::start_pool(&cache_dir(), &data, BATCH).unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "tryton batch {batch} ({BATCH} databases) ready in {:.1?}",
            started.elapsed()
        );
        let mut fresh: Vec<TrytonSettings> = tryton
            .databases()
            .iter()
            .map(|db| TrytonSettings::new(tryton.url(), db.name.clone(), db.key.clone()).serving("demo"))
            .collect();
        fresh.reverse();
        pool.free = fresh;
        pool.running.push(tryton);
    }
    pool.free.pop().expect("a fresh database")
}

/// Tryton's own REST API on one database.
#[derive(Clone)]
pub struct TrytonRest {
    pub settings: TrytonSettings,
    http: reqwest::Client,
}

impl TrytonRest {
    pub fn new(settings: TrytonSettings) -> Self {
        draftline_contract::crypto::install_crypto_provider();
        Self {
            settings,
            http: reqwest::Client::new(),
        }
    }

    /// `GET /model/<model>?d=<domain>&f=<fields>`: every matching record.
    pub async fn search(&self, model: &str, domain: Value, fields: &[&str]) -> Vec<Value> {
        let (status, body) = self.request("GET", model, Some(&domain), fields, None).await;
        assert_eq!(status, 200, "{body}");
        body.as_array().cloned().unwrap_or_default()
    }

    /// Any request: the status and the body (JSON, or its text as a string).
    pub async fn request(
        &self,
        method: &str,
        model: &str,
        domain: Option<&Value>,
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
            if let Some(domain) = domain {
                query.append_pair("d", &b64(domain));
            }
            for f in fields {
                query.append_pair("f", f);
            }
        }
        let mut request = match method {
            "POST" => self.http.post(url),
            _ => self.http.get(url),
        }
        .bearer_auth(self.settings.key.expose())
        .header("X-Tryton-Context", b64(&json!({"company": 1})));
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// This database's REST API as Tryton user `login` (a person deciding in
    /// Tryton's own client, with that person's access rights): a key of its
    /// own, minted in the database file as Tryton's user application does.
    pub fn as_user(&self, login: &str) -> TrytonRest {
        let key = {
            let pool = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let tryton = pool
                .running
                .iter()
                .find(|tryton| tryton.url() == self.settings.url)
                .unwrap_or_else(|| panic!("no trytond of this suite serves {}", self.settings.url));
            tryton
                .rest_key_for(&self.settings.database, login)
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let mut settings = self.settings.clone();
        settings.key = key;
        TrytonRest::new(settings)
    }

    /// How many documents of `model` (`purchase.purchase`, `sale.sale`) the database holds.
    pub async fn count(&self, model: &str) -> usize {
        self.search(model, json!([]), &["id"]).await.len()
    }
}
