//! How a counter is written: its neutral `Update` (`ADD` under its
//! limits' conditions), and one counter sent as a write of its own.

use draftline_contract::error::ToolError;
use draftline_contract::store::{Condition, TableKey, Update, Value, Write};

use super::{Counter, LIMIT_USE, NOTHING_READ, key};
use crate::storage::{Refused, Table};

/// Moves one counter with a write of its own (an `UpdateItem`), outside
/// any transaction (a read's rate, the deployment's budget: there is no
/// write to ride in): `update` is its write as [`super::Counting::items`]
/// built it. `Ok(Err(stored))`: its condition failed, with the counter as
/// stored.
pub async fn spend(table: &dyn Table, update: Write) -> Result<Result<(), Refused>, ToolError> {
    table.write(update, NOTHING_READ).await
}

impl Counter {
    /// Its item's key.
    pub(super) fn key(&self) -> TableKey {
        key(self.pk.clone(), self.sk.clone())
    }

    /// Its update: `ADD` what it adds (`drafts`, `v_IDR`), its `kind` and
    /// `expires_at` set, under its limits' conditions unless they were
    /// lifted: each bound holds while the attribute is absent or at most
    /// the room this call leaves (a call alone over its limit passes none).
    pub(super) fn update(&self) -> Update {
        let mut update = Update::of(self.key());
        update.add.clone_from(&self.adds);
        update.set = vec![
            ("kind".to_owned(), Value::s(LIMIT_USE)),
            ("expires_at".to_owned(), Value::n(self.expires_at)),
        ];
        if self.conditioned && !self.bounds.is_empty() {
            let bounds = self.bounds.iter().map(|bound| {
                let left = bound.max.saturating_sub(bound.this);
                let at_most = Condition::AtMost(bound.attribute.clone(), left);
                if left >= 0 {
                    Condition::Any(vec![Condition::Absent(bound.attribute.clone()), at_most])
                } else {
                    at_most
                }
            });
            update.condition = Some(Condition::All(bounds.collect()));
        }
        update
    }
}
