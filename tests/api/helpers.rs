//! `spawn_app()`: the local server on `127.0.0.1:0` against a fresh embedded
//! DynamoDB engine with the demo data, and one method per thing a test does.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{TimeZone, Utc};
use draftline_cli::{LocalErp, LocalOptions, LocalServer, demo_spec, start_local, token_for};
use draftline_contract::clock::{Clock, ManualClock};
use draftline_dynamo::Db;
use serde_json::{Value, json};

/// The date the tests' clock shows.
pub fn test_now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 29, 9, 0, 0).unwrap()
}

/// The ERP behind the tools of a test's server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The demo ERP in the test's own embedded DynamoDB engine.
    Builtin,
    /// A fresh Tryton demo database of the test's own ([`crate::tryton`]).
    Tryton,
}

/// A black-box test run once per backend, as `<name>::builtin` and
/// `<name>::tryton`, with `backend` bound to each: the same assertions
/// against both.
macro_rules! on_both_backends {
    (#[$test:meta] async fn $name:ident($backend:ident) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn run($backend: $crate::helpers::Backend) $body

            #[$test]
            async fn builtin() {
                run($crate::helpers::Backend::Builtin).await
            }

            #[$test]
            async fn tryton() {
                run($crate::helpers::Backend::Tryton).await
            }
        }
    };
}
pub(crate) use on_both_backends;

pub struct TestApp {
    pub server: LocalServer,
    pub http: reqwest::Client,
    /// A second client to the same table, for inspection (not counted in the app's round trips).
    pub inspect: Db,
    pub clock: ManualClock,
    /// Which ERP the tools use.
    pub backend: Backend,
    /// Tryton's own REST API on the test's database (Tryton backend only).
    pub tryton: Option<crate::tryton::TrytonRest>,
    /// Documents of each kind when the server started.
    seeded: BTreeMap<&'static str, usize>,
}

