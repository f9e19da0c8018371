//! The atomic draft's one transaction, by its named parts: the key record,
//! the person's answer consumed, the document's writes, the audit item, the
//! event that announces the draft ([`crate::events`]) and the limit counters the gate hands it ([`crate::policy::gate`]), which
//! also settles what a counter's failed condition means. A draft in the
//! ERP reserves the same counters with its key's claim instead
//! ([`super::external`]).

use draftline_contract::error::ToolError;
use draftline_contract::store::WriteSet;
use draftline_contract::tool::{DocumentRef, Stakes};

use super::held::{Held, Recorded};
use super::{App, Success};
use crate::edge::trace::{self, Stage};
use crate::idempotency::CommitFailure;
use crate::policy::{Attempt, Gate, Sending};

/// A commit's outcome, with the answer it stands for.
pub(super) type Committed = (Result<(), CommitFailure>, Result<Success, ToolError>);

impl App {
    /// Commits the draft answering `output` for `document` (committing the
    /// company to `stakes`) with `writes`, counted as `gate` holds it. Returns the commit's outcome with the
    /// answer it stands for, or the refusal.
    pub(super) async fn commit_held(
        &self,
        held: &Held<'_>,
        (output, document, stakes): (&serde_json::Value, &DocumentRef, &Stakes),
        writes: WriteSet,
        gate: &mut Gate<'_>,
    ) -> Result<Committed, ToolError> {
        gate.settle(|Sending { counters, label }| {
            let writes = writes.clone();
            async move {
                let call = held.call;
                let Recorded {
                    now,
                    result: created,
                    record,
                    audit,
                    event,
                } = self.record_created(held, output.clone(), (document.clone(), stakes));
                let audit = label.on(audit);
                let answer = held
                    .consumption
                    .map(|consumption| consumption.put(call.caller, call.request_id));
                let transaction = (held.store.put_record(&record, now))
                    .consuming(answer)
                    .placing(writes)
                    .auditing(audit.put())
                    .announcing(event.put())
                    .counting(counters);
                let committed = trace::stage(Stage::Idempotency, held.store.commit(transaction, audit.id())).await;
                Ok(match committed {
                    Ok(()) => Attempt::Done((Ok(()), created)),
                    Err(CommitFailure::OverLimit { counter, stored }) => Attempt::Over(counter, stored),
                    // Only the commit is sent again: the draft as prepared (its
                    // number, its price) stands.
                    Err(CommitFailure::CountersContended) => {
                        Attempt::Contended((Err(CommitFailure::CountersContended), created))
                    }
                    // Cancelled by something else: the counters did not move.
                    Err(other) => Attempt::Done((Err(other), created)),
                })
            }
        })
        .await
    }
}
