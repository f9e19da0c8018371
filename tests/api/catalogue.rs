//! The ERP tool catalogue (issue 3): the reorder workflow end to end, quotes
//! with tax, scopes, pagination with sealed cursors, the examiners, and a
//! table-driven check of every tool definition.

use std::collections::BTreeSet;

use draftline_cli::{TokenSpec, token_for};
use draftline_contract::identity::Scopes;
use draftline_contract::schema::strict_violations;
use draftline_contract::tool::{RuleContext, Tier, ToolDefinition};
use serde_json::{Value, json};

use crate::helpers::{
    Reply, TestApp, on_both_backends, seeded_jakarta_purchase_orders, spawn_app, spawn_app_drafting_freely_on,
    spawn_app_on, test_now,
};

const ALL_SCOPES: [&str; 6] = [
    "purchasing:read",
    "purchasing:draft",
    "inventory:read",
    "sales:read",
    "sales:draft",
    "finance:read",
];

/// A token for a made-up user of `branch` with exactly `scopes`.
fn token_with(app: &TestApp, branch: &str, scopes: &[&str]) -> String {
    let spec = TokenSpec {
        sub: "tester".into(),
        tenant: "demo".into(),
        branch: branch.into(),
        branch_code: branch.split('-').next().unwrap().into(),
        scope: scopes.join(" "),
        roles: vec![],
    };
    token_for(&spec, &app.server.url(), 600).unwrap()
}

/// Calls `tool` with a raw bearer token.
async fn call_with_token(app: &TestApp, token: &str, tool: &str, input: &Value) -> Reply {
    app.post_raw(
        tool,
        &[
            ("authorization", format!("Bearer {token}")),
            ("content-type", "application/json".into()),
        ],
        input.to_string(),
    )
    .await
}

/// The JSON after `Example: ` in a description.
pub(crate) fn example_of(definition: &ToolDefinition) -> Value {
    let (_, rest) = definition
        .description
        .split_once("Example: ")
        .unwrap_or_else(|| panic!("{} has no 'Example: '", definition.name));
    serde_json::Deserializer::from_str(rest)
        .into_iter::<Value>()
        .next()
        .unwrap_or_else(|| panic!("{}: no JSON after 'Example: '", definition.name))
        .unwrap_or_else(|e| panic!("{}: the example is not JSON: {e}", definition.name))
}

fn amount(value: &Value) -> &str {
    assert_eq!(value["currency"], "IDR", "{value}");
    value["amount"].as_str().unwrap()
}

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {list}"))
        .iter()
        .map(|i| i[field].as_str().unwrap().to_owned())
        .collect()
}

// ---------------------------------------------------------------------------
// The reorder workflow

on_both_backends! {
    #[tokio::test]
    async fn the_reorder_workflow_turns_an_alert_into_a_priced_draft_other_branches_cannot_see(backend) {
        let app = spawn_app_on(backend).await;
        let run = [("x-agent-run-id", "run-reorder-1".to_owned())];

        // 1. What needs ordering, with a suggestion in a valid unit and the vendor's price.
        let below = app
            .call(
                "buyer-sby",
                "inventory_list_below_reorder",
                &json!({"limit": null, "cursor": null}),
                &run,
            )
            .await;
        assert_eq!(below.status, 200, "{:?}", below.body);
        let data = &below.body["data"];
        assert_eq!(data["branch_id"], "SBY-01");
        assert_eq!(names(data, "items", "item_code"), ["BLT-0107", "BRG-0042", "VBT-0220"]);
        assert_eq!(data["next_cursor"], Value::Null);
        let bearing = &data["items"][1];
        assert_eq!(bearing["on_hand"], 40);
        assert_eq!(bearing["available"], 28);
        assert_eq!(bearing["reorder_point"], 48);
        assert_eq!(bearing["allowed_units"], "PCS, BOX (1 BOX = 24 PCS)");
        assert_eq!(
            (
                &bearing["suggested_qty"],
                &bearing["suggested_uom"],
                &bearing["suggested_base_qty"]
            ),
            (&json!(10), &json!("BOX"), &json!(240))
        );
        assert_eq!(
            bearing["preferred_vendor"],
            json!({"code": "V-00231", "name": "PT Sinar Bearindo"})
        );
        assert_eq!(amount(&bearing["unit_price"]), "288000.00");
        assert_eq!(amount(&bearing["estimated_total"]), "2880000.00");
        assert_eq!(bearing["note"], Value::Null);
        let belt = &data["items"][2];
        assert_eq!(
            (&belt["suggested_qty"], &belt["suggested_uom"]),
            (&json!(20), &json!("PCS"))
        );
        assert_eq!(amount(&belt["unit_price"]), "38000.00");

        // 2. Who supplies it to this branch, at which prices.
        let vendors = app
            .call(
                "buyer-sby",
                "purchasing_search_vendors",
                &json!({"query": null, "item_code": "BRG-0042", "limit": null, "cursor": null}),
                &run,
            )
            .await;
        assert_eq!(vendors.status, 200, "{:?}", vendors.body);
        assert_eq!(names(&vendors.body["data"], "vendors", "code"), ["V-00231"]);
        let prices: Vec<(String, String)> = vendors.body["data"]["vendors"][0]["prices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["uom"].as_str().unwrap().to_owned(),
                    amount(&p["unit_price"]).to_owned(),
                )
            })
            .collect();
        assert_eq!(
            prices,
            [
                ("PCS".to_owned(), "12500.00".to_owned()),
                ("BOX".to_owned(), "288000.00".to_owned())
            ]
        );

        // 3. The draft, straight from the suggestions.
        let lines: Vec<Value> = [bearing, belt]
            .iter()
            .map(|i| json!({"item_code": i["item_code"], "qty": i["suggested_qty"], "uom": i["suggested_uom"]}))
            .collect();
        let input = json!({
            "vendor_code": "V-00231",
            "needed_by": "2026-12-10",
            "client_ref": "reorder-2026-11-29",
            "note": null,
            "lines": lines,
        });
        let created = app
            .call(
                "buyer-sby",
                "purchasing_create_po_draft",
                &input,
                &[("x-agent-run-id", "run-reorder-1".to_owned())],
            )
            .await;
        assert_eq!(created.status, 201, "{:?}", created.body);
        let number = created.body["data"]["po_number"].as_str().unwrap().to_owned();
        assert!(number.starts_with("PO-SBY-"), "{number}");

        // 4. Read back: server-computed totals and provenance.
        let po = app
            .call("buyer-sby", "purchasing_get_po", &json!({"po_number": number}), &run)
            .await;
        assert_eq!(po.status, 200, "{:?}", po.body);
        let po = &po.body["data"];
        assert_eq!(po["status"], "draft");
        assert_eq!(amount(&po["lines"][0]["line_total"]), "2880000.00");
        assert_eq!(amount(&po["lines"][1]["line_total"]), "760000.00");
        assert_eq!(amount(&po["total"]), "3640000.00");
        assert_eq!(po["drafted_by_agent_run"], "run-reorder-1");
        assert_eq!(po["drafted_on_behalf_of"], "buyer-sby");
        assert_eq!(po, &created.body["data"]);

        // The search finds it, with who drafted it.
        let found = app
            .call(
                "buyer-sby",
                "purchasing_search_pos",
                // The day the ERP recorded (the test's clock on the built-in
                // backend, Tryton's own clock on Tryton).
                &json!({"status": "draft", "vendor_code": "V-00231", "created_from": created_day(&created.body["data"]), "created_to": created_day(&created.body["data"]), "limit": null, "cursor": null}),
                &[],
            )
            .await;
        assert_eq!(found.status, 200, "{:?}", found.body);
        assert_eq!(
            names(&found.body["data"], "purchase_orders", "po_number"),
            std::slice::from_ref(&number)
        );
        assert_eq!(
            found.body["data"]["purchase_orders"][0]["drafted_by_agent_run"],
            "run-reorder-1"
        );
        assert_eq!(found.body["data"]["purchase_orders"][0]["line_count"], 2);

        // Jakarta never sees it: the same 404 text as a number that does not exist.
        let foreign = app
            .call("buyer-jkt", "purchasing_get_po", &json!({"po_number": number}), &[])
            .await;
        let missing = app
            .call(
                "buyer-jkt",
                "purchasing_get_po",
                &json!({"po_number": "PO-SBY-000099"}),
                &[],
            )
            .await;
        assert_eq!((foreign.status, missing.status), (404, 404));
        assert_eq!(foreign.error_code(), "NOT_FOUND");
        assert_eq!(
            foreign.message().replace(&number, "<n>"),
            missing.message().replace("PO-SBY-000099", "<n>")
        );
        let jkt_search = app
            .call(
                "buyer-jkt",
                "purchasing_search_pos",
                &json!({"status": null, "vendor_code": null, "created_from": null, "created_to": null, "limit": 50, "cursor": null}),
                &[],
            )
            .await;
        let jkt_numbers = names(&jkt_search.body["data"], "purchase_orders", "po_number");
        assert_eq!(jkt_numbers.len(), seeded_jakarta_purchase_orders());
        assert!(jkt_numbers.iter().all(|n| n.starts_with("PO-JKT-")), "{jkt_numbers:?}");
        assert!(!jkt_search.body.to_string().contains("PO-SBY"));
    }
}

