//! The draft of a document in another system (the ERP), which cannot share
//! draftline's transaction: claim the key under a lease, find or create
//! the document carrying the key, complete the key under the lease.

use serde_json::Value;

use super::draft::{Recorded, in_flight};
use super::{App, Served};
use crate::audit::{CallFacts, KeyFacts};
use crate::confirm;
use crate::edge::trace::{self, Stage};
use crate::idempotency::{Claim, IdempotencyKey, IdempotencyStore};
use draftline_contract::error::ToolError;
use draftline_contract::identity::Caller;
use draftline_contract::tool::{Answer, Call, ErasedDraft, ExternalDocument};

impl App {
    /// The draft path of a document in another system (the ERP), which
    /// cannot share draftline's transaction: claim the key with a lease →
    /// find the document an earlier worker may have created with this key,
    /// else create it (carrying the key) → complete the key record and write
    /// the audit item in one transaction, only while the lease holds.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn draft_external(
        &self,
        tool: &dyn ErasedDraft,
        call: &Call<'_>,
        facts: &CallFacts,
        (key, generation): (&IdempotencyKey, &Generation),
        key_facts: KeyFacts,
        owner: &str,
        (external, answer): (&dyn ExternalDocument, Answer<Value>),
        consumption: Option<&confirm::Consumption>,
    ) -> Served {
        let fail = |err: ToolError, key_facts: KeyFacts| Served::unaudited(Err(err), Some(key_facts));
        let store = IdempotencyStore::new(&self.db, call.caller);
        let name = tool.definition().name;
        // A person's "create another" is consumed with the claim, before the
        // ERP write. A lapsed claim of this same key taken over consumed it
        // already (the answer is bound to this key): it is not consumed again.
        let consumption = consumption.filter(|_| matches!(generation, Generation::New(_)));
        let consuming = match consumption
            .map(|c| c.put(&self.db, call.caller, call.request_id))
            .transpose()
        {
            Ok(consuming) => consuming,
            Err(err) => return fail(err, key_facts),
        };
        let claimed = trace::stage(
            Stage::Idempotency,
            store.claim(
                key,
                generation.id(),
                name,
                &key_facts.fingerprint,
                owner,
                call.request_id,
                self.clock.now(),
                self.config.lease,
                self.config.idempotency_ttl,
                consuming,
            ),
        )
        .await;
        let token = match claimed {
            Ok(Claim::Acquired(token)) => token,
            Ok(Claim::ConfirmationUsed) => return fail(confirm::already_used(), key_facts),
            Ok(Claim::Taken(record)) => {
                let answer = self
                    .answer_from_record(&record, key, &key_facts.fingerprint, owner)
                    .unwrap_or_else(|| Err(in_flight(key, 1)));
                return Served::unaudited(answer, Some(key_facts));
            }
            Err(err) => return fail(err, key_facts),
        };
        // A worker continuing a lapsed claim looks first: the earlier worker
        // may have created the document and died before completing the key,
        // and its document carries the same external key. A new use of the
        // key cannot have a document yet.
        let placing = async {
            let found = match generation {
                Generation::Continued(_) => external.find().await,
                Generation::New(_) => Ok(None),
            };
            match found {
                Ok(Some(created)) => Ok(created),
                Ok(None) => external.create().await,
                Err(err) => Err(err),
            }
        };
        let created = trace::stage(Stage::Erp, placing).await.map_err(ToolError::from);
        let created = match created {
            Ok(created) => created,
            Err(err) => {
                if !err.may_have_written() {
                    // Nothing was created: the key (and the person's answer
                    // consumed with it) is free again at once.
                    let giving_back = consumption.and_then(|c| c.give_back(&self.db, call.caller).ok());
                    let released = trace::stage(Stage::Idempotency, store.release(key, &token, giving_back)).await;
                    if let Err(release) = released {
                        tracing::warn!(error = %release, "a claimed key was not released; its lease will lapse");
                    }
                }
                // Otherwise the claim stays until its lease lapses; the next
                // call then finds the document by its key.
                return fail(err, key_facts);
            }
        };
        let output = match answer(&created) {
            Ok(output) => output,
            Err(err) => return fail(err, key_facts),
        };
        let Recorded {
            result: success,
            record,
            audit,
            ..
        } = self.record_created(call, facts, name, &key_facts, owner, output, created.document);
        let audit_put = match audit.put(&self.db) {
            Ok(put) => put,
            Err(err) => return fail(err, key_facts),
        };
        let completed = trace::stage(
            Stage::Idempotency,
            store.complete_with(key, &token, &record, vec![audit_put]),
        )
        .await;
        match completed {
            Ok(true) => Served {
                result: success,
                key: Some(key_facts),
                audited: true,
            },
            // Another worker took the key over after our lease lapsed; it
            // finds this same document by its key and completes the record.
            Ok(false) => Served::unaudited(success, Some(key_facts)),
            Err(err) => fail(err, key_facts),
        }
    }
}

/// Which use of an idempotency key a draft is: the external key of its
/// document depends on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Generation {
    /// A new use: no document can carry its key yet.
    New(String),
    /// The use of a claim whose worker's lease lapsed: its document may exist.
    Continued(String),
}

impl Generation {
    pub(super) fn id(&self) -> &str {
        match self {
            Self::New(id) | Self::Continued(id) => id,
        }
    }
}

/// The key as an external system stores it (`draftline_key`): the SHA-256
/// of the tenant, the stored key and the use of it (`generation`, kept by a
/// worker that takes a lapsed claim over), so it is unique per tenant,
/// caller's key and use, bounded in length, and says nothing about either.
pub(super) fn external_key(caller: &Caller, key: &IdempotencyKey, generation: &str) -> String {
    use sha2::Digest;
    let mut digest = sha2::Sha256::new();
    for part in [caller.tenant().as_str(), &key.storage_key(caller), generation] {
        digest.update(part.as_bytes());
        digest.update([0u8]);
    }
    format!("dl1-{}", hex::encode(digest.finalize()))
}

#[cfg(test)]
mod tests {
    use draftline_contract::identity::{BranchCode, BranchId, Scopes, TenantId, UserId};
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
                let key = IdempotencyKey::from_run(
                    draft["provenance"]["run_id"].as_str().unwrap(),
                    draft["provenance"]["client_ref"].as_str().unwrap(),
                )
                .unwrap();
                assert_eq!(
                    draft["provenance"]["draftline_key"].as_str().unwrap(),
                    external_key(&caller, &key, DEMO_SEED_USE),
                    "{}",
                    draft["number"]
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 6);
    }
}
