//! Least privilege inside Tryton. The tools' key is the Tryton user
//! `draftline` (the module's `access.xml` and `access.py`): it reads what the
//! tools read and creates drafts, and Tryton itself refuses it the rest —
//! pressing a button, deleting, changing a document, writing users or groups,
//! reading keys and sessions. People keep Tryton's own workflow, and only
//! draftline sets a document's provenance. Everything here goes through
//! Tryton's own REST API, not the adapter.

use std::sync::Arc;

use draftline_erp::port::Purchasing;
use serde_json::{Value, json};

use crate::drafts::{po_input, prepared_po};
use crate::helpers::{Database, branch, own, refusals};

/// The demo's agent drafts (`demo::agent_purchase_orders`, `agent_quotes`).
const AGENT_PO: &str = "PO-SBY-000001"; // draft, waiting for review
const APPROVED_PO: &str = "PO-SBY-000002"; // quotation (a person pressed Quote)
const AGENT_QUOTE: &str = "QT-BDG-000001"; // draft

/// What the tests compare before and after a refused request.
const PO_FIELDS: &[&str] = &[
    "number",
    "state",
    "write_date",
    "draftline_key",
    "drafted_by_agent_run",
    "comment",
    "lines.quantity",
    "lines.write_date",
];

/// The one document `number` of `model`, read with `fields`.
async fn document(db: &Database, model: &str, number: &str, fields: &[&str]) -> Value {
    let found = db.raw_search(model, json!([["number", "=", number]]), fields).await;
    assert_eq!(found.len(), 1, "{model} {number}: {found:?}");
    found[0].clone()
}

/// The one Tryton user `login`, read with `fields`.
async fn user(db: &Database, login: &str, fields: &[&str]) -> Value {
    let found = db.raw_search("res.user", json!([["login", "=", login]]), fields).await;
    assert_eq!(found.len(), 1, "user {login}: {found:?}");
    found[0].clone()
}

fn message(body: &Value) -> &str {
    body["message"].as_str().unwrap_or_default()
}