on_both_backends! {
    #[tokio::test]
    async fn every_branch_gets_its_own_reorder_list_and_a_missing_vendor_is_explained(backend) {
        let app = spawn_app_on(backend).await;
        let input = json!({"limit": null, "cursor": null});
        let jkt = app.call("buyer-jkt", "inventory_list_below_reorder", &input, &[]).await;
        let items = &jkt.body["data"]["items"];
        assert_eq!(names(&jkt.body["data"], "items", "item_code"), ["CBL-0220", "OIL-0310"]);
        assert_eq!(
            (&items[0]["suggested_qty"], &items[0]["suggested_uom"]),
            (&json!(10), &json!("ROLL"))
        );
        assert_eq!(
            (&items[1]["suggested_qty"], &items[1]["suggested_uom"]),
            (&json!(20), &json!("CTN"))
        );
        assert_eq!(amount(&items[1]["estimated_total"]), "14000000.00");

        let bdg = app.call("sales-bdg", "inventory_list_below_reorder", &input, &[]).await;
        assert_eq!(bdg.status, 200, "{:?}", bdg.body);
        assert_eq!(
            names(&bdg.body["data"], "items", "item_code"),
            ["BRG-0042", "GLV-0015", "WLD-0501"]
        );
        let welding = &bdg.body["data"]["items"][2];
        assert_eq!(welding["preferred_vendor"], Value::Null);
        assert_eq!(welding["unit_price"], Value::Null);
        assert_eq!(
            (&welding["suggested_qty"], &welding["suggested_uom"]),
            (&json!(10), &json!("BOX"))
        );
        let note = welding["note"].as_str().unwrap();
        assert!(
            note.contains("V-00415") && note.contains("purchasing_search_vendors"),
            "{note}"
        );
    }
}

