//! The isolation matrix: every tool × every demo user, against documents of
//! the other branches and of another tenant.
//!
//! Non-interference: each user's answers are recorded, then everything that
//! belongs to the other branches and to the other tenant is changed (stock
//! moved, documents and customers added); the same calls must give the same
//! answers. Any read, list, count or sum that crossed a branch or tenant
//! would show the change. Calls a user's scopes do not allow are refused and
//! audited as denied, and another branch's document reads exactly like a
//! missing one.

use aws_sdk_dynamodb::types::AttributeValue;
use draftline_erp::demo::USERS;
use serde_json::{Value, json};

use crate::helpers::{Backend, TestApp, on_both_backends, spawn_app, spawn_app_on};

/// Every read tool with inputs that name this branch's, other branches' and
/// unknown documents; draft tools are checked separately (they write).
fn read_calls() -> Vec<(&'static str, Value)> {
    let mut calls = vec![
        ("inventory_list_below_reorder", json!({"limit": 50, "cursor": null})),
        (
            "purchasing_search_vendors",
            json!({"query": null, "item_code": null, "limit": 50, "cursor": null}),
        ),
        (
            "purchasing_search_vendors",
            json!({"query": null, "item_code": "CBL-0220", "limit": 50, "cursor": null}),
        ),
        (
            "purchasing_search_pos",
            json!({"status": null, "vendor_code": null, "created_from": null, "created_to": null, "limit": 50, "cursor": null}),
        ),
        (
            "sales_search_customers",
            json!({"query": "PT", "limit": 50, "cursor": null}),
        ),
        ("finance_get_account_summary", json!({"ledger": null})),
        ("finance_list_tax_types", json!({})),
    ];
    for item in ["BRG-0042", "CBL-0220", "GLV-0015", "OIL-0310"] {
        calls.push(("inventory_get_stock", json!({"item_code": item})));
    }
    for po in ["PO-JKT-000001", "PO-JKT-000002", "PO-SBY-000001", "PO-BDG-000001"] {
        calls.push(("purchasing_get_po", json!({"po_number": po})));
    }
    for customer in ["C-BDG-001", "C-SBY-001", "C-JKT-001"] {
        calls.push(("sales_get_customer_summary", json!({"customer_code": customer})));
    }
    calls
}

/// The answer without what differs per call (request id).
async fn answer(app: &TestApp, user: &str, tool: &str, input: &Value) -> Value {
    let reply = app.call(user, tool, input, &[]).await;
    let mut body = reply.body;
    body.as_object_mut().map(|b| b.remove("requestId"));
    json!({"status": reply.status, "body": body})
}

/// Changes everything of `tenant` outside `keep_branch` (every branch when `None`).
async fn perturb(app: &TestApp, tenant: &str, keep_branch: Option<&str>) {
    let prefix = format!("T#{tenant}#");
    for item in app.scan_all().await {
        let Some(pk) = item.get("pk").and_then(|v| v.as_s().ok()).cloned() else {
            continue;
        };
        if !pk.starts_with(&prefix) {
            continue;
        }
        let kind = item
            .get("kind")
            .and_then(|v| v.as_s().ok())
            .cloned()
            .unwrap_or_default();
        let in_kept_branch = keep_branch.is_some_and(|b| pk.contains(&format!("#B#{b}#")));
        let branch_owned = pk.contains("#B#");
        // Tenant-wide data (items, vendors, taxes) is shared by the branches of
        // a tenant; only another tenant's may change.
        if in_kept_branch || (keep_branch.is_some() && !branch_owned) || kind == "audit" || kind == "sequence" {
            continue;
        }
        let mut changed = item.clone();
        for field in [
            "on_hand",
            "amount",
            "total",
            "open_amount",
            "credit_limit",
            "unit_price",
            "reorder_point",
        ] {
            if let Some(AttributeValue::N(n)) = changed.get(field) {
                let more = n.parse::<f64>().unwrap_or(0.0) + 1000.0;
                changed.insert(field.to_owned(), AttributeValue::N(format!("{more}")));
            }
        }
        put(app, changed).await;
        // And a second document, customer or listing next to each one.
        let identity = ["po_number", "number", "code"]
            .into_iter()
            .find_map(|f| item.get(f).and_then(|v| v.as_s().ok()).cloned());
        if let Some(old) = identity {
            let new = format!("{old}9");
            let copy = item
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        AttributeValue::S(s) => AttributeValue::S(s.replace(&old, &new)),
                        other => other.clone(),
                    };
                    (k.clone(), v)
                })
                .collect();
            put(app, copy).await;
        }
    }
}

