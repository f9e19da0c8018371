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
    let state = asked.body["error"]["inputRequired"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = number(&reorder(&app, "r-18", Some(format!("create-another {state}"))).await);
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
        let state = asked.body["error"]["inputRequired"]["requestState"]
            .as_str()
            .unwrap()
            .to_owned();
        created.push(number(
            &reorder(&app, &run, Some(format!("create-another {state}"))).await,
        ));
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