on_both_backends! {
    #[tokio::test]
    async fn vendor_search_only_finds_vendors_that_supply_the_callers_branch(backend) {
        let app = spawn_app_on(backend).await;
        let search = |query: Value, item: Value| json!({"query": query, "item_code": item, "limit": null, "cursor": null});
        let sby = app
            .call(
                "buyer-sby",
                "purchasing_search_vendors",
                &search(json!("kabel"), Value::Null),
                &[],
            )
            .await;
        assert_eq!(sby.status, 200);
        assert_eq!(
            sby.body["data"]["vendors"],
            json!([]),
            "V-00612 does not supply Surabaya"
        );
        let jkt = app
            .call(
                "buyer-jkt",
                "purchasing_search_vendors",
                &search(json!("kabel"), Value::Null),
                &[],
            )
            .await;
        assert_eq!(names(&jkt.body["data"], "vendors", "code"), ["V-00612"]);
        let by_code = app
            .call(
                "buyer-sby",
                "purchasing_search_vendors",
                &search(json!("v-00415"), Value::Null),
                &[],
            )
            .await;
        assert_eq!(names(&by_code.body["data"], "vendors", "name"), ["CV Baut Jaya"]);
        let all = app
            .call(
                "buyer-sby",
                "purchasing_search_vendors",
                &search(Value::Null, Value::Null),
                &[],
            )
            .await;
        assert_eq!(
            names(&all.body["data"], "vendors", "code"),
            ["V-00231", "V-00415", "V-00508"]
        );
        assert_eq!(all.body["data"]["vendors"][0]["prices"], json!([]));

        let unknown = app
            .call(
                "buyer-sby",
                "purchasing_search_vendors",
                &search(Value::Null, json!("BRG-9999")),
                &[],
            )
            .await;
        assert_eq!(unknown.status, 400, "{:?}", unknown.body);
        assert_eq!(unknown.detail_paths(), ["item_code"]);
        assert!(unknown.message().contains("BRG-9999") && unknown.message().contains("Nothing was read"));
    }
}

// ---------------------------------------------------------------------------
// Quotes and tax

fn quote_input(client_ref: &str, lines: Value) -> Value {
    json!({
        "customer_code": "C-BDG-001",
        "valid_until": "2026-12-31",
        "client_ref": client_ref,
        "note": null,
        "lines": lines,
    })
}