async fn put(app: &TestApp, item: std::collections::HashMap<String, AttributeValue>) {
    app.inspect
        .client()
        .put_item()
        .table_name(app.inspect.table())
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn no_read_list_count_or_sum_crosses_a_branch_or_a_tenant_for_any_user_or_tool() {
    for user in USERS.iter() {
        let app = spawn_app().await;
        app.copy_tenant("demo", "other").await;
        let calls = read_calls();
        // A user of another branch with every read scope sees the change: the
        // perturbation is real, so unchanged answers mean nothing crossed.
        let control = USERS
            .iter()
            .find(|u| u.branch_id != user.branch_id && u.scope.contains("purchasing:read"))
            .or_else(|| USERS.iter().find(|u| u.branch_id != user.branch_id))
            .unwrap();
        let mut before = Vec::new();
        let mut control_before = Vec::new();
        for (tool, input) in &calls {
            before.push(answer(&app, user.sub, tool, input).await);
            control_before.push(answer(&app, control.sub, tool, input).await);
        }
        perturb(&app, "demo", Some(user.branch_id)).await;
        perturb(&app, "other", None).await;
        let mut control_changed = 0;
        for (((tool, input), expected), control_expected) in calls.iter().zip(&before).zip(&control_before) {
            let after = answer(&app, user.sub, tool, input).await;
            assert_eq!(
                &after, expected,
                "{} {tool} {input}: another branch or tenant showed through",
                user.sub
            );
            if &answer(&app, control.sub, tool, input).await != control_expected {
                control_changed += 1;
            }
        }
        assert!(
            control_changed >= 3,
            "{}: the perturbation reached only {control_changed} of {}'s answers",
            user.sub,
            control.sub
        );

        // Drafts land in the caller's branch, numbered with its code, or are refused for scope.
        let customer = match user.branch_id {
            "SBY-01" => "C-SBY-001",
            "JKT-01" => "C-JKT-001",
            _ => "C-BDG-001",
        };
        let drafts = [
            (
                "purchasing_create_po_draft",
                crate::helpers::po_input("iso-po"),
                "purchasing:draft",
                "PO",
            ),
            (
                "sales_create_quote_draft",
                json!({"customer_code": customer, "valid_until": "2026-12-20", "client_ref": "iso-qt", "note": null,
                       "lines": [{"item_code": "BRG-0042", "qty": 1, "uom": "BOX", "tax_code": "VAT11"}]}),
                "sales:draft",
                "QT",
            ),
        ];
        for (tool, input, scope, prefix) in drafts {
            let reply = app
                .call(user.sub, tool, &input, &[("idempotency-key", format!("iso-{tool}"))])
                .await;
            if user.scope.contains(scope) {
                assert_eq!(reply.status, 201, "{} {tool}: {:?}", user.sub, reply.body);
                assert_eq!(reply.body["data"]["branch_id"], user.branch_id);
                let number = reply.body["data"].to_string();
                assert!(
                    number.contains(&format!("\"{prefix}-{}-", user.branch_code)),
                    "{number}"
                );
            } else {
                assert_eq!(reply.status, 403, "{} {tool}", user.sub);
                before.push(json!({"status": 403}));
            }
        }

        // Refused calls are audited as denied, in the caller's own tenant and branch.
        let denied: Vec<_> = before.iter().filter(|a| a["status"] == 403).collect();
        let audits = app.audit_items().await;
        let mine: Vec<_> = audits.iter().filter(|a| a["on_behalf_of"] == user.sub).collect();
        let denied_audits = mine.iter().filter(|a| a["outcome"] == "denied").count();
        let drafts_denied = before.iter().filter(|a| **a == json!({"status": 403})).count();
        assert_eq!(
            denied_audits,
            (denied.len() - drafts_denied) * 2 + drafts_denied,
            "{}: every refusal is audited",
            user.sub
        );
        for audit in &mine {
            assert_eq!(audit["tenant_id"], "demo", "{audit:?}");
            assert_eq!(audit["branch_id"], user.branch_id, "{audit:?}");
        }
    }
}

on_both_backends! {
    #[tokio::test]
    async fn another_branchs_or_tenants_document_reads_exactly_like_a_missing_one(backend) {
        let app = spawn_app_on(backend).await;
        app.copy_tenant("demo", "other").await;
        // Jakarta's PO, read from Surabaya and from the other tenant's Jakarta.
        let jakarta = app
            .call(
                "buyer-jkt",
                "purchasing_get_po",
                &json!({"po_number": "PO-JKT-000001"}),
                &[],
            )
            .await;
        assert_eq!(jakarta.status, 200);
        let foreign = app
            .call(
                "buyer-sby",
                "purchasing_get_po",
                &json!({"po_number": "PO-JKT-000001"}),
                &[],
            )
            .await;
        let missing = app
            .call(
                "buyer-sby",
                "purchasing_get_po",
                &json!({"po_number": "PO-JKT-999999"}),
                &[],
            )
            .await;
        assert_eq!(foreign.status, 404);
        assert_eq!(
            foreign.message().replace("PO-JKT-000001", "N"),
            missing.message().replace("PO-JKT-999999", "N")
        );
        let other_tenant = crate::hardening::token_of("other", "buyer-jkt", "JKT-01", "JKT", "purchasing:read", &app);
        let reply = app
            .post_raw(
                "purchasing_get_po",
                &[("authorization", format!("Bearer {other_tenant}"))],
                json!({"po_number": "PO-JKT-000001"}).to_string(),
            )
            .await;
        match backend {
            Backend::Builtin => {
                assert_eq!(reply.status, 200, "the other tenant has its own copy");
                app.inspect
                    .client()
                    .delete_item()
                    .table_name(app.inspect.table())
                    .key("pk", AttributeValue::S("T#other#B#JKT-01#PO".into()))
                    .key("sk", AttributeValue::S("PO#PO-JKT-000001".into()))
                    .send()
                    .await
                    .unwrap();
                let reply = app
                    .post_raw(
                        "purchasing_get_po",
                        &[("authorization", format!("Bearer {other_tenant}"))],
                        json!({"po_number": "PO-JKT-000001"}).to_string(),
                    )
                    .await;
                assert_eq!(reply.status, 404, "the demo tenant's PO does not show through");
            }
            // A Tryton database serves one tenant: any other tenant's call
            // sees nothing, not even a document of the same number.
            Backend::Tryton => assert_eq!(reply.status, 404, "{:?}", reply.body),
        }

        // Customers: another branch's customer summary and quote read like missing ones.
        let summary = app
            .call(
                "sales-bdg",
                "sales_get_customer_summary",
                &json!({"customer_code": "C-SBY-001"}),
                &[],
            )
            .await;
        assert_eq!(summary.status, 404, "{:?}", summary.body);
        let quote = app
            .call(
                "sales-bdg",
                "sales_create_quote_draft",
                &json!({"customer_code": "C-SBY-001", "valid_until": "2026-12-20", "client_ref": "iso-q", "note": null,
                        "lines": [{"item_code": "BRG-0042", "qty": 1, "uom": "BOX", "tax_code": "VAT11"}]}),
                &[("idempotency-key", "iso-q".into())],
            )
            .await;
        assert_eq!(quote.status, 400, "{:?}", quote.body);
        assert!(quote.message().contains("No draft was created"));
    }
}
