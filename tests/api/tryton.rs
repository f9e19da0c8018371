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

    /// How many documents of `model` (`purchase.purchase`, `sale.sale`) the database holds.
    pub async fn count(&self, model: &str) -> usize {
        self.search(model, json!([]), &["id"]).await.len()
    }
}

/// A loopback proxy in front of trytond that forwards everything, except
/// that it never hands back Tryton's answer to a create of a purchase order:
/// it reads that answer (so the document is committed in Tryton) and tells
/// the test, keeping the caller waiting — the moment a worker can die after
/// the ERP write and before completing its key.
pub struct HoldingProxy {
    address: std::net::SocketAddr,
    /// Notified when Tryton answered a held create.
    pub created: std::sync::Arc<tokio::sync::Notify>,
}

impl HoldingProxy {
    pub async fn start(upstream: &str) -> Self {
        use tokio::net::TcpListener;
        let upstream: std::net::SocketAddr = upstream.trim_start_matches("http://").parse().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let created = std::sync::Arc::new(tokio::sync::Notify::new());
        let notify = created.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(hold_creates(client, upstream, notify.clone()));
            }
        });
        Self { address, created }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }
}

async fn hold_creates(
    client: tokio::net::TcpStream,
    upstream: std::net::SocketAddr,
    created: std::sync::Arc<tokio::sync::Notify>,
) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(server) = tokio::net::TcpStream::connect(upstream).await else {
        return;
    };
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_server, mut to_server) = server.into_split();
    let holding = Arc::new(AtomicBool::new(false));
    let held = holding.clone();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = from_server.read(&mut buf).await {
            if n == 0 {
                break;
            }
            if held.load(Ordering::SeqCst) {
                created.notify_one();
                continue;
            }
            if to_client.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        // Keep the caller's connection open (it waits until it is killed).
        if held.load(Ordering::SeqCst) {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        }
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from_client.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        let path = chunk
            .strip_prefix(b"POST ")
            .and_then(|rest| rest.split(|&b| b == b' ').next())
            .and_then(|target| target.split(|&b| b == b'?').next());
        if path.is_some_and(|path| path.ends_with(b"/rest/model/purchase.purchase")) {
            holding.store(true, Ordering::SeqCst);
        }
        if to_server.write_all(chunk).await.is_err() {
            return;
        }
    }
}

/// A loopback proxy in front of trytond that forwards everything, except
/// that it answers the next creates of a purchase order itself, without
/// passing them on, so Tryton never sees them: `503` (Tryton is busy:
/// definitely not written) or `502` (a gateway lost the answer: the write
/// may have happened, as far as the caller can tell).
pub struct RefusingProxy {
    address: std::net::SocketAddr,
    /// The answers still to give, in order; empty: forward everything.
    refusals: std::sync::Arc<Mutex<Vec<u16>>>,
}

impl RefusingProxy {
    pub async fn start(upstream: &str) -> Self {
        let upstream: std::net::SocketAddr = upstream.trim_start_matches("http://").parse().unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let refusals = std::sync::Arc::new(Mutex::new(Vec::new()));
        let shared = refusals.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(refuse_creates(client, upstream, shared.clone()));
            }
        });
        Self { address, refusals }
    }

    /// Answers the next create of a purchase order with `status`.
    pub fn refuse_next(&self, status: u16) {
        self.refusals.lock().unwrap().insert(0, status);
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }
}

async fn refuse_creates(
    client: tokio::net::TcpStream,
    upstream: std::net::SocketAddr,
    refusals: std::sync::Arc<Mutex<Vec<u16>>>,
) {
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(server) = tokio::net::TcpStream::connect(upstream).await else {
        return;
    };
    let (mut from_client, to_client) = client.into_split();
    let (mut from_server, mut to_server) = server.into_split();
    let to_client = Arc::new(tokio::sync::Mutex::new(to_client));
    let answering = to_client.clone();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = from_server.read(&mut buf).await {
            if n == 0 || answering.lock().await.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from_client.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        let path = chunk
            .strip_prefix(b"POST ")
            .and_then(|rest| rest.split(|&b| b == b' ').next())
            .and_then(|target| target.split(|&b| b == b'?').next());
        let refused = match path {
            Some(path) if path.ends_with(b"/rest/model/purchase.purchase") => refusals.lock().unwrap().pop(),
            _ => None,
        };
        if let Some(status) = refused {
            let body = format!("refused by the test's proxy with {status}");
            let answer = format!(
                "HTTP/1.1 {status} Refused\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: \
                 close\r\n\r\n{body}",
                body.len()
            );
            let mut to_client = to_client.lock().await;
            let _ = to_client.write_all(answer.as_bytes()).await;
            let _ = to_client.shutdown().await;
            return;
        }
        if to_server.write_all(chunk).await.is_err() {
            return;
        }
    }
}
