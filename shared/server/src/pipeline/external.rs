//! The draft of a document in another system (the ERP), which cannot share
//! draftline's transaction: claim the key under a lease, find or create
//! the document carrying the key, complete the key under the lease.

use serde_json::Value;

use super::held::{Held, Recorded, in_flight};
use super::{App, DRAFT_ATTEMPTS, Served};
use crate::confirm;
use crate::edge::trace::{self, Stage};
use crate::idempotency::record::seconds_until;
use crate::idempotency::{Claim, ClaimedWith, Claiming, IdempotencyStore, LeaseToken};
use crate::policy::{Attempt, Gate, Reservation, Sending};
use draftline_contract::ErpError;
use draftline_contract::error::ToolError;
use draftline_contract::tool::{Answer, ExternalDocument, Stakes};

impl App {
    /// The draft path of a document in another system (the ERP), which
    /// cannot share draftline's transaction: claim the key with a lease,
    /// reserving what the draft counts of the tenant's limits → find the
    /// document an earlier worker may have created with this key, else
    /// create it (carrying the key) → complete the key record and write the
    /// audit item and the draft's event in one transaction, only while the
    /// lease holds.
    pub(super) async fn draft_external(
        &self,
        held: &Held<'_>,
        generation: &Generation,
        (external, answer, stakes): (&dyn ExternalDocument, Answer<Value>, &Stakes),
        mut gate: Gate<'_>,
    ) -> Served {
        let key_facts = || Some(held.key_facts.clone());
        let fail = |err: ToolError| Served::unaudited(Err(err), key_facts());
        let claimed_at = self.clock.now();
        let (token, reserved) = match self.claim_external(held, generation, &mut gate).await {
            Ok(Claimed::Held(token, reserved)) => (token, reserved),
            Ok(Claimed::Answered(answer)) => return Served::unaudited(answer, key_facts()),
            Err(err) => return fail(err),
        };
        let placing = async {
            match generation {
                // A worker continuing a lapsed claim looks first: the earlier
                // worker may have created the document and died (or lost its
                // answer) before completing the key, and its document
                // carries the same external key.
                Generation::Continued { .. } => match external.find().await {
                    Ok(Some(created)) => Ok(created),
                    Ok(None) => external.create().await.map_err(Placing::Create),
                    Err(err) => Err(Placing::Unchecked(err)),
                },
                // A new use of the key cannot have a document yet.
                Generation::New(_) => external.create().await.map_err(Placing::Create),
            }
        };
        let created = match trace::stage(Stage::Erp, placing).await {
            Ok(created) => created,
            Err(failed) => {
                let claim = (&token, reserved.as_ref(), claimed_at);
                return fail(self.placing_failed(held, generation, claim, failed).await);
            }
        };
        let output = match answer(&created) {
            Ok(output) => output,
            Err(err) => return fail(err),
        };
        let Recorded {
            result: success,
            record,
            audit,
            event,
            ..
        } = self.record_created(held, output, (created.document, stakes));
        let completing = (gate.label().on(audit).put(), event.put());
        let completed = trace::stage(
            Stage::Idempotency,
            held.store.complete_with(&token, &record, completing),
        )
        .await;
        match completed {
            Ok(true) => Served::audited(success, key_facts()),
            // Another worker took the key over after our lease lapsed; it
            // finds this same document by its key and completes the record.
            Ok(false) => Served::unaudited(success, key_facts()),
            Err(err) => fail(err),
        }
    }

