//! One key, one document under every fault (issue 30). A draft's first
//! attempt reaches Tryton, Tryton commits the purchase order, and the
//! answer is lost on the way back (a gateway's 502 or 504, a reset
//! connection, an answer held past the call's deadline). After the lease,
//! a retry takes the claim over and meets a search by key that is refused
//! (503), that hangs until Tryton's request timeout, or a healthy Tryton.
//! Further retries meet a healthy Tryton. In every cell of that matrix
//! Tryton holds exactly one document for the key, the run's counter one
//! draft, every answer is a 2xx or an honest retryable error, and the last
//! answer replays that one document.
//!
//! Two servers share one DynamoDB table and one Tryton database behind a
//! [`FaultyTryton`], as two instances of a deployment do: the first serves
//! the first attempt, the second every retry. The first's call deadline
//! (2 s) comes before Tryton's request timeout (5 s), so an answer held
//! back meets the deadline; the second's Tryton request timeout (1 s) comes
//! before its deadline (3 s), so a search that hangs fails as a read. The
//! lease (4 s) is longer than either deadline; the retries' clock is moved
//! past it rather than waited for.

use std::time::Duration;

use draftline_cli::{LocalErp, LocalOptions};
use draftline_erp_tryton::TrytonSettings;
use serde_json::{Value, json};

use crate::helpers::{Reply, TestApp, spawn_app_on_erp};
use crate::review::po_of;
use crate::tryton_proxy::{Fault, FaultyTryton, Target};

const LEASE: Duration = Duration::from_secs(4);

/// How the first attempt fails, after Tryton committed its document.
#[derive(Debug, Clone, Copy)]
enum First {
    /// A gateway answers this status.
    Gateway(u16),
    /// The connection is reset.
    Reset,
    /// The answer is held past the call's deadline.
    HeldPastDeadline,
    /// A 200 whose record cannot be read (no number).
    Unreadable,
}

/// What the first retry after the lease meets when it searches by key.
#[derive(Debug, Clone, Copy)]
enum Takeover {
    /// The search is answered 503.
    SearchRefused,
    /// The search hangs until Tryton's request timeout.
    SearchHangs,
    /// Tryton is healthy.
    Healthy,
    /// The search misses the document (answered empty), so the create
    /// meets Tryton's refusal of a taken key and reads the document then.
    SearchMissed,
    /// The same, and that second search is answered 503.
    SearchMissedThenRefused,
}

/// The two servers of one row of the matrix, and the proxy before Tryton.
struct Row {
    first: TestApp,
    retries: TestApp,
    proxy: FaultyTryton,
}

async fn row() -> Row {
    let database = tokio::task::spawn_blocking(crate::tryton::fresh_database)
        .await
        .unwrap();
    let proxy = FaultyTryton::start(&database.url).await;
    let first = spawn_app_on_erp(
        LocalErp::Tryton(TrytonSettings {
            url: proxy.url(),
            request_timeout: Duration::from_secs(5),
            ..database.clone()
        }),
        LocalOptions {
            call_deadline: Some(Duration::from_secs(2)),
            lease: Some(LEASE),
            ..LocalOptions::default()
        },
    )
    .await;
    let retries = spawn_app_on_erp(
        LocalErp::Tryton(TrytonSettings {
            url: proxy.url(),
            request_timeout: Duration::from_secs(1),
            ..database
        }),
        LocalOptions {
            dynamodb_endpoint: first.server.app.config().dynamodb_endpoint.clone(),
            call_deadline: Some(Duration::from_secs(3)),
            lease: Some(LEASE),
            ..LocalOptions::default()
        },
    )
    .await;
    Row { first, retries, proxy }
}

/// A purchase order of one vendor's item per cell: the cells of a row share
/// a database, and the near-duplicate question stays on.
fn order(cell: Takeover, client_ref: &str) -> Value {
    let (vendor, item, qty, uom) = match cell {
        Takeover::SearchRefused | Takeover::SearchMissed => ("V-00231", "BRG-0042", 1, "BOX"),
        Takeover::SearchHangs | Takeover::SearchMissedThenRefused => ("V-00415", "BLT-0107", 1, "BOX"),
        Takeover::Healthy => ("V-00508", "OIL-0310", 10, "L"),
    };
    po_of(client_ref, vendor, item, qty, uom)
}