on_both_backends! {
    #[tokio::test]
    async fn a_quote_line_without_a_tax_code_is_refused_naming_finance_list_tax_types(backend) {
        let app = spawn_app_on(backend).await;
        let key = [("idempotency-key", "q-no-tax".to_owned())];
        for missing in [
            json!({"item_code": "GLV-0015", "qty": 5, "uom": "BOX"}),
            json!({"item_code": "GLV-0015", "qty": 5, "uom": "BOX", "tax_code": null}),
        ] {
            let lines = json!([{"item_code": "BRG-0042", "qty": 2, "uom": "BOX", "tax_code": "VAT11"}, missing]);
            let reply = app
                .call("sales-bdg", "sales_create_quote_draft", &quote_input("q1", lines), &key)
                .await;
            assert_eq!(reply.status, 400, "{:?}", reply.body);
            assert_eq!(reply.error_code(), "VALIDATION_ERROR");
            assert_eq!(reply.detail_paths(), ["lines[1].tax_code"]);
            assert!(
                reply.message().contains("finance_list_tax_types"),
                "{}",
                reply.message()
            );
            assert!(reply.message().contains("No draft was created"), "{}", reply.message());
        }
        assert_eq!(app.new_documents("quote").await, 0);
        assert_eq!(app.count_kind("idempotency_key").await, 0);
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_quote_with_tax_codes_is_created_with_tax_in_its_totals_and_replayed_on_retry(backend) {
        let app = spawn_app_on(backend).await;
        let taxes = app.call("sales-bdg", "finance_list_tax_types", &json!({}), &[]).await;
        assert_eq!(taxes.status, 200, "{:?}", taxes.body);
        let rates: Vec<(String, String, bool)> = taxes.body["data"]["tax_types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["code"].as_str().unwrap().to_owned(),
                    t["rate_percent"].as_str().unwrap().to_owned(),
                    t["active"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            rates,
            [
                ("VAT11".to_owned(), "11".to_owned(), true),
                ("VAT0".to_owned(), "0".to_owned(), true),
                ("EXEMPT".to_owned(), "0".to_owned(), true),
                ("VAT10".to_owned(), "10".to_owned(), false),
            ]
        );

        let lines = json!([
            {"item_code": "BRG-0042", "qty": 2, "uom": "BOX", "tax_code": "VAT11"},
            {"item_code": "GLV-0015", "qty": 5, "uom": "BOX", "tax_code": "VAT0"}
        ]);
        let headers = [
            ("idempotency-key", "q-ok".to_owned()),
            ("x-agent-run-id", "run-quote".to_owned()),
        ];
        let created = app
            .call(
                "sales-bdg",
                "sales_create_quote_draft",
                &quote_input("q-ok", lines.clone()),
                &headers,
            )
            .await;
        assert_eq!(created.status, 201, "{:?}", created.body);
        let quote = &created.body["data"];
        let number = quote["quote_number"].as_str().unwrap();
        assert!(number.starts_with("QT-BDG-"), "{number}");
        assert_eq!(quote["status"], "draft");
        assert_eq!(quote["price_list"], "PL-WHOLESALE");
        assert_eq!(
            quote["lines"][0]["price_source"],
            "price list PL-WHOLESALE, BRG-0042 per BOX"
        );
        assert_eq!(amount(&quote["lines"][0]["net_amount"]), "680000.00");
        assert_eq!(quote["lines"][0]["tax_rate_percent"], "11");
        assert_eq!(amount(&quote["lines"][0]["tax_amount"]), "74800.00");
        assert_eq!(amount(&quote["lines"][0]["line_total"]), "754800.00");
        assert_eq!(amount(&quote["lines"][1]["tax_amount"]), "0.00");
        assert_eq!(amount(&quote["subtotal"]), "1340000.00");
        assert_eq!(amount(&quote["tax_total"]), "74800.00");
        assert_eq!(amount(&quote["total"]), "1414800.00");
        assert_eq!(quote["drafted_by_agent_run"], "run-quote");
        assert_eq!(quote["drafted_on_behalf_of"], "sales-bdg");
        assert!(
            quote["credit_check"]
                .as_str()
                .unwrap()
                .contains("fits within the limit")
        );

        let again = app
            .call(
                "sales-bdg",
                "sales_create_quote_draft",
                &quote_input("q-ok", lines),
                &headers,
            )
            .await;
        assert_eq!(again.status, 200, "{:?}", again.body);
        assert_eq!(again.body["replayed"], true);
        assert_eq!(again.body["data"], *quote);
        assert_eq!(app.new_documents("quote").await, 1);
        let audit = app
            .audit_items()
            .await
            .into_iter()
            .find(|a| a["tool"] == "sales_create_quote_draft" && a["outcome"] == "ok")
            .unwrap();
        assert_eq!(audit["document_number"], created.body["data"]["quote_number"].as_str().unwrap());
        assert_eq!(audit["agent_run_id"], "run-quote");
    }
}

on_both_backends! {
    #[tokio::test]
    async fn quote_errors_name_the_fix_and_create_nothing(backend) {
        let app = spawn_app_on(backend).await;
        let line = |item: &str, uom: &str, tax: &str| json!({"item_code": item, "qty": 1, "uom": uom, "tax_code": tax});
        let with_customer = |customer: &str, lines: Value| {
            let mut input = quote_input("q-err", lines);
            input["customer_code"] = json!(customer);
            input
        };
        let ok_line = json!([line("BRG-0042", "BOX", "VAT11")]);
        let cases: Vec<(&str, Value, &str, Vec<&str>)> = vec![
            (
                "customer of another branch",
                with_customer("C-SBY-001", ok_line.clone()),
                "customer_code",
                vec!["C-SBY-001", "not found in your branch", "sales_search_customers"],
            ),
            (
                "customer on credit hold",
                with_customer("C-BDG-003", ok_line.clone()),
                "customer_code",
                vec!["credit hold", "90 days overdue", "sales_get_customer_summary"],
            ),
            (
                "item not on the price list",
                quote_input("q-err", json!([line("VBT-0220", "PCS", "VAT11")])),
                "lines[0].uom",
                vec!["VBT-0220", "not on price list PL-WHOLESALE"],
            ),
            (
                "unit not priced on the list",
                quote_input("q-err", json!([line("GLV-0015", "PCS", "VAT11")])),
                "lines[0].uom",
                vec!["only in BOX", "uom BOX"],
            ),
            (
                "unit the item does not come in",
                quote_input("q-err", json!([line("BRG-0042", "KG", "VAT11")])),
                "lines[0].uom",
                vec!["Allowed units for BRG-0042: PCS, BOX (1 BOX = 24 PCS)"],
            ),
            (
                "tax code no longer in use",
                quote_input("q-err", json!([line("BRG-0042", "BOX", "VAT10")])),
                "lines[0].tax_code",
                vec!["VAT10 is not in use", "VAT11 = 11%", "finance_list_tax_types"],
            ),
            (
                "exempt customer with VAT",
                with_customer("C-BDG-004", ok_line.clone()),
                "lines[0].tax_code",
                vec!["exempt", "EXEMPT"],
            ),
            (
                "valid_until in the past",
                {
                    let mut input = quote_input("q-err", ok_line.clone());
                    input["valid_until"] = json!("2026-11-28");
                    input
                },
                "valid_until",
                vec!["in the past"],
            ),
            (
                "unknown tax code",
                quote_input("q-err", json!([line("BRG-0042", "BOX", "VAT12")])),
                "lines[0].tax_code",
                vec!["VAT11", "EXEMPT"],
            ),
        ];
        for (i, (case, input, path, texts)) in cases.iter().enumerate() {
            let reply = app
                .call(
                    "sales-bdg",
                    "sales_create_quote_draft",
                    input,
                    &[("idempotency-key", format!("q-err-{i}"))],
                )
                .await;
            assert_eq!(reply.status, 400, "{case}: {:?}", reply.body);
            assert_eq!(reply.detail_paths(), [*path], "{case}: {:?}", reply.body);
            for text in texts {
                assert!(
                    reply.message().contains(text),
                    "{case}: '{text}' not in {}",
                    reply.message()
                );
            }
            assert!(reply.message().contains("No draft was created"), "{case}");
        }
        assert_eq!(app.new_documents("quote").await, 0);
    }
}

// ---------------------------------------------------------------------------
// Customers and finance

on_both_backends! {
    #[tokio::test]
    async fn the_customer_summary_shows_credit_exposure_open_orders_and_overdue_invoices(backend) {
        let app = spawn_app_on(backend).await;
        let summary = |code: &str| json!({"customer_code": code});
        let tekstil = app
            .call("sales-bdg", "sales_get_customer_summary", &summary("C-BDG-001"), &[])
            .await;
        assert_eq!(tekstil.status, 200, "{:?}", tekstil.body);
        let data = &tekstil.body["data"];
        assert_eq!(data["as_of"], "2026-11-29");
        assert_eq!(data["customer"]["price_list"], "PL-WHOLESALE");
        assert_eq!(data["customer"]["default_tax_code"], "VAT11");
        assert_eq!(amount(&data["credit"]["credit_limit"]), "150000000.00");
        assert_eq!(amount(&data["credit"]["open_orders"]), "36075000.00");
        assert_eq!(amount(&data["credit"]["outstanding_invoices"]), "36630000.00");
        assert_eq!(amount(&data["credit"]["exposure"]), "72705000.00");
        assert_eq!(amount(&data["credit"]["available_credit"]), "77295000.00");
        assert_eq!(data["credit"]["over_limit"], false);
        assert_eq!(data["open_orders"]["count"], 2);
        assert_eq!(
            names(&data["open_orders"], "orders", "number"),
            ["SO-BDG-000047", "SO-BDG-000045"]
        );
        assert_eq!(data["overdue_invoices"]["count"], 1);
        assert_eq!(data["overdue_invoices"]["invoices"][0]["number"], "INV-BDG-000118");
        assert_eq!(data["overdue_invoices"]["invoices"][0]["days_overdue"], 45);
        assert_eq!(
            names(data, "recent_invoices", "number"),
            ["INV-BDG-000131", "INV-BDG-000118", "INV-BDG-000101"]
        );

        let mitra = app
            .call("sales-bdg", "sales_get_customer_summary", &summary("C-BDG-002"), &[])
            .await;
        let credit = &mitra.body["data"]["credit"];
        assert_eq!(amount(&credit["exposure"]), "26040000.00");
        assert_eq!(amount(&credit["available_credit"]), "-1040000.00");
        assert_eq!(credit["over_limit"], true);
        assert_eq!(
            names(&mitra.body["data"]["overdue_invoices"], "invoices", "number"),
            ["INV-BDG-000097", "INV-BDG-000125"]
        );
        assert_eq!(
            amount(&mitra.body["data"]["overdue_invoices"]["total_outstanding"]),
            "13540000.00"
        );

        // Another branch's customer reads exactly like a missing one.
        let foreign = app
            .call("sales-bdg", "sales_get_customer_summary", &summary("C-SBY-001"), &[])
            .await;
        let missing = app
            .call("sales-bdg", "sales_get_customer_summary", &summary("C-BDG-999"), &[])
            .await;
        assert_eq!((foreign.status, missing.status), (404, 404));
        assert_eq!(
            foreign.message().replace("C-SBY-001", "<c>"),
            missing.message().replace("C-BDG-999", "<c>")
        );
        assert!(foreign.message().contains("sales_search_customers"));
    }
}

on_both_backends! {
    #[tokio::test]
    async fn customer_search_lists_only_the_callers_branch_page_by_page(backend) {
        let app = spawn_app_on(backend).await;
        let mut seen = Vec::new();
        let mut cursor = Value::Null;
        let mut pages = 0;
        loop {
            let reply = app
                .call(
                    "sales-bdg",
                    "sales_search_customers",
                    &json!({"query": null, "limit": 3, "cursor": cursor}),
                    &[],
                )
                .await;
            assert_eq!(reply.status, 200, "{:?}", reply.body);
            pages += 1;
            seen.extend(names(&reply.body["data"], "customers", "code"));
            cursor = reply.body["data"]["next_cursor"].clone();
            if cursor.is_null() {
                break;
            }
        }
        assert_eq!(pages, 2);
        assert_eq!(seen, ["C-BDG-001", "C-BDG-002", "C-BDG-003", "C-BDG-004"]);
        let tekstil = app
            .call(
                "sales-bdg",
                "sales_search_customers",
                &json!({"query": "TEKSTIL", "limit": null, "cursor": null}),
                &[],
            )
            .await;
        assert_eq!(names(&tekstil.body["data"], "customers", "code"), ["C-BDG-001"]);
        assert_eq!(
            amount(&tekstil.body["data"]["customers"][0]["credit_limit"]),
            "150000000.00"
        );
        let other_branch = app
            .call(
                "sales-bdg",
                "sales_search_customers",
                &json!({"query": "C-SBY-001", "limit": null, "cursor": null}),
                &[],
            )
            .await;
        assert_eq!(other_branch.body["data"]["customers"], json!([]));
    }
}

on_both_backends! {
    #[tokio::test]
    async fn the_account_summary_ages_the_callers_receivables_and_payables(backend) {
        let app = spawn_app_on(backend).await;
        let both = app
            .call(
                "sales-bdg",
                "finance_get_account_summary",
                &json!({"ledger": null}),
                &[],
            )
            .await;
        assert_eq!(both.status, 200, "{:?}", both.body);
        let data = &both.body["data"];
        assert_eq!(data["branch_id"], "BDG-01");
        assert_eq!(data["as_of"], "2026-11-29");
        let ar = &data["receivables"][0];
        assert_eq!(ar["currency"], "IDR");
        assert_eq!(ar["open_documents"], 5);
        let buckets: Vec<&str> = [
            "not_due",
            "days_1_30",
            "days_31_60",
            "days_61_90",
            "over_90",
            "overdue_total",
            "total_outstanding",
        ]
        .iter()
        .map(|b| amount(&ar[b]))
        .collect();
        assert_eq!(
            buckets,
            [
                "12210000.00",
                "8880000.00",
                "24420000.00",
                "0.00",
                "9100000.00",
                "42400000.00",
                "54610000.00"
            ]
        );
        assert_eq!(
            names(ar, "largest_overdue", "code"),
            ["C-BDG-001", "C-BDG-002", "C-BDG-003"]
        );
        assert_eq!(ar["largest_overdue"][1]["oldest_days_overdue"], 106);
        let ap = &data["payables"][0];
        assert_eq!(amount(&ap["not_due"]), "33400000.00");
        assert_eq!(amount(&ap["days_31_60"]), "8640000.00");
        assert_eq!(amount(&ap["total_outstanding"]), "42040000.00");

        let only_ar = app
            .call(
                "sales-bdg",
                "finance_get_account_summary",
                &json!({"ledger": "receivables"}),
                &[],
            )
            .await;
        assert_eq!(only_ar.body["data"]["payables"], Value::Null);
        assert_eq!(only_ar.body["data"]["receivables"], data["receivables"]);

        // Another branch's ledger is its own.
        let sby = call_with_token(
            &app,
            &token_with(&app, "SBY-01", &["finance:read"]),
            "finance_get_account_summary",
            &json!({"ledger": "payables"}),
        )
        .await;
        assert_eq!(sby.body["data"]["branch_id"], "SBY-01");
        assert_eq!(
            amount(&sby.body["data"]["payables"][0]["total_outstanding"]),
            "46400000.00"
        );
    }
}

// ---------------------------------------------------------------------------
// Pagination and cursors

/// Creates `count` PO drafts for buyer-sby; the first `to_baut` go to V-00415.
async fn create_drafts(app: &TestApp, count: usize, to_baut: usize) -> Vec<String> {
    let mut numbers = Vec::new();
    for i in 0..count {
        let (vendor, item, uom) = if i < to_baut {
            ("V-00415", "BLT-0107", "BOX")
        } else {
            ("V-00231", "BRG-0042", "BOX")
        };
        let input = json!({
            "vendor_code": vendor,
            "needed_by": "2026-12-15",
            "client_ref": format!("page-{i}"),
            "note": null,
            "lines": [{"item_code": item, "qty": i + 1, "uom": uom}],
        });
        let reply = app.create_po_draft("buyer-sby", &format!("page-key-{i}"), &input).await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        numbers.push(reply.body["data"]["po_number"].as_str().unwrap().to_owned());
    }
    numbers
}

/// Pages through `purchasing_search_pos` with `filters`, returning every page's numbers.
async fn all_pages(app: &TestApp, user: &str, filters: Value, limit: u32) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut input = filters.clone();
        input["limit"] = json!(limit);
        input["cursor"] = cursor;
        let reply = app.call(user, "purchasing_search_pos", &input, &[]).await;
        assert_eq!(reply.status, 200, "{:?}", reply.body);
        pages.push(names(&reply.body["data"], "purchase_orders", "po_number"));
        cursor = reply.body["data"]["next_cursor"].clone();
        if cursor.is_null() {
            return pages;
        }
        assert!(pages.len() < 20, "pagination does not end");
    }
}

