use serde_json::json;

use crate::helpers::{po_input, spawn_app};

#[tokio::test]
async fn bad_input_is_400_with_located_details_and_nothing_is_written() {
    let app = spawn_app().await;
    let before = app.kinds().await;
    let mut unknown_field = po_input("r");
    unknown_field["unit_price"] = json!("1.00");
    let mut wrong_unit = po_input("r");
    wrong_unit["lines"][1]["uom"] = json!("KG");
    let mut unit_not_of_item = po_input("r");
    unit_not_of_item["lines"][1]["uom"] = json!("ROLL");
    let mut negative = po_input("r");
    negative["lines"][0]["qty"] = json!(-5);
    let mut past = po_input("r");
    past["needed_by"] = json!("2026-11-01");
    let mut bad_date = po_input("r");
    bad_date["needed_by"] = json!("next tuesday");
    let mut nested_unknown = po_input("r");
    nested_unknown["lines"][0]["price"] = json!(1);
    let mut no_lines = po_input("r");
    no_lines["lines"] = json!([]);
    let mut unknown_vendor = po_input("r");
    unknown_vendor["vendor_code"] = json!("V-99999");
    let mut not_supplied = po_input("r");
    not_supplied["lines"][1] = json!({"item_code": "CBL-0220", "qty": 1, "uom": "ROLL"});

    let cases: Vec<(&str, String, &str, &str)> = vec![
        ("malformed JSON", "{\"vendor_code\": ".into(), "", "not valid JSON"),
        ("not an object", "[1, 2]".into(), "", "JSON object"),
        ("empty body", String::new(), "", "empty"),
        ("unknown field", unknown_field.to_string(), "unit_price", "not a field"),
        (
            "nested unknown field",
            nested_unknown.to_string(),
            "lines[0].price",
            "not a field",
        ),
        ("enum value", wrong_unit.to_string(), "lines[1].uom", "KG"),
        (
            "unit the item lacks",
            unit_not_of_item.to_string(),
            "lines[1].uom",
            "Allowed units for BRG-0043: PCS, BOX (1 BOX = 24 PCS)",
        ),
        (
            "negative quantity",
            negative.to_string(),
            "lines[0].qty",
            "between 1 and 100000",
        ),
        ("date in the past", past.to_string(), "needed_by", "in the past"),
        ("not a date", bad_date.to_string(), "needed_by", ""),
        ("no lines", no_lines.to_string(), "lines", "1 to 50 entries"),
        (
            "unknown vendor",
            unknown_vendor.to_string(),
            "vendor_code",
            "purchasing_search_vendors",
        ),
        (
            "item not supplied",
            not_supplied.to_string(),
            "lines[1].item_code",
            "does not supply CBL-0220",
        ),
        (
            "oversize body",
            format!("{{\"note\": \"{}\"}}", "x".repeat(70 * 1024)),
            "",
            "limit",
        ),
    ];
    for (case, body, path, text) in &cases {
        let reply = app
            .post_raw(
                "purchasing_create_po_draft",
                &[
                    ("authorization", format!("Bearer {}", app.token("buyer-sby"))),
                    ("idempotency-key", format!("k-{case}")),
                ],
                body.clone(),
            )
            .await;
        assert_eq!(reply.status, 400, "{case}: {:?}", reply.body);
        assert_eq!(reply.error_code(), "VALIDATION_ERROR", "{case}");
        assert_eq!(reply.body["error"]["retryable"], false, "{case}");
        let details = reply.body["error"]["details"].as_array().unwrap();
        assert!(!details.is_empty(), "{case}");
        assert_eq!(details[0]["path"], *path, "{case}: {details:?}");
        assert!(
            details[0]["message"].as_str().unwrap().contains(text),
            "{case}: {details:?}"
        );
        assert!(
            reply.message().contains("No draft was created"),
            "{case}: {}",
            reply.message()
        );
        assert!(
            !reply.body.to_string().contains("struct "),
            "{case}: Rust type names leak"
        );
    }
    let mut after = app.kinds().await;
    let mut before = before;
    // Each refused call adds one audit item (the demo's trail is there from the start).
    assert_eq!(
        app.audit_items().await.len(),
        cases.len(),
        "every refused call is audited"
    );
    assert_eq!(
        after.remove("audit"),
        before.remove("audit").map(|n| n + cases.len()),
        "every refused call is audited"
    );
    assert_eq!(after, before, "nothing else was written");
}

#[tokio::test]
async fn the_unit_error_names_the_allowed_units_and_what_did_not_happen() {
    let app = spawn_app().await;
    let mut input = po_input("r");
    input["lines"] = json!([{"item_code": "BRG-0042", "qty": 3, "uom": "ROLL"}]);
    let reply = app.create_po_draft("buyer-sby", "k-unit", &input).await;
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.body["error"]["details"][0]["message"],
        "Item BRG-0042 is not stocked in ROLL. Allowed units for BRG-0042: PCS, BOX (1 BOX = 24 PCS). \
         Resend the line with uom PCS or BOX."
    );
    assert!(
        reply
            .message()
            .ends_with("No draft was created. Fix the input and call again.")
    );
}

#[tokio::test]
async fn a_malformed_idempotency_key_or_run_id_is_a_clear_400() {
    let app = spawn_app().await;
    let long = "k".repeat(256);
    let reply = app.create_po_draft("buyer-sby", &long, &po_input("r")).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.detail_paths(), ["header:Idempotency-Key"]);
    let reply = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("r"),
            &[("x-agent-run-id", "run with spaces".into())],
        )
        .await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.detail_paths(), ["header:x-agent-run-id"]);
}
