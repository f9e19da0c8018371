//! A draft's one transaction when a tenant's policy holds it: the run's,
//! the day's and the rate's counters ride in it after the key record, the
//! document's writes and the audit item ([`crate::policy::counters`]). A
//! failed counter condition goes to the call's [`Gate`]: it refuses the
//! draft (`LIMIT_REACHED`), or, in observe mode, the draft is committed
//! again with that counter unconditioned, until it commits, its audit item
//! naming every limit it would have reached. A draft in the ERP reserves
//! the same counters with its key's claim instead ([`super::external`]).

use std::sync::Arc;

use aws_sdk_dynamodb::types::TransactWriteItem;
use draftline_contract::error::{ReachedLimit, ToolError};
use draftline_contract::policy::Applied;
use draftline_contract::tool::{Call, DocumentRef};

use super::held::{Held, Policed, Recorded};
use super::{App, DRAFT_ATTEMPTS, Success};
use crate::edge::trace::{self, Stage};
use crate::idempotency::{CommitFailure, KeyTransaction};
use crate::policy::{Counting, Gate, PolicyStore};
use draftline_contract::identity::Caller;

impl App {
    /// Notes what a draft held at `gate` did to its run's counter, when the
    /// policy limits a run's drafts ([`crate::policy::runs`]): `counted`
    /// one, or else a limit refused it (the run's next draft here reads its
    /// counter again). Counting one that a release gives back later only
    /// makes a lookup read the counter sooner.
    pub(super) fn note_run(&self, call: &Call<'_>, gate: &Gate, counted: bool) {
        let limited = gate.applied().is_some_and(|applied| applied.run_drafts.is_some());
        let Some(run) = call.agent.run_id.as_deref().filter(|_| limited) else {
            return;
        };
        let pk = crate::policy::counters::run_pk(call.caller.owner(), run);
        if counted {
            self.runs.counted(&pk);
        } else {
            self.runs.forget(&pk);
        }
    }

    /// The limits of the tenant's policy that hold a read by `caller`:
    /// the warm instance's copy while fresh, else read (one `GetItem`,
    /// at most once per tenant per cache bound). A policy that cannot be
    /// read holds no read.
    async fn applied_to_read(&self, caller: &Caller) -> Result<Option<Arc<Applied>>, ToolError> {
        let tenant = caller.tenant();
        let in_force = self
            .policies
            .current(tenant, self.clock.as_ref(), || async {
                PolicyStore::new(&self.db, tenant).in_force().await
            })
            .await?;
        Ok(in_force.for_read(caller.branch()))
    }

    /// Spends one call of `caller`'s budget, the deployment's
    /// (`DRAFTLINE_RATE_LIMIT_PER_MINUTE`, if set): one conditional
    /// `UpdateItem`, before the call is read; refused `RATE_LIMITED`.
    pub(super) async fn spend_budget(&self, caller: &Caller) -> Result<(), ToolError> {
        let Some(limit) = self.config.rate_limit_per_minute else {
            return Ok(());
        };
        let now = self.clock.now();
        let mut counting = Counting::of_budget(caller, limit, now);
        Gate::default().spend(&self.db, &mut counting, now).await
    }

    /// Counts one call of read tool `tool` against the policy's rate, if it
    /// sets one (one conditional `UpdateItem`, before the ERP is asked).
    /// Returns the limits observe mode let pass, or the refusal: a refused
    /// read counts nothing and reads nothing.
    pub(super) async fn spend_read_rate(&self, caller: &Caller, tool: &str) -> Result<Vec<ReachedLimit>, ToolError> {
        let mut gate = Gate::new(self.applied_to_read(caller).await?);
        let now = self.clock.now();
        let Some(mut counting) = gate.applied().and_then(|a| Counting::of_read(a, caller, tool, now)) else {
            return Ok(Vec::new());
        };
        gate.spend(&self.db, &mut counting, now).await?;
        Ok(gate.observed().to_vec())
    }

    /// Commits the draft answering `output` for `document` with `writes`,
    /// counted as `policed` holds it. Returns the commit's outcome with the
    /// answer it stands for, or the refusal.
    pub(super) async fn commit_held(
        &self,
        held: &Held<'_>,
        (output, document): (serde_json::Value, DocumentRef),
        writes: Vec<TransactWriteItem>,
        mut policed: Policed<'_>,
    ) -> Result<(Result<(), CommitFailure>, Result<Success, ToolError>), ToolError> {
        let call = held.call;
        let mut counting = policed.counting(held, self.clock.now());
        // Commits sent again as they are, after another draft held one of
        // the counters at the same moment (the document was not in the way).
        let mut resent = 0;
        loop {
            let Recorded {
                now,
                result: created,
                record,
                audit,
            } = self.record_created(
                call,
                held.facts,
                held.name,
                held.key_facts,
                held.owner,
                output.clone(),
                document.clone(),
            );
            let audit = policed.audited(audit);
            // The key record, the person's answer consumed (if any), the
            // document's writes, the audit item and the limit counters
            // (conditioned unless a limit they reached was observed).
            let answer = match held.consumption {
                Some(consumption) => Some(consumption.put(&self.db, call.caller, call.request_id)?),
                None => None,
            };
            let counters = match &counting {
                Some(counting) => counting.items(&self.db)?,
                None => Vec::new(),
            };
            let transaction = KeyTransaction::of(held.store.put_record(held.key, &record, now)?)
                .consuming(answer)
                .placing(writes.clone())
                .auditing(audit.put(&self.db)?)
                .counting(counters);
            let committed =
                trace::stage(Stage::Idempotency, held.store.commit(held.key, transaction, audit.id())).await;
            if committed.is_ok() {
                // A retry of this key reaching this instance reads the record alone.
                self.answered.remember(call.caller, held.key, record.expires_at);
            }
            match &committed {
                Ok(()) => self.note_run(call, &policed.gate, true),
                Err(CommitFailure::OverLimit { .. }) => self.note_run(call, &policed.gate, false),
                // Cancelled by something else: the counter did not move.
                Err(_) => {}
            }
            if matches!(committed, Err(CommitFailure::CountersContended)) && resent < DRAFT_ATTEMPTS {
                // Only the commit needs retrying: the draft as prepared
                // (its number, its price) stands.
                tokio::time::sleep(std::time::Duration::from_millis(5 + 20 * resent as u64)).await;
                resent += 1;
                continue;
            }
            let Err(CommitFailure::OverLimit { counter: kind, stored }) = &committed else {
                return Ok((committed, created));
            };
            let Some(counting) = counting.as_mut() else {
                return Err(ToolError::internal("a limit counter failed that was not sent"));
            };
            policed.gate.over(counting, *kind, stored.as_ref(), self.clock.now())?;
        }
    }
}