/// The day (YYYY-MM-DD) a document was created, as the ERP recorded it.
fn created_day(document: &Value) -> String {
    document["created_at"].as_str().unwrap()[..10].to_owned()
}

fn no_filters() -> Value {
    json!({"status": null, "vendor_code": null, "created_from": null, "created_to": null})
}

on_both_backends! {
    #[tokio::test]
    async fn pagination_returns_every_matching_purchase_order_exactly_once(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        // What the branch already holds (the demo's agent drafts, if any)
        // lists after the new drafts: they are older.
        let mut baut = no_filters();
        baut["vendor_code"] = json!("V-00415");
        let mut approved = no_filters();
        approved["status"] = json!("approved");
        let held = all_pages(&app, "buyer-sby", no_filters(), 50).await.concat();
        let held_baut = all_pages(&app, "buyer-sby", baut.clone(), 50).await.concat();
        let held_approved = all_pages(&app, "buyer-sby", approved.clone(), 50).await.concat();
        let created = create_drafts(&app, 7, 2).await;

        let pages = all_pages(&app, "buyer-sby", no_filters(), 3).await;
        let mut newest_first = created.clone();
        newest_first.reverse();
        newest_first.extend(held.iter().cloned());
        let sizes: Vec<usize> = newest_first.chunks(3).map(<[String]>::len).collect();
        assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), sizes);
        assert_eq!(pages.concat(), newest_first, "every order once, newest first");

        let pages = all_pages(&app, "buyer-sby", baut, 1).await;
        let mut expected = vec![vec![created[1].clone()], vec![created[0].clone()]];
        expected.extend(held_baut.iter().map(|n| vec![n.clone()]));
        assert_eq!(pages, expected);

        // No new draft is approved.
        assert_eq!(all_pages(&app, "buyer-sby", approved, 50).await.concat(), held_approved);

        let day = app
            .call("buyer-sby", "purchasing_get_po", &json!({"po_number": created[0]}), &[])
            .await;
        let day = chrono::NaiveDate::parse_from_str(&created_day(&day.body["data"]), "%Y-%m-%d").unwrap();
        let mut tomorrow = no_filters();
        tomorrow["created_from"] = json!(day.succ_opt().unwrap().to_string());
        assert_eq!(all_pages(&app, "buyer-sby", tomorrow, 3).await, [Vec::<String>::new()]);

        let mut backwards = no_filters();
        backwards["created_from"] = json!(day.to_string());
        backwards["created_to"] = json!(day.pred_opt().unwrap().to_string());
        backwards["limit"] = json!(3);
        backwards["cursor"] = Value::Null;
        let reply = app.call("buyer-sby", "purchasing_search_pos", &backwards, &[]).await;
        assert_eq!(reply.status, 400);
        assert_eq!(reply.detail_paths(), ["created_to"]);

        // Jakarta's seeded history pages too, newest first, each order once, and
        // never includes Surabaya's orders, however it pages.
        let jkt_pages = all_pages(&app, "buyer-jkt", no_filters(), 5).await;
        assert_eq!(jkt_pages.iter().map(Vec::len).collect::<Vec<_>>(), [5, 5, 5, 5, 4]);
        let expected: Vec<String> = (1..=seeded_jakarta_purchase_orders())
            .rev()
            .map(|n| format!("PO-JKT-{n:06}"))
            .collect();
        assert_eq!(jkt_pages.concat(), expected);
        // At the default page size (limit null) the demo history needs a second page.
        let mut default_size = no_filters();
        default_size["limit"] = Value::Null;
        default_size["cursor"] = Value::Null;
        let first = app.call("buyer-jkt", "purchasing_search_pos", &default_size, &[]).await;
        assert_eq!(first.body["data"]["purchase_orders"].as_array().unwrap().len(), 20);
        assert!(first.body["data"]["next_cursor"].is_string());
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_tampered_or_foreign_cursor_is_a_400_not_a_500_and_not_another_branchs_data(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        let created = create_drafts(&app, 4, 0).await;
        let mut first = no_filters();
        first["limit"] = json!(2);
        first["cursor"] = Value::Null;
        let page = app.call("buyer-sby", "purchasing_search_pos", &first, &[]).await;
        let cursor = page.body["data"]["next_cursor"].as_str().unwrap().to_owned();

        // The genuine cursor works.
        let mut next = first.clone();
        next["cursor"] = json!(cursor);
        let ok = app.call("buyer-sby", "purchasing_search_pos", &next, &[]).await;
        assert_eq!(
            names(&ok.body["data"], "purchase_orders", "po_number"),
            [created[1].clone(), created[0].clone()]
        );

        let flip = |s: &str, at: usize| {
            let mut bytes = s.as_bytes().to_vec();
            bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
            String::from_utf8(bytes).unwrap()
        };
        let (payload_end, _) = cursor.rsplit_once('.').unwrap();
        let vendors_cursor = {
            let reply = app
                .call(
                    "buyer-sby",
                    "purchasing_search_vendors",
                    &json!({"query": null, "item_code": null, "limit": 1, "cursor": null}),
                    &[],
                )
                .await;
            reply.body["data"]["next_cursor"].as_str().unwrap().to_owned()
        };
        let mut other_filters = next.clone();
        other_filters["status"] = json!("draft");
        let cases: Vec<(&str, &str, Value)> = vec![
            ("payload changed", "buyer-sby", {
                let mut input = next.clone();
                input["cursor"] = json!(flip(&cursor, 5));
                input
            }),
            ("signature changed", "buyer-sby", {
                let mut input = next.clone();
                input["cursor"] = json!(flip(&cursor, cursor.len() - 3));
                input
            }),
            ("signature cut off", "buyer-sby", {
                let mut input = next.clone();
                input["cursor"] = json!(payload_end);
                input
            }),
            ("not a cursor", "buyer-sby", {
                let mut input = next.clone();
                input["cursor"] = json!("{\"after_po\":\"PO-JKT-000001\"}");
                input
            }),
            ("another branch's cursor", "buyer-jkt", next.clone()),
            ("other filters", "buyer-sby", other_filters),
            ("another tool's cursor", "buyer-sby", {
                let mut input = next.clone();
                input["cursor"] = json!(vendors_cursor);
                input
            }),
        ];
        for (case, user, input) in &cases {
            let reply = app.call(user, "purchasing_search_pos", input, &[]).await;
            assert_eq!(reply.status, 400, "{case}: {:?}", reply.body);
            assert_eq!(reply.error_code(), "VALIDATION_ERROR", "{case}");
            assert_eq!(reply.detail_paths(), ["cursor"], "{case}");
            assert!(reply.body.get("data").is_none(), "{case}");
            assert!(!reply.body.to_string().contains("PO-SBY"), "{case}: {:?}", reply.body);
            assert!(reply.message().contains("cursor null"), "{case}: {}", reply.message());
        }
        let refused = app
            .audit_items()
            .await
            .into_iter()
            .filter(|a| {
                a["tool"] == "purchasing_search_pos" && a.get("code").map(String::as_str) == Some("VALIDATION_ERROR")
            })
            .count();
        assert_eq!(refused, cases.len(), "every refused cursor is audited");
    }
}

