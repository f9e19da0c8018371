//! A draft's one transaction when a tenant's policy holds it: the run's,
//! the day's and the rate's counters ride in it after the key record, the
//! document's writes and the audit item ([`crate::policy::counters`]). A
//! failed counter condition refuses the draft (`LIMIT_REACHED`); in observe
//! mode the draft is committed again, counted without conditions, its
//! audit item naming the limit it would have reached. A draft in the ERP
//! reserves the same counters with its key's claim instead
//! ([`super::external`]).

use aws_sdk_dynamodb::types::TransactWriteItem;
use draftline_contract::error::ToolError;
use draftline_contract::policy::{Applied, Mode};
use draftline_contract::tool::{Call, DocumentRef, Stakes};

use super::draft::Recorded;
use super::{App, Success};
use crate::audit::{AuditRecord, CallFacts, KeyFacts};
use crate::confirm::Consumption;
use crate::edge::trace::{self, Stage};
use crate::idempotency::{CommitFailure, IdempotencyKey, IdempotencyStore};
use crate::policy::{Counting, PolicyStore, Reached};
use draftline_contract::identity::Caller;

/// What a draft's commit is made of, besides its document: the call, its
/// key and the person's answer it consumes.
pub(super) struct Held<'a> {
    pub(super) call: &'a Call<'a>,
    pub(super) facts: &'a CallFacts,
    pub(super) name: &'a str,
    pub(super) key_facts: &'a KeyFacts,
    pub(super) owner: &'a str,
    pub(super) store: &'a IdempotencyStore<'a>,
    pub(super) key: &'a IdempotencyKey,
    pub(super) consumption: Option<&'a Consumption>,
}

/// How the tenant's policy holds one draft: the limits that apply to its
/// caller, what the draft is worth, and a limit observe mode already let
/// pass (the counterparty rule).
pub(super) struct Policed<'a> {
    pub(super) applied: Option<&'a Applied>,
    pub(super) stakes: &'a Stakes,
    pub(super) observed: Option<Reached>,
}

impl Policed<'_> {
    /// The counters the draft moves now, if any limit counts it.
    pub(super) fn counting(&self, held: &Held<'_>, now: chrono::DateTime<chrono::Utc>) -> Option<Counting> {
        let call = held.call;
        self.applied.and_then(|applied| {
            Counting::of(
                applied,
                call.caller,
                (held.name, call.agent.run_id.as_deref()),
                self.stakes,
                now,
            )
        })
    }

    /// Whether a reached limit lets the draft pass, audited (observe mode).
    pub(super) fn observing(&self) -> bool {
        self.applied.is_some_and(|a| a.mode == Mode::Observe)
    }

    /// `audit`, noting the limit observed or else the policy held to.
    pub(super) fn audited(&self, audit: AuditRecord) -> AuditRecord {
        match (&self.observed, self.applied) {
            (Some(reached), _) => audit.reaching(&reached.facts, true),
            (None, Some(applied)) => audit.under_policy(applied.version),
            (None, None) => audit,
        }
    }
}

impl App {
    /// The limits of the tenant's policy that apply to `caller`'s branch:
    /// the warm instance's copy while fresh, else read (one `GetItem`,
    /// at most once per tenant per cache bound).
    async fn applied_to(&self, caller: &Caller) -> Result<Option<Applied>, ToolError> {
        let tenant = caller.tenant();
        let stored = self
            .policies
            .current(tenant, self.clock.as_ref(), || async {
                PolicyStore::new(&self.db, tenant).current().await
            })
            .await?;
        Ok(stored.map(|stored| stored.policy.applying_to(caller.branch().as_str(), stored.version)))
    }

    /// Counts one call of read tool `tool` against the policy's rate, if it
    /// sets one (one conditional `UpdateItem`, before the ERP is asked).
    /// Returns the limit observe mode let pass, or the refusal: a refused
    /// read counts nothing and reads nothing.
    pub(super) async fn spend_read_rate(&self, caller: &Caller, tool: &str) -> Result<Option<Reached>, ToolError> {
        let Some(applied) = self.applied_to(caller).await? else {
            return Ok(None);
        };
        let now = self.clock.now();
        let Some(counting) = Counting::of_read(&applied, caller, tool, now) else {
            return Ok(None);
        };
        let Err((index, stored)) = counting.spend(&self.db, true).await? else {
            return Ok(None);
        };
        let reached = counting
            .reached(index, stored.as_ref(), now)
            .ok_or_else(|| ToolError::internal("a limit counter failed that was not sent"))?;
        if applied.mode == Mode::Enforce {
            return Err(reached.error());
        }
        // Observe mode: the call goes on, counted without the condition.
        tracing::info!(tool, limit = %reached.facts.name, "a limit observed, not enforced");
        if let Err((_, _)) = counting.spend(&self.db, false).await? {
            return Err(ToolError::internal("an unconditioned counter failed"));
        }
        Ok(Some(reached))
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
        let counting = policed.counting(held, self.clock.now());
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
            // The key record first, then the consumption of the person's
            // answer (if any), the document's writes, the audit item and
            // the limit counters (conditioned unless a limit was observed).
            let mut items = Vec::with_capacity(writes.len() + 6);
            items.push(held.store.put_record(held.key, &record, now)?);
            if let Some(consumption) = held.consumption {
                items.push(consumption.put(&self.db, call.caller, call.request_id)?);
            }
            items.extend(writes.iter().cloned());
            items.push(audit.put(&self.db)?);
            let first_counter = items.len();
            if let Some(counting) = &counting {
                items.extend(counting.items(&self.db, policed.observed.is_none())?);
            }
            let counters = first_counter..items.len();
            let consumed = held.consumption.map(|_| 1);
            let committed = trace::stage(
                Stage::Idempotency,
                held.store
                    .commit_counted(held.key, items, audit.id(), consumed, counters),
            )
            .await;
            let Err(CommitFailure::OverLimit { index, stored }) = &committed else {
                return Ok((committed, created));
            };
            let reached = counting
                .as_ref()
                .and_then(|c| c.reached(*index, stored.as_ref(), self.clock.now()))
                .ok_or_else(|| ToolError::internal("a limit counter failed that was not sent"))?;
            if policed.observing() && policed.observed.is_none() {
                policed.observed = Some(reached);
                continue;
            }
            return Err(reached.error());
        }
    }
}