    /// What a failed placing in the ERP tells the call, under the claim
    /// `(token, reserved, claimed_at)`: a new use whose create definitely
    /// wrote nothing gives the key back at once; any other keeps the claim
    /// until its lease lapses, and a retry before then is in flight.
    async fn placing_failed(
        &self,
        held: &Held<'_>,
        generation: &Generation,
        (token, reserved, claimed_at): (&LeaseToken, Option<&Reservation>, chrono::DateTime<chrono::Utc>),
        failed: Placing,
    ) -> ToolError {
        // The claim's lease, from when it was taken.
        let lease_ends = claimed_at
            .timestamp_millis()
            .saturating_add(self.config.lease.as_millis() as i64);
        let lease_left = seconds_until(lease_ends, self.clock.now());
        match (generation, failed) {
            // Nothing was created by a new use: the key, the person's answer
            // consumed with it and the limits it reserved are free again at
            // once, in one transaction.
            (Generation::New(_), Placing::Create(err)) if !err.may_have_written() => {
                let released = trace::stage(Stage::Idempotency, self.release_external(held, token, reserved)).await;
                if let Err(release) = released {
                    tracing::warn!(error = %release, "a claimed key was not released; its lease will lapse");
                }
                ToolError::from(err)
            }
            // The write may have happened: the claim, and what it reserved,
            // stays until its lease lapses; the next call then looks for the
            // document by its key, and counts nothing again.
            (Generation::New(_), Placing::Create(err)) => ToolError::from(err),
            // A takeover never releases: the earlier use may have written,
            // whatever this attempt met. The record keeps that use (its
            // generation) and its reservation, and whoever holds the key
            // next looks for its document before creating one.
            (Generation::Continued { .. }, Placing::Unchecked(err)) => ToolError::erp_unchecked(err, lease_left),
            (Generation::Continued { .. }, Placing::Create(err)) => {
                ToolError::from(err).retry_no_sooner_than(lease_left)
            }
            (Generation::New(_), Placing::Unchecked(err)) => ToolError::from(err),
        }
    }

    /// Claims the draft's key for `generation`, with the consumption of the
    /// person's answer and the limit counters `gate` hands it in the
    /// claim's transaction. A new use of the key counts the draft; a
    /// takeover of a lapsed claim carries on what that claim reserved and
    /// counts nothing again (its gate has no counters).
    async fn claim_external(
        &self,
        held: &Held<'_>,
        generation: &Generation,
        gate: &mut Gate<'_>,
    ) -> Result<Claimed, ToolError> {
        let (call, key) = (held.call, held.key);
        let reserved = match generation {
            Generation::New(_) => gate.reservation(),
            Generation::Continued { reserved, .. } => reserved.clone(),
        };
        let reserving = reserved.as_ref();
        let busy = || ToolError::Busy {
            message: format!(
                "Other drafts of this agent run or person were being counted against the tenant's limits at the \
                 same moment, and this draft lost the race {DRAFT_ATTEMPTS} times. No draft was created and nothing \
                 was counted. Retry this same call unchanged (key '{key}') in a second."
            ),
            retry_after_seconds: 1,
        };
        let claimed = gate.settle(|Sending { counters, .. }| async move {
            // A person's "create another" is consumed with the claim, before
            // the ERP write. A lapsed claim of this same key taken over
            // consumed it already (the answer is bound to this key): it is
            // not consumed again.
            let consuming = match (held.consumption, generation) {
                (Some(consumption), Generation::New(_)) => Some(consumption.put(call.caller, call.request_id)),
                _ => None,
            };
            let claiming = Claiming {
                generation: generation.id(),
                tool: held.name,
                fingerprint: &held.key_facts.fingerprint,
                owner: held.owner,
                request_id: call.request_id,
                now: self.clock.now(),
                lease: self.config.lease,
                ttl: self.config.idempotency_ttl,
                reserved: reserving,
            };
            let with = ClaimedWith {
                consuming,
                counting: counters,
            };
            let claimed = trace::stage(Stage::Idempotency, held.store.claim(&claiming, with)).await?;
            Ok(match claimed {
                Claim::Acquired(token) => Attempt::Done(Ok(token)),
                Claim::OverLimit { counter, stored } => Attempt::Over(counter, stored),
                // Another draft moved the same counter at the same moment.
                Claim::Contended => Attempt::Contended(Err(Claim::Contended)),
                refused => Attempt::Done(Err(refused)),
            })
        });
        match claimed.await? {
            Ok(token) => Ok(Claimed::Held(token, reserved)),
            Err(Claim::AnswerUsed) => Err(confirm::already_used()),
            Err(Claim::Taken(record)) => {
                let answer = self
                    .answer_from_record(&record, key, &held.key_facts.fingerprint, held.owner)
                    .unwrap_or_else(|| Err(in_flight(key, 1)));
                Ok(Claimed::Answered(answer))
            }
            // Still contended after a few attempts (an acquired claim or one
            // over its limit never ends here).
            Err(Claim::Contended | Claim::Acquired(_) | Claim::OverLimit { .. }) => Err(busy()),
        }
    }

