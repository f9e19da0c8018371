//! Writing key records to DynamoDB.
//!
//! A draft's key record goes into the draft's single `TransactWriteItems` as
//! its first item, conditioned on the key being free; when it is not, the
//! cancellation reason carries the stored record (`ALL_OLD`), so the losing
//! call learns replay / conflict / in-flight without another read.
//!
//! Work that cannot share a transaction (a call to another system) instead
//! [`claim`](IdempotencyStore::claim)s the key `IN_PROGRESS` with a lease and
//! [`complete`](IdempotencyStore::complete)s it under a condition on its own
//! lease token, so a worker whose lease lapsed and was taken over can never
//! overwrite the new holder's result (fencing): `lease.rs`.

mod lease;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::answered::AnsweredKeys;
use super::key::IdempotencyKey;
use super::record::{IdempotencyRecord, RecordStatus};
use super::transaction::{KeyTransaction, Part};
use crate::policy::{CounterKind, Reservation};
use crate::storage::Table;
use draftline_contract::error::ToolError;
use draftline_contract::identity::Caller;
use draftline_contract::store::{
    Attributes, Cancelled, Condition, Found, TableKey, TransactFailure, Value, Write, cancelled_error,
};

const NO_DRAFT: &str = "No draft was created.";

/// The sort key of every key record.
const RECORD_SK: &str = "IDEM";

/// A record's `status` while its key is claimed.
const IN_PROGRESS: &str = "IN_PROGRESS";

/// Whether a claim's lease lapsed by `now`.
fn lapsed(now: DateTime<Utc>) -> Condition {
    Condition::All(vec![
        Condition::Equals("status".to_owned(), Value::s(IN_PROGRESS)),
        Condition::AtMost("lease_until".to_owned(), now.timestamp_millis()),
    ])
}

/// Whether no record answers for the key at `now`: absent, or expired
/// but not yet swept by TTL.
fn unanswered(now: DateTime<Utc>) -> [Condition; 2] {
    [
        Condition::Absent("pk".to_owned()),
        Condition::AtMost("expires_at".to_owned(), now.timestamp()),
    ]
}

/// Condition under which a key may be (re)written: absent, expired but not
/// yet swept by TTL, or in progress with a lapsed lease.
fn key_is_free(now: DateTime<Utc>) -> Condition {
    let [absent, expired] = unanswered(now);
    Condition::Any(vec![absent, expired, lapsed(now)])
}

/// A key a draft in another system may claim for `generation`: free, and
/// either new (absent or expired: any generation starts) or a lapsed claim
/// of that same generation (a takeover continues the same use of the key;
/// a call that chose a new generation before another worker claimed and
/// lapsed must look again rather than create a second document).
fn claimable(now: DateTime<Utc>, generation: &str) -> Condition {
    let [absent, expired] = unanswered(now);
    let Condition::All(mut lapsed) = lapsed(now) else {
        return Condition::Any(vec![absent, expired]);
    };
    lapsed.push(Condition::Any(vec![
        Condition::Equals("generation".to_owned(), Value::s(generation)),
        Condition::Absent("generation".to_owned()),
    ]));
    Condition::Any(vec![absent, expired, Condition::All(lapsed)])
}

/// Whether `token` still holds the key's lease.
fn held_by(token: &LeaseToken) -> Condition {
    Condition::All(vec![
        Condition::Equals("status".to_owned(), Value::s(IN_PROGRESS)),
        Condition::Equals("lease_token".to_owned(), Value::s(&token.0)),
    ])
}

/// Why a draft's transaction did not commit. In every case nothing of it
/// was written, except [`CommitFailure::Store`] with an uncertain outcome.
#[derive(Debug)]
pub enum CommitFailure {
    /// The key is taken; the stored record, if DynamoDB returned it.
    KeyTaken(Option<Box<IdempotencyRecord>>),
    /// Another transaction was writing this very key at the same moment:
    /// a call with the same key is in flight.
    KeyInFlight,
    /// A document item's condition failed or another transaction touched it
    /// (its number was taken): prepare the draft again.
    Contention,
    /// Another transaction was moving one of the limit counters at the same
    /// moment, and nothing else stood in the way: the same commit may be
    /// sent again, the draft as prepared (DynamoDB's `TransactionConflict`
    /// on a counter item only).
    CountersContended,
    /// The condition of the counter of one limit kind failed: the draft
    /// would pass a limit of the tenant's policy. `stored` is the counter
    /// as it was.
    OverLimit {
        /// Which counter.
        counter: CounterKind,
        /// The counter as stored (`None`: nothing counted yet).
        stored: Option<Attributes>,
    },
    /// The person's "create another" answer the draft consumes was used
    /// already ([`crate::confirm::Consumption`]).
    AnswerUsed,
    /// DynamoDB failed; the error says whether the draft may exist.
    Store(ToolError),
}

/// A lease holder's proof.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseToken(String);

