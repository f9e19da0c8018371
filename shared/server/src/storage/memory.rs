//! The [`Table`] in memory: a map of items under one lock, each write
//! applied as DynamoDB applies it ([`Write::apply`]: the same conditions,
//! all of a transaction or none of it). For the pipeline's unit tests; the
//! black-box suite runs on the real engine.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use draftline_contract::error::ToolError;
use draftline_contract::store::{Attributes, Cancelled, Page, Query, TableKey, TransactFailure, Value, Write};

use super::{Refused, Table};

/// A table in memory.
#[derive(Debug, Default)]
pub struct MemoryTable {
    items: Mutex<BTreeMap<TableKey, Attributes>>,
    /// Requests made, by operation (`get`, `transact`, `write`, `append`).
    requests: Mutex<BTreeMap<&'static str, u64>>,
}

impl MemoryTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    fn items(&self) -> MutexGuard<'_, BTreeMap<TableKey, Attributes>> {
        self.items.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn count(&self, operation: &'static str) {
        let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        *requests.entry(operation).or_default() += 1;
    }

    /// The item at `key`, as stored.
    pub fn item(&self, key: &TableKey) -> Option<Attributes> {
        self.items().get(key).cloned()
    }

    /// Every item whose partition is `pk`.
    pub fn partition(&self, pk: &str) -> Vec<Attributes> {
        self.items()
            .iter()
            .filter(|(key, _)| key.pk == pk)
            .map(|(_, item)| item.clone())
            .collect()
    }

    /// Stores `item` as it is (a test's setup, or a hand-made change).
    pub fn put(&self, item: Attributes) {
        if let Some(key) = TableKey::of(&item) {
            self.items().insert(key, item);
        }
    }

    /// Removes the item at `key`.
    pub fn remove(&self, key: &TableKey) {
        self.items().remove(key);
    }

    /// The requests made so far, by operation.
    pub fn requests(&self) -> BTreeMap<&'static str, u64> {
        self.requests.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// What one write leaves, or why it was refused, over `items`.
fn applied(items: &BTreeMap<TableKey, Attributes>, write: &Write) -> Result<(TableKey, Option<Attributes>), Cancelled> {
    let key = write
        .key()
        .ok_or_else(|| Cancelled::Other("ValidationError".to_owned()))?;
    let stored = items.get(&key);
    write
        .apply(stored)
        .map(|after| (key, after))
        .map_err(|_| Cancelled::ConditionFailed(stored.cloned()))
}

#[async_trait]
impl Table for MemoryTable {
    async fn get(&self, keys: Vec<TableKey>, _failed: &str) -> Result<Vec<Attributes>, ToolError> {
        self.count("get");
        let items = self.items();
        Ok(keys.iter().filter_map(|key| items.get(key).cloned()).collect())
    }

    async fn transact(&self, writes: Vec<Write>, _token: &str, _failed: &str) -> Result<(), TransactFailure> {
        self.count("transact");
        let mut items = self.items();
        let outcomes: Vec<_> = writes.iter().map(|write| applied(&items, write)).collect();
        if outcomes.iter().any(Result::is_err) {
            return Err(TransactFailure::Cancelled(
                outcomes
                    .into_iter()
                    .map(|outcome| outcome.err().unwrap_or(Cancelled::Fine))
                    .collect(),
            ));
        }
        for (key, after) in outcomes.into_iter().flatten() {
            match after {
                Some(item) => items.insert(key, item),
                None => items.remove(&key),
            };
        }
        Ok(())
    }

    async fn write(&self, write: Write, _failed: &str) -> Result<Result<(), Refused>, ToolError> {
        self.count("write");
        let mut items = self.items();
        match applied(&items, &write) {
            Ok((key, Some(item))) => {
                items.insert(key, item);
                Ok(Ok(()))
            }
            Ok((key, None)) => {
                items.remove(&key);
                Ok(Ok(()))
            }
            Err(Cancelled::ConditionFailed(stored)) => Ok(Err(stored)),
            Err(other) => Err(ToolError::internal(format!("{other:?}"))),
        }
    }

    async fn query(&self, query: &Query, _failed: &str) -> Result<Page, ToolError> {
        self.count("query");
        let (pk, sk) = query.index.map_or(("pk", "sk"), |index| (index.pk, index.sk));
        let text = |item: &Attributes, name: &str| item.get(name).and_then(Value::as_s).map(str::to_owned);
        let mut partition: Vec<(String, Attributes)> = self
            .items()
            .values()
            .filter(|item| text(item, pk).as_deref() == Some(query.pk.as_str()))
            .filter_map(|item| Some((text(item, sk)?, item.clone())))
            .filter(|(sort, _)| {
                query
                    .sk_prefix
                    .as_ref()
                    .is_none_or(|prefix| sort.starts_with(prefix.as_str()))
            })
            .collect();
        partition.sort_by(|(a, _), (b, _)| a.cmp(b));
        if query.newest_first {
            partition.reverse();
        }
        if let Some(after) = query.after.as_ref().and_then(|after| text(after, sk)) {
            let past = |sort: &String| {
                if query.newest_first {
                    *sort < after
                } else {
                    *sort > after
                }
            };
            partition.retain(|(sort, _)| past(sort));
        }
        let limit = query.limit.and_then(|n| usize::try_from(n).ok()).unwrap_or(usize::MAX);
        let more = partition.len() > limit;
        partition.truncate(limit);
        let keys = |item: &Attributes| -> Attributes {
            let names = ["pk", "sk", pk, sk];
            item.iter()
                .filter(|(name, _)| names.contains(&name.as_str()))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect()
        };
        let last = more.then(|| partition.last().map(|(_, item)| keys(item))).flatten();
        let items = partition
            .into_iter()
            .map(|(_, item)| item)
            .filter(|item| query.filter.as_ref().is_none_or(|filter| filter.holds(Some(item))))
            .map(|item| if query.keys_only { keys(&item) } else { item })
            .collect();
        Ok(Page { items, last })
    }

    async fn append(&self, item: Attributes, failed: &'static str) -> Result<(), ToolError> {
        self.count("append");
        // An item already there landed before (as DynamoDB's appender
        // reads a retried write's condition).
        let _landed = self.write(Write::PutNew(item), failed).await?;
        Ok(())
    }
}