on_both_backends! {
    #[tokio::test]
    async fn the_reorder_list_pages_through_every_due_item_once(backend) {
        let app = spawn_app_on(backend).await;
        let first = app
            .call(
                "buyer-sby",
                "inventory_list_below_reorder",
                &json!({"limit": 2, "cursor": null}),
                &[],
            )
            .await;
        assert_eq!(
            names(&first.body["data"], "items", "item_code"),
            ["BLT-0107", "BRG-0042"]
        );
        let cursor = first.body["data"]["next_cursor"].clone();
        assert!(cursor.is_string());
        let second = app
            .call(
                "buyer-sby",
                "inventory_list_below_reorder",
                &json!({"limit": 2, "cursor": cursor}),
                &[],
            )
            .await;
        assert_eq!(names(&second.body["data"], "items", "item_code"), ["VBT-0220"]);
        assert_eq!(second.body["data"]["next_cursor"], Value::Null);
        // Surabaya's cursor means nothing in Bandung.
        let foreign = app
            .call(
                "sales-bdg",
                "inventory_list_below_reorder",
                &json!({"limit": 2, "cursor": cursor}),
                &[],
            )
            .await;
        assert_eq!(foreign.status, 400);
        assert_eq!(foreign.detail_paths(), ["cursor"]);
        let too_many = app
            .call(
                "buyer-sby",
                "inventory_list_below_reorder",
                &json!({"limit": 51, "cursor": null}),
                &[],
            )
            .await;
        assert_eq!(too_many.status, 400);
        assert_eq!(too_many.detail_paths(), ["limit"]);
    }
}

