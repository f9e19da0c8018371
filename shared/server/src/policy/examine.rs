//! What the tenant's policy still leaves a caller, read from the table for
//! the examiner tool (`agent_get_limits`): the counters of the caller's
//! run, day and draft tools, as the draft path writes them ([`super::counters`]),
//! and the policy itself while the warm instance's copy is stale, all in
//! ONE strongly consistent `BatchGetItem`.
//!
//! With a stale copy the policy, and so the tenant's time zone, is not
//! known before the request: the day counters of the three dates the
//! tenant's day can be (its offset is within a day of UTC) are read with
//! it, and the one of the tenant's day is used.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Days, Utc};

use super::PolicyCache;
use super::counters::{self, CALLS, DRAFTS};
use draftline_contract::error::ToolError;
use draftline_contract::identity::Owner;
use draftline_contract::policy::standing::{Examiner, Standing, Use};
use draftline_contract::policy::{Amount, Applied};
use draftline_contract::store::{Attributes, Found, TableKey};

use crate::storage::Table;

const NOTHING_READ: &str = "Nothing was read or changed.";

/// Reads standings from `table`, with the policy from `policies` while fresh.
#[derive(Debug, Clone, Copy)]
pub struct TableExaminer<'a> {
    table: &'a dyn Table,
    policies: &'a PolicyCache,
}

impl<'a> TableExaminer<'a> {
    /// The examiner over `table` and the instance's policy cache.
    pub fn new(table: &'a dyn Table, policies: &'a PolicyCache) -> Self {
        Self { table, policies }
    }
}

#[async_trait]
impl Examiner for TableExaminer<'_> {
    async fn standing(
        &self,
        owner: Owner<'_>,
        run: Option<&str>,
        draft_tools: &[&'static str],
        now: DateTime<Utc>,
    ) -> Result<Option<Standing>, ToolError> {
        let tenant = owner.tenant;
        let cached = self.policies.fresh_for_draft(tenant, owner.branch, now);
        let policy_key = super::store::current_key(tenant);
        let Some(days) = days(cached.as_ref(), now)? else {
            return Ok(None);
        };
        let (minute, minute_ends) = counters::minute_of(now);
        let run_key = run.map(|run| counters::run_key(owner, run));
        let day_key = |day: String| (counters::day_key(tenant, owner.user, &day), day);
        let day_keys: Vec<(TableKey, String)> = days.into_iter().map(day_key).collect();
        let rate_keys: Vec<(&'static str, TableKey)> = draft_tools
            .iter()
            .map(|tool| (*tool, counters::rate_key(tenant, owner.user, tool, minute)))
            .collect();
        let mut keys: Vec<TableKey> = Vec::new();
        if cached.is_none() {
            keys.push(policy_key.clone());
        }
        keys.extend(run_key.clone());
        keys.extend(day_keys.iter().map(|(k, _)| k.clone()));
        keys.extend(rate_keys.iter().map(|(_, k)| k.clone()));
        let items = Found::of(self.table.get(keys, NOTHING_READ).await?);
        let find = |key: &TableKey| items.get(key);
        let applied = match cached {
            Some(applied) => applied,
            None => self
                .policies
                .remember_for_draft(tenant, find(&policy_key), owner.branch, now),
        };
        let Some(applied) = applied? else {
            return Ok(None);
        };
        let empty = Attributes::new();
        let day = applied.day_of(now).to_string();
        let day_item = day_keys.iter().find(|(_, d)| *d == day);
        let day_item = day_item.and_then(|(key, _)| find(key)).unwrap_or(&empty);
        let run_item = run_key.as_ref().map(|key| find(key).unwrap_or(&empty));
        let standing = Standing {
            run: run.map(str::to_owned),
            run_drafts: applied.run_drafts.zip(run_item).map(|(max, item)| Use {
                max: i64::from(max),
                used: counters::used(item, DRAFTS),
            }),
            run_value: run_item.map(|item| value(&applied.run_value, item)).unwrap_or_default(),
            day_resets_at: applied.next_midnight(now),
            day_value: value(&applied.day_value, day_item),
            day,
            rates: applied
                .calls_per_minute
                .map(|max| {
                    let max = i64::from(max);
                    let used = |key| find(key).map_or(0, |item| counters::used(item, CALLS));
                    rate_keys
                        .iter()
                        .map(|(tool, key)| (*tool, Use { max, used: used(key) }))
                        .collect()
                })
                .unwrap_or_default(),
            minute_ends,
            applied: std::sync::Arc::unwrap_or_clone(applied),
        };
        Ok(Some(standing))
    }
}

/// The days the tenant's day can be at `now`: the cached policy's own, or
/// the three around UTC's; `None` when the cached policy says the tenant
/// has none. What a draft is held to, the examiner shows (a policy that
/// cannot be read: the same refusal).
fn days(
    cached: Option<&Result<Option<Arc<Applied>>, ToolError>>,
    now: DateTime<Utc>,
) -> Result<Option<Vec<String>>, ToolError> {
    Ok(Some(match cached {
        Some(Ok(Some(applied))) => vec![applied.day_of(now).to_string()],
        Some(Ok(None)) => return Ok(None),
        Some(Err(refusal)) => return Err(refusal.clone()),
        None => {
            let utc = now.date_naive();
            [
                utc.checked_sub_days(Days::new(1)),
                Some(utc),
                utc.checked_add_days(Days::new(1)),
            ]
            .into_iter()
            .flatten()
            .map(|d| d.to_string())
            .collect()
        }
    }))
}

/// What a counter `item` holds of each of `limits`, by currency.
fn value(limits: &[Amount], item: &Attributes) -> Vec<(String, Use)> {
    limits
        .iter()
        .map(|limit| {
            let used = counters::used(item, &counters::value_attribute(&limit.currency));
            (
                limit.currency.clone(),
                Use {
                    max: limit.hundredths,
                    used,
                },
            )
        })
        .collect()
}
