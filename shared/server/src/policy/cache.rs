//! The warm instance's copy of each tenant's policy, kept for a bounded
//! time (`DRAFTLINE_POLICY_CACHE_SECONDS`, default 30 s): the longest a
//! `draftline policy set` takes to apply. A draft reads a stale entry in
//! the same `BatchGetItem` as its key record, at no request of its own; a
//! read tool, whose rate the policy may set, reads it with one `GetItem`
//! ([`PolicyCache::current`]), and the calls a cold instance serves at
//! once share that one read. Each tenant has its own entry and its own
//! wait: a slow read of one tenant's policy holds up no other tenant, and a
//! full cache makes room one entry at a time (the stale ones, else the one
//! read longest ago), never by forgetting every tenant at once.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::InForce;
use draftline_contract::clock::Clock;
use draftline_contract::error::ToolError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_contract::policy::Applied;
use draftline_contract::store::Attributes;

/// The most tenants one instance keeps; past it the entry read longest
/// ago (that no call is reading) makes room.
const MAX_TENANTS: usize = 1024;

/// A tenant's policy (or that it has none, or that it cannot be read),
/// and when it was read.
type Entry = (DateTime<Utc>, InForce);

/// One tenant's place in the cache: what was read, and the lock its calls
/// that find it stale wait on (one per tenant: a slow read of one tenant
/// holds up no other).
#[derive(Debug, Default)]
struct Slot {
    read: Option<Entry>,
    reading: Arc<tokio::sync::Mutex<()>>,
}

/// Each tenant's policy (or that it has none), as read at a time.
#[derive(Debug)]
pub struct PolicyCache {
    bound: Duration,
    slots: Mutex<HashMap<TenantId, Slot>>,
}