// ---------------------------------------------------------------------------
// Scopes and the tool list

on_both_backends! {
    #[tokio::test]
    async fn every_tool_refuses_a_caller_without_its_scope_and_audits_the_refusal(backend) {
        let app = spawn_app_on(backend).await;
        let definitions: Vec<ToolDefinition> = app.server.app.registry().all().cloned().collect();
        for definition in &definitions {
            let others: Vec<&str> = ALL_SCOPES.iter().copied().filter(|s| *s != definition.scope).collect();
            let token = token_with(&app, "SBY-01", &others);
            let reply = call_with_token(&app, &token, definition.name, &example_of(definition)).await;
            assert_eq!(reply.status, 403, "{}: {:?}", definition.name, reply.body);
            assert_eq!(reply.error_code(), "FORBIDDEN", "{}", definition.name);
            assert!(reply.message().contains(definition.scope), "{}", definition.name);
            assert!(
                reply
                    .header("www-authenticate")
                    .unwrap()
                    .contains(&format!("scope=\"{}\"", definition.scope)),
                "{}",
                definition.name
            );
        }
        let audits = app.audit_items().await;
        let denied: BTreeSet<&str> = audits
            .iter()
            .filter(|a| {
                a["outcome"] == "denied"
                    && a.get("code").map(String::as_str) == Some("FORBIDDEN")
                    && a.get("on_behalf_of").map(String::as_str) == Some("tester")
            })
            .map(|a| a["tool"].as_str())
            .collect();
        let all: BTreeSet<&str> = definitions.iter().map(|d| d.name).collect();
        assert_eq!(denied, all, "every refusal is audited");
        assert_eq!(audits.len(), definitions.len());
        assert_eq!(app.new_documents("purchase_order").await, 0, "nothing was drafted");
        assert_eq!(app.new_documents("quote").await, 0, "nothing was drafted");
    }
}

