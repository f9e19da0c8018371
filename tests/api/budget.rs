//! The opt-in per-user call budget: `429 RATE_LIMITED`, per minute, across instances.

use serde_json::json;

use crate::helpers::{po_input, seeded_purchase_orders, spawn_app_with_budget};

#[tokio::test]
async fn a_caller_over_its_budget_is_told_to_wait_and_nothing_runs() {
    let app = spawn_app_with_budget(Some(3)).await;
    let read = json!({"item_code": "BRG-0042"});
    for _ in 0..3 {
        assert_eq!(
            app.call("buyer-sby", "inventory_get_stock", &read, &[]).await.status,
            200
        );
    }
    let refused = app.call("buyer-sby", "inventory_get_stock", &read, &[]).await;
    assert_eq!(refused.status, 429, "{:?}", refused.body);
    assert_eq!(refused.error_code(), "RATE_LIMITED");
    assert_eq!(refused.body["error"]["retryable"], true);
    // The test clock stands at 09:00:00, so the window ends in 60 s.
    assert_eq!(refused.header("retry-after"), Some("60"));
    assert_eq!(refused.body["error"]["retryAfterSeconds"], 60);
    assert!(
        refused.message().contains("budget of 3 tool calls per minute"),
        "{}",
        refused.message()
    );
    assert!(refused.message().contains("Nothing was read or written"));

    // A draft over budget creates nothing.
    let draft = app.create_po_draft("buyer-sby", "k-over", &po_input("r")).await;
    assert_eq!(draft.status, 429);
    assert_eq!(app.count_kind("purchase_order").await, seeded_purchase_orders());
    assert_eq!(app.count_kind("idempotency_key").await, 0);

    // Another user has a budget of its own.
    assert_eq!(
        app.call("clerk-sby", "inventory_get_stock", &read, &[]).await.status,
        200
    );

    // The next minute is a new window.
    app.clock.advance(chrono::Duration::seconds(60));
    assert_eq!(
        app.call("buyer-sby", "inventory_get_stock", &read, &[]).await.status,
        200
    );

    let audits = app.audit_items().await;
    let limited: Vec<_> = audits
        .iter()
        .filter(|a| a.get("code").map(String::as_str) == Some("RATE_LIMITED"))
        .collect();
    assert_eq!(limited.len(), 2, "both refused calls are audited");
    assert!(
        limited
            .iter()
            .all(|a| a["outcome"] == "tool_error" && a["http_status"] == "429")
    );
}

#[tokio::test]
async fn the_budget_holds_under_concurrent_calls() {
    let app = spawn_app_with_budget(Some(10)).await;
    let read = json!({"item_code": "BRG-0042"});
    let app = &app;
    let read = &read;
    let replies = futures::future::join_all(
        (0..25).map(|_| async move { app.call("buyer-sby", "inventory_get_stock", read, &[]).await }),
    )
    .await;
    let ok = replies.iter().filter(|r| r.status == 200).count();
    let limited = replies.iter().filter(|r| r.status == 429).count();
    assert_eq!((ok, limited), (10, 15), "exactly the budget is served");
}
