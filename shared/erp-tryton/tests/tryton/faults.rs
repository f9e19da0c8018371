//! Tryton unreachable, stopped, slow, busy or misconfigured: each failure
//! is the contract's error, says whether a draft may exist, and never
//! shows the key.

use std::sync::Arc;
use std::time::Duration;

use draftline_contract::{ErrorCode, ToolError};
use draftline_erp::port::{Finance, Inventory, Purchasing};
use draftline_erp_tryton::{LocalTryton, TrytonErp, TrytonKey, TrytonSettings};
use serde_json::json;

use crate::drafts::{po_input, prepared_po};
use crate::helpers::{branch, cache_dir, own, sby_po, shared};
use crate::proxy::{Mode, Proxy};

fn kind(err: &ToolError) -> (ErrorCode, bool, Option<u64>) {
    (err.code(), err.may_have_written(), err.retry_after_seconds())
}

const UNAVAILABLE: ErrorCode = ErrorCode::DependencyUnavailable;

#[tokio::test]
async fn a_stopped_tryton_reads_as_unavailable_and_a_create_as_not_written() {
    // A trytond of its own, stopped half-way, on a fresh copy of the demo
    // database (one kept from an earlier run may be of another template).
    let data = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tryton-stopped");
    match std::fs::remove_dir_all(&data) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("removing {}: {e}", data.display()),
    }
    let cache = cache_dir();
    let local = tokio::task::spawn_blocking(move || LocalTryton::start(&cache, &data, &["demo"], None))
        .await
        .unwrap()
        .unwrap();
    let erp = Arc::new(TrytonErp::new(&local.settings("demo").unwrap()).unwrap());
    let sby = branch("SBY-01");
    assert!(erp.item(&sby.scope(), "BRG-0042").await.unwrap().is_some());
    let external = prepared_po(&erp, "dl1-test-stopped", po_input("stopped")).await;
    let url = local.url().to_owned();
    tokio::task::spawn_blocking(move || drop(local)).await.unwrap();
    // Drop stopped trytond: its port refuses connections.
    assert!(std::net::TcpStream::connect(url.trim_start_matches("http://")).is_err());

    let read = erp
        .item(&sby.scope(), "BRG-0042")
        .await
        .map_err(ToolError::from)
        .unwrap_err();
    assert_eq!(kind(&read), (UNAVAILABLE, false, Some(2)));
    assert!(
        read.public_message().contains("Nothing was read or changed."),
        "{}",
        read.public_message()
    );
    let stock = erp
        .item_stock(&sby.scope(), "BRG-0042")
        .await
        .map_err(ToolError::from)
        .unwrap_err();
    assert_eq!(kind(&stock), (UNAVAILABLE, false, Some(2)));
    let create = external.create().await.unwrap_err();
    assert_eq!(kind(&create), (UNAVAILABLE, false, Some(2)));
    assert!(create.public_message().contains("Nothing was created."));
}

#[tokio::test]
async fn a_create_that_got_no_answer_may_have_written_and_a_busy_database_did_not() {
    let db = own();
    let (proxy, mut settings) = Proxy::before(&db.settings).await;
    settings.request_timeout = Duration::from_millis(1500);
    let erp = Arc::new(TrytonErp::new(&settings).unwrap());
    let sby = branch("SBY-01");
    let external = prepared_po(&erp, "dl1-test-faults", po_input("faults")).await;

    proxy.set(Mode::Hang);
    let hung = external.create().await.unwrap_err();
    assert_eq!(kind(&hung), (UNAVAILABLE, true, Some(2)));
    assert!(hung.public_message().contains("may or may not have been created"));
    let read = erp
        .purchase_order(&sby.scope(), &sby_po(1))
        .await
        .map_err(ToolError::from)
        .unwrap_err();
    assert_eq!(kind(&read), (UNAVAILABLE, false, Some(2)));

    proxy.set(Mode::Answer(503));
    assert_eq!(
        kind(&external.create().await.unwrap_err()),
        (UNAVAILABLE, false, Some(1))
    );
    assert_eq!(
        kind(&erp.tax_types(&sby.scope()).await.map_err(ToolError::from).unwrap_err()),
        (UNAVAILABLE, false, Some(2))
    );
    proxy.set(Mode::Answer(502));
    assert_eq!(
        kind(&external.create().await.unwrap_err()),
        (UNAVAILABLE, true, Some(2))
    );
    proxy.set(Mode::Answer(500));
    assert_eq!(kind(&external.create().await.unwrap_err()).0, ErrorCode::InternalError);
    assert_eq!(
        kind(&erp.tax_types(&sby.scope()).await.map_err(ToolError::from).unwrap_err()).0,
        ErrorCode::InternalError
    );

    // Nothing reached Tryton: the next call finds nothing and creates the draft once.
    proxy.set(Mode::Forward);
    assert_eq!(external.find().await.unwrap(), None);
    let created = external.create().await.unwrap();
    assert_eq!(created.document.number, sby_po(1));
    let all = db
        .raw_search(
            "purchase.purchase",
            json!([["warehouse.code", "=", "SBY-01"]]),
            &["number"],
        )
        .await;
    assert_eq!(all.len(), 1 + draftline_erp::demo::agent_purchase_orders().len());
}