#[tokio::test]
async fn each_demo_user_sees_exactly_the_tools_its_scopes_allow_in_a_stable_order() {
    let app = spawn_app().await;
    let registry = app.server.app.registry();
    let buyer = [
        "inventory_get_stock",
        "inventory_list_below_reorder",
        "purchasing_create_po_draft",
        "purchasing_get_po",
        "purchasing_search_pos",
        "purchasing_search_vendors",
    ];
    let expected: [(&str, Vec<&str>); 4] = [
        // buyer-sby holds agent:read too (DESIGN.md): the examiner is its.
        ("buyer-sby", [&["agent_get_limits"][..], &buyer[..]].concat()),
        ("clerk-sby", vec!["inventory_get_stock", "inventory_list_below_reorder"]),
        ("buyer-jkt", buyer.to_vec()),
        (
            "sales-bdg",
            vec![
                "finance_get_account_summary",
                "finance_list_tax_types",
                "inventory_get_stock",
                "inventory_list_below_reorder",
                "sales_create_quote_draft",
                "sales_get_customer_summary",
                "sales_get_quote",
                "sales_search_customers",
            ],
        ),
    ];
    for (user, tools) in &expected {
        let scopes = Scopes::from_claim(draftline_erp::demo::user(user).unwrap().scope);
        let visible: Vec<&str> = registry.visible_to(&scopes).map(|d| d.name).collect();
        assert_eq!(&visible, tools, "{user}");
        let again: Vec<&str> = registry.visible_to(&scopes).map(|d| d.name).collect();
        assert_eq!(visible, again, "{user}: the order is stable");
    }
    assert_eq!(registry.all().count(), 13);
}

// ---------------------------------------------------------------------------
// Every definition, table-driven

/// Property names no input may have, at any depth: the server decides them.
const SERVER_DECIDES: [&str; 9] = [
    "tenant",
    "tenant_id",
    "branch",
    "branch_id",
    "user",
    "user_id",
    "unit_price",
    "posting_date",
    "status",
];

/// Every property name of a schema, at any depth, with its path.
fn property_names(schema: &Value, path: &str, out: &mut Vec<(String, String)>) {
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in properties {
            out.push((format!("{path}.{name}"), name.clone()));
            property_names(sub, &format!("{path}.{name}"), out);
        }
    }
    if let Some(items) = schema.get("items") {
        property_names(items, &format!("{path}[]"), out);
    }
    for keyword in ["anyOf", "oneOf", "allOf"] {
        if let Some(subs) = schema.get(keyword).and_then(Value::as_array) {
            subs.iter().for_each(|s| property_names(s, path, out));
        }
    }
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[tokio::test]
async fn every_tool_definition_follows_the_catalogue_rules() {
    let app = spawn_app().await;
    let registry = app.server.app.registry();
    let all: Vec<&ToolDefinition> = registry.all().collect();
    let tool_names: Vec<&str> = all.iter().map(|d| d.name).collect();
    let modules: Vec<&str> = registry.modules().iter().map(|m| m.name).collect();
    assert_eq!(modules, ["agent", "finance", "inventory", "purchasing", "sales"]);
    for module in registry.modules() {
        let count = all.iter().filter(|d| d.module == module.name).count();
        assert!((1..10).contains(&count), "{}: {count} tools", module.name);
        assert!(
            module.description.contains("Cannot") || module.description.contains("cannot"),
            "{} must say what it cannot do",
            module.name
        );
    }
    let ctx = RuleContext {
        today: test_now().date_naive(),
    };
    let mut failures = Vec::new();
    for definition in &all {
        let name = definition.name;
        let mut fail = |what: String| failures.push(format!("{name}: {what}"));
        if !valid_name(name) {
            fail("name does not match ^[a-z][a-z0-9_]{0,63}$".into());
        }
        if !name.starts_with(&format!("{}_", definition.module)) || !modules.contains(&definition.module) {
            fail(format!("not prefixed by its module '{}_'", definition.module));
        }

        // The intern test.
        let description = definition.description;
        let first = description.split(". ").next().unwrap_or_default();
        let verb = first.split(' ').next().unwrap_or_default();
        if first.len() > 200 || !verb.chars().next().is_some_and(char::is_uppercase) || !verb.ends_with('s') {
            fail(format!("first sentence should say what it does: '{first}'"));
        }
        if description.len() > 1024 {
            fail(format!("description is {} characters (over 1024)", description.len()));
        }
        if !tool_names
            .iter()
            .any(|other| *other != name && description.contains(other))
        {
            fail("names no sibling tool".into());
        }
        if !description.contains("Example: {") {
            fail("has no 'Example: {'".into());
        } else {
            let example = example_of(definition);
            let tool = registry.get(name).unwrap();
            let tool = tool.erased();
            let parsed = tool
                .parse(example.to_string().as_bytes())
                .and_then(|input| tool.check_rules(&input, &ctx));
            if let Err(err) = parsed {
                fail(format!("its example does not validate: {}", err.public_message()));
            }
        }

        // Strict schemas.
        for (which, schema) in [
            ("input", &definition.input_schema),
            ("output", &definition.output_schema),
        ] {
            let violations = strict_violations(schema);
            if !violations.is_empty() {
                fail(format!("{which} schema is not strict: {violations:?}"));
            }
            if schema.to_string().contains("\"oneOf\"") {
                fail(format!("{which} schema uses oneOf"));
            }
        }
        if definition.input_schema["type"] != "object" {
            fail("input is not an object".into());
        }

        // Annotations follow the tier.
        let a = definition.annotations;
        let expected = match definition.tier {
            Tier::Read => (true, false, true),
            Tier::Draft => (false, false, true),
        };
        if (a.read_only_hint, a.destructive_hint, a.idempotent_hint) != expected || a.open_world_hint {
            fail(format!("annotations {a:?} do not match tier {:?}", definition.tier));
        }
        if a != definition.tier.annotations() {
            fail("annotations differ from the tier's".into());
        }
        let scope_action = definition.scope.split(':').nth(1).unwrap_or_default();
        let tier_action = match definition.tier {
            Tier::Read => "read",
            Tier::Draft => "draft",
        };
        if scope_action != tier_action || !definition.scope.starts_with(&format!("{}:", definition.module)) {
            fail(format!("scope {} does not match module and tier", definition.scope));
        }

        // Nothing the server decides is an argument.
        let mut properties = Vec::new();
        property_names(&definition.input_schema, "$", &mut properties);
        for (path, property) in properties {
            let allowed_filter = name == "purchasing_search_pos" && path == "$.status";
            if SERVER_DECIDES.contains(&property.as_str()) && !allowed_filter {
                fail(format!("input has '{path}', which the server decides"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
