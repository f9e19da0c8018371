//! Where a draft crosses into Tryton, which cannot share draftline's
//! transaction: what Tryton itself holds after a tool call (read through
//! Tryton's own REST API), that Tryton refuses a second document for one
//! key, a worker process killed between the Tryton write and the completion
//! of its key, Tryton stopped, and what a call costs on each side.

use std::time::{Duration, Instant};

use draftline_cli::{LocalErp, LocalOptions};
use draftline_erp_tryton::{LocalTryton, TrytonSettings};
use serde_json::{Value, json};

use crate::function_process::{FUNCTION_RESOURCE, function_env, function_token};
use crate::helpers::{Backend, TestApp, diff, first_sby_po, po_input, spawn_app_on, spawn_app_on_erp};
use crate::tryton::TrytonRest;
use crate::tryton_proxy::{Fault, FaultyTryton, Target};
use crate::vercel::VercelFunction;

fn rest(app: &TestApp) -> &TrytonRest {
    app.tryton.as_ref().expect("a Tryton backend")
}

/// The purchase orders Tryton holds that carry a draftline key, besides the
/// demo's agent drafts of the days before (`demo::agent_purchase_orders`).
async fn agent_purchases(rest: &TrytonRest) -> Vec<Value> {
    let seeded: Vec<String> = draftline_erp::demo::agent_purchase_orders()
        .into_iter()
        .map(|(po, _)| po.po_number)
        .collect();
    rest.search(
        "purchase.purchase",
        json!([["draftline_key", "!=", null], ["number", "not in", seeded]]),
        &["number", "state", "draftline_key"],
    )
    .await
}

