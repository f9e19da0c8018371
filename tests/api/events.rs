//! Events in the outbox (issue 46, step 1): `draft.created` is written in
//! the draft's own transaction (the completing write of the key on
//! Tryton), `draft.decided` in the decision's, and nothing else writes one.
//! The outbox is read straight from the table, as delivery will read it.

use serde_json::{Value, json};

use crate::helpers::{TestApp, on_both_backends, po_input, spawn_app, spawn_app_drafting_freely_on};
use crate::review::{Reviewer, agent_po, po_of};

/// Every event in the outbox, oldest first: its id and its payload.
async fn events(app: &TestApp) -> Vec<(String, Value)> {
    let mut found: Vec<(String, Value)> = app
        .scan_all()
        .await
        .into_iter()
        .filter(|item| item.get("kind").and_then(|k| k.as_s().ok()).map(String::as_str) == Some("event"))
        .map(|item| {
            let text = |name: &str| item[name].as_s().unwrap().clone();
            assert_eq!(item["pk"].as_s().unwrap(), "T#demo#OUTBOX");
            assert_eq!(item["sk"].as_s().unwrap(), &format!("EVT#{}", text("event_id")));
            assert_eq!(text("state"), "pending");
            assert_eq!(item["attempts"].as_n().unwrap(), "0");
            let id = text("event_id");
            let ulid = id.strip_prefix("evt_").unwrap();
            assert!(
                ulid.len() == 26 && ulid.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                "{id}"
            );
            let payload: Value = serde_json::from_str(&text("payload")).unwrap();
            assert_eq!(payload["type"], text("event_type").as_str());
            (id, payload)
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// The README's reorder as buyer-sby in agent run `run` under `key`.
async fn reorder(app: &TestApp, run: &str, key: &str, client_ref: &str) -> crate::helpers::Reply {
    let headers = [
        ("idempotency-key", key.to_owned()),
        ("x-agent-run-id", run.to_owned()),
        ("x-tool-call-id", format!("{key}-call")),
    ];
    app.call(
        "buyer-sby",
        "purchasing_create_po_draft",
        &po_input(client_ref),
        &headers,
    )
    .await
}

on_both_backends! {
    #[tokio::test]
    async fn a_fresh_draft_writes_one_draft_created_event_and_its_replay_none(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        let first = reorder(&app, "run-events", "k-events", "events-1").await;
        assert_eq!(first.status, 201, "{:?}", first.body);
        let draft = &first.body["data"];
        let again = reorder(&app, "run-events", "k-events", "events-1").await;
        assert_eq!((again.status, &again.body["replayed"]), (200, &json!(true)));
        let events = events(&app).await;
        assert_eq!(events.len(), 1, "{events:?}");
        let (_, event) = &events[0];
        assert_eq!(event["type"], "draft.created");
        assert!(event["timestamp"].as_str().unwrap().ends_with('Z'), "{event}");
        let data = &event["data"];
        assert_eq!(
            (&data["tenant"], &data["branch"], &data["run_id"], &data["tool_call_id"]),
            (&json!("demo"), &json!("SBY-01"), &json!("run-events"), &json!("k-events-call"))
        );
        assert_eq!(data["document"]["kind"], "purchase_order");
        assert_eq!(data["document"]["number"], draft["po_number"]);
        assert_eq!(data["document"]["id"], draft["draft_id"]);
        assert_eq!(data["total"], draft["total"]);
        assert_eq!(data["review_url"], draft["review_url"]);
        assert!(data.get("decision").is_none(), "{data}");
        // Ids, the total and the link: no token, note or argument value.
        let text = event.to_string();
        for secret in ["events-1", "reorder from alert", "Bearer", "V-00231", "BRG-0042"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }
}

#[tokio::test]
async fn a_question_a_validation_error_and_a_limit_write_no_event() {
    let app = spawn_app().await;
    // One draft a run.
    app.set_policy(&json!({
        "version": null, "mode": "enforce", "time_zone": "+07:00", "branches": null,
        "limits": {"per_run": {"max_drafts": 1, "max_value": null}}
    }))
    .await;
    assert_eq!(reorder(&app, "run-q1", "k-q1", "q-1").await.status, 201);
    // The same items again under another key and run: a person is asked.
    let asked = reorder(&app, "run-q2", "k-q2", "q-2").await;
    assert_eq!((asked.status, asked.error_code()), (409, "INPUT_REQUIRED"));
    // Invalid input: refused before anything is read.
    let mut invalid = po_input("q-3");
    invalid["lines"][0]["qty"] = json!(0);
    let refused = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &invalid,
            &[("idempotency-key", "k-q3".to_owned())],
        )
        .await;
    assert_eq!((refused.status, refused.error_code()), (400, "VALIDATION_ERROR"));
    // Past the tenant's limit for the run.
    let mut other = po_input("q-4");
    other["lines"] = json!([{"item_code": "VBT-0220", "qty": 1, "uom": "PCS"}]);
    let limited = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &other,
            &[
                ("idempotency-key", "k-q4".to_owned()),
                ("x-agent-run-id", "run-q1".to_owned()),
            ],
        )
        .await;
    assert_eq!(
        (limited.status, limited.error_code()),
        (403, "LIMIT_REACHED"),
        "{:?}",
        limited.body
    );
    let events = events(&app).await;
    assert_eq!(events.len(), 1, "only the created draft is announced: {events:?}");
    assert_eq!(events[0].1["data"]["run_id"], "run-q1");
}

/// Decides document `number` as `person`, with `verb` (`approve`,
/// `reject`) and `reason`, posting the same form twice (a double click).
async fn decide_twice(person: &Reviewer, number: &str, verb: &str, reason: &str) {
    let page = person.get(&format!("/review/documents/{number}")).await;
    let form = format!("/review/documents/{number}/{verb}");
    let (csrf, decision_id) = (page.field_after(&form, "csrf"), page.field_after(&form, "decision_id"));
    let fields = [
        ("csrf", csrf.as_str()),
        ("decision_id", decision_id.as_str()),
        ("reason", reason),
    ];
    let done = person.post(&form, &fields).await;
    let decided = if verb == "approve" { "approved" } else { "rejected" };
    assert!(done.location().ends_with(&format!("decided={decided}")), "{done:?}");
    // The same decision again: nothing more is written.
    let again = person.post(&form, &fields).await;
    assert!(again.location().ends_with("decided=already"), "{again:?}");
}

#[tokio::test]
async fn each_decision_on_the_review_pages_writes_one_draft_decided_event_in_its_transaction() {
    let app = spawn_app().await;
    let rejected = agent_po(&app, "buyer-sby", "run-decided", "decided-1", po_input("decided-1")).await;
    let approved = agent_po(
        &app,
        "buyer-sby",
        "run-decided",
        "decided-2",
        po_of("decided-2", "V-00231", "VBT-0220", 1, "PCS"),
    )
    .await;
    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    decide_twice(
        &person,
        rejected["po_number"].as_str().unwrap(),
        "reject",
        "Order BOX, not PCS",
    )
    .await;
    decide_twice(&person, approved["po_number"].as_str().unwrap(), "approve", "ok").await;
    let events = events(&app).await;
    let types: Vec<&Value> = events.iter().map(|(_, event)| &event["type"]).collect();
    assert_eq!(
        types,
        ["draft.created", "draft.created", "draft.decided", "draft.decided"],
        "{events:?}"
    );
    for ((_, event), (draft, decision)) in events[2..].iter().zip([
        (
            &rejected,
            json!({"verdict": "rejected", "decided_by": "approver-sby", "reason": "Order BOX, not PCS"}),
        ),
        (
            &approved,
            json!({"verdict": "approved", "decided_by": "approver-sby", "reason": "ok"}),
        ),
    ]) {
        let data = &event["data"];
        assert_eq!(data["document"]["number"], draft["po_number"]);
        assert_eq!(data["document"]["id"], draft["draft_id"]);
        assert_eq!(data["run_id"], "run-decided");
        // A document does not keep the tool call that drafted it.
        assert_eq!(data["tool_call_id"], Value::Null);
        assert_eq!(data["total"], draft["total"]);
        assert_eq!(data["review_url"], draft["review_url"]);
        assert_eq!(data["decision"], decision);
    }
}
