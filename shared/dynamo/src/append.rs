//! Append-only writes that concurrent calls share: group commit.
//!
//! Every call writes one audit item that must be new
//! (`attribute_not_exists(pk)`). On an instance that serves many calls at
//! once (the local server, Vercel's concurrent invocations) an item goes
//! out at once while fewer than [`WRITERS`] writes are in flight; the items
//! that arrive while all are in flight wait for the first to end and then
//! go together, in one `TransactWriteItems` of conditional puts: every item keeps its
//! condition, and each call still answers only after its own item is
//! stored. An item that arrives alone (one call at a time, as on Lambda) is
//! one conditional `PutItem`, as before. What it saves is requests and
//! their round trips (24 concurrent reads: a few writes instead of 24, asserted
//! in `tests/api/reads.rs`); it did not measurably save CPU per call (README,
//! Benchmarks), and on AWS a transactional write costs 2 WCU per item.
//!
//! A writer is a task of its own, started by an item that finds one free,
//! so a caller that stops waiting (its deadline) never cancels the items of
//! the others. If a transaction is cancelled (an item already there because
//! an SDK retry after a lost answer landed it, or a conflict), each item is
//! written on its own, where an existing item means it already landed.

use futures::FutureExt;
use std::collections::HashMap;
use std::sync::Mutex;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
use draftline_contract::ToolError;
use tokio::sync::oneshot;

use crate::{Db, store_error};

/// How many writes may be in flight at once. With one, an item that
/// arrives while a write is in flight waits for it to end and then for its
/// own: one and a half writes on average. With two, it goes out at once
/// while the second writer is free, and waits for one write. Measured
/// under the 16-connection read load (docs/benchmarks.md, "The shared audit
/// write"): the audit stage's median went from 2.06–2.13 ms to 1.68–1.74 ms
/// with two, 1.54–1.56 ms with four, at 6 % and 10 % more CPU per call
/// (more, smaller requests); two is the trade taken.
const WRITERS: usize = 2;

/// The most items one transaction carries (DynamoDB allows 100 actions and
/// 4 MB; an audit item is at most a few KiB).
const MAX_GROUP: usize = 25;

/// An item, and where its outcome goes.
struct Pending {
    item: HashMap<String, AttributeValue>,
    failed: &'static str,
    /// The deployed functions of the call that wrote it (the local server).
    serving: Option<crate::grants::Functions>,
    /// The outcome, and how many requests the item took part in.
    done: oneshot::Sender<(Result<(), ToolError>, u64)>,
}

#[derive(Default)]
struct Queue {
    pending: Vec<Pending>,
    /// Writer tasks running (at most [`WRITERS`]).
    writers: usize,
}

/// The items waiting for the writer of one [`Db`].
#[derive(Default)]
pub(crate) struct Appender {
    queue: Mutex<Queue>,
}

impl std::fmt::Debug for Appender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Appender").finish_non_exhaustive()
    }
}

impl Db {
    /// Writes `item`, which must not exist yet (its `pk`), and returns once
    /// it is stored. Items written at the same time share one request.
    /// `failed` is what a failure tells the caller did not happen.
    pub async fn append(&self, item: HashMap<String, AttributeValue>, failed: &'static str) -> Result<(), ToolError> {
        let (done, outcome) = oneshot::channel();
        let start_writer = {
            let mut queue = self.appender.queue.lock().unwrap_or_else(|p| p.into_inner());
            queue.pending.push(Pending {
                item,
                failed,
                serving: crate::grants::current(),
                done,
            });
            let start = queue.writers < WRITERS;
            if start {
                queue.writers += 1;
            }
            start
        };
        if start_writer {
            tokio::spawn(write_all(self.clone()));
        }
        let (outcome, requests) = outcome.await.unwrap_or_else(|_| {
            (
                Err(ToolError::internal("the append writer stopped before writing the item")),
                0,
            )
        });
        // The writer's requests are counted for the instance by the
        // interceptor; the call that waited for them counts its share here.
        crate::count_for_call(requests);
        outcome
    }
}

/// Writes what is queued, a group at a time, until the queue is empty.
async fn write_all(db: Db) {
    loop {
        let mut group: Vec<Pending> = {
            let mut queue = db.appender.queue.lock().unwrap_or_else(|p| p.into_inner());
            if queue.pending.is_empty() {
                queue.writers -= 1;
                return;
            }
            let n = queue.pending.len().min(MAX_GROUP);
            queue.pending.drain(..n).collect()
        };
        // The requests are made for the functions whose calls wrote the items.
        let mut serving: Vec<&'static str> = group
            .iter()
            .flat_map(|p| p.serving.iter().flat_map(|f| f.iter().copied()))
            .collect();
        serving.sort_unstable();
        serving.dedup();
        let write = async {
            if group.len() > 1 {
                write_group(&db, group).await;
            } else if let Some(alone) = group.pop() {
                let outcome = put_new(&db, alone.item, alone.failed).await;
                let _ = alone.done.send((outcome, 1));
            }
        };
        if serving.is_empty() {
            write.await;
        } else {
            crate::grants::serving_all(serving.into(), write).await;
        }
    }
}

/// One conditional `PutItem`; an existing item is this very item (ids are
/// minted per item), landed by an earlier attempt.
async fn put_new(db: &Db, item: HashMap<String, AttributeValue>, failed: &str) -> Result<(), ToolError> {
    db.put_new(item)
        .await
        .map(|_| ())
        .map_err(|err| store_error(err, failed))
}

async fn write_group(db: &Db, group: Vec<Pending>) {
    let mut actions = Vec::with_capacity(group.len());
    for pending in &group {
        let put = Put::builder()
            .table_name(db.table())
            .set_item(Some(pending.item.clone()))
            .condition_expression("attribute_not_exists(pk)")
            .build();
        match put {
            Ok(put) => actions.push(TransactWriteItem::builder().put(put).build()),
            // Table name and item are always set: not reachable.
            Err(err) => {
                let err = ToolError::internal(err);
                for pending in group {
                    let _ = pending.done.send((Err(err.clone()), 0));
                }
                return;
            }
        }
    }
    let written = db
        .client()
        .transact_write_items()
        .set_transact_items(Some(actions))
        .send()
        .boxed()
        .await;
    match written {
        Ok(_) => {
            for pending in group {
                let _ = pending.done.send((Ok(()), 1));
            }
        }
        Err(SdkError::ServiceError(service)) if service.err().is_transaction_canceled_exception() => {
            // One item's condition (or a conflict) cancelled them all:
            // nothing of the group was written; each goes on its own (rare:
            // one after the other is fast enough).
            for pending in group {
                let outcome = put_new(db, pending.item, pending.failed).await;
                let _ = pending.done.send((outcome, 2));
            }
        }
        Err(err) => {
            // One error for the group, told with the first item's text
            // (every caller passes the same one).
            let failed = group.first().map_or("Nothing was written.", |p| p.failed);
            let err = store_error(err, failed);
            for pending in group {
                let _ = pending.done.send((Err(err.clone()), 1));
            }
        }
    }
}