#[tokio::test]
async fn a_wrong_key_or_database_is_our_bug_and_never_shows_the_key() {
    let db = shared();
    let sby = branch("SBY-01");
    let wrong = TrytonSettings::new(
        db.settings.url.clone(),
        db.settings.database.clone(),
        TrytonKey::new("not-the-key-0123"),
    )
    .serving("demo");
    let erp = TrytonErp::new(&wrong).unwrap();
    let err = erp
        .item(&sby.scope(), "BRG-0042")
        .await
        .map_err(ToolError::from)
        .unwrap_err();
    assert_eq!(kind(&err), (ErrorCode::InternalError, false, None));
    let shown = format!("{err:?} {err} {}", err.public_message());
    assert!(shown.contains("401"), "{shown}");
    assert!(!shown.contains("not-the-key-0123"), "{shown}");
    assert!(!format!("{erp:?}").contains("not-the-key-0123"));

    let nodb = TrytonSettings::new(db.settings.url.clone(), "no_such_db", db.settings.key.clone()).serving("demo");
    let err = TrytonErp::new(&nodb)
        .unwrap()
        .item(&sby.scope(), "BRG-0042")
        .await
        .map_err(ToolError::from)
        .unwrap_err();
    assert_eq!(kind(&err).0, ErrorCode::InternalError);
    assert!(format!("{err:?}").contains("404"), "{err:?}");
}

#[tokio::test]
async fn nothing_listening_is_unreachable() {
    // A port nothing listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let settings = TrytonSettings::new(format!("http://127.0.0.1:{port}"), "demo", TrytonKey::new("k"));
    let erp = TrytonErp::new(&settings).unwrap();
    let sby = branch("SBY-01");
    let err = erp
        .due_items(&sby.scope(), None, 10)
        .await
        .map_err(ToolError::from)
        .unwrap_err();
    assert_eq!(kind(&err), (UNAVAILABLE, false, Some(2)));
    assert_eq!(erp.requests(), 1, "the failed request is counted");
}

#[tokio::test]
async fn a_burst_of_calls_reaches_tryton_at_most_max_in_flight_at_a_time_and_every_one_is_answered() {
    // trytond runs one request at a time per process: a burst sent at once
    // makes every request as slow as the whole burst and each one times out.
    // The connector queues instead, so each request is as fast as Tryton is.
    let db = shared();
    let (proxy, mut settings) = Proxy::before(&db.settings).await;
    proxy.set(Mode::Slow(300));
    settings.max_in_flight = 3;
    // Twelve requests of 300 ms, three at a time, take 1.2 s: well inside
    // the timeout, which counts from when a request is sent.
    settings.request_timeout = Duration::from_secs(2);
    let erp = TrytonErp::new(&settings).unwrap();
    let sby = branch("SBY-01");
    let scope = sby.scope();
    // A purchase order read is one search, no master data first.
    let numbers: Vec<String> = (1..=12).map(sby_po).collect();
    let calls = numbers.iter().map(|number| erp.purchase_order(&scope, number));
    let answers = futures::future::join_all(calls).await;
    for answer in &answers {
        // An empty search: the document is not there.
        assert!(matches!(answer, Ok(None)), "{answer:?}");
    }
    let (most, answered) = proxy.held();
    assert_eq!(most, 3, "requests held by Tryton at once");
    assert_eq!(answered, 12);
    assert_eq!(erp.requests(), 12);
}