/// Asserts `reply` is a 2xx or a retryable error that does not claim that
/// nothing exists: the first attempt committed a document.
fn assert_honest(reply: &Reply, when: &str) {
    if (200..300).contains(&reply.status) {
        return;
    }
    let message = reply.message();
    assert!(
        matches!(reply.status, 409 | 503),
        "{when}: {} {:?}",
        reply.status,
        reply.body
    );
    assert_eq!(reply.body["error"]["retryable"], true, "{when}: {:?}", reply.body);
    assert!(reply.header("retry-after").is_some(), "{when}: {:?}", reply.headers);
    for untrue in [
        "Nothing was created",
        "No draft was created",
        "Nothing was read or changed",
        "nothing was written",
    ] {
        assert!(!message.contains(untrue), "{when}: says '{untrue}': {message}");
    }
}

async fn draft(app: &TestApp, body: &Value, headers: &[(&str, String)]) -> Reply {
    app.call("buyer-sby", "purchasing_create_po_draft", body, headers).await
}

/// One cell: the first attempt fails as `first`, the first retry after the
/// lease meets `takeover`, later retries a healthy Tryton.
async fn cell(row: &Row, first: First, takeover: Takeover) {
    let name: String = format!("{first:?}-{takeover:?}")
        .to_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let (key, run) = (format!("key-{name}"), format!("run-{name}"));
    let body = order(takeover, &key);
    let headers = [("idempotency-key", key.clone()), ("x-agent-run-id", run.clone())];
    let call = |app| draft(app, &body, &headers);
    let rest = row.first.tryton.as_ref().unwrap();
    let documents = || async {
        rest.search(
            "purchase.purchase",
            json!([["drafted_by_agent_run", "=", run.as_str()]]),
            &["number"],
        )
        .await
    };
    let counter = crate::helpers::run_counter("buyer-sby", &run);
    let mut answers = Vec::new();

    // 1. The first attempt: Tryton commits, the answer is lost.
    row.proxy.then(
        Target::CreatePurchase,
        match first {
            First::Gateway(status) => Fault::AnswerAfter(status),
            First::Reset => Fault::ResetAfter,
            First::HeldPastDeadline => Fault::HoldAfter,
            First::Unreadable => Fault::UnreadableAfter,
        },
    );
    let reply = call(&row.first).await;
    assert_eq!(reply.status, 503, "{name}: first attempt: {:?}", reply.body);
    assert!(
        reply.message().contains("may or may not have been created"),
        "{name}: {}",
        reply.message()
    );
    answers.push(reply);
    let committed = documents().await;
    assert_eq!(
        committed.len(),
        1,
        "{name}: Tryton committed the first attempt: {committed:?}"
    );
    let number = committed[0]["number"].as_str().unwrap().to_owned();

    // 2. After the lease, the retry takes the claim over and searches by key.
    row.retries
        .clock
        .advance(chrono::Duration::from_std(LEASE).unwrap() + chrono::Duration::seconds(1));
    match takeover {
        Takeover::SearchRefused => row.proxy.then(Target::FindPurchaseByKey, Fault::Refuse(503)),
        Takeover::SearchHangs => row.proxy.then(Target::FindPurchaseByKey, Fault::Hang),
        Takeover::Healthy => {}
        Takeover::SearchMissed => row.proxy.then(Target::FindPurchaseByKey, Fault::Missed),
        Takeover::SearchMissedThenRefused => {
            row.proxy.then(Target::FindPurchaseByKey, Fault::Missed);
            row.proxy.then(Target::FindPurchaseByKey, Fault::Refuse(503));
        }
    }
    let created = row.proxy.seen(Target::CreatePurchase);
    let searched = row.proxy.seen(Target::FindPurchaseByKey);
    let reply = call(&row.retries).await;
    let (searches, creates) = match takeover {
        Takeover::SearchRefused | Takeover::SearchHangs | Takeover::Healthy => (1, 0),
        // The search missed; the create met the taken key; a search again.
        Takeover::SearchMissed | Takeover::SearchMissedThenRefused => (2, 1),
    };
    assert_eq!(
        (
            row.proxy.seen(Target::FindPurchaseByKey) - searched,
            row.proxy.seen(Target::CreatePurchase) - created
        ),
        (searches, creates),
        "{name}: the takeover searched by key before it created"
    );
    assert_honest(&reply, &format!("{name}: takeover"));
    if reply.status == 503 {
        // The takeover kept the claim: until its lease lapses the key is in
        // flight, and the answer said to wait that long.
        assert!(
            reply.message().contains("may or may not have been created"),
            "{name}: {}",
            reply.message()
        );
        let wait: u64 = reply.header("retry-after").unwrap().parse().unwrap();
        assert!(
            wait >= LEASE.as_secs() - 1,
            "{name}: Retry-After {wait}: {:?}",
            reply.body
        );
        let early = call(&row.retries).await;
        assert_eq!(early.status, 409, "{name}: {:?}", early.body);
        assert_honest(&early, &format!("{name}: within the takeover's lease"));
        answers.push(reply);
        answers.push(early);
    } else {
        answers.push(reply);
    }

    // 3. Further retries, Tryton healthy, until one is answered with the
    //    document; the clock is moved past each lease the answer names.
    let mut rounds = 0;
    while !(200..300).contains(&answers.last().unwrap().status) {
        rounds += 1;
        assert!(rounds <= 4, "{name}: no document after {rounds} retries: {answers:#?}");
        row.retries
            .clock
            .advance(chrono::Duration::from_std(LEASE).unwrap() + chrono::Duration::seconds(1));
        let reply = call(&row.retries).await;
        assert_honest(&reply, &format!("{name}: retry {rounds}"));
        answers.push(reply);
    }
    let found = answers.last().unwrap();
    assert_eq!(
        found.body["data"]["po_number"],
        number.as_str(),
        "{name}: {:?}",
        found.body
    );

    // 4. From now on the key replays that one document.
    let replay = call(&row.retries).await;
    assert_eq!(replay.status, 200, "{name}: {:?}", replay.body);
    assert_eq!(replay.body["replayed"], true);
    assert_eq!(replay.body["data"]["po_number"], number.as_str());

    let documents = documents().await;
    assert_eq!(documents.len(), 1, "{name}: one document for the key: {documents:?}");
    assert_eq!(
        row.retries.number(&counter, "USE", "drafts").await,
        1,
        "{name}: the run's counter counts one draft"
    );
    assert_eq!(row.proxy.pending(), 0, "{name}: every fault was met");
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    eprintln!("{name}: {statuses:?} then 200 (replay of {number})");
}