/// A response, read fully.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    pub fn error_code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or_default()
    }
    pub fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or_default()
    }
    pub fn detail_paths(&self) -> Vec<String> {
        self.body["error"]["details"]
            .as_array()
            .map(|d| {
                d.iter()
                    .map(|i| i["path"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(LocalOptions::default()).await
}

/// `spawn_app()` with a per-user call budget per minute.
pub async fn spawn_app_with_budget(rate_limit_per_minute: Option<u32>) -> TestApp {
    spawn_app_with(LocalOptions {
        rate_limit_per_minute,
        ..LocalOptions::default()
    })
    .await
}

/// `spawn_app()` for tests that draft the same items again and again (the
/// near-duplicate question would stop them; `input_required.rs` tests it).
pub async fn spawn_app_drafting_freely() -> TestApp {
    spawn_app_with(LocalOptions {
        no_near_duplicate_check: true,
        ..LocalOptions::default()
    })
    .await
}

/// `spawn_app_with(options)` on the built-in backend.
pub async fn spawn_app_with(options: LocalOptions) -> TestApp {
    spawn_app_with_on(Backend::Builtin, options).await
}

/// `spawn_app()` on `backend`.
pub async fn spawn_app_on(backend: Backend) -> TestApp {
    spawn_app_with_on(backend, LocalOptions::default()).await
}

/// `spawn_app()` on `backend`, drafting the same items freely.
pub async fn spawn_app_drafting_freely_on(backend: Backend) -> TestApp {
    spawn_app_with_on(
        backend,
        LocalOptions {
            no_near_duplicate_check: true,
            ..LocalOptions::default()
        },
    )
    .await
}

/// The local server on `backend` with `options` (port, clock, engine and
/// ERP database are the test's own).
pub async fn spawn_app_with_on(backend: Backend, options: LocalOptions) -> TestApp {
    let erp = match backend {
        Backend::Builtin => LocalErp::Builtin,
        Backend::Tryton => LocalErp::Tryton(
            tokio::task::spawn_blocking(crate::tryton::fresh_database)
                .await
                .expect("a Tryton database"),
        ),
    };
    spawn_app_on_erp(erp, options).await
}

/// The local server on `erp` (a Tryton database of the test's choosing).
pub async fn spawn_app_on_erp(erp: LocalErp, options: LocalOptions) -> TestApp {
    let clock = ManualClock::new(test_now());
    let backend = match erp {
        LocalErp::Builtin => Backend::Builtin,
        LocalErp::Tryton(_) | LocalErp::LocalTryton => Backend::Tryton,
    };
    let server = start_local(LocalOptions {
        port: 0,
        data: None,
        erp,
        clock: Some(Arc::new(clock.clone())),
        ..options
    })
    .await
    .expect("the local server starts");
    let inspect = Db::connect(
        &server.app.config().table,
        server.app.config().dynamodb_endpoint.as_deref(),
    )
    .await;
    TestApp::assemble(server, reqwest::Client::new(), inspect, clock, backend).await
}

impl TestApp {
    /// A test app of a started `server`, noting the documents it starts with.
    pub async fn assemble(
        server: LocalServer,
        http: reqwest::Client,
        inspect: Db,
        clock: ManualClock,
        backend: Backend,
    ) -> TestApp {
        let tryton = server.tryton.clone().map(crate::tryton::TrytonRest::new);
        let mut app = TestApp {
            server,
            http,
            inspect,
            clock,
            backend,
            tryton,
            seeded: BTreeMap::new(),
        };
        for kind in ["purchase_order", "quote"] {
            let count = app.documents(kind).await;
            app.seeded.insert(kind, count);
        }
        app
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.url())
    }

    pub fn token(&self, user: &str) -> String {
        token_for(&demo_spec(user).unwrap(), &self.server.url(), 600).unwrap()
    }

    /// POSTs raw bytes to a tool with the given headers.
    pub async fn post_raw(&self, tool: &str, headers: &[(&str, String)], body: impl Into<reqwest::Body>) -> Reply {
        let mut request = self.http.post(self.url(&format!("/api/{tool}"))).body(body);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("the body is JSON: {text}"));
        Reply { status, headers, body }
    }

    /// Calls a tool as `user` with `input`, and optional extra headers.
    pub async fn call(&self, user: &str, tool: &str, input: &Value, headers: &[(&str, String)]) -> Reply {
        let mut all = vec![
            ("authorization", format!("Bearer {}", self.token(user))),
            ("content-type", "application/json".to_owned()),
        ];
        all.extend(headers.iter().cloned());
        self.post_raw(tool, &all, input.to_string()).await
    }

    /// Creates (or replays) a PO draft as `user` with `Idempotency-Key: key`.
    pub async fn create_po_draft(&self, user: &str, key: &str, input: &Value) -> Reply {
        self.call(
            user,
            "purchasing_create_po_draft",
            input,
            &[("idempotency-key", key.to_owned())],
        )
        .await
    }

    /// Every item of the table.
    pub async fn scan_all(&self) -> Vec<std::collections::HashMap<String, AttributeValue>> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let out = self
                .inspect
                .client()
                .scan()
                .table_name(self.inspect.table())
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .unwrap();
            items.extend(out.items().iter().cloned());
            match out.last_evaluated_key() {
                Some(k) if !k.is_empty() => start = Some(k.clone()),
                _ => return items,
            }
        }
    }

    /// Copies every item of tenant `from` to tenant `to` (a second tenant
    /// with the same demo data, for isolation tests).
    pub async fn copy_tenant(&self, from: &str, to: &str) {
        let prefix = format!("T#{from}#");
        let copies: Vec<_> = self
            .scan_all()
            .await
            .into_iter()
            .filter(|item| {
                item.get("pk")
                    .and_then(|v| v.as_s().ok())
                    .is_some_and(|pk| pk.starts_with(&prefix))
            })
            .filter(|item| item.get("kind").and_then(|v| v.as_s().ok()).map(String::as_str) != Some("audit"))
            .map(|mut item| {
                for key in ["pk", "gsi1pk"] {
                    if let Some(AttributeValue::S(value)) = item.get(key)
                        && let Some(rest) = value.strip_prefix(&prefix)
                    {
                        let moved = format!("T#{to}#{rest}");
                        item.insert(key.to_owned(), AttributeValue::S(moved));
                    }
                }
                item
            })
            .collect();
        for item in copies {
            self.put_item(item).await;
        }
    }

    /// Writes `item` straight into the table, over what is there (a test's
    /// own state: a corrupt or hand-made item).
    pub async fn put_item(&self, item: std::collections::HashMap<String, AttributeValue>) {
        self.inspect
            .client()
            .put_item()
            .table_name(self.inspect.table())
            .set_item(Some(item))
            .send()
            .await
            .unwrap();
    }

    /// Deletes the item at `pk`/`sk` straight from the table (by hand).
    pub async fn delete_item(&self, pk: &str, sk: &str) {
        self.inspect
            .client()
            .delete_item()
            .table_name(self.inspect.table())
            .key("pk", AttributeValue::S(pk.to_owned()))
            .key("sk", AttributeValue::S(sk.to_owned()))
            .send()
            .await
            .unwrap();
    }

    /// How many items of each `kind` the table holds.
    pub async fn kinds(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for item in self.scan_all().await {
            let kind = item
                .get("kind")
                .and_then(|v| v.as_s().ok())
                .cloned()
                .unwrap_or_default();
            *counts.entry(kind).or_default() += 1;
        }
        counts
    }

    pub async fn count_kind(&self, kind: &str) -> usize {
        self.kinds().await.get(kind).copied().unwrap_or(0)
    }

    /// Documents of `kind` (`purchase_order`, `quote`) in the ERP, wherever it
    /// keeps them: items of the table, or records in Tryton read through its
    /// own REST API (quotes: sales in state draft).
    pub async fn documents(&self, kind: &str) -> usize {
        match (self.backend, &self.tryton, kind) {
            (Backend::Builtin, _, _) | (_, None, _) => self.count_kind(kind).await,
            (_, Some(rest), "purchase_order") => rest.count("purchase.purchase").await,
            (_, Some(rest), "quote") => rest
                .search("sale.sale", json!([["state", "=", "draft"]]), &["id"])
                .await
                .len(),
            (_, Some(_), other) => panic!("no document kind {other}"),
        }
    }

    /// Documents of `kind` created since the server started.
    pub async fn new_documents(&self, kind: &str) -> usize {
        self.documents(kind).await - self.seeded.get(kind).copied().unwrap_or(0)
    }

    /// Requests the tools sent to the ERP outside the table so far (0 on the built-in backend).
    pub fn erp_requests(&self) -> u64 {
        self.server.backend.erp_requests().unwrap_or(0)
    }

    /// Audit items of the calls made since the server started (not those of
    /// the demo data), as plain JSON-ish maps of their string attributes,
    /// oldest first.
    pub async fn audit_items(&self) -> Vec<BTreeMap<String, String>> {
        let start = test_now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let mut audits = self.all_audit_items().await;
        audits.retain(|a| a.get("at").is_some_and(|at| *at >= start));
        audits
    }

    /// Every audit item of the table, the demo data's included, oldest first.
    pub async fn all_audit_items(&self) -> Vec<BTreeMap<String, String>> {
        let mut audits: Vec<BTreeMap<String, String>> = self
            .scan_all()
            .await
            .into_iter()
            .filter(|i| i.get("kind").and_then(|v| v.as_s().ok()).map(String::as_str) == Some("audit"))
            .map(|i| {
                i.into_iter()
                    .map(|(k, v)| {
                        let text = match v {
                            AttributeValue::S(s) => s,
                            AttributeValue::N(n) => n,
                            other => format!("{other:?}"),
                        };
                        (k, text)
                    })
                    .collect()
            })
            .collect();
        audits.sort_by(|a, b| a["at"].cmp(&b["at"]));
        audits
    }

    /// The trace of calls refused before identification, as `(tool, reason) → count`.
    pub async fn anonymous_trace(&self) -> BTreeMap<(String, String), u64> {
        let mut counts = BTreeMap::new();
        for item in self.scan_all().await {
            let s = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned().unwrap_or_default();
            if s("kind") != "denied_trace" {
                continue;
            }
            let count: u64 = item
                .get("count")
                .and_then(|v| v.as_n().ok())
                .and_then(|n| n.parse().ok())
                .unwrap_or_default();
            *counts.entry((s("tool"), s("reason"))).or_default() += count;
        }
        counts
    }

    /// Ends the anonymous trace's window: a refused call a minute later writes what was counted.
    pub async fn flush_anonymous_trace(&self) {
        self.clock.advance(chrono::Duration::seconds(61));
        let reply = self
            .post_raw(
                "inventory_get_stock",
                &[],
                serde_json::json!({"item_code": "X"}).to_string(),
            )
            .await;
        assert_eq!(reply.status, 401);
    }

    /// Sets the demo tenant's policy to `policy` (what `draftline policy
    /// set` does), returning its version.
    pub async fn set_policy(&self, policy: &Value) -> u64 {
        let tenant = draftline_contract::identity::TenantId::parse("demo").unwrap();
        let bytes = serde_json::to_vec(policy).unwrap();
        draftline_cli::policy::set(&self.inspect, &tenant, &bytes, "api-tests", self.clock.now())
            .await
            .unwrap_or_else(|e| panic!("the policy is set: {e}"))
            .version
    }

    /// One item of the table by key, as stored.
    pub async fn item(&self, pk: &str, sk: &str) -> Option<std::collections::HashMap<String, AttributeValue>> {
        self.inspect
            .client()
            .get_item()
            .table_name(self.inspect.table())
            .key("pk", AttributeValue::S(pk.to_owned()))
            .key("sk", AttributeValue::S(sk.to_owned()))
            .consistent_read(true)
            .send()
            .await
            .unwrap()
            .item()
            .cloned()
    }

    /// A number attribute of one item (0 when the item or attribute is absent).
    pub async fn number(&self, pk: &str, sk: &str, attribute: &str) -> i64 {
        self.item(pk, sk)
            .await
            .and_then(|item| item.get(attribute).and_then(|v| v.as_n().ok()).cloned())
            .map_or(0, |n| n.parse().unwrap())
    }

    /// Round trips of the app's own client so far, by operation.
    pub fn round_trips(&self) -> BTreeMap<String, u64> {
        self.server
            .app
            .db()
            .map(|db| db.round_trips().snapshot())
            .unwrap_or_default()
    }
}