impl LeaseToken {
    /// The token text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The result of trying to claim a key.
#[derive(Debug)]
pub enum Claim {
    /// This caller holds the key until the lease ends.
    Acquired(LeaseToken),
    /// The key is taken; here is its record.
    Taken(Box<IdempotencyRecord>),
    /// The person's "create another" answer the claim consumes was used already.
    AnswerUsed,
    /// The condition of the counter of one limit kind failed: nothing was
    /// claimed or counted.
    OverLimit {
        /// Which counter.
        counter: CounterKind,
        /// The counter as stored (`None`: nothing counted yet).
        stored: Option<Attributes>,
    },
    /// Another transaction wrote a counter of the claim at the same moment:
    /// nothing was claimed or counted; claim again.
    Contended,
}

/// What a claim records: which use of the key, for which call, under which
/// lease, and what it reserved of the tenant's limits.
#[derive(Debug, Clone, Copy)]
pub struct Claiming<'a> {
    /// The use of the key ([`IdempotencyRecord::generation`]).
    pub generation: &'a str,
    /// The tool called.
    pub tool: &'a str,
    /// Fingerprint of tool + validated input.
    pub fingerprint: &'a str,
    /// Who claims (`<branch>/<user>`).
    pub owner: &'a str,
    /// The claiming request.
    pub request_id: &'a str,
    /// When.
    pub now: DateTime<Utc>,
    /// How long the claim holds before another caller may take it over.
    pub lease: Duration,
    /// How long the key record lives.
    pub ttl: Duration,
    /// What the claim counted of the tenant's limits (or carries on from the
    /// lapsed claim it takes over).
    pub reserved: Option<&'a Reservation>,
}

/// Items a claim writes in its own transaction.
#[derive(Debug, Default)]
pub struct ClaimedWith {
    /// The consumption of a person's "create another" answer.
    pub consuming: Option<Write>,
    /// The limit counters' updates, by kind ([`crate::policy::Counting::items`]).
    pub counting: Vec<(CounterKind, Write)>,
}

/// The record of one key of one caller (tenant, branch, user): its reads
/// and writes, with the key as stored worked out once.
#[derive(Debug, Clone)]
pub struct IdempotencyStore<'a> {
    table: &'a dyn Table,
    caller: &'a Caller,
    key: &'a IdempotencyKey,
    /// The key as stored ([`IdempotencyKey::storage_key`]).
    stored: String,
    /// The record's partition key: one record per tenant, branch, user
    /// and key (its source and value).
    pk: String,
    /// The keys this instance answered lately, when it keeps them.
    answered: Option<&'a AnsweredKeys>,
}

impl<'a> IdempotencyStore<'a> {
    /// The store of `caller`'s record of `key`.
    pub fn new(table: &'a dyn Table, caller: &'a Caller, key: &'a IdempotencyKey) -> Self {
        let stored = key.storage_key(caller);
        Self {
            table,
            caller,
            key,
            pk: format!("T#{}#IDEM#{stored}", caller.tenant()),
            stored,
            answered: None,
        }
    }

    /// The SHA-256 (hex) of the tenant, the key as stored and `part`: a
    /// name of `part` unique per tenant and key that says nothing about
    /// either (a transaction's request token, the ERP's draft key).
    pub fn digest(&self, part: &str) -> String {
        let mut digest = Sha256::new();
        for part in [self.caller.tenant().as_str(), &self.stored, part] {
            digest.update(part.as_bytes());
            digest.update([0]);
        }
        hex::encode(digest.finalize())
    }

    /// The record's key in the table.
    pub fn record_key(&self) -> TableKey {
        TableKey {
            pk: self.pk.clone(),
            sk: RECORD_SK.to_owned(),
        }
    }

    /// The store, noting the keys it finds or writes completed in
    /// `answered`, so that their retries look the record up alone
    /// ([`Self::look_up`]).
    pub fn remembering(self, answered: &'a AnsweredKeys) -> Self {
        Self {
            answered: Some(answered),
            ..self
        }
    }

    /// The stored record of `key`, read in one request with the items at
    /// `along` and those `reads` gives (a draft's own), unless this
    /// instance answered the key lately: then the call is almost certainly
    /// a replay, and `reads` is not asked (a record gone after all makes a
    /// draft that reads its data itself). Returns the record, what was
    /// found along, and whether `reads` was read.
    pub async fn look_up(
        &self,
        mut along: Vec<TableKey>,
        reads: impl FnOnce() -> Option<Vec<TableKey>>,
        now: DateTime<Utc>,
    ) -> Result<(Option<IdempotencyRecord>, Found, bool), ToolError> {
        let answered = self.answered.is_some_and(|known| known.answered(&self.pk, now));
        let reads = if answered { None } else { reads() };
        let reading = reads.is_some();
        along.extend(reads.into_iter().flatten());
        let (record, found) = self.lookup_along(along).await?;
        if let (Some(known), Some(record)) = (self.answered, &record)
            && record.status == RecordStatus::Completed
        {
            known.remember(&self.pk, record.expires_at);
        }
        Ok((record, found, reading))
    }