/// Every takeover of one row, in turn, on one pair of servers.
async fn every_takeover_after(first: First) {
    let row = row().await;
    for takeover in [Takeover::SearchRefused, Takeover::SearchHangs, Takeover::Healthy] {
        cell(&row, first, takeover).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_draft_answered_502_stays_one_document_whatever_its_takeover_meets() {
    every_takeover_after(First::Gateway(502)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_draft_answered_504_stays_one_document_whatever_its_takeover_meets() {
    every_takeover_after(First::Gateway(504)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_draft_whose_connection_was_reset_stays_one_document_whatever_its_takeover_meets() {
    every_takeover_after(First::Reset).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_draft_held_past_the_deadline_stays_one_document_whatever_its_takeover_meets() {
    every_takeover_after(First::HeldPastDeadline).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_draft_whose_answer_is_unreadable_stays_one_document_whatever_its_takeover_meets() {
    every_takeover_after(First::Unreadable).await;
}

/// A search that misses what Tryton holds (a stale read) is not the last
/// line: Tryton refuses a second document for the key, and the takeover
/// reads the first one then, or, if it cannot, says it may exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_whose_search_missed_meets_the_taken_key_and_returns_the_one_document() {
    let row = row().await;
    for takeover in [Takeover::SearchMissed, Takeover::SearchMissedThenRefused] {
        cell(&row, First::Gateway(502), takeover).await;
    }
}