impl PolicyCache {
    /// A cache whose entries are used for `bound` after they were read
    /// (`Duration::ZERO`: every draft reads the policy).
    pub fn new(bound: Duration) -> Self {
        Self {
            bound,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// The tenant's policy: the instance's copy within the bound, or else
    /// what `read` reads, kept. Calls that find the tenant's copy stale at
    /// the same time wait for one read and share it.
    pub async fn current<E, Read, Reading>(
        &self,
        tenant: &TenantId,
        clock: &dyn Clock,
        read: Read,
    ) -> Result<InForce, E>
    where
        Read: FnOnce() -> Reading,
        Reading: Future<Output = Result<InForce, E>>,
    {
        if let Some(fresh) = self.fresh(tenant, clock.now()) {
            return Ok(fresh);
        }
        let reading = {
            let mut slots = self.lock();
            Arc::clone(&self.slot(&mut slots, tenant, clock.now()).reading)
        };
        let _reading = reading.lock().await;
        // The read this call waited for may have made the copy fresh.
        let now = clock.now();
        if let Some(fresh) = self.fresh(tenant, now) {
            return Ok(fresh);
        }
        Ok(self.remember(tenant, read().await?, now))
    }

    /// The tenant's policy as read less than the bound before `now`;
    /// `None` when it must be read.
    pub fn fresh(&self, tenant: &TenantId, now: DateTime<Utc>) -> Option<InForce> {
        let slots = self.lock();
        let (read_at, policy) = slots.get(tenant)?.read.as_ref()?;
        self.is_fresh(*read_at, now).then(|| policy.clone())
    }

    /// Keeps what was read at `now`, and hands it back.
    pub fn remember(&self, tenant: &TenantId, policy: InForce, now: DateTime<Utc>) -> InForce {
        let mut slots = self.lock();
        self.slot(&mut slots, tenant, now).read = Some((now, policy.clone()));
        policy
    }

    /// The limits a draft by an agent of `branch` is held to, from the
    /// tenant's copy within the bound (or its refusal: a policy that cannot
    /// be read); `None` when the policy must be read.
    pub fn fresh_for_draft(
        &self,
        tenant: &TenantId,
        branch: &BranchId,
        now: DateTime<Utc>,
    ) -> Option<Result<Option<Arc<Applied>>, ToolError>> {
        self.fresh(tenant, now)
            .map(|in_force| self.for_draft(&in_force, branch))
    }

    /// Keeps the tenant's policy item as read at `now` along another
    /// request (`None`: it has none), and returns what it holds a draft by
    /// an agent of `branch` to.
    pub fn remember_for_draft(
        &self,
        tenant: &TenantId,
        item: Option<&Attributes>,
        branch: &BranchId,
        now: DateTime<Utc>,
    ) -> Result<Option<Arc<Applied>>, ToolError> {
        let in_force = self.remember(tenant, InForce::of(item), now);
        self.for_draft(&in_force, branch)
    }

    /// A policy that cannot be read refuses a draft until the bound, in
    /// which a fix applies (at least a second).
    fn for_draft(&self, in_force: &InForce, branch: &BranchId) -> Result<Option<Arc<Applied>>, ToolError> {
        in_force.for_draft(branch, self.bound.as_secs().max(1))
    }

    /// How many tenants the cache holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TenantId, Slot>> {
        self.slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn is_fresh(&self, read_at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
        let age = now.signed_duration_since(read_at).to_std().unwrap_or(Duration::MAX);
        // A clock that went back (age negative) reads again, too.
        now >= read_at && age < self.bound
    }

    /// The tenant's slot, made (room made first, when the cache is full).
    fn slot<'s>(&self, slots: &'s mut HashMap<TenantId, Slot>, tenant: &TenantId, now: DateTime<Utc>) -> &'s mut Slot {
        if slots.len() >= MAX_TENANTS && !slots.contains_key(tenant) {
            // Only a slot no call is reading can go (its lock is held by
            // the map alone): the stale ones, else the one read longest ago.
            let idle = |slot: &Slot| Arc::strong_count(&slot.reading) == 1;
            slots.retain(|_, slot| !idle(slot) || slot.read.as_ref().is_some_and(|(at, _)| self.is_fresh(*at, now)));
            if slots.len() >= MAX_TENANTS
                && let Some(oldest) = slots
                    .iter()
                    .filter(|(_, slot)| idle(slot))
                    .min_by_key(|(_, slot)| slot.read.as_ref().map(|(at, _)| *at))
                    .map(|(tenant, _)| tenant.clone())
            {
                slots.remove(&oldest);
            }
        }
        slots.entry(tenant.clone()).or_default()
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
        cache.remember(&tenant, InForce::Nothing, at);
        assert!(matches!(
            cache.fresh(&tenant, at + chrono::Duration::seconds(29)),
            Some(InForce::Nothing)
        ));
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
            Ok::<_, ()>(InForce::Nothing)
        };
        let calls = (0..16).map(|_| cache.current(&tenant, &clock, read));
        let answers = futures::future::join_all(calls).await;
        assert!(answers.iter().all(|a| matches!(a, Ok(InForce::Nothing))));
        assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 1);
        // A failed read keeps nothing: the next call reads again.
        let other = TenantId::parse("other").unwrap();
        let failed = cache.current(&other, &clock, || async { Err::<InForce, _>("down") });
        assert!(matches!(failed.await, Err("down")));
        assert!(cache.fresh(&other, clock.now()).is_none());
    }

    #[tokio::test]
    async fn a_slow_read_of_one_tenant_holds_up_no_other() {
        let cache = PolicyCache::new(Duration::from_secs(30));
        let clock = draftline_contract::clock::SystemClock;
        let (slow, other) = (TenantId::parse("slow").unwrap(), TenantId::parse("other").unwrap());
        let release = tokio::sync::Notify::new();
        let slow_read = cache.current(&slow, &clock, || async {
            release.notified().await;
            Ok::<_, ()>(InForce::Nothing)
        });
        let other_read = async {
            // Started while the slow tenant's read waits, and answered.
            let answered = tokio::time::timeout(
                Duration::from_secs(5),
                cache.current(&other, &clock, || async { Ok::<_, ()>(InForce::Nothing) }),
            )
            .await;
            release.notify_one();
            answered
        };
        let (slow_answer, other_answer) = tokio::join!(slow_read, other_read);
        assert!(
            matches!(other_answer, Ok(Ok(InForce::Nothing))),
            "the other tenant waited for the slow one"
        );
        assert!(matches!(slow_answer, Ok(InForce::Nothing)));
    }

    #[test]
    fn a_full_cache_makes_room_one_entry_at_a_time_never_by_forgetting_every_tenant() {
        let cache = PolicyCache::new(Duration::from_secs(30));
        let at = Utc.with_ymd_and_hms(2026, 11, 29, 9, 0, 0).unwrap();
        let tenant = |i: usize| TenantId::parse(&format!("t{i}")).unwrap();
        for i in 0..MAX_TENANTS {
            cache.remember(
                &tenant(i),
                InForce::Nothing,
                at + chrono::Duration::milliseconds(i as i64),
            );
        }
        assert_eq!(cache.len(), MAX_TENANTS);
        let now = at + chrono::Duration::seconds(2);
        cache.remember(&tenant(MAX_TENANTS), InForce::Nothing, now);
        assert_eq!(cache.len(), MAX_TENANTS);
        // The one read longest ago made room; every other is still fresh.
        assert!(cache.fresh(&tenant(0), now).is_none());
        assert!((1..=MAX_TENANTS).all(|i| cache.fresh(&tenant(i), now).is_some()));
        // Once entries are stale, they go first, all of them.
        let later = at + chrono::Duration::seconds(31);
        cache.remember(&tenant(MAX_TENANTS + 1), InForce::Nothing, later);
        assert!(cache.len() < MAX_TENANTS);
        assert!(cache.fresh(&tenant(MAX_TENANTS + 1), later).is_some());
    }
}
