//! `spawn_app()`: the local server on `127.0.0.1:0` against a fresh embedded
//! DynamoDB engine with the demo data, and one method per thing a test does.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{TimeZone, Utc};
use draftline_cli::{LocalOptions, LocalServer, demo_spec, start_local, token_for};
use draftline_contract::clock::ManualClock;
use draftline_dynamo::Db;
use serde_json::{Value, json};

/// The date the tests' clock shows.
pub fn test_now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 29, 9, 0, 0).unwrap()
}

pub struct TestApp {
    pub server: LocalServer,
    pub http: reqwest::Client,
    /// A second client to the same table, for inspection (not counted in the app's round trips).
    pub inspect: Db,
    pub clock: ManualClock,
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

/// `spawn_app()` with `options` (port, clock and engine are the test's own).
pub async fn spawn_app_with(options: LocalOptions) -> TestApp {
    let clock = ManualClock::new(test_now());
    let server = start_local(LocalOptions {
        port: 0,
        data: None,
        dynamodb_endpoint: None,
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
    TestApp {
        server,
        http: reqwest::Client::new(),
        inspect,
        clock,
    }
}

impl TestApp {
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
            self.inspect
                .client()
                .put_item()
                .table_name(self.inspect.table())
                .set_item(Some(item))
                .send()
                .await
                .unwrap();
        }
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

    /// Audit items, as plain JSON-ish maps of their string attributes, oldest first.
    pub async fn audit_items(&self) -> Vec<BTreeMap<String, String>> {
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

    /// Round trips of the app's own client so far, by operation.
    pub fn round_trips(&self) -> BTreeMap<String, u64> {
        self.server.app.db().round_trips().snapshot()
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

/// How many purchase orders the demo data seeds (all in Jakarta).
pub fn seeded_purchase_orders() -> usize {
    draftline_erp::demo::jakarta_purchase_orders().len()
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
