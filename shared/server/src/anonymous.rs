//! The trace of calls refused before anyone was identified: no token, a
//! forged one, a foreign origin, an identity provider that could not be
//! reached.
//!
//! Such a call names nobody, so it cannot have an audit item in a tenant's
//! run partition, and writing one item per call would let anyone on the
//! internet grow the table. Instead each instance counts refusals in memory
//! by (tool, reason) and adds the counts to one DynamoDB item per (minute,
//! tool, reason) at most once per [`FLUSH_EVERY`] of the clock, as part of
//! the call that finds the window over. The items expire after
//! [`TRACE_RETENTION`]. Cost is bounded by the number of tools × reasons,
//! not by the number of calls; the caller's own headers (run id, request id,
//! tool name when it is not a tool) choose no key.
//!
//! The trace is best effort: counts of an instance that is frozen or stopped
//! before its next flush are lost, and a failed flush is logged, not retried.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::storage::Table;
use draftline_contract::store::{TableKey, Update, Value, Write};

/// The partition of every trace item.
pub const TRACE_PK: &str = "T#_anonymous#DENIED";

/// How long trace items are kept.
pub const TRACE_RETENTION: Duration = Duration::from_secs(7 * 86_400);

/// The shortest time between two flushes of one instance.
pub const FLUSH_EVERY: Duration = Duration::from_secs(60);

/// The tool name counted for a call to a name that is no tool.
pub const UNKNOWN_TOOL: &str = "_unknown";

#[derive(Debug, Default)]
struct Pending {
    counts: BTreeMap<(String, &'static str), u64>,
    last_flush: Option<DateTime<Utc>>,
}

/// One instance's counts of refused anonymous calls.
#[derive(Debug, Default)]
pub struct AnonymousTrace {
    pending: Mutex<Pending>,
}

impl AnonymousTrace {
    /// An empty trace.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one refused call of `tool` (a registered name or
    /// [`UNKNOWN_TOOL`]) for `reason`, and writes the counts when the
    /// instance has not written them for [`FLUSH_EVERY`].
    pub async fn record(&self, table: &dyn Table, tool: &str, reason: &'static str, now: DateTime<Utc>) {
        let due = {
            let mut pending = self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            *pending.counts.entry((tool.to_owned(), reason)).or_default() += 1;
            let window = chrono::Duration::from_std(FLUSH_EVERY).unwrap_or_default();
            if pending.last_flush.is_none_or(|last| now - last >= window) {
                pending.last_flush = Some(now);
                std::mem::take(&mut pending.counts)
            } else {
                BTreeMap::new()
            }
        };
        if due.is_empty() {
            return;
        }
        let minute = now.to_rfc3339_opts(SecondsFormat::Secs, true);
        let minute = minute.get(..16).unwrap_or(&minute).to_owned();
        let expires_at = now.timestamp() + TRACE_RETENTION.as_secs() as i64;
        let writes = due.into_iter().map(|((tool, reason), count)| {
            let sk = format!("{minute}#{tool}#{reason}");
            let mut update = Update::of(TableKey {
                pk: TRACE_PK.to_owned(),
                sk,
            });
            update.add = vec![("count".to_owned(), i64::try_from(count).unwrap_or(i64::MAX))];
            update.set = vec![
                ("expires_at".to_owned(), Value::n(expires_at)),
                ("kind".to_owned(), Value::s("denied_trace")),
                ("tool".to_owned(), Value::S(tool)),
                ("reason".to_owned(), Value::s(reason)),
            ];
            table.write(Write::Update(update), "The trace was not written.")
        });
        for result in futures::future::join_all(writes).await {
            if let Err(err) = result.and_then(|written| {
                written.map_err(|_| draftline_contract::error::ToolError::internal("an unconditional update refused"))
            }) {
                tracing::warn!(error = %err, "the trace of refused anonymous calls was not written");
            }
        }
    }
}
