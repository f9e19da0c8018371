//! The real tools over the Tryton backend answer what they answer over the
//! built-in one for the demo story (README.md's examples, demo.rs's figures).

use std::sync::Arc;

use draftline_contract::ReadTool;
use draftline_erp::port::Erp;
use draftline_erp::tools::inventory_get_stock::{GetStockInput, InventoryGetStock};
use draftline_erp::tools::inventory_list_below_reorder::{InventoryListBelowReorder, ListBelowReorderInput};
use draftline_erp::tools::sales_get_customer_summary::{GetCustomerSummaryInput, SalesGetCustomerSummary};
use serde_json::{Value, json};

use crate::helpers::{Context, branch, shared};

fn erp() -> Arc<dyn Erp> {
    Arc::new(shared().erp())
}

#[tokio::test]
async fn inventory_get_stock_shows_surabayas_warehouses() {
    let tool = InventoryGetStock::new(erp());
    let ctx = Context::new(branch("SBY-01"), "run-tools", None);
    let out = tool
        .read(
            &ctx.call(),
            GetStockInput {
                item_code: "BRG-0042".into(),
            },
        )
        .await
        .unwrap();
    let out = serde_json::to_value(out).unwrap();
    assert_eq!(
        out,
        json!({
            "item_code": "BRG-0042",
            "item_name": "Deep groove ball bearing 6204-2RS",
            "branch_id": "SBY-01",
            "uom": "PCS",
            "warehouses": [
                {"warehouse": "SBY-WH1", "on_hand": 30, "reserved": 12, "available": 18},
                {"warehouse": "SBY-WH2", "on_hand": 10, "reserved": 0, "available": 10}
            ],
            "total_on_hand": 40,
            "total_available": 28,
            "reorder_point": 48,
            "below_reorder_point": true
        })
    );
}

#[tokio::test]
async fn the_reorder_examiner_prices_bandungs_items_and_flags_the_vendor_that_does_not_supply_it() {
    let tool = InventoryListBelowReorder::new(erp());
    let ctx = Context::new(branch("BDG-01"), "run-tools", None);
    let out = tool
        .read(
            &ctx.call(),
            ListBelowReorderInput {
                limit: None,
                cursor: None,
            },
        )
        .await
        .unwrap();
    let out = serde_json::to_value(out).unwrap();
    let line = |code: &str| -> Value {
        out["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["item_code"] == code)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let codes: Vec<&str> = out["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["item_code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["BRG-0042", "GLV-0015", "WLD-0501"]);
    let brg = line("BRG-0042");
    assert_eq!(
        (
            &brg["available"],
            &brg["suggested_qty"],
            &brg["suggested_uom"],
            &brg["unit_price"]["amount"]
        ),
        (&json!(48), &json!(10), &json!("BOX"), &json!("288000.00"))
    );
    assert_eq!(brg["estimated_total"]["amount"], "2880000.00");
    assert_eq!(brg["preferred_vendor"]["code"], "V-00231");
    let glv = line("GLV-0015");
    assert_eq!(
        (&glv["suggested_qty"], &glv["suggested_uom"]),
        (&json!(10), &json!("BOX"))
    );
    assert_eq!(glv["unit_price"]["amount"], "105000.00");
    let wld = line("WLD-0501");
    assert_eq!(wld["preferred_vendor"], Value::Null);
    assert!(
        wld["note"]
            .as_str()
            .unwrap()
            .contains("V-00415 does not supply your branch")
    );
    assert_eq!(out["next_cursor"], Value::Null);
}

#[tokio::test]
async fn the_customer_summary_shows_tekstils_credit_and_overdue_invoices() {
    let tool = SalesGetCustomerSummary::new(erp());
    let ctx = Context::new(branch("BDG-01"), "run-tools", None);
    let out = tool
        .read(
            &ctx.call(),
            GetCustomerSummaryInput {
                customer_code: "C-BDG-001".into(),
            },
        )
        .await
        .unwrap();
    let out = serde_json::to_value(out).unwrap();
    assert_eq!(out["customer"]["price_list"], "PL-WHOLESALE");
    assert_eq!(out["customer"]["default_tax_code"], "VAT11");
    assert_eq!(out["credit"]["credit_limit"]["amount"], "150000000.00");
    assert_eq!(out["credit"]["open_orders"]["amount"], "36075000.00");
    assert_eq!(out["credit"]["outstanding_invoices"]["amount"], "36630000.00");
    assert_eq!(out["credit"]["exposure"]["amount"], "72705000.00");
    assert_eq!(out["open_orders"]["count"], 2);
    let overdue: Vec<&str> = out["overdue_invoices"]["invoices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["number"].as_str().unwrap())
        .collect();
    assert_eq!(overdue[0], "INV-BDG-000118");
    let recent: Vec<&str> = out["recent_invoices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["number"].as_str().unwrap())
        .collect();
    assert_eq!(recent, ["INV-BDG-000131", "INV-BDG-000118", "INV-BDG-000101"]);
}