/// The groups Tryton says the caller is in when it refuses it something
/// (the key may not read group memberships itself).
async fn refused_within_groups(db: &Database) -> String {
    let (status, body) = db.raw("GET", "ir.session", Some(json!([])), &["id"], None).await;
    assert_eq!(status, 400, "{body}");
    body["description"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn the_tools_key_belongs_to_the_draftline_user_in_its_group_only() {
    let db = refusals();
    // trytond 8.0 has no administrator flag (8.2's `administrator`): its
    // groups are what it may do, and Tryton names them (it may not read
    // its own group memberships).
    let me = user(&db, "draftline", &["login"]).await;
    assert_eq!(me["login"], "draftline");
    assert_eq!(
        refused_within_groups(&db).await,
        "Within groups: Draftline (AI agents' drafts)"
    );
}

#[tokio::test]
async fn drafts_made_with_the_tools_key_are_the_draftline_users_and_stay_drafts() {
    let db = own();
    let erp = Arc::new(db.erp());
    let external = prepared_po(&erp, "dl1-test-access-1", po_input("access-1")).await;
    let created = external.create().await.unwrap();
    let po = document(
        &db,
        "purchase.purchase",
        &created.document.number,
        &["state", "create_uid.login", "lines.create_uid.login", "draftline_key"],
    )
    .await;
    assert_eq!(po["state"], "draft");
    assert_eq!(po["create_uid"]["login"], "draftline");
    assert_eq!(po["draftline_key"], "dl1-test-access-1");
    for line in po["lines"].as_array().unwrap() {
        assert_eq!(line["create_uid"]["login"], "draftline");
    }
}

#[tokio::test]
async fn the_tools_key_cannot_confirm_a_purchase() {
    let db = refusals();
    for number in [AGENT_PO, APPROVED_PO] {
        let before = document(&db, "purchase.purchase", number, PO_FIELDS).await;
        let id = &before["id"];
        let (status, body) = db.post(&format!("purchase.purchase/{id}/confirm"), &json!({})).await;
        assert_eq!(status, 403, "{number}: {body}");
        assert_eq!(document(&db, "purchase.purchase", number, PO_FIELDS).await, before);
    }
}

#[tokio::test]
async fn the_tools_key_cannot_quote_a_purchase() {
    let db = refusals();
    let before = document(&db, "purchase.purchase", AGENT_PO, PO_FIELDS).await;
    assert_eq!(before["state"], "draft");
    let id = &before["id"];
    let (status, body) = db.post(&format!("purchase.purchase/{id}/quote"), &json!({})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(document(&db, "purchase.purchase", AGENT_PO, PO_FIELDS).await, before);
}

#[tokio::test]
async fn the_tools_key_cannot_press_any_button_of_a_purchase_or_a_sale() {
    let db = refusals();
    let buttons = [
        "quote",
        "confirm",
        "process",
        "cancel",
        "draft",
        "manual_invoice",
        "modify_header",
        "handle_invoice_exception",
        "handle_shipment_exception",
    ];
    for (model, number) in [
        ("purchase.purchase", AGENT_PO),
        ("purchase.purchase", APPROVED_PO),
        ("sale.sale", AGENT_QUOTE),
    ] {
        let fields: &[&str] = if model == "sale.sale" {
            &["number", "state", "write_date", "draftline_key", "lines.quantity"]
        } else {
            PO_FIELDS
        };
        let before = document(&db, model, number, fields).await;
        let id = &before["id"];
        let mut pressed = buttons.to_vec();
        if model == "sale.sale" {
            pressed.push("manual_shipment");
        }
        for button in pressed {
            let (status, body) = db.post(&format!("{model}/{id}/{button}"), &json!({})).await;
            // 403 when Tryton's REST catches the access error; 400 "Calling
            // button … is not allowed" for a button of a group the user is
            // not in (process).
            assert!(
                status == 403 || (status == 400 && message(&body).contains("not allowed")),
                "{model} {number} {button}: {status} {body}"
            );
        }
        assert_eq!(document(&db, model, number, fields).await, before, "{model} {number}");
    }
}

#[tokio::test]
async fn the_tools_key_cannot_delete_a_draft() {
    let db = refusals();
    let fields = [&["lines.id"], PO_FIELDS].concat();
    let before = document(&db, "purchase.purchase", AGENT_PO, &fields).await;
    let id = &before["id"];
    let (status, body) = db.delete(&format!("purchase.purchase/{id}")).await;
    assert_eq!(status, 400, "{body}");
    assert!(message(&body).contains("not allowed"), "{body}");
    let line = &before["lines"][0]["id"];
    let (status, body) = db.delete(&format!("purchase.line/{line}")).await;
    assert_eq!(status, 400, "{body}");
    let quote = document(&db, "sale.sale", AGENT_QUOTE, &["state", "lines.id"]).await;
    let quote_id = &quote["id"];
    let (status, body) = db.delete(&format!("sale.sale/{quote_id}")).await;
    assert_eq!(status, 400, "{body}");

    assert_eq!(document(&db, "purchase.purchase", AGENT_PO, &fields).await, before);
    assert_eq!(
        document(&db, "sale.sale", AGENT_QUOTE, &["state", "lines.id"]).await,
        quote
    );
}

#[tokio::test]
async fn the_tools_key_cannot_change_a_draft_or_move_its_key() {
    let db = refusals();
    let before = document(&db, "purchase.purchase", AGENT_PO, PO_FIELDS).await;
    let other = document(&db, "purchase.purchase", APPROVED_PO, PO_FIELDS).await;
    let id = &other["id"];
    for change in [
        json!({"draftline_key": before["draftline_key"]}),
        json!({"drafted_by_agent_run": "run-elsewhere"}),
        json!({"comment": "changed by the tools' key"}),
        json!({"state": "confirmed"}),
    ] {
        let (status, body) = db.put(&format!("purchase.purchase/{id}"), &change).await;
        assert_eq!(status, 400, "{change}: {body}");
    }
    assert_eq!(document(&db, "purchase.purchase", APPROVED_PO, PO_FIELDS).await, other);
    assert_eq!(document(&db, "purchase.purchase", AGENT_PO, PO_FIELDS).await, before);
}

#[tokio::test]
async fn the_tools_key_cannot_duplicate_or_import_a_document_without_a_draftline_key() {
    // Both would make a draft; but every document the draftline user makes
    // is an agent's draft with its key (the module refuses others).
    let db = refusals();
    let count = |model: &'static str| {
        let db = &db;
        async move { db.raw_search(model, json!([]), &["id"]).await.len() }
    };
    let (purchases, sales) = (count("purchase.purchase").await, count("sale.sale").await);
    let po = document(&db, "purchase.purchase", "PO-JKT-000022", &["state"]).await;
    let id = &po["id"];
    let (status, body) = db.post(&format!("purchase.purchase/{id}/copy"), &json!({})).await;
    assert_eq!(status, 403, "{body}");
    let quote = document(&db, "sale.sale", AGENT_QUOTE, &["state"]).await;
    let quote_id = &quote["id"];
    let (status, body) = db.post(&format!("sale.sale/{quote_id}/copy"), &json!({})).await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = db
        .post(
            "purchase.purchase/import_data",
            &json!({"fields_names": ["party", "warehouse"],
                         "data": [["PT Sinar Bearindo", "Surabaya (SBY-01)"]]}),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = db
        .raw(
            "POST",
            "purchase.purchase",
            None,
            &["id"],
            Some(&json!({"party": 2, "warehouse": 12,
                         "lines": [["create", [{"product": 1, "quantity": 1, "unit": 1, "unit_price": 12500}]]]})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(message(&body).contains("draftline key"), "{body}");
    assert_eq!(
        (count("purchase.purchase").await, count("sale.sale").await),
        (purchases, sales)
    );
}

#[tokio::test]
async fn the_tools_key_cannot_write_a_tryton_user() {
    let db = refusals();
    let fields = ["login", "name", "active", "write_date"];
    for (login, change) in [
        ("draftline", json!({"name": "renamed by the tools' key"})),
        ("draftline", json!({"groups": [["add", [1]]]})),
        ("admin", json!({"password": "chosen-by-the-tools-key"})),
        ("approver-sby", json!({"active": false})),
    ] {
        let before = user(&db, login, &fields).await;
        let id = &before["id"];
        let (status, body) = db.put(&format!("res.user/{id}"), &change).await;
        assert_eq!(status, 400, "{login} {change}: {body}");
        assert_eq!(user(&db, login, &fields).await, before, "{login}");
    }
    // Nor through its own preferences.
    let before = user(&db, "draftline", &fields).await;
    let (status, body) = db
        .post(
            "res.user/set_preferences",
            &json!({"values": {"name": "renamed", "password": "chosen-by-the-tools-key"}}),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(user(&db, "draftline", &fields).await, before);
    // Nor make one.
    let (status, body) = db.post("res.user", &json!({"login": "intruder", "name": "x"})).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        db.raw_search("res.user", json!([["login", "=", "intruder"]]), &["id"])
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn the_tools_key_cannot_give_itself_groups_or_keys() {
    // Tryton has no access record for these models, which opens them to
    // every user; the module closes them to the draftline user.
    let db = refusals();
    let me = user(&db, "draftline", &["id"]).await;
    let purchase = db
        .raw_search("res.group", json!([["name", "=", "Purchase"]]), &["id"])
        .await;
    assert_eq!(purchase.len(), 1, "{purchase:?}");
    let (status, body) = db
        .post(
            "res.user-res.group",
            &json!({"user": me["id"], "group": purchase[0]["id"]}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let admin = user(&db, "admin", &["id"]).await;
    let (status, body) = db
        .post(
            "res.user.application",
            &json!({"user": admin["id"], "application": "rest", "state": "validated"}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        refused_within_groups(&db).await,
        "Within groups: Draftline (AI agents' drafts)"
    );
}

#[tokio::test]
async fn the_tools_key_reads_no_keys_sessions_or_documents_the_tools_do_not_read() {
    let db = refusals();
    for model in [
        "res.user.application",
        "ir.session",
        "res.user-res.group",
        "ir.note",
        "ir.attachment",
    ] {
        let (status, body) = db.raw("GET", model, Some(json!([])), &["id"], None).await;
        assert_eq!(status, 400, "{model}: {body}");
        assert!(message(&body).contains("not allowed"), "{model}: {body}");
    }
}

#[tokio::test]
async fn a_person_in_tryton_cannot_change_the_draftline_key_of_a_draft() {
    let db = own();
    let approver = db.as_user("approver-sby");
    let before = document(&db, "purchase.purchase", AGENT_PO, PO_FIELDS).await;
    let id = &before["id"];
    for field in [
        "draftline_key",
        "draftline_number",
        "draftline_client_ref",
        "drafted_by_agent_run",
        "drafted_on_behalf_of",
        "drafted_by_tool_call",
    ] {
        let mut change = serde_json::Map::new();
        change.insert(field.to_owned(), json!("moved"));
        let (status, body) = approver
            .put(&format!("purchase.purchase/{id}"), &Value::Object(change))
            .await;
        assert_eq!(status, 400, "{field}: {body}");
        assert!(message(&body).contains("not allowed"), "{field}: {body}");
    }
    assert_eq!(document(&db, "purchase.purchase", AGENT_PO, PO_FIELDS).await, before);

    // Nor on a quote, nor take the key onto a document of their own.
    let seller = db.as_user("approver-bdg");
    let quote = document(&db, "sale.sale", AGENT_QUOTE, &["draftline_key", "write_date"]).await;
    let quote_id = &quote["id"];
    let (status, body) = seller
        .put(&format!("sale.sale/{quote_id}"), &json!({"draftline_key": "moved"}))
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        document(&db, "sale.sale", AGENT_QUOTE, &["draftline_key", "write_date"]).await,
        quote
    );
    let (status, body) = approver
        .raw(
            "POST",
            "purchase.purchase",
            None,
            &["id"],
            Some(&json!({"party": 2, "warehouse": 12, "draftline_key": before["draftline_key"]})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(message(&body).contains("Draftline Key"), "{body}");

    // Their ordinary work on the draft goes on.
    let (status, body) = approver
        .raw(
            "PUT",
            &format!("purchase.purchase/{id}"),
            None,
            &["comment"],
            Some(&json!({"comment": "checked the vendor's price"})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["comment"], "checked the vendor's price");
    let after = document(&db, "purchase.purchase", AGENT_PO, PO_FIELDS).await;
    assert_eq!(after["draftline_key"], before["draftline_key"]);
}

#[tokio::test]
async fn a_person_in_tryton_still_quotes_and_confirms_an_agent_draft() {
    let db = own();
    let approver = db.as_user("approver-sby");
    let erp = db.erp();
    let sby = branch("SBY-01");
    let before = document(&db, "purchase.purchase", AGENT_PO, &["state", "draftline_key"]).await;
    assert_eq!(before["state"], "draft");
    let id = &before["id"];
    let (status, body) = approver
        .raw(
            "POST",
            &format!("purchase.purchase/{id}/quote"),
            None,
            &["state"],
            Some(&json!({})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"], "quotation");
    let read = erp.purchase_order(&sby.scope(), AGENT_PO).await.unwrap().unwrap();
    assert_eq!(read.status.code(), "approved");
    let (status, body) = approver
        .raw(
            "POST",
            &format!("purchase.purchase/{id}/confirm"),
            None,
            &["state"],
            Some(&json!({})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        ["confirmed", "processing"].contains(&body["state"].as_str().unwrap_or_default()),
        "{body}"
    );
    let after = document(&db, "purchase.purchase", AGENT_PO, &["state", "draftline_key"]).await;
    assert_eq!(after["draftline_key"], before["draftline_key"], "the provenance stays");

    // A quote likewise, by a person in Tryton's sales group.
    let seller = db.as_user("approver-bdg");
    let quote = document(&db, "sale.sale", AGENT_QUOTE, &["state"]).await;
    let quote_id = &quote["id"];
    let (status, body) = seller
        .raw(
            "POST",
            &format!("sale.sale/{quote_id}/quote"),
            None,
            &["state"],
            Some(&json!({})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"], "quotation");
}

/// `POST <model>/<id>/<button>` as `who`: the status and the body.
async fn press(who: &Database, model: &str, id: &Value, button: &str) -> (u16, Value) {
    who.raw(
        "POST",
        &format!("{model}/{id}/{button}"),
        None,
        &["state"],
        Some(&json!({})),
    )
    .await
}

#[tokio::test]
async fn the_person_an_agent_drafted_for_cannot_quote_or_confirm_it_in_tryton_and_another_person_can() {
    let db = own();
    let buyer = db.as_user("buyer-sby");
    let approver = db.as_user("approver-sby");
    let before = document(&db, "purchase.purchase", AGENT_PO, &["state", "drafted_on_behalf_of"]).await;
    assert_eq!(before["state"], "draft");
    assert_eq!(before["drafted_on_behalf_of"], "buyer-sby");
    let id = &before["id"];

    // The buyer the agent acted for: Tryton's own user error, nothing moves.
    let (status, body) = press(&buyer, "purchase.purchase", id, "quote").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        message(&body),
        format!(
            "{AGENT_PO} was drafted by an AI agent on behalf of buyer-sby: another person must quote or confirm it \
             (four eyes)."
        ),
        "{body}"
    );
    let after = document(&db, "purchase.purchase", AGENT_PO, &["state", "write_date"]).await;
    assert_eq!(after["state"], "draft", "{after}");

    // Another person with the Purchase group quotes it; the buyer may not
    // confirm it either, the other person may.
    let (status, body) = press(&approver, "purchase.purchase", id, "quote").await;
    assert_eq!((status, body["state"].as_str()), (200, Some("quotation")), "{body}");
    let (status, body) = press(&buyer, "purchase.purchase", id, "confirm").await;
    assert_eq!(status, 400, "{body}");
    assert!(message(&body).contains("(four eyes)"), "{body}");
    assert_eq!(
        document(&db, "purchase.purchase", AGENT_PO, &["state"]).await["state"],
        "quotation"
    );

    // draftline reads who decided, as far as Tryton tells: the approver.
    let read = db
        .erp()
        .purchase_order(&branch("SBY-01").scope(), AGENT_PO)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read.status.code(), "approved");
    let decision = read.decision.expect("who quoted it");
    assert_eq!(decision.decided_by, "approver-sby");
    assert_eq!(decision.reason, None);
    let (status, body) = press(&approver, "purchase.purchase", id, "confirm").await;
    assert_eq!(status, 200, "{body}");

    // A quote likewise: its seller may not quote it; the sales approver may.
    let seller = db.as_user("sales-bdg");
    let quote = document(&db, "sale.sale", AGENT_QUOTE, &["state", "drafted_on_behalf_of"]).await;
    assert_eq!(quote["drafted_on_behalf_of"], "sales-bdg");
    let (status, body) = press(&seller, "sale.sale", &quote["id"], "quote").await;
    assert_eq!(status, 400, "{body}");
    assert!(message(&body).contains("on behalf of sales-bdg"), "{body}");
    let (status, body) = press(&db.as_user("approver-bdg"), "sale.sale", &quote["id"], "quote").await;
    assert_eq!((status, body["state"].as_str()), (200, Some("quotation")), "{body}");
}

#[tokio::test]
async fn a_person_can_still_duplicate_an_agent_draft() {
    let db = own();
    let approver = db.as_user("approver-sby");
    let original = document(&db, "purchase.purchase", AGENT_PO, &["lines.quantity", "party.code"]).await;
    let id = &original["id"];
    let (status, body) = approver.post(&format!("purchase.purchase/{id}/copy"), &json!({})).await;
    assert_eq!(status, 200, "{body}");
    let copy_id = body[0].as_i64().unwrap_or_else(|| panic!("the copy's id: {body}"));
    let (status, copy) = db
        .raw(
            "GET",
            &format!("purchase.purchase/{copy_id}"),
            None,
            &[
                "state",
                "number",
                "party.code",
                "lines.quantity",
                "create_uid.login",
                "draftline_key",
                "draftline_number",
                "draftline_client_ref",
                "drafted_by_agent_run",
                "drafted_on_behalf_of",
                "drafted_by_tool_call",
                "drafted_by_agent",
            ],
            None,
        )
        .await;
    assert_eq!(status, 200, "{copy}");
    assert_eq!(copy["state"], "draft");
    assert_eq!(copy["create_uid"]["login"], "approver-sby");
    assert_eq!(copy["party"]["code"], original["party"]["code"]);
    let quantities = |doc: &Value| -> Vec<Value> {
        doc["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["quantity"].clone())
            .collect()
    };
    assert_eq!(quantities(&copy), quantities(&original));
    // A person's document: no number yet, no provenance.
    for field in [
        "number",
        "draftline_key",
        "draftline_number",
        "draftline_client_ref",
        "drafted_by_agent_run",
        "drafted_on_behalf_of",
        "drafted_by_tool_call",
    ] {
        assert_eq!(copy[field], Value::Null, "{field}: {copy}");
    }
    assert_eq!(copy["drafted_by_agent"], false);
}
