//! The in-progress lease and its fencing condition, against the real engine.

use draftline_server::storage::DynamoTable;
use std::time::Duration;

use draftline_contract::identity::{BranchCode, BranchId, Caller, Scopes, TenantId, UserId};
use draftline_server::idempotency::{Claim, ClaimedWith, Claiming, IdempotencyKey, IdempotencyStore, NextAction};
use serde_json::json;

use crate::helpers::{spawn_app, test_now};

fn buyer() -> Caller {
    Caller::from_verified(
        TenantId::parse("demo").unwrap(),
        BranchId::parse("SBY-01").unwrap(),
        BranchCode::parse("SBY").unwrap(),
        UserId::parse("buyer-sby").unwrap(),
        vec![],
        Scopes::from_claim("purchasing:draft"),
    )
}

/// A claim of use `generation` by `owner` in request `request_id` at
/// `now`, with a lease of 30 s.
fn claiming<'a>(
    generation: &'a str,
    owner: &'a str,
    request_id: &'a str,
    now: chrono::DateTime<chrono::Utc>,
) -> Claiming<'a> {
    Claiming {
        generation,
        tool: "t",
        fingerprint: "fp",
        owner,
        request_id,
        now,
        lease: Duration::from_secs(30),
        ttl: Duration::from_secs(86_400),
        reserved: None,
    }
}

#[tokio::test]
async fn a_stale_worker_cannot_complete_a_key_taken_over_after_its_lease() {
    let app = spawn_app().await;
    let table = DynamoTable::new(app.inspect.clone());
    let caller = buyer();
    let key = IdempotencyKey::parse_header("external-1").unwrap();
    let store = IdempotencyStore::new(&table, &caller, &key);
    let now = test_now();

    let Claim::Acquired(first) = store
        .claim(&claiming("g1", "SBY-01/u", "r1", now), ClaimedWith::default())
        .await
        .unwrap()
    else {
        panic!("the first claim wins");
    };
    // While the lease lives, a second worker learns it is in flight.
    let Claim::Taken(record) = store
        .claim(&claiming("g1", "SBY-01/u", "r2", now), ClaimedWith::default())
        .await
        .unwrap()
    else {
        panic!("the key is held");
    };
    assert!(matches!(
        record.next_action("fp", "SBY-01/u", now),
        NextAction::InFlight(30)
    ));

    // After the lease lapses, a worker that chose a new use of the key
    // (it looked before the first claim) must look again: the first worker
    // may have created a document under the first use's external key ...
    let later = now + chrono::Duration::seconds(31);
    assert!(matches!(
        store
            .claim(&claiming("g-other", "SBY-01/u", "r3", later), ClaimedWith::default())
            .await
            .unwrap(),
        Claim::Taken(_)
    ));
    // ... while a worker continuing that use takes the key over ...
    let Claim::Acquired(second) = store
        .claim(&claiming("g1", "SBY-01/u", "r3", later), ClaimedWith::default())
        .await
        .unwrap()
    else {
        panic!("a lapsed lease can be taken over");
    };
    // ... and the first, stale worker can neither complete nor release it.
    assert!(!store.complete(&first, 201, &json!({"by": "stale"})).await.unwrap());
    assert!(!store.release(&first, Vec::new()).await.unwrap());
    assert!(store.complete(&second, 201, &json!({"by": "second"})).await.unwrap());

    let stored = store.lookup().await.unwrap().unwrap();
    match stored.next_action("fp", "SBY-01/u", later) {
        NextAction::Replay(stored) => assert_eq!(stored.data, json!({"by": "second"})),
        other => panic!("expected a replay, got {other:?}"),
    }
    // Completing twice is refused too: the lease is gone.
    assert!(!store.complete(&second, 201, &json!({"by": "again"})).await.unwrap());
}

#[tokio::test]
async fn a_released_key_can_be_claimed_again() {
    let app = spawn_app().await;
    let caller = buyer();
    let table = DynamoTable::new(app.inspect.clone());
    let key = IdempotencyKey::parse_header("external-2").unwrap();
    let store = IdempotencyStore::new(&table, &caller, &key);
    let now = test_now();
    let Claim::Acquired(token) = store
        .claim(&claiming("g1", "o", "r1", now), ClaimedWith::default())
        .await
        .unwrap()
    else {
        panic!("claimed");
    };
    assert!(store.release(&token, Vec::new()).await.unwrap());
    assert!(matches!(
        store
            .claim(&claiming("g2", "o", "r2", now), ClaimedWith::default())
            .await
            .unwrap(),
        Claim::Acquired(_)
    ));
}
