//! Permissions from evidence: the DynamoDB actions each deployed function's
//! calls made, recorded as IAM authorises them (`draftline_dynamo::grants`:
//! a `TransactWriteItems` counts per item kind), against the grants of the
//! function's role in `infra/aws/template.json`.
//!
//! The calls cover every function of the template: every tool with its
//! example input, under a policy with a rate, a run and a day budget and a
//! counterparty rule, then in observe mode; a near duplicate asked and
//! answered (its confirmation consumed); the examiner; MCP on both
//! revisions; the listing; review decisions; and on Tryton a create that
//! definitely failed (its key and reservation given back) and a takeover.
//! A role that grants `UpdateItem` on some partition keys only
//! (`dynamodb:LeadingKeys`) is checked against the keys the calls updated.
//! The embedded engine checks no permissions, so without this a missing
//! grant would first show on AWS, as a 500.

use std::collections::{BTreeMap, BTreeSet};

use draftline_cli::LocalOptions;
use draftline_infra::template::{self, Tier};
use serde_json::{Value, json};

use crate::catalogue::example_of;
use crate::helpers::{TestApp, po_input, spawn_app};
use crate::tryton_proxy::{Fault, Target};

/// Per function: the IAM actions its calls needed, and the partition keys
/// of the items they updated.
type Recorded = BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>;

/// What `app`'s calls recorded, added to `into`.
fn gather(app: &TestApp, into: &mut Recorded) {
    for (function, seen) in app.server.app.db().grants().snapshot() {
        let (actions, updated) = into.entry(function.to_owned()).or_default();
        actions.extend(seen.actions.into_iter().map(str::to_owned));
        updated.extend(seen.updated);
    }
}

/// The demo user whose agent calls `tool`, with the examiner's scope too.
fn caller_of(tool: &str) -> &'static str {
    if tool.starts_with("sales_") || tool.starts_with("finance_") {
        "sales-bdg"
    } else {
        "buyer-sby"
    }
}

async fn call(app: &TestApp, user: &str, tool: &str, input: &Value, extra: &[(&str, String)]) -> crate::helpers::Reply {
    let mut headers = vec![
        (
            "authorization",
            format!("Bearer {}", crate::limits::examiner_token_of(app, user)),
        ),
        ("content-type", "application/json".to_owned()),
    ];
    headers.extend(extra.iter().cloned());
    app.post_raw(tool, &headers, input.to_string()).await
}

/// Every tool once with its example input, as the agent of its module.
async fn every_tool(app: &TestApp, round: &str) {
    let names: Vec<&'static str> = app.server.app.registry().all().map(|d| d.name).collect();
    for name in names {
        let definition = app.server.app.registry().get(name).unwrap().definition();
        let reply = call(
            app,
            caller_of(name),
            name,
            &example_of(definition),
            &[
                ("idempotency-key", format!("grants-{round}-{name}")),
                ("x-agent-run-id", format!("run-grants-{round}")),
            ],
        )
        .await;
        assert!(reply.status < 500, "{name}: {} {:?}", reply.status, reply.body);
    }
}

