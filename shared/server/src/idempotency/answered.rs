//! The keys a warm instance answered lately: a hint, never an answer.
//!
//! A draft's key lookup reads the key record together with everything a
//! fresh draft reads (the counterparty, the items, their prices, the
//! near-duplicate marker), because a call cannot know it is a retry before
//! its record is read, and a fresh draft may make only three requests.
//! A retry of a key whose completed record this instance wrote or read is
//! almost certainly a replay: its lookup reads the record alone (still one
//! request), so a replay does not pay for the draft's reads. The key
//! store keeps it ([`super::IdempotencyStore::remembering`]): the pipeline
//! hands the store its reads and never sees the hint. It earns its place:
//! 14.5 % of a replay's instructions (`docs/benchmarks.md`).
//!
//! The table stays the only truth. If the record is gone after all (its
//! TTL passed, or it was removed by hand), the call goes on as a fresh
//! draft whose reads were not in its lookup: the draft reads them itself,
//! one request more, and the answer is the same.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};

/// How many keys an instance remembers; past it, it starts again from none
/// (a hint lost costs the draft's reads in one lookup, nothing more).
const REMEMBERED: usize = 4096;

/// The keys this instance answered with a completed record, each as its
/// record is stored (the tenant, the caller's branch and user, the key's
/// source and value: another user's same key is another record), with when
/// that record expires (epoch seconds).
#[derive(Debug, Default)]
pub struct AnsweredKeys(Mutex<HashMap<String, i64>>);

impl AnsweredKeys {
    /// Notes that the key whose record is at partition `pk` has a
    /// completed record until `expires_at`.
    pub fn remember(&self, pk: &str, expires_at: i64) {
        if let Ok(mut answered) = self.0.lock() {
            if answered.len() >= REMEMBERED {
                answered.clear();
            }
            answered.insert(pk.to_owned(), expires_at);
        }
    }

    /// Whether this instance answered the key whose record is at partition
    /// `pk` with a record that has not expired at `now`.
    pub fn answered(&self, pk: &str, now: DateTime<Utc>) -> bool {
        self.0
            .lock()
            .is_ok_and(|answered| answered.get(pk).is_some_and(|&expires_at| expires_at > now.timestamp()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idempotency::{IdempotencyKey, IdempotencyStore};
    use crate::storage::MemoryTable;

    /// The record partition of `tenant`'s `user`'s key `value`, as the key
    /// store names it.
    fn record(tenant: &str, user: &str, value: &str) -> String {
        let caller = crate::testing::caller(tenant, "SBY-01", user, "purchasing:draft");
        let key = IdempotencyKey::parse_header(value).unwrap();
        IdempotencyStore::new(&MemoryTable::new(), &caller, &key)
            .record_key()
            .pk
    }

    #[test]
    fn a_key_is_answered_for_its_caller_until_its_record_expires() {
        let answered = AnsweredKeys::default();
        let now = DateTime::from_timestamp(1_000, 0).unwrap();
        answered.remember(&record("demo", "buyer-sby", "k-1"), 1_060);
        assert!(answered.answered(&record("demo", "buyer-sby", "k-1"), now));
        assert!(
            !answered.answered(&record("other", "buyer-sby", "k-1"), now),
            "another tenant's key"
        );
        assert!(
            !answered.answered(&record("demo", "approver-sby", "k-1"), now),
            "another user's key"
        );
        assert!(
            !answered.answered(&record("demo", "buyer-sby", "k-2"), now),
            "another key"
        );
        let expired = DateTime::from_timestamp(1_060, 0).unwrap();
        assert!(
            !answered.answered(&record("demo", "buyer-sby", "k-1"), expired),
            "the record expired"
        );
    }

    #[test]
    fn it_remembers_a_bounded_number_of_keys() {
        let answered = AnsweredKeys::default();
        let now = DateTime::from_timestamp(1_000, 0).unwrap();
        for n in 0..=REMEMBERED {
            answered.remember(&format!("T#demo#IDEM#k-{n}"), 2_000);
        }
        assert!(answered.0.lock().unwrap().len() <= REMEMBERED);
        assert!(
            answered.answered(&format!("T#demo#IDEM#k-{REMEMBERED}"), now),
            "the last one stays"
        );
    }
}