    /// Gives the claim of a new use of the key whose ERP write definitely
    /// did not happen back, in one transaction with the person's answer
    /// consumed with it and the limits it reserved. A takeover never comes
    /// here: the use it continues may have written.
    async fn release_external(
        &self,
        held: &Held<'_>,
        token: &LeaseToken,
        reserved: Option<&Reservation>,
    ) -> Result<bool, ToolError> {
        let mut giving_back = Vec::new();
        if let Some(consumption) = held.consumption {
            giving_back.push(consumption.give_back(held.call.caller));
        }
        if let Some(reserved) = reserved {
            giving_back.extend(reserved.give_back());
        }
        held.store.release(token, giving_back).await
    }
}

/// How placing a draft in the ERP failed.
enum Placing {
    /// The search for the document an earlier attempt may have created
    /// failed: whether it exists is unknown.
    Unchecked(ErpError),
    /// The create failed; the error says whether it may have written.
    Create(ErpError),
}

/// What claiming a draft's key came to.
enum Claimed {
    /// This worker holds the key (and what its claim reserved) until the
    /// lease ends; observe mode may have let a limit pass.
    Held(LeaseToken, Option<Reservation>),
    /// The key's record answers the call (a replay, a conflict, in flight).
    Answered(Result<super::Success, ToolError>),
}

/// Which use of an idempotency key a draft is: the external key of its
/// document depends on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Generation {
    /// A new use: no document can carry its key yet.
    New(String),
    /// The use of a claim whose worker's lease lapsed: its document may
    /// exist, and what it reserved of the tenant's limits is kept.
    Continued {
        /// The use.
        id: String,
        /// What the lapsed claim counted.
        reserved: Option<Reservation>,
    },
}

impl Generation {
    pub(super) fn id(&self) -> &str {
        match self {
            Self::New(id) | Self::Continued { id, .. } => id,
        }
    }
}

/// The key as an external system stores it (`draftline_key`): the SHA-256
/// of the tenant, the stored key and the use of it (`generation`, kept by a
/// worker that takes a lapsed claim over), so it is unique per tenant,
/// caller's key and use, bounded in length, and says nothing about either.
pub(super) fn external_key(store: &IdempotencyStore<'_>, generation: &str) -> String {
    format!("dl1-{}", store.digest(generation))
}

#[cfg(test)]
mod tests {
    use draftline_contract::identity::{BranchCode, BranchId, Caller, Scopes, TenantId, UserId};
    use serde_json::Value;

    use super::*;

    /// The use the demo seeds its agent drafts' keys under: a real use is a
    /// ULID, so no call ever forms one of these keys.
    const DEMO_SEED_USE: &str = "demo-seed";

    /// The demo story (draftline-erp's `demo/demo.json`) gives the Tryton
    /// seed the `draftline_key` of each agent draft: the key the server would
    /// have sent for the agent run's idempotency key (`<run>:<client_ref>` of
    /// the person it drafted for, in the draft's branch).
    #[test]
    fn the_demo_files_draft_keys_are_the_keys_the_server_forms() {
        let story: Value = serde_json::from_str(include_str!("../../../erp/demo/demo.json")).unwrap();
        let code_of = |branch: &str| {
            story["branches"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| b["id"] == branch)
                .and_then(|b| b["code"].as_str())
                .unwrap()
                .to_owned()
        };
        let mut checked = 0;
        for section in ["agent_purchase_orders", "agent_quotes"] {
            let drafts = &story[section];
            let branch = drafts["branch"].as_str().unwrap();
            let caller = Caller::from_verified(
                TenantId::parse(story["tenant"].as_str().unwrap()).unwrap(),
                BranchId::parse(branch).unwrap(),
                BranchCode::parse(&code_of(branch)).unwrap(),
                UserId::parse(drafts["drafted_on_behalf_of"].as_str().unwrap()).unwrap(),
                Vec::new(),
                Scopes::from_claim(""),
            );
            for draft in drafts["documents"].as_array().unwrap() {
                let key = crate::idempotency::IdempotencyKey::from_run(
                    draft["provenance"]["run_id"].as_str().unwrap(),
                    draft["provenance"]["client_ref"].as_str().unwrap(),
                )
                .unwrap();
                assert_eq!(
                    draft["provenance"]["draftline_key"].as_str().unwrap(),
                    external_key(
                        &IdempotencyStore::new(&crate::storage::MemoryTable::new(), &caller, &key),
                        DEMO_SEED_USE
                    ),
                    "{}",
                    draft["number"]
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 6);
    }
}
