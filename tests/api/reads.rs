use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::json;

use crate::helpers::{Backend, Reply, TestApp, diff, on_both_backends, spawn_app, spawn_app_on};

on_both_backends! {
    #[tokio::test]
    async fn a_read_returns_the_callers_branch_data_only(backend) {
        let app = spawn_app_on(backend).await;
        let sby = app
            .call(
                "buyer-sby",
                "inventory_get_stock",
                &json!({"item_code": "BRG-0042"}),
                &[],
            )
            .await;
        assert_eq!(sby.status, 200, "{:?}", sby.body);
        assert_eq!(sby.body["ok"], true);
        assert_eq!(sby.body["replayed"], false);
        let data = &sby.body["data"];
        assert_eq!(data["branch_id"], "SBY-01");
        let warehouses: Vec<&str> = data["warehouses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["warehouse"].as_str().unwrap())
            .collect();
        assert_eq!(warehouses, ["SBY-WH1", "SBY-WH2"]);
        assert_eq!(data["total_on_hand"], 40);
        assert_eq!(data["total_available"], 28);
        assert_eq!(data["below_reorder_point"], true);

        let jkt = app
            .call(
                "buyer-jkt",
                "inventory_get_stock",
                &json!({"item_code": "BRG-0042"}),
                &[],
            )
            .await;
        assert_eq!(jkt.body["data"]["branch_id"], "JKT-01");
        assert_eq!(jkt.body["data"]["total_on_hand"], 520);
        assert_eq!(jkt.body["data"]["warehouses"].as_array().unwrap().len(), 1);
        assert_eq!(sby.header("x-request-id"), sby.body["requestId"].as_str());
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_read_costs_its_reads_and_one_audit_write(backend) {
        let app = spawn_app_on(backend).await;
        let before = app.round_trips();
        let reply = app
            .call(
                "clerk-sby",
                "inventory_get_stock",
                &json!({"item_code": "BRG-0042"}),
                &[],
            )
            .await;
        assert_eq!(reply.status, 200);
        let cold = diff(&before, &app.round_trips());
        let before = app.round_trips();
        let again = app
            .call(
                "clerk-sby",
                "inventory_get_stock",
                &json!({"item_code": "BRG-0042"}),
                &[],
            )
            .await;
        assert_eq!(again.status, 200);
        let warm = diff(&before, &app.round_trips());
        let expected: BTreeMap<String, u64> = match backend {
            // The item's records in the branch's stock partition (its copy of
            // the item master, its stock levels, its policy), the audit item.
            Backend::Builtin => [("PutItem".into(), 1), ("Query".into(), 1)].into(),
            // The data is Tryton's: only the audit item (Tryton's requests
            // are counted in tryton_boundary.rs).
            Backend::Tryton => [("PutItem".into(), 1)].into(),
        };
        assert_eq!(warm, expected);
        // The instance's first call also reads the tenant's policy, whose
        // rate may bound the read: once per cache bound, not per call.
        assert_eq!(cold, with_the_policy(expected));
        let audits = app.audit_items().await;
        assert_eq!(audits.len(), 2);
        assert_eq!(audits[0]["outcome"], "ok");
        assert_eq!(audits[0]["on_behalf_of"], "clerk-sby");
        assert_eq!(audits[0]["tool"], "inventory_get_stock");
    }
}

on_both_backends! {
    #[tokio::test]
    async fn an_unknown_item_is_not_found_with_a_next_step(backend) {
        let app = spawn_app_on(backend).await;
        let reply = app
            .call(
                "buyer-sby",
                "inventory_get_stock",
                &json!({"item_code": "BRG-9999"}),
                &[],
            )
            .await;
        assert_eq!(reply.status, 404);
        assert_eq!(reply.error_code(), "NOT_FOUND");
        assert!(reply.message().contains("BRG-9999"));
        assert!(reply.message().contains("inventory_list_below_reorder"));
        assert_eq!(reply.body["error"]["retryable"], false);
    }
}

on_both_backends! {
    #[tokio::test]
    async fn another_branchs_document_gets_the_same_404_text_as_a_missing_one(backend) {
        let app = spawn_app_on(backend).await;
        // PO-JKT-000001 exists in Jakarta (demo data); Surabaya must not see it.
        let own = app
            .call(
                "buyer-jkt",
                "purchasing_get_po",
                &json!({"po_number": "PO-JKT-000001"}),
                &[],
            )
            .await;
        assert_eq!(own.status, 200, "{:?}", own.body);
        assert_eq!(own.body["data"]["branch_id"], "JKT-01");

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
                &json!({"po_number": "PO-JKT-000002"}),
                &[],
            )
            .await;
        assert_eq!(foreign.status, 404);
        assert_eq!(missing.status, 404);
        assert_eq!(
            foreign.message().replace("PO-JKT-000001", "<n>"),
            missing.message().replace("PO-JKT-000002", "<n>")
        );
        assert_eq!(foreign.body["error"], {
            let mut e = missing.body["error"].clone();
            e["message"] = json!(missing.message().replace("PO-JKT-000002", "PO-JKT-000001"));
            e
        });
    }
}

/// `user`'s `inventory_get_stock` of `item`: the answer, and the DynamoDB
/// round trips it cost.
async fn stock_read(app: &TestApp, user: &str, item: &str) -> (Reply, BTreeMap<String, u64>) {
    let before = app.round_trips();
    let reply = app
        .call(user, "inventory_get_stock", &json!({"item_code": item}), &[])
        .await;
    (reply, diff(&before, &app.round_trips()))
}

/// The cost of a stock read that also reads the item master.
fn with_the_master() -> BTreeMap<String, u64> {
    [("GetItem".into(), 1), ("PutItem".into(), 1), ("Query".into(), 1)].into()
}

/// `cost` with the `GetItem` of the tenant's policy, which the instance's
/// first read makes (its copy is then fresh for the cache bound).
fn with_the_policy(mut cost: BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    *cost.entry("GetItem".into()).or_default() += 1;
    cost
}

#[tokio::test]
async fn an_item_the_branch_does_not_stock_is_read_from_the_item_master() {
    // Surabaya keeps no CBL-0220 (Jakarta and Bandung do): its stock
    // partition holds no copy of the item, so the master is read as well.
    let app = spawn_app().await;
    let (reply, cost) = stock_read(&app, "clerk-sby", "CBL-0220").await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(
        reply.body["data"],
        json!({
            "item_code": "CBL-0220",
            "item_name": "NYY power cable 3x2.5 mm2",
            "branch_id": "SBY-01",
            "uom": "M",
            "warehouses": [],
            "total_on_hand": 0,
            "total_available": 0,
            "reorder_point": null,
            "below_reorder_point": false
        })
    );
    assert_eq!(cost, with_the_policy(with_the_master()));

    // An item no master holds: the same two reads, and NOT_FOUND.
    let (reply, cost) = stock_read(&app, "clerk-sby", "BRG-9999").await;
    assert_eq!(reply.status, 404, "{:?}", reply.body);
    assert_eq!(cost, with_the_master());
}

#[tokio::test]
async fn a_stock_read_without_the_items_copy_answers_the_same_from_the_item_master() {
    // A table seeded before the copies existed, or a copy lost: the answer
    // does not change, only its cost (the master's GetItem).
    let app = spawn_app().await;
    let (with_copy, cost) = stock_read(&app, "buyer-jkt", "BRG-0042").await;
    assert_eq!(with_copy.status, 200, "{:?}", with_copy.body);
    assert_eq!(
        cost,
        with_the_policy([("PutItem".into(), 1), ("Query".into(), 1)].into())
    );
    app.inspect
        .client()
        .delete_item()
        .table_name(app.inspect.table())
        .key("pk", AttributeValue::S("T#demo#B#JKT-01#STOCK".into()))
        .key("sk", AttributeValue::S("ITEM#BRG-0042#ITEM".into()))
        .send()
        .await
        .unwrap();
    let (without_copy, cost) = stock_read(&app, "buyer-jkt", "BRG-0042").await;
    assert_eq!(without_copy.status, 200, "{:?}", without_copy.body);
    assert_eq!(without_copy.body["data"], with_copy.body["data"]);
    assert_eq!(cost, with_the_master());
    assert_eq!(with_copy.body["data"]["item_name"], "Deep groove ball bearing 6204-2RS");
    assert_eq!(with_copy.body["data"]["total_on_hand"], 520);
}

#[tokio::test]
async fn a_tool_answers_only_post() {
    let app = spawn_app().await;
    let response = app.http.get(app.url("/api/inventory_get_stock")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 405);
    assert_eq!(response.headers()["allow"], "POST");
}

#[tokio::test]
async fn the_protected_resource_metadata_names_the_resource_and_issuer() {
    let app = spawn_app().await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/api/mcp",
    ] {
        let body: serde_json::Value = app.http.get(app.url(path)).send().await.unwrap().json().await.unwrap();
        assert_eq!(body["resource"], app.server.url());
        assert_eq!(body["authorization_servers"], json!(["draftline-local"]));
        assert!(
            body["scopes_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("purchasing:draft"))
        );
    }
}

#[tokio::test]
async fn concurrent_calls_share_their_audit_writes_and_every_call_still_has_its_own_item() {
    // Calls served at the same time on one instance: their audit items go
    // together (one conditional put each, in one transaction) instead of
    // one request per call.
    let app = spawn_app().await;
    let app = &app;
    let before = app.round_trips();
    let calls = (0..24).map(|_| async move {
        app.call(
            "clerk-sby",
            "inventory_get_stock",
            &json!({"item_code": "BRG-0042"}),
            &[],
        )
        .await
    });
    let replies = futures::future::join_all(calls).await;
    assert!(
        replies.iter().all(|r| r.status == 200),
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    let cost = diff(&before, &app.round_trips());
    // The reads are each call's own: one Query each. The tenant's policy,
    // which the cold instance's copy lacks, is read once for all of them.
    assert_eq!(cost.get("GetItem"), Some(&1));
    assert_eq!(cost.get("Query"), Some(&24));
    let audit_writes = cost.get("PutItem").copied().unwrap_or(0) + cost.get("TransactWriteItems").copied().unwrap_or(0);
    assert!(audit_writes < 24, "no audit write was shared: {cost:?}");
    let audits = app.audit_items().await;
    assert_eq!(audits.len(), 24);
    let mut request_ids: Vec<&str> = replies.iter().filter_map(|r| r.body["requestId"].as_str()).collect();
    request_ids.sort_unstable();
    let mut audited: Vec<&str> = audits.iter().map(|a| a["request_id"].as_str()).collect();
    audited.sort_unstable();
    assert_eq!(request_ids, audited, "each call's own item");
}