#[tokio::test]
async fn a_draft_lands_in_tryton_as_a_draft_with_its_provenance_and_the_vendors_prices() {
    let app = spawn_app_on(Backend::Tryton).await;
    let reply = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("tryton-readback"),
            &[
                ("idempotency-key", "tryton-readback".into()),
                ("x-agent-run-id", "run-tryton-1".into()),
                ("x-tool-call-id", "call-tryton-1".into()),
            ],
        )
        .await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    let number = reply.body["data"]["po_number"].as_str().unwrap().to_owned();
    // Numbered after the demo's agent drafts, as on the built-in backend.
    assert_eq!(number, first_sby_po());

    // Read back through Tryton's own REST API, not through draftline.
    let rest = rest(&app);
    let found = rest
        .search(
            "purchase.purchase",
            json!([["number", "=", number]]),
            &[
                "state",
                "draftline_key",
                "draftline_number",
                "drafted_by_agent_run",
                "drafted_on_behalf_of",
                "drafted_by_tool_call",
                "drafted_by_agent",
                "party.code",
                "warehouse.code",
                "lines.product.code",
                "lines.quantity",
                "lines.unit.symbol",
                "lines.unit_price",
            ],
        )
        .await;
    assert_eq!(found.len(), 1, "{found:?}");
    let po = &found[0];
    assert_eq!(po["state"], "draft");
    assert_eq!(po["draftline_number"], number.as_str());
    assert!(po["draftline_key"].as_str().unwrap().starts_with("dl1-"), "{po}");
    assert_eq!(po["drafted_by_agent_run"], "run-tryton-1");
    assert_eq!(po["drafted_on_behalf_of"], "buyer-sby");
    assert_eq!(po["drafted_by_tool_call"], "call-tryton-1");
    assert_eq!(po["drafted_by_agent"], true);
    assert_eq!(po["party"]["code"], "V-00231");
    assert_eq!(po["warehouse"]["code"], "SBY-01");

    // Each line is in the unit asked for, at the vendor's price for that
    // unit as Tryton's own price list holds it.
    let prices = rest
        .search(
            "purchase.product_supplier",
            json!([["party.code", "=", "V-00231"]]),
            &["product.code", "prices.unit_price", "prices.draftline_unit.symbol"],
        )
        .await;
    let price_of = |item: &str, unit: &str| -> String {
        prices
            .iter()
            .filter(|p| p["product"]["code"] == item)
            .flat_map(|p| p["prices"].as_array().cloned().unwrap_or_default())
            .find(|price| price["draftline_unit"]["symbol"] == unit)
            .map(|price| price["unit_price"]["decimal"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| panic!("no price of {item} per {unit} in {prices:?}"))
    };
    let mut lines: Vec<(String, f64, String, String)> = po["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["product"]["code"].as_str().unwrap().to_owned(),
                l["quantity"].as_f64().unwrap(),
                l["unit"]["symbol"].as_str().unwrap().to_owned(),
                l["unit_price"]["decimal"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    lines.sort_by(|a, b| a.0.cmp(&b.0));
    let number_of = |text: &str| text.parse::<f64>().unwrap();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        (lines[0].0.as_str(), lines[0].1, lines[0].2.as_str()),
        ("BRG-0042", 10.0, "BOX24")
    );
    assert_eq!(number_of(&lines[0].3), number_of(&price_of("BRG-0042", "BOX24")));
    assert_eq!(number_of(&lines[0].3), 288_000.0);
    assert_eq!(
        (lines[1].0.as_str(), lines[1].1, lines[1].2.as_str()),
        ("BRG-0043", 30.0, "u")
    );
    assert_eq!(number_of(&lines[1].3), number_of(&price_of("BRG-0043", "u")));

    // Tryton itself refuses a second document with the same key.
    let (status, body) = rest
        .request(
            "POST",
            "purchase.purchase",
            None,
            &["id"],
            Some(&json!({
                "party": found[0]["party"]["id"],
                "warehouse": found[0]["warehouse"]["id"],
                "draftline_key": po["draftline_key"],
            })),
        )
        .await;
    assert_eq!(status, 400, "Tryton refuses the duplicate: {body}");
    assert_eq!(agent_purchases(rest).await.len(), 1, "still one document for the key");
}

#[tokio::test]
async fn tryton_requests_and_dynamodb_round_trips_per_call() {
    let app = spawn_app_on(Backend::Tryton).await;
    let stock = json!({"item_code": "BRG-0042"});
    let measure = |reply: &crate::helpers::Reply, status: u16| assert_eq!(reply.status, status, "{:?}", reply.body);

    // A read: cold (master data read on first use), then warm.
    let (erp, db) = (app.erp_requests(), app.round_trips());
    measure(&app.call("buyer-sby", "inventory_get_stock", &stock, &[]).await, 200);
    let cold = app.erp_requests() - erp;
    let read_trips = diff(&db, &app.round_trips());
    let (erp, db) = (app.erp_requests(), app.round_trips());
    measure(&app.call("buyer-sby", "inventory_get_stock", &stock, &[]).await, 200);
    let warm = app.erp_requests() - erp;
    assert_eq!((cold, warm), (6, 4), "inventory_get_stock: Tryton requests cold, warm");
    // DynamoDB: only the audit item (the data is Tryton's), and on the
    // instance's first call the tenant's policy (its rates).
    assert_eq!(read_trips, [("GetItem".into(), 1), ("PutItem".into(), 1)].into());
    assert_eq!(diff(&db, &app.round_trips()), [("PutItem".into(), 1)].into());

    // A fresh draft, the company's currency cold (the read above read the
    // units and warehouses), then another one warm: the vendor, the items
    // with their price-list rows (the vendor's prices of those items: not
    // its whole list), and the vendor's open drafts (the near-duplicate
    // check), the three together; then, after the claim, the create (a new
    // use of a key has no document to look up first). Four when warm.
    let (erp, db) = (app.erp_requests(), app.round_trips());
    measure(
        &app.create_po_draft("buyer-sby", "counted-1", &po_input("counted-1"))
            .await,
        201,
    );
    let fresh_cold = app.erp_requests() - erp;
    let fresh_trips = diff(&db, &app.round_trips());
    // Key lookup (one GetItem: the policy the read above read is still
    // fresh, so the key is all there is to read), the claim of the key with
    // a lease and the reservation of the demo policy's run and day limits
    // (one transaction), then the completion under the fencing condition
    // (ONE transaction: the stored response and the audit item).
    assert_eq!(
        fresh_trips,
        [("GetItem".into(), 1), ("TransactWriteItems".into(), 2)].into()
    );
    let mut other = po_input("counted-2");
    other["lines"] = json!([{"item_code": "BRG-0042", "qty": 5, "uom": "BOX"}]);
    let erp = app.erp_requests();
    measure(&app.create_po_draft("buyer-sby", "counted-2", &other).await, 201);
    let fresh_warm = app.erp_requests() - erp;
    // A replay: answered from the key record, Tryton is not asked.
    let (erp, db) = (app.erp_requests(), app.round_trips());
    measure(&app.create_po_draft("buyer-sby", "counted-2", &other).await, 200);
    assert_eq!(app.erp_requests() - erp, 0, "a replay sends nothing to Tryton");
    assert_eq!(
        diff(&db, &app.round_trips()),
        [("GetItem".into(), 1), ("PutItem".into(), 1)].into()
    );
    assert_eq!(
        (fresh_cold, fresh_warm),
        (5, 4),
        "purchasing_create_po_draft: Tryton requests cold, warm"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_after_the_tryton_write_leaves_one_document_that_the_retry_returns() {
    let app = spawn_app_on(Backend::Tryton).await;
    let tryton = app.server.tryton.clone().unwrap();
    let proxy = FaultyTryton::start(&tryton.url).await;
    proxy.then(Target::CreatePurchase, Fault::HoldAfter);
    let env = |url: &str| {
        let mut env = function_env(&app);
        env.extend([
            ("DRAFTLINE_ERP".into(), "tryton".into()),
            ("DRAFTLINE_TRYTON_URL".into(), url.to_owned()),
            ("DRAFTLINE_TRYTON_DATABASE".into(), tryton.database.clone()),
            ("DRAFTLINE_TRYTON_KEY".into(), tryton.key.expose().to_owned()),
            ("DRAFTLINE_TRYTON_TENANT".into(), "demo".into()),
            ("DRAFTLINE_CALL_DEADLINE_SECONDS".into(), "3".into()),
            ("DRAFTLINE_LEASE_SECONDS".into(), "4".into()),
        ]);
        env
    };
    let binary = env!("CARGO_BIN_EXE_purchasing_create_po_draft");
    let headers = [
        ("authorization", format!("Bearer {}", function_token("buyer-sby"))),
        ("idempotency-key", "crash-1".to_owned()),
        ("x-agent-run-id", "run-crash".to_owned()),
    ];
    let body = po_input("crash-1").to_string();

    // The first worker reaches Tryton through the proxy, which lets the
    // create through and holds Tryton's answer back.
    let first = VercelFunction::start_with_env(binary, &env(&proxy.url())).await;
    let request = first
        .http
        .post(first.url("/"))
        .header("content-type", "application/json")
        .header("authorization", headers[0].1.clone())
        .header("idempotency-key", "crash-1")
        .header("x-agent-run-id", "run-crash")
        .body(body.clone())
        .send();
    let pending = tokio::spawn(request);
    tokio::time::timeout(Duration::from_secs(20), proxy.answered.notified())
        .await
        .expect("Tryton answered the create");
    // The document exists in Tryton; the worker dies before completing its key.
    drop(first);
    assert!(pending.await.unwrap().is_err(), "the killed worker never answered");
    let rest = rest(&app);
    let held = agent_purchases(rest).await;
    assert_eq!(held.len(), 1, "{held:?}");
    let record = app
        .scan_all()
        .await
        .into_iter()
        .find(|i| i.get("kind").and_then(|v| v.as_s().ok()).map(String::as_str) == Some("idempotency_key"))
        .expect("the key record");
    assert_eq!(record["status"].as_s().unwrap(), "IN_PROGRESS");

    // A second worker, straight to Tryton: while the dead worker's lease
    // lives the key is in flight; after it, the retry finds the document by
    // its key and completes with it.
    let second = VercelFunction::start_with_env(binary, &env(&tryton.url)).await;
    let started = Instant::now();
    let mut saw_in_flight = false;
    let answer = loop {
        let (status, reply_headers, reply) = second.post("/", &headers, body.clone()).await;
        match status {
            409 => {
                assert_eq!(reply["error"]["code"], "CONFLICT", "{reply}");
                assert_eq!(reply["error"]["retryable"], true, "{reply}");
                assert!(reply_headers.get("retry-after").is_some());
                saw_in_flight = true;
                assert!(started.elapsed() < Duration::from_secs(15), "the lease never lapsed");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            201 => break reply,
            other => panic!("unexpected {other}: {reply}\n{}", second.process.output()),
        }
    };
    assert!(saw_in_flight, "the dead worker's lease held the key first");
    assert_eq!(answer["data"]["po_number"], held[0]["number"], "{answer}");
    assert_eq!(
        agent_purchases(rest).await.len(),
        1,
        "Tryton holds exactly one document"
    );
    // And from now on the key replays.
    let (status, _, replay) = second.post("/", &headers, body).await;
    assert_eq!(status, 200, "{replay}");
    assert_eq!(replay["replayed"], true);
    assert_eq!(replay["data"]["po_number"], held[0]["number"]);
    assert_eq!(agent_purchases(rest).await.len(), 1);
    let _ = FUNCTION_RESOURCE;
}

#[tokio::test]
async fn tryton_stopped_is_a_retryable_503_that_says_nothing_was_created_and_leaves_nothing_half_written() {
    let data = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("api-tryton-stopped");
    let cache = LocalTryton::default_cache_dir().unwrap();
    let mut tryton = tokio::task::spawn_blocking(move || LocalTryton::start_pool(&cache, &data, 1).unwrap())
        .await
        .unwrap();
    let db = tryton.databases()[0].clone();
    let settings = TrytonSettings::new(tryton.url(), db.name.clone(), db.key.clone()).serving("demo");
    let app = spawn_app_on_erp(LocalErp::Tryton(settings), LocalOptions::default()).await;
    let seeded = app.kinds().await;
    let tryton = tokio::task::spawn_blocking(move || {
        tryton.stop();
        tryton
    })
    .await
    .unwrap();

    let read = app
        .call(
            "buyer-sby",
            "inventory_get_stock",
            &json!({"item_code": "BRG-0042"}),
            &[],
        )
        .await;
    assert_eq!(read.status, 503, "{:?}", read.body);
    assert_eq!(read.error_code(), "DEPENDENCY_UNAVAILABLE");
    assert_eq!(read.body["error"]["retryable"], true);
    assert!(read.header("retry-after").is_some());

    let draft = app
        .create_po_draft("buyer-sby", "stopped-1", &po_input("stopped-1"))
        .await;
    assert_eq!(draft.status, 503, "{:?}", draft.body);
    assert_eq!(draft.error_code(), "DEPENDENCY_UNAVAILABLE");
    assert_eq!(draft.body["error"]["retryable"], true);
    assert!(
        draft.message().contains("Nothing was read or changed"),
        "the message says honestly that nothing exists: {}",
        draft.message()
    );
    // Nothing half-written: no key record left (a retry starts afresh) and
    // no limit counted, only the audit items, which say what happened
    // (beside the tenant's policy and its runs' counters, seeded with the
    // demo).
    let mut kinds = app.kinds().await;
    assert_eq!(
        kinds.keys().collect::<Vec<_>>(),
        ["audit", "limit_use", "policy", "policy_version"],
        "{kinds:?}"
    );
    kinds.remove("audit");
    assert_eq!(kinds, seeded, "only audit items were added");
    let audits = app.audit_items().await;
    assert_eq!(audits.len(), 2, "{audits:?}");
    for audit in &audits {
        assert_eq!(audit["outcome"], "tool_error");
        assert_eq!(audit["code"], "DEPENDENCY_UNAVAILABLE");
        assert_eq!(audit["http_status"], "503");
        assert!(!audit["error_message"].is_empty());
    }
    assert_eq!(audits[1]["error_message"], draft.message());
    drop(tryton);
}
