//! The warm instance's copy of each tenant's policy, kept for a bounded
//! time (`DRAFTLINE_POLICY_CACHE_SECONDS`, default 30 s): the longest a
//! `draftline policy set` takes to apply. A draft reads a stale entry in
//! the same `BatchGetItem` as its key record, at no request of its own; a
//! read tool, whose rate the policy may set, reads it with one `GetItem`
//! ([`PolicyCache::current`]), and the calls a cold instance serves at
//! once share that one read.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::StoredPolicy;
use draftline_contract::clock::Clock;
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
    /// Held while a stale policy is read, so that the calls waiting for it
    /// use that read instead of each making its own.
    reading: tokio::sync::Mutex<()>,
}

impl PolicyCache {
    /// A cache whose entries are used for `bound` after they were read
    /// (`Duration::ZERO`: every draft reads the policy).
    pub fn new(bound: Duration) -> Self {
        Self {
            bound,
            entries: Mutex::new(HashMap::new()),
            reading: tokio::sync::Mutex::new(()),
        }
    }

    /// The tenant's policy: the instance's copy within the bound, or else
    /// what `read` reads, kept. Calls that find the copy stale at the same
    /// time wait for one read and share it.
    pub async fn current<E, Read, Reading>(
        &self,
        tenant: &TenantId,
        clock: &dyn Clock,
        read: Read,
    ) -> Result<Option<Arc<StoredPolicy>>, E>
    where
        Read: FnOnce() -> Reading,
        Reading: Future<Output = Result<Option<StoredPolicy>, E>>,
    {
        if let Some(fresh) = self.fresh(tenant, clock.now()) {
            return Ok(fresh);
        }
        let _reading = self.reading.lock().await;
        // The read this call waited for may have made the copy fresh.
        let now = clock.now();
        if let Some(fresh) = self.fresh(tenant, now) {
            return Ok(fresh);
        }
        Ok(self.remember(tenant, read().await?, now))
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

    #[tokio::test]
    async fn calls_that_find_the_copy_stale_at_once_share_one_read() {
        let cache = PolicyCache::new(Duration::from_secs(30));
        let tenant = TenantId::parse("demo").unwrap();
        let clock = draftline_contract::clock::SystemClock;
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let read = || async {
            reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::task::yield_now().await;
            Ok::<_, ()>(None)
        };
        let calls = (0..16).map(|_| cache.current(&tenant, &clock, read));
        let answers = futures::future::join_all(calls).await;
        assert!(answers.iter().all(|a| matches!(a, Ok(None))));
        assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 1);
        // A failed read keeps nothing: the next call reads again.
        let other = TenantId::parse("other").unwrap();
        let failed = cache.current(&other, &clock, || async { Err::<Option<StoredPolicy>, _>("down") });
        assert!(matches!(failed.await, Err("down")));
        assert!(cache.fresh(&other, clock.now()).is_none());
    }
}