/// An MCP request of `user` (with the examiner's scope) on `revision`.
async fn mcp(app: &TestApp, user: &str, revision: &str, method: &str, mut params: Value) -> Value {
    let mut request = app
        .http
        .post(app.url("/api/mcp"))
        .header(
            "authorization",
            format!("Bearer {}", crate::limits::examiner_token_of(app, user)),
        )
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", revision)
        .header("x-agent-run-id", "run-grants-mcp");
    if revision == "2026-07-28" {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": revision,
            "io.modelcontextprotocol/clientInfo": {"name": "api-tests", "version": "1.0.0"},
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        request = request.header("mcp-method", method);
        if let Some(name) = params.get("name").and_then(Value::as_str) {
            request = request.header("mcp-name", name.to_owned());
        }
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = request.body(body.to_string()).send().await.unwrap();
    assert_eq!(response.status(), 200, "{method}");
    response.json().await.unwrap()
}

/// The calls on the built-in backend.
async fn on_the_builtin_backend(recorded: &mut Recorded) {
    let app = spawn_app().await;
    app.set_policy(&json!({
        "version": null, "mode": "enforce", "time_zone": "+07:00",
        "limits": {
            "per_run": {"max_drafts": 50, "max_value": [{"currency": "IDR", "amount": "2000000000.00"}]},
            "per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "5000000000.00"}]},
            "per_tool_per_person": {"calls_per_minute": 100},
            "counterparties": {"rule": "allow_list", "vendors": ["V-00231"], "customers": ["C-BDG-001"]}
        },
        "branches": null
    }))
    .await;
    // Two drafts for the review pages to decide on (before the tools'
    // examples, whose item sets they would repeat).
    let drafted = crate::review::agent_po(
        &app,
        "buyer-sby",
        "run-grants-review",
        "grants-review-1",
        po_of_one("grants-review-1", "BRG-0042"),
    )
    .await;
    let rejected = crate::review::agent_po(
        &app,
        "buyer-sby",
        "run-grants-review",
        "grants-review-2",
        po_of_one("grants-review-2", "VBT-0220"),
    )
    .await;
    // Every tool, reads under the policy's rate among them.
    every_tool(&app, "enforce").await;

    // A near duplicate: asked, then answered "create another" (the
    // confirmation is consumed in the draft's transaction).
    let first = call(
        &app,
        "buyer-sby",
        "purchasing_create_po_draft",
        &po_input("grants-near"),
        &[("idempotency-key", "grants-near-1".into())],
    )
    .await;
    assert_eq!(first.status, 201, "{:?}", first.body);
    let asked = call(
        &app,
        "buyer-sby",
        "purchasing_create_po_draft",
        &po_input("grants-near"),
        &[("idempotency-key", "grants-near-2".into())],
    )
    .await;
    assert_eq!(asked.error_code(), "INPUT_REQUIRED", "{:?}", asked.body);
    let state = asked.body["error"]["inputRequired"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let confirmed = call(
        &app,
        "buyer-sby",
        "purchasing_create_po_draft",
        &po_input("grants-near"),
        &[
            ("idempotency-key", "grants-near-2".into()),
            ("draftline-confirm", format!("create-another {state}")),
        ],
    )
    .await;
    assert_eq!(confirmed.status, 201, "{:?}", confirmed.body);

    // MCP on both revisions: the listing, the examiner, a read and a draft.
    for revision in ["2025-11-25", "2026-07-28"] {
        mcp(&app, "buyer-sby", revision, "tools/list", json!({})).await;
        for (name, arguments) in [
            ("agent_get_limits", json!({})),
            ("inventory_get_stock", json!({"item_code": "BRG-0042"})),
            (
                "purchasing_create_po_draft",
                po_of_one(&format!("grants-mcp-{revision}"), "BRG-0043"),
            ),
        ] {
            let answer = mcp(
                &app,
                "buyer-sby",
                revision,
                "tools/call",
                json!({"name": name, "arguments": arguments}),
            )
            .await;
            assert!(answer.get("result").is_some(), "{revision} {name}: {answer}");
        }
    }
    // The listing.
    let listed = app
        .http
        .get(app.url("/api/tools?format=ai-sdk"))
        .header("authorization", format!("Bearer {}", app.token("buyer-sby")))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), 200);

    // Review decisions: approve one purchase order, reject the other.
    let approver = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    assert_eq!(approver.get("/review").await.status, 200);
    assert_eq!(approver.get("/review/runs/run-grants-review").await.status, 200);
    let number = |po: &Value| po["po_number"].as_str().unwrap().to_owned();
    let approved = approver.decide(&number(&drafted), "approve", "").await;
    assert!(approved.status < 400, "{}", approved.body);
    let refused = approver.decide(&number(&rejected), "reject", "not needed").await;
    assert!(refused.status < 400, "{}", refused.body);

    // Observe mode: a draft past every limit passes, and is audited.
    app.set_policy(&json!({
        "version": null, "mode": "observe", "time_zone": "+07:00",
        "limits": {
            "per_run": {"max_drafts": 0, "max_value": [{"currency": "IDR", "amount": "1.00"}]},
            "per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "1.00"}]},
            "per_tool_per_person": {"calls_per_minute": 1},
            "counterparties": {"rule": "allow_list", "vendors": ["V-00415"], "customers": ["C-BDG-002"]}
        },
        "branches": null
    }))
    .await;
    app.clock.advance(chrono::Duration::seconds(31));
    every_tool(&app, "observe").await;
    gather(&app, recorded);

    // The deployment-wide per-person budget (DRAFTLINE_RATE_LIMIT_PER_MINUTE).
    let budgeted = crate::helpers::spawn_app_with(LocalOptions {
        rate_limit_per_minute: Some(100),
        ..LocalOptions::default()
    })
    .await;
    every_tool(&budgeted, "budget").await;
    gather(&budgeted, recorded);
}

