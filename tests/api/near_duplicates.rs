//! The near-duplicate check as a keyed read (the built-in backend): a
//! marker per branch, vendor or customer, and item set lists its open agent
//! drafts. It is written in the draft's transaction, read in the key
//! lookup's batch, and a person's decision on the review pages takes its
//! draft off it in the decision's own transaction. The answers are those of
//! the query it replaced (`input_required.rs` holds them, on both backends).

use std::collections::BTreeSet;

use crate::helpers::{Reply, TestApp, po_input, spawn_app, spawn_app_with};
use draftline_cli::LocalOptions;

/// Where buyer-sby's drafts of the README's reorder (BRG-0042 and BRG-0043
/// from V-00231) are marked.
const MARKER: (&str, &str) = ("T#demo#B#SBY-01#NEAR#PO#V-00231", "ITEMS#BRG-0042,BRG-0043");

/// The README's reorder as buyer-sby under agent run `run` (its own key),
/// with a person's answer when given.
async fn reorder(app: &TestApp, run: &str, confirm: Option<String>) -> Reply {
    let mut headers = vec![("x-agent-run-id", run.to_owned())];
    if let Some(confirm) = confirm {
        headers.push(("draftline-confirm", confirm));
    }
    app.call(
        "buyer-sby",
        "purchasing_create_po_draft",
        &po_input("reorder-brg"),
        &headers,
    )
    .await
}

/// The number a created draft answered.
fn number(reply: &Reply) -> String {
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    reply.body["data"]["po_number"].as_str().unwrap().to_owned()
}

