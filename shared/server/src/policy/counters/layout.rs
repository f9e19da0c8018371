//! Where the counters are stored: their keys and attributes (the layout
//! the demo seed writes too).

use chrono::{DateTime, Utc};

use draftline_contract::identity::{Owner, TenantId, UserId};
use draftline_contract::store::{Attributes, TableKey, Value};

use super::run_counter;

/// The counter item of `owner`'s run `run` as if `adds` (`drafts`,
/// `v_<currency>`) had been counted at `now`: what the demo seed writes for
/// the drafts it seeds, in the layout drafts are counted in.
pub fn run_counted(owner: Owner<'_>, run: &str, adds: Vec<(String, i64)>, now: DateTime<Utc>) -> Attributes {
    let counter = run_counter(owner, run, adds, Vec::new(), now);
    let mut item = Attributes::from([
        ("pk".to_owned(), Value::S(counter.pk)),
        ("sk".to_owned(), Value::S(counter.sk)),
        ("kind".to_owned(), Value::s(LIMIT_USE)),
        ("expires_at".to_owned(), Value::n(counter.expires_at)),
    ]);
    for (attribute, n) in counter.adds {
        item.insert(attribute, Value::n(n));
    }
    item
}

/// The `kind` of every counter item.
pub(super) const LIMIT_USE: &str = "limit_use";

/// A counter's attribute for the number of drafts.
pub const DRAFTS: &str = "drafts";
/// A rate counter's attribute for the number of calls.
pub const CALLS: &str = "calls";

/// A counter's attribute for the value drafted in `currency` (hundredths).
pub fn value_attribute(currency: &str) -> String {
    format!("v_{currency}")
}

/// What the counter `item` holds in `attribute` (0 when it has none).
pub fn used(item: &Attributes, attribute: &str) -> i64 {
    item.get(attribute)
        .and_then(Value::as_n)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The key of the counter of `owner`'s agent run `run` (the same run id
/// sent by someone else is another run).
pub fn run_key(owner: Owner<'_>, run: &str) -> TableKey {
    run_key_at(&run_pk(owner, run))
}

/// The key of the run counter whose partition is `pk` ([`run_pk`]).
pub fn run_key_at(pk: &str) -> TableKey {
    key(pk.to_owned(), RUN_SK.to_owned())
}

/// The partition of the counter of `owner`'s agent run `run`.
pub fn run_pk(owner: Owner<'_>, run: &str) -> String {
    let Owner { tenant, branch, user } = owner;
    format!("T#{tenant}#LIMIT#RUN#{branch}#{user}#{run}")
}

/// The sort key of a run's counter (one item per run).
pub(super) const RUN_SK: &str = "USE";

/// The key of the counter of what was drafted for `user` on `day`
/// (`YYYY-MM-DD`, the tenant's day).
pub fn day_key(tenant: &TenantId, user: &UserId, day: &str) -> TableKey {
    key(day_pk(tenant, user), day.to_owned())
}

/// The partition of `user`'s day counters (one item per day).
pub(super) fn day_pk(tenant: &TenantId, user: &UserId) -> String {
    format!("T#{tenant}#LIMIT#DAY#{user}")
}

/// The key of `user`'s counter of calls of `tool` in epoch minute `minute`.
pub fn rate_key(tenant: &TenantId, user: &UserId, tool: &str, minute: i64) -> TableKey {
    key(rate_pk(tenant, user, tool), minute_sk(minute))
}

/// The partition of `user`'s counters of calls of `tool`.
pub(super) fn rate_pk(tenant: &TenantId, user: &UserId, tool: &str) -> String {
    format!("T#{tenant}#LIMIT#RATE#{user}#{tool}")
}

/// The sort key of a counter of epoch minute `minute`.
pub(super) fn minute_sk(minute: i64) -> String {
    format!("MINUTE#{minute}")
}

/// The epoch minute (UTC) `now` falls in, and when it ends.
pub fn minute_of(now: DateTime<Utc>) -> (i64, DateTime<Utc>) {
    let minute = now.timestamp().div_euclid(60);
    let ends = DateTime::from_timestamp(minute.saturating_add(1).saturating_mul(60), 0).unwrap_or(now);
    (minute, ends)
}

pub(super) fn key(pk: String, sk: String) -> TableKey {
    TableKey { pk, sk }
}