/// One line of `item` from V-00231 (its own item set: no near duplicate).
fn po_of_one(client_ref: &str, item: &str) -> Value {
    let mut input = po_input(client_ref);
    input["lines"] = json!([{"item_code": item, "qty": 2, "uom": "PCS"}]);
    input
}

/// The calls on Tryton: reads and a draft through the ERP, a create that
/// definitely failed (its key and reservation are given back), a create
/// whose answer was lost and the takeover that finds it.
async fn on_tryton(recorded: &mut Recorded) {
    let lease = std::time::Duration::from_secs(4);
    let (app, proxy) = crate::tryton_proxy::behind_a_proxy(LocalOptions {
        lease: Some(lease),
        ..LocalOptions::default()
    })
    .await;
    app.set_policy(&json!({
        "version": null, "mode": "enforce", "time_zone": "+07:00",
        "limits": {
            "per_run": {"max_drafts": 50, "max_value": [{"currency": "IDR", "amount": "2000000000.00"}]},
            "per_tool_per_person": {"calls_per_minute": 100}
        },
        "branches": null
    }))
    .await;
    every_tool(&app, "tryton").await;
    let draft = |key: &'static str| {
        let app = &app;
        async move {
            call(
                app,
                "buyer-sby",
                "purchasing_create_po_draft",
                &po_of_one(key, "BRG-0043"),
                &[
                    ("idempotency-key", key.to_owned()),
                    ("x-agent-run-id", "run-grants-tryton".into()),
                ],
            )
            .await
        }
    };
    // Refused by Tryton: nothing was written; the key is given back.
    proxy.then(Target::CreatePurchase, Fault::Refuse(503));
    let refused = draft("grants-released").await;
    assert_eq!(refused.status, 503, "{:?}", refused.body);
    // Committed, its answer lost; after the lease the takeover finds it.
    proxy.then(Target::CreatePurchase, Fault::AnswerAfter(502));
    let lost = draft("grants-taken-over").await;
    assert_eq!(lost.status, 503, "{:?}", lost.body);
    app.clock.advance(chrono::Duration::seconds(5));
    let found = draft("grants-taken-over").await;
    assert!(found.status < 300, "{:?}", found.body);
    gather(&app, recorded);
}

#[tokio::test]
async fn every_functions_role_grants_what_its_calls_did_and_nothing_beyond_its_tier() {
    let mut recorded = Recorded::new();
    on_the_builtin_backend(&mut recorded).await;
    on_tryton(&mut recorded).await;

    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let deployed = template::read(&root.join("infra/aws/template.json"))
        .and_then(|t| template::functions(&t))
        .unwrap();
    let mut missing = Vec::new();
    for (function, (actions, updated)) in &recorded {
        let Some(deployed) = deployed.get(function) else {
            missing.push(format!("{function}: called, but not a function of the template"));
            continue;
        };
        let granted = deployed.dynamodb_actions().unwrap();
        for action in actions.difference(&granted) {
            missing.push(format!(
                "{function}: its calls needed {action}, which its role (of {}) does not grant",
                deployed.logical_id
            ));
        }
        // A role may grant UpdateItem on some keys only (dynamodb:LeadingKeys).
        for pk in updated {
            if !deployed.may_update(pk) {
                missing.push(format!(
                    "{function}: its calls updated an item with pk {pk}, which its role (of {}) does not allow",
                    deployed.logical_id
                ));
            }
        }
    }
    for (name, function) in &deployed {
        let granted = function.dynamodb_actions().unwrap();
        let allowed = Tier::of(name).actions();
        for action in granted.difference(&allowed) {
            missing.push(format!("{name}: granted {action}, beyond its tier's list {allowed:?}"));
        }
        if Tier::of(name) != Tier::Metadata && !recorded.contains_key(name) {
            missing.push(format!(
                "{name}: no call of the suite reached it; its grants are not evidenced"
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