/// Round trips between two snapshots, by operation (zero counts dropped).
pub fn diff(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(op, n)| (op.clone(), n - before.get(op).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// How many purchase orders the demo data seeds: Jakarta's history and
/// Surabaya's agent drafts of the days before (PO-SBY-000001..3).
pub fn seeded_purchase_orders() -> usize {
    seeded_jakarta_purchase_orders() + draftline_erp::demo::agent_purchase_orders().len()
}

/// How many purchase orders the demo data seeds in Jakarta.
pub fn seeded_jakarta_purchase_orders() -> usize {
    draftline_erp::demo::jakarta_purchase_orders().len()
}

/// The number of the first PO a test drafts in Surabaya, on either backend
/// (PO-SBY-000004): the demo seeds Surabaya's agent drafts of the days
/// before (`demo::agent_purchase_orders`) first.
pub fn first_sby_po() -> String {
    format!("PO-SBY-{:06}", draftline_erp::demo::SURABAYA_AGENT_PO_COUNT + 1)
}

/// The number of the first quote a test drafts in Bandung, on either backend
/// (QT-BDG-000004), after the demo's agent quotes (`demo::agent_quotes`).
pub fn first_bdg_quote() -> String {
    format!("QT-BDG-{:06}", draftline_erp::demo::BANDUNG_AGENT_QUOTE_COUNT + 1)
}

/// A valid PO draft input for buyer-sby.
pub fn po_input(client_ref: &str) -> Value {
    json!({
        "vendor_code": "V-00231",
        "needed_by": "2026-12-15",
        "client_ref": client_ref,
        "note": "reorder from alert",
        "lines": [
            {"item_code": "BRG-0042", "qty": 10, "uom": "BOX"},
            {"item_code": "BRG-0043", "qty": 30, "uom": "PCS"}
        ]
    })
}

/// The `pk` of the counter of demo user `user`'s agent run `run` (a run is
/// its owner's: tenant, branch, user and run id).
pub fn run_counter(user: &str, run: &str) -> String {
    let spec = draftline_cli::demo_spec(user).unwrap();
    format!("T#{}#LIMIT#RUN#{}#{}#{run}", spec.tenant, spec.branch, spec.sub)
}