/// The number of the open draft a near-duplicate question names.
fn asked_about(reply: &Reply) -> String {
    assert_eq!(reply.status, 409, "{:?}", reply.body);
    assert_eq!(reply.error_code(), "INPUT_REQUIRED", "{:?}", reply.body);
    reply.body["error"]["inputRequired"]["existing"]["number"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The number of the draft run `run` creates when a person answers
/// `asked` (its near-duplicate question) "create another".
async fn create_another(app: &TestApp, run: &str, asked: &Reply) -> String {
    let state = asked.body["error"]["inputRequired"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    number(&reorder(app, run, Some(format!("create-another {state}"))).await)
}

/// The drafts the marker lists, by number.
async fn marked(app: &TestApp) -> BTreeSet<String> {
    let Some(marker) = app.item(MARKER.0, MARKER.1).await else {
        return BTreeSet::new();
    };
    assert_eq!(marker["kind"].as_s().unwrap(), "near_duplicate");
    marker
        .keys()
        .filter_map(|name| name.strip_prefix("d#"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn the_marker_is_written_with_the_draft_and_still_finds_it_after_a_restart() {
    let engine = draftline_infra::EmbeddedDynamo::start(None).await.unwrap();
    let on_the_engine = || LocalOptions {
        dynamodb_endpoint: Some(engine.endpoint()),
        ..LocalOptions::default()
    };
    let app = spawn_app_with(on_the_engine()).await;
    assert!(marked(&app).await.is_empty());
    let first = number(&reorder(&app, "r-17", None).await);
    assert_eq!(
        marked(&app).await,
        BTreeSet::from([first.clone()]),
        "written with the draft"
    );
    drop(app);

    // A new instance (no state but the table's) asks about the same draft.
    let restarted = spawn_app_with(on_the_engine()).await;
    let before = restarted.documents("purchase_order").await;
    let asked = reorder(&restarted, "r-18", None).await;
    assert_eq!(asked_about(&asked), first);
    assert_eq!(
        restarted.documents("purchase_order").await,
        before,
        "nothing was created"
    );
}

#[tokio::test]
async fn a_decision_on_the_review_pages_takes_its_draft_off_the_marker_and_leaves_the_other() {
    let app = spawn_app().await;
    let first = number(&reorder(&app, "r-17", None).await);
    app.clock.advance(chrono::Duration::minutes(5));
    // A person answers "create another": two open drafts of the same items.
    let asked = reorder(&app, "r-18", None).await;
    assert_eq!(asked_about(&asked), first);
    let second = create_another(&app, "r-18", &asked).await;
    assert_eq!(marked(&app).await, BTreeSet::from([first.clone(), second.clone()]));
    app.clock.advance(chrono::Duration::minutes(5));

    let approver = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    // The newer draft is rejected: the older one is still found.
    let decided = approver.decide(&second, "reject", "one is enough").await;
    assert_eq!(decided.status, 303, "{}", decided.body);
    assert_eq!(marked(&app).await, BTreeSet::from([first.clone()]));
    assert_eq!(asked_about(&reorder(&app, "r-19", None).await), first);

    // The older one is approved: nothing is open, and the reorder drafts.
    let decided = approver.decide(&first, "approve", "ordered").await;
    assert_eq!(decided.status, 303, "{}", decided.body);
    assert!(marked(&app).await.is_empty());
    let third = number(&reorder(&app, "r-20", None).await);
    assert_eq!(marked(&app).await, BTreeSet::from([third]));
}

#[tokio::test]
async fn of_concurrent_drafts_of_the_same_items_under_different_keys_one_is_created_and_the_others_ask() {
    let app = spawn_app().await;
    let before = app.documents("purchase_order").await;
    let runs: Vec<String> = (0..6).map(|i| format!("race-{i}")).collect();
    let replies = futures::future::join_all(runs.iter().map(|run| reorder(&app, run, None))).await;
    let created: Vec<String> = replies.iter().filter(|reply| reply.status == 201).map(number).collect();
    let statuses: Vec<u16> = replies.iter().map(|reply| reply.status).collect();
    assert_eq!(
        created.len(),
        1,
        "one draft of the same items, the others ask: {statuses:?}"
    );
    for reply in replies.iter().filter(|reply| reply.status != 201) {
        // Every other call asks about the one that was created.
        assert_eq!(asked_about(reply), created[0]);
    }
    assert_eq!(app.documents("purchase_order").await, before + 1);
    assert_eq!(marked(&app).await, BTreeSet::from([created[0].clone()]));
}

#[tokio::test]
async fn a_marker_drops_drafts_older_than_a_day_when_the_next_draft_is_written() {
    let app = spawn_app().await;
    let old = number(&reorder(&app, "r-1", None).await);
    app.clock.advance(chrono::Duration::hours(25));
    // A day later the old draft is no near-duplicate, and its entry goes.
    let new = number(&reorder(&app, "r-2", None).await);
    assert_eq!(marked(&app).await, BTreeSet::from([new]));
    assert!(!marked(&app).await.contains(&old));
}

#[tokio::test]
async fn a_marker_lists_at_most_the_eight_newest_open_drafts_however_many_a_person_confirms() {
    let app = spawn_app().await;
    let before = app.documents("purchase_order").await;
    let mut created = vec![number(&reorder(&app, "r-0", None).await)];
    for run in 1..10 {
        app.clock.advance(chrono::Duration::minutes(1));
        let run = format!("r-{run}");
        let asked = reorder(&app, &run, None).await;
        // The question names the newest open draft.
        assert_eq!(&asked_about(&asked), created.last().unwrap());
        created.push(create_another(&app, &run, &asked).await);
    }
    // Ten open drafts: the marker lists the newest eight, a small item.
    let newest: BTreeSet<String> = created[2..].iter().cloned().collect();
    assert_eq!(marked(&app).await, newest);
    assert_eq!(app.documents("purchase_order").await, before + 10);
}

#[tokio::test]
async fn with_the_check_off_no_draft_is_marked_and_concurrent_drafts_of_the_same_items_are_all_created() {
    let app = spawn_app_with(LocalOptions {
        no_near_duplicate_check: true,
        ..LocalOptions::default()
    })
    .await;
    let before = app.documents("purchase_order").await;
    let runs: Vec<String> = (0..6).map(|i| format!("race-{i}")).collect();
    let replies = futures::future::join_all(runs.iter().map(|run| reorder(&app, run, None))).await;
    let statuses: Vec<u16> = replies.iter().map(|reply| reply.status).collect();
    assert_eq!(
        statuses,
        [201; 6],
        "{:?}",
        replies.iter().map(|r| &r.body).collect::<Vec<_>>()
    );
    assert_eq!(app.documents("purchase_order").await, before + 6);
    assert!(app.item(MARKER.0, MARKER.1).await.is_none(), "no marker is written");
}

// ---------------------------------------------------------------------------
// A person's decision, then the next draft of the same items: created or
// asked, never a 5xx, whatever state the marker was in.

/// Surabaya's seeded open draft of V-00231 (BRG-0042 and VBT-0220), and
/// where its set is marked.
const SEEDED_PO: &str = "PO-SBY-000001";
const SEEDED_PO_MARKER: (&str, &str) = ("T#demo#B#SBY-01#NEAR#PO#V-00231", "ITEMS#BRG-0042,VBT-0220");
/// Bandung's seeded open quote to C-BDG-001 (BRG-0042 and GLV-0015).
const SEEDED_QUOTE: &str = "QT-BDG-000001";

/// A PO of the seeded draft's items under key `key`.
async fn seeded_po_again(app: &TestApp, key: &str) -> Reply {
    let input = serde_json::json!({
        "vendor_code": "V-00231",
        "needed_by": "2026-12-15",
        "client_ref": key,
        "note": null,
        "lines": [
            {"item_code": "BRG-0042", "qty": 10, "uom": "BOX"},
            {"item_code": "VBT-0220", "qty": 12, "uom": "PCS"}
        ]
    });
    app.call(
        "buyer-sby",
        "purchasing_create_po_draft",
        &input,
        &[("idempotency-key", key.to_owned())],
    )
    .await
}

/// A quote of the seeded quote's items under key `key`.
async fn seeded_quote_again(app: &TestApp, key: &str) -> Reply {
    let input = serde_json::json!({
        "customer_code": "C-BDG-001",
        "valid_until": "2026-12-31",
        "client_ref": key,
        "note": null,
        "lines": [
            {"item_code": "BRG-0042", "qty": 5, "uom": "BOX", "tax_code": "VAT11"},
            {"item_code": "GLV-0015", "qty": 10, "uom": "BOX", "tax_code": "VAT11"}
        ]
    });
    app.call(
        "sales-bdg",
        "sales_create_quote_draft",
        &input,
        &[("idempotency-key", key.to_owned())],
    )
    .await
}

/// Asserts that a draft was created (201) or asked about a near-duplicate
/// (409 `INPUT_REQUIRED`), and answers whether it was created.
fn created_or_asked(reply: &Reply, what: &str) -> bool {
    match reply.status {
        201 => true,
        409 => {
            assert_eq!(reply.error_code(), "INPUT_REQUIRED", "{what}: {:?}", reply.body);
            false
        }
        _ => panic!("{what}: created or asked, got {}: {:?}", reply.status, reply.body),
    }
}

/// Three drafts of the same items under new keys: each created or asked,
/// and the first of them created (nothing open is left to ask about).
async fn three_drafts_after<F, Fut>(what: &str, draft: F)
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Reply>,
{
    let mut created = Vec::new();
    for i in 0..3 {
        let reply = draft(format!("{what}-after-{i}")).await;
        created.push(created_or_asked(&reply, &format!("{what}, draft {i}")));
    }
    assert_eq!(
        created,
        [true, false, false],
        "{what}: the first created, the others ask"
    );
}

#[tokio::test]
async fn after_a_decision_on_a_seeded_po_or_quote_the_next_drafts_of_its_items_are_created_or_asked() {
    let app = spawn_app().await;
    let app = &app;
    assert!(
        app.item(SEEDED_PO_MARKER.0, SEEDED_PO_MARKER.1).await.is_none(),
        "a seeded draft has no marker"
    );
    let sby = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let decided = sby.decide(SEEDED_PO, "approve", "ordered").await;
    assert_eq!(decided.status, 303, "{}", decided.body);
    three_drafts_after("seeded-po", |key| async move { seeded_po_again(app, &key).await }).await;

    let bdg = crate::review::Reviewer::sign_in(&app.server.url(), "approver-bdg").await;
    let decided = bdg.decide(SEEDED_QUOTE, "reject", "price too old").await;
    assert_eq!(decided.status, 303, "{}", decided.body);
    three_drafts_after("seeded-quote", |key| async move { seeded_quote_again(app, &key).await }).await;
}

#[tokio::test]
async fn after_a_decision_on_a_draft_made_with_the_window_at_zero_the_next_drafts_are_created_or_asked() {
    let app = spawn_app().await;
    let app = &app;
    let policy = |limits: serde_json::Value| serde_json::json!({"version": null, "mode": "enforce", "time_zone": "+07:00", "limits": limits, "branches": null});
    app.set_policy(&policy(serde_json::json!({"near_duplicate_hours": 0})))
        .await;
    app.clock.advance(chrono::Duration::seconds(31));
    let unmarked = number(&reorder(app, "r-window-0", None).await);
    assert!(marked(app).await.is_empty(), "nothing is marked with the window at 0");
    app.set_policy(&policy(serde_json::json!({"near_duplicate_hours": 24})))
        .await;
    app.clock.advance(chrono::Duration::seconds(31));

    let sby = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let decided = sby.decide(&unmarked, "reject", "not now").await;
    assert_eq!(decided.status, 303, "{}", decided.body);
    three_drafts_after("window-0", |run| async move { reorder(app, &run, None).await }).await;
}

#[tokio::test]
async fn after_a_decision_on_a_draft_whose_marker_was_deleted_by_hand_the_next_drafts_are_created_or_asked() {
    let app = spawn_app().await;
    let app = &app;
    let first = number(&reorder(app, "r-deleted", None).await);
    assert_eq!(marked(app).await, BTreeSet::from([first.clone()]));
    app.delete_item(MARKER.0, MARKER.1).await;

    let sby = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let decided = sby.decide(&first, "approve", "ordered").await;
    assert_eq!(decided.status, 303, "{}", decided.body);
    three_drafts_after("deleted", |run| async move { reorder(app, &run, None).await }).await;
}

/// Log lines written while `fut` runs on this thread (the test's runtime
/// runs the server's tasks on it too).
async fn logged<F: std::future::Future>(fut: F) -> (F::Output, String) {
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .finish();
    let guard = tracing::subscriber::set_default(subscriber);
    let out = fut.await;
    drop(guard);
    let text = String::from_utf8_lossy(&lines.0.lock().unwrap()).into_owned();
    (out, text)
}

#[tokio::test]
async fn a_corrupt_marker_is_treated_as_absent_with_a_warning_and_written_anew_by_the_next_draft() {
    use aws_sdk_dynamodb::types::AttributeValue::{N, S};
    // No version, a version that is text, a negative one, a fraction: each
    // with an entry that does not parse.
    for (case, version) in [
        ("none", None),
        ("text", Some(S("3".into()))),
        ("negative", Some(N("-2".into()))),
        ("fraction", Some(N("1.5".into()))),
    ] {
        let app = spawn_app().await;
        let mut item = std::collections::HashMap::from([
            ("pk".to_owned(), S(MARKER.0.to_owned())),
            ("sk".to_owned(), S(MARKER.1.to_owned())),
            ("kind".to_owned(), S("near_duplicate".to_owned())),
            ("d#PO-SBY-999999".to_owned(), S("{not json".to_owned())),
        ]);
        if let Some(version) = version {
            item.insert("v".to_owned(), version);
        }
        app.put_item(item).await;

        let (reply, logs) = logged(reorder(&app, &format!("r-corrupt-{case}"), None)).await;
        let first = number(&reply);
        let warning = logs
            .lines()
            .find(|line| line.contains("WARN") && line.contains("near_duplicate"))
            .unwrap_or_else(|| panic!("{case}: a warning line in\n{logs}"));
        assert!(
            warning.contains(MARKER.0),
            "{case}: the warning names the marker: {warning}"
        );
        // Written anew: it lists the new draft alone, at a valid version,
        // and the next draft of the set asks about it.
        assert_eq!(marked(&app).await, BTreeSet::from([first.clone()]), "{case}");
        let marker = app.item(MARKER.0, MARKER.1).await.unwrap();
        assert_eq!(marker["v"].as_n().unwrap(), "1", "{case}");
        assert_eq!(
            asked_about(&reorder(&app, &format!("r-corrupt-{case}-2"), None).await),
            first
        );
    }
}

#[tokio::test]
async fn the_review_pages_and_the_check_read_one_record_of_open_drafts_and_a_decision_updates_it() {
    use crate::review_access::queue_row;
    let app = spawn_app().await;
    let first = number(&reorder(&app, "r-one", None).await);
    app.clock.advance(chrono::Duration::minutes(3));
    let asked = reorder(&app, "r-two", None).await;
    assert_eq!(asked_about(&asked), first);
    let second = create_another(&app, "r-two", &asked).await;
    // The marker is the one record: nothing else in the table lists a draft as open.
    assert_eq!(marked(&app).await, BTreeSet::from([first.clone(), second.clone()]));
    let other_records: Vec<String> = app
        .scan_all()
        .await
        .iter()
        .filter_map(|item| item["pk"].as_s().ok())
        .filter(|pk| pk.contains("#OPEN#"))
        .cloned()
        .collect();
    assert!(other_records.is_empty(), "{other_records:?}");

    let approver = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let queue = approver.get("/review?status=draft").await;
    let row = queue_row(&queue, &first);
    assert!(row.contains("Possible duplicate") && row.contains(&second), "{row}");

    // The decision takes the second off the marker; the page and the check
    // both read that: no twin is shown, and the next draft asks about the first.
    let decided = approver.decide(&second, "reject", "one is enough").await;
    assert_eq!(decided.status, 303, "{}", decided.body);
    assert_eq!(marked(&app).await, BTreeSet::from([first.clone()]));
    let queue = approver.get("/review?status=draft").await;
    let row = queue_row(&queue, &first);
    assert!(!row.contains("Possible duplicate"), "{row}");
    assert_eq!(asked_about(&reorder(&app, "r-three", None).await), first);

    // Without its marker (deleted by hand) no page shows the first as anyone's twin either.
    let asked = reorder(&app, "r-three", None).await;
    let third = create_another(&app, "r-three", &asked).await;
    let queue = approver.get("/review?status=draft").await;
    assert!(queue_row(&queue, &third).contains(&first));
    app.delete_item(MARKER.0, MARKER.1).await;
    let queue = approver.get("/review?status=draft").await;
    assert!(!queue_row(&queue, &third).contains("Possible duplicate"));
}

/// Presses `button` of the Tryton document of `draft` (its `draft_id` or
/// `quote_id`) as
/// `person`, deciding in Tryton's own client: `cancel` rejects, `quote`
/// approves.
pub(crate) async fn press_in_tryton(app: &TestApp, person: &str, model: &str, draft: &serde_json::Value, button: &str) {
    let tryton = app.tryton.clone().expect("Tryton's REST API").as_user(person);
    let id = draft["draft_id"]
        .as_str()
        .or_else(|| draft["quote_id"].as_str())
        .and_then(|id| id.rsplit('_').next())
        .unwrap_or_default()
        .to_owned();
    let (status, body) = tryton
        .request(
            "POST",
            &format!("{model}/{id}/{button}"),
            None,
            &["state"],
            Some(&serde_json::json!({})),
        )
        .await;
    assert_eq!(status, 200, "{model} {id} {button}: {body}");
}

#[tokio::test]
async fn on_tryton_after_a_decision_made_in_tryton_the_next_drafts_are_created_or_asked() {
    let app = crate::helpers::spawn_app_on(crate::helpers::Backend::Tryton).await;
    let app = &app;
    // A purchase order rejected in Tryton (cancelled), then one approved (quoted).
    for (verdict, button) in [("rejected", "cancel"), ("approved", "quote")] {
        let first = app
            .create_po_draft("buyer-sby", &format!("tryton-{verdict}"), &po_input(verdict))
            .await;
        assert_eq!(first.status, 201, "{:?}", first.body);
        press_in_tryton(app, "approver-sby", "purchase.purchase", &first.body["data"], button).await;
        three_drafts_after(&format!("tryton-po-{verdict}"), |key| async move {
            app.create_po_draft("buyer-sby", &key, &po_input(&key)).await
        })
        .await;
        // What these drafts left open is decided too, before the next verdict.
        let open = app
            .tryton
            .clone()
            .unwrap()
            .search(
                "purchase.purchase",
                serde_json::json!([["state", "=", "draft"], ["party.code", "=", "V-00231"]]),
                &["id"],
            )
            .await;
        for draft in open {
            let draft = serde_json::json!({"draft_id": format!("po_{}", draft["id"])});
            press_in_tryton(app, "approver-sby", "purchase.purchase", &draft, "cancel").await;
        }
    }
    // A quote rejected in Tryton.
    let quote = seeded_quote_again(app, "tryton-quote-first").await;
    assert_eq!(quote.status, 201, "{:?}", quote.body);
    press_in_tryton(app, "approver-bdg", "sale.sale", &quote.body["data"], "cancel").await;
    three_drafts_after("tryton-quote-rejected", |key| async move {
        seeded_quote_again(app, &key).await
    })
    .await;
}

#[tokio::test]
async fn of_concurrent_drafts_that_find_a_corrupt_marker_one_writes_it_anew_and_the_others_ask() {
    use aws_sdk_dynamodb::types::AttributeValue::S;
    let app = spawn_app().await;
    let item = std::collections::HashMap::from([
        ("pk".to_owned(), S(MARKER.0.to_owned())),
        ("sk".to_owned(), S(MARKER.1.to_owned())),
        ("kind".to_owned(), S("near_duplicate".to_owned())),
        ("v".to_owned(), S("not a number".to_owned())),
    ]);
    app.put_item(item).await;
    let before = app.documents("purchase_order").await;
    let runs: Vec<String> = (0..6).map(|i| format!("corrupt-race-{i}")).collect();
    let replies = futures::future::join_all(runs.iter().map(|run| reorder(&app, run, None))).await;
    let created: Vec<String> = replies.iter().filter(|reply| reply.status == 201).map(number).collect();
    let statuses: Vec<u16> = replies.iter().map(|reply| reply.status).collect();
    assert_eq!(created.len(), 1, "one draft, the others ask: {statuses:?}");
    for reply in replies.iter().filter(|reply| reply.status != 201) {
        assert_eq!(asked_about(reply), created[0]);
    }
    assert_eq!(app.documents("purchase_order").await, before + 1);
    assert_eq!(marked(&app).await, BTreeSet::from([created[0].clone()]));
}
