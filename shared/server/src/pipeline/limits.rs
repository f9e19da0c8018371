//! A draft's one transaction when a tenant's policy holds it: the run's,
//! the day's and the rate's counters ride in it after the key record, the
//! document's writes and the audit item ([`crate::policy::counters`]). A
//! failed counter condition refuses the draft (`LIMIT_REACHED`); in observe
//! mode the draft is committed again, counted without conditions, its
//! audit item naming the limit it would have reached.

use aws_sdk_dynamodb::types::TransactWriteItem;
use draftline_contract::error::ToolError;
use draftline_contract::policy::{Applied, Mode};
use draftline_contract::tool::{Call, DocumentRef, Stakes};

use super::draft::Recorded;
use super::{App, Success};
use crate::audit::{CallFacts, KeyFacts};
use crate::confirm::Consumption;
use crate::edge::trace::{self, Stage};
use crate::idempotency::{CommitFailure, IdempotencyKey, IdempotencyStore};
use crate::policy::{Counting, Reached};

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

impl App {
    /// Commits the draft answering `output` for `document` with `writes`,
    /// counted under `applied` by its `stakes`. `observed` is a limit
    /// observe mode already let pass (the counterparty rule). Returns the
    /// commit's outcome with the answer it stands for, or the refusal.
    pub(super) async fn commit_held(
        &self,
        held: &Held<'_>,
        (output, document): (serde_json::Value, DocumentRef),
        writes: Vec<TransactWriteItem>,
        (applied, stakes): (Option<&Applied>, &Stakes),
        mut observed: Option<Reached>,
    ) -> Result<(Result<(), CommitFailure>, Result<Success, ToolError>), ToolError> {
        let call = held.call;
        let counting = applied.and_then(|applied| {
            Counting::of(
                applied,
                call.caller,
                (held.name, call.agent.run_id.as_deref()),
                stakes,
                self.clock.now(),
            )
        });
        let observing = applied.is_some_and(|a| a.mode == Mode::Observe);
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
            let audit = match (&observed, applied) {
                (Some(reached), _) => audit.reaching(&reached.facts, true),
                (None, Some(applied)) => audit.under_policy(applied.version),
                (None, None) => audit,
            };
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
                items.extend(counting.items(&self.db, observed.is_none())?);
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
            if observing && observed.is_none() {
                observed = Some(reached);
                continue;
            }
            return Err(reached.error());
        }
    }
}