    /// `record` as the key's item.
    fn item(&self, record: &IdempotencyRecord) -> Attributes {
        let TableKey { pk, sk } = self.record_key();
        let mut item = record.to_attributes();
        item.insert("pk".to_owned(), Value::S(pk));
        item.insert("sk".to_owned(), Value::S(sk));
        item
    }

    /// The stored record of the key (one strongly consistent read).
    pub async fn lookup(&self) -> Result<Option<IdempotencyRecord>, ToolError> {
        Ok(self.lookup_along(Vec::new()).await?.0)
    }

    /// The stored record for `key` and, in the same request, the items at
    /// `along` that exist (the tenant's policy, the run's counter, a
    /// draft's own reads): one strongly consistent read, so what the draft
    /// also needs costs no round trip of its own.
    pub async fn lookup_along(&self, along: Vec<TableKey>) -> Result<(Option<IdempotencyRecord>, Found), ToolError> {
        let record_key = self.record_key();
        let mut keys = Vec::with_capacity(1 + along.len());
        keys.push(record_key.clone());
        keys.extend(along);
        let mut found = Found::of(self.table.get(keys, NO_DRAFT).await?);
        let record = found.take(&record_key).and_then(IdempotencyRecord::from_item);
        Ok((record, found))
    }

    /// The transaction that writes `record` if the key is free; its other
    /// parts are added to it.
    pub fn put_record(&self, record: &IdempotencyRecord, now: DateTime<Utc>) -> KeyTransaction {
        let put = Write::PutIf(self.item(record), Some(key_is_free(now)));
        let mut transaction = KeyTransaction::of(put);
        transaction.answers_until = (record.status == RecordStatus::Completed).then_some(record.expires_at);
        transaction
    }

    /// Commits `transaction` (its record from [`put_record`](Self::put_record),
    /// or a claim's, completion's or release's). `attempt` names this attempt
    /// uniquely (the audit item's own id is used): with the tenant and the
    /// stored key it makes the `ClientRequestToken`, so the SDK's own
    /// retries of this attempt are idempotent and no two attempts, keys or
    /// tenants share one. A cancellation is read back by the part that
    /// refused: the key's own reason first (a replay wins over a limit),
    /// then a person's answer used, then a limit counter.
    pub async fn commit(&self, transaction: KeyTransaction, attempt: &str) -> Result<(), CommitFailure> {
        let token = self.digest(attempt);
        let answers_until = transaction.answers_until;
        let (writes, parts) = transaction.into_writes();
        let failure = match self.table.transact(writes, &token[..36], NO_DRAFT).await {
            Ok(()) => {
                // A retry of this key reaching this instance reads the record alone.
                if let (Some(known), Some(until)) = (self.answered, answers_until) {
                    known.remember(&self.pk, until);
                }
                return Ok(());
            }
            Err(failure) => failure,
        };
        let TransactFailure::Cancelled(reasons) = &failure else {
            return Err(match failure {
                TransactFailure::Failed(err) => CommitFailure::Store(err),
                _ => CommitFailure::Contention,
            });
        };
        let refused: Vec<(Part, &Cancelled)> = parts.iter().copied().zip(reasons).collect();
        let failed = |wanted: fn(Part) -> bool| {
            refused
                .iter()
                .find(|(part, reason)| wanted(*part) && matches!(reason, Cancelled::ConditionFailed(_)))
        };
        for (part, reason) in &refused {
            match (part, reason) {
                (Part::Record, Cancelled::ConditionFailed(item)) => {
                    let record = item.clone().and_then(IdempotencyRecord::from_item).map(Box::new);
                    return Err(CommitFailure::KeyTaken(record));
                }
                (Part::Record, Cancelled::Conflict) => return Err(CommitFailure::KeyInFlight),
                _ => {}
            }
        }
        if failed(|part| part == Part::Answer).is_some() {
            return Err(CommitFailure::AnswerUsed);
        }
        if let Some((Part::Counter(counter), Cancelled::ConditionFailed(stored))) =
            failed(|part| matches!(part, Part::Counter(_)))
        {
            return Err(CommitFailure::OverLimit {
                counter: *counter,
                stored: stored.clone(),
            });
        }
        let on_counter = |part: &Part| matches!(part, Part::Counter(_));
        let contended = refused
            .iter()
            .any(|(part, reason)| on_counter(part) && matches!(reason, Cancelled::Conflict));
        let in_the_way = refused.iter().any(|(part, reason)| {
            !on_counter(part) && matches!(reason, Cancelled::ConditionFailed(_) | Cancelled::Conflict)
        });
        if contended && !in_the_way {
            return Err(CommitFailure::CountersContended);
        }
        if failure.lost_a_race() {
            // A document item's condition failed or another transaction held
            // one (its number was taken): prepare again.
            return Err(CommitFailure::Contention);
        }
        // Throttling or capacity reasons: DynamoDB applied nothing.
        Err(CommitFailure::Store(cancelled_error(reasons, NO_DRAFT)))
    }
}
