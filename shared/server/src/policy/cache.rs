//! The warm instance's copy of each tenant's policy, kept for a bounded
//! time (`DRAFTLINE_POLICY_CACHE_SECONDS`, default 30 s): the longest a
//! `draftline policy set` takes to apply. A stale entry is not read on its
//! own: the next draft reads the policy in the same `BatchGetItem` as its
//! key record, so a policy never costs a request of its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::StoredPolicy;
use draftline_contract::identity::TenantId;

/// The most tenants one instance keeps; past it the cache starts afresh.
const MAX_TENANTS: usize = 1024;

/// A tenant's policy (or that it has none), and when it was read.
type Entry = (DateTime<Utc>, Option<Arc<StoredPolicy>>);

/// Each tenant's policy (or that it has none), as read at a time.
#[derive(Debug)]
pub struct PolicyCache {
    bound: Duration,
    entries: Mutex<HashMap<TenantId, Entry>>,
}

impl PolicyCache {
    /// A cache whose entries are used for `bound` after they were read
    /// (`Duration::ZERO`: every draft reads the policy).
    pub fn new(bound: Duration) -> Self {
        Self {
            bound,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The tenant's policy as read less than the bound before `now`:
    /// `Some(None)` when it has none, `None` when it must be read.
    pub fn fresh(&self, tenant: &TenantId, now: DateTime<Utc>) -> Option<Option<Arc<StoredPolicy>>> {
        let entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (read_at, policy) = entries.get(tenant)?;
        let age = now.signed_duration_since(*read_at).to_std().unwrap_or(Duration::MAX);
        // A clock that went back (age negative) reads again, too.
        (now >= *read_at && age < self.bound).then(|| policy.clone())
    }

    /// Keeps what was read at `now`, and hands it back shared.
    pub fn remember(
        &self,
        tenant: &TenantId,
        policy: Option<StoredPolicy>,
        now: DateTime<Utc>,
    ) -> Option<Arc<StoredPolicy>> {
        let policy = policy.map(Arc::new);
        let mut entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if entries.len() >= MAX_TENANTS && !entries.contains_key(tenant) {
            entries.clear();
        }
        entries.insert(tenant.clone(), (now, policy.clone()));
        policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn an_entry_is_used_within_the_bound_only() {
        let cache = PolicyCache::new(Duration::from_secs(30));
        let tenant = TenantId::parse("demo").unwrap();
        let at = Utc.with_ymd_and_hms(2026, 11, 29, 9, 0, 0).unwrap();
        assert!(cache.fresh(&tenant, at).is_none());
        cache.remember(&tenant, None, at);
        assert_eq!(cache.fresh(&tenant, at + chrono::Duration::seconds(29)), Some(None));
        assert!(cache.fresh(&tenant, at + chrono::Duration::seconds(30)).is_none());
        assert!(cache.fresh(&tenant, at - chrono::Duration::seconds(1)).is_none());
        assert!(PolicyCache::new(Duration::ZERO).fresh(&tenant, at).is_none());
    }
}
