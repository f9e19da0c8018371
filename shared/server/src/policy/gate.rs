//! The limits gate: the one place that decides anything about a limit
//! (`docs/limits.md`). A warm instance holds one [`Limits`]: its copy of
//! each tenant's policy ([`super::cache`]) and the deployment's budget. The pipeline meets it at
//! six named points:
//!
//! 1. **admit a call**: [`Limits::admit`], the deployment's budget
//!    (`DRAFTLINE_RATE_LIMIT_PER_MINUTE`, `RATE_LIMITED`), which is not the
//!    tenant's policy and refuses in any mode;
//! 2. **admit a read**: [`Limits::admit_read`], the policy's rate;
//! 3. **the lookup's keys**: [`Limits::lookup`], what a draft's key lookup
//!    reads for the limits (the policy, unless cached; the run's counter,
//!    unless this instance knows the run has room);
//! 4. **hold a draft**: [`Looked::hold`], the call's [`Gate`] from what the
//!    lookup found, refusing a run already at its count before anything
//!    is priced;
//! 5. **check the priced draft**: [`Gate::check_priced`], the counterparty
//!    rule, and the counters the draft moves;
//! 6. **write into the transaction and settle the outcome**:
//!    [`Gate::settle`], the counters' updates handed to each attempt at
//!    the write, with the audit item's [`Label`]; a counter that failed
//!    its condition is refused or, in observe mode, lifted and sent again.
//!    This is the one observe loop: a draft's transaction, a draft's claim
//!    in the ERP and a read's or the budget's own `UpdateItem` all go
//!    through it.
//!
//! Under a policy in `enforce` mode a limit refuses the call
//! (`LIMIT_REACHED`); in `observe` mode the call passes and the limit is
//! kept, with every other limit it passes, for its one audit item. A
//! counter that reached one is counted again without its conditions, the
//! others keep theirs, so each limit the call would have passed is found.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use chrono::{DateTime, Utc};

use draftline_contract::clock::Clock;
use draftline_contract::error::{ReachedLimit, ToolError};
use draftline_contract::identity::Caller;
use draftline_contract::policy::{Applied, Mode};
use draftline_contract::store::{Attributes, Found, TableKey, Write};
use draftline_contract::tool::Stakes;

use super::counters::{self, CounterKind, Counting, Reservation};
use super::{PolicyCache, PolicyStore};
use crate::audit::AuditRecord;
use crate::storage::Table;

/// How many times a write is sent again as it is, after another call moved
/// one of its counters at the same moment.
const CONTENDED_ATTEMPTS: usize = 3;

/// A warm instance's limits: each tenant's policy as last read, and the
/// deployment's budget.
#[derive(Debug)]
pub struct Limits {
    policies: PolicyCache,
    /// `DRAFTLINE_RATE_LIMIT_PER_MINUTE`, if set.
    budget: Option<u32>,
}

impl Limits {
    /// The limits of an instance keeping each policy for `policy_cache`,
    /// with the deployment's `budget` of calls per person per minute.
    pub fn new(policy_cache: StdDuration, budget: Option<u32>) -> Self {
        Self {
            policies: PolicyCache::new(policy_cache),
            budget,
        }
    }

    /// The instance's copy of the tenants' policies (the examiner reads
    /// what a caller has left through it).
    pub fn policies(&self) -> &PolicyCache {
        &self.policies
    }

    /// Admits any call of `caller` at `now`: spends one call of the
    /// deployment's budget, if one is set (one conditional `UpdateItem`,
    /// before the call is read); refused `RATE_LIMITED`.
    pub async fn admit(&self, table: &dyn Table, caller: &Caller, now: DateTime<Utc>) -> Result<(), ToolError> {
        let Some(limit) = self.budget else {
            return Ok(());
        };
        let mut gate = Gate::counting(None, Counting::of_budget(caller, limit, now), now);
        gate.spend(table).await
    }

    /// Admits a call of read tool `tool` by `caller` now: counts it
    /// against the policy's rate, if it sets one (one conditional
    /// `UpdateItem`, before the ERP is asked). Returns the limits observe
    /// mode let pass, or the refusal: a refused read counts nothing and
    /// reads nothing. A policy that cannot be read holds no read.
    pub async fn admit_read(
        &self,
        table: &dyn Table,
        caller: &Caller,
        tool: &str,
        clock: &dyn Clock,
    ) -> Result<Vec<ReachedLimit>, ToolError> {
        let tenant = caller.tenant();
        // Calls that find the copy stale at once share one read.
        let in_force = self
            .policies
            .current(tenant, clock, || async {
                PolicyStore::new(table, tenant).in_force().await
            })
            .await?;
        let now = clock.now();
        let applied = in_force.for_read(caller.branch());
        let Some(counting) = applied.as_deref().and_then(|a| Counting::of_read(a, caller, tool, now)) else {
            return Ok(Vec::new());
        };
        let mut gate = Gate::counting(applied, counting, now);
        gate.spend(table).await?;
        Ok(gate.observed)
    }

    /// What a draft by `caller` (in agent run `run`) reads for its limits
    /// in its key lookup at `now`: the tenant's policy, unless the
    /// instance's copy is fresh, and the run's counter whenever the policy
    /// may limit the run's drafts (it is one more key of the same request;
    /// a hint that left it out saved 1–1.5 % of a draft's instructions and
    /// no request, `docs/benchmarks.md`, and was removed).
    pub fn lookup<'a>(&'a self, caller: &'a Caller, run: Option<&'a str>, now: DateTime<Utc>) -> Lookup<'a> {
        let tenant = caller.tenant();
        let cached = self.policies.fresh_for_draft(tenant, caller.branch(), now);
        let counts_runs = match &cached {
            Some(Ok(Some(applied))) => applied.run_drafts.is_some(),
            Some(_) => false,
            None => true,
        };
        let run_key = run
            .filter(|_| counts_runs)
            .map(|run| counters::run_key(caller.owner(), run));
        Lookup {
            limits: self,
            caller,
            run,
            now,
            policy_key: cached.is_none().then(|| super::store::current_key(tenant)),
            cached,
            run_key,
        }
    }
}

/// What a draft's key lookup reads for its limits ([`Limits::lookup`]).
pub struct Lookup<'a> {
    limits: &'a Limits,
    caller: &'a Caller,
    run: Option<&'a str>,
    now: DateTime<Utc>,
    /// The limits from the instance's fresh copy of the policy, if it has one.
    cached: Option<Result<Option<Arc<Applied>>, ToolError>>,
    policy_key: Option<TableKey>,
    run_key: Option<TableKey>,
}

impl<'a> Lookup<'a> {
    /// The keys to read along the key's record.
    pub fn keys(&self) -> impl Iterator<Item = TableKey> + '_ {
        self.policy_key.iter().chain(&self.run_key).cloned()
    }

    /// What the lookup's `found` items mean for the draft's limits: the
    /// policy read is kept in the instance's copy.
    pub fn found(self, found: &Found) -> Looked<'a> {
        let Self {
            limits,
            caller,
            run,
            now,
            cached,
            policy_key,
            run_key,
        } = self;
        let find = |key: &TableKey| found.get(key);
        let applied = cached.unwrap_or_else(|| {
            let item = policy_key.as_ref().and_then(find);
            limits
                .policies
                .remember_for_draft(caller.tenant(), item, caller.branch(), now)
        });
        let run_use = run_key.as_ref().and_then(find).cloned();
        Looked {
            caller,
            run,
            now,
            applied,
            run_use,
        }
    }
}

/// What a draft's key lookup found for its limits: the limits that apply
/// to its caller (or the refusal of a policy that cannot be read), and the
/// run's counter as stored, if it was read.
pub struct Looked<'a> {
    caller: &'a Caller,
    run: Option<&'a str>,
    now: DateTime<Utc>,
    applied: Result<Option<Arc<Applied>>, ToolError>,
    run_use: Option<Attributes>,
}

impl<'a> Looked<'a> {
    /// Holds the draft of `tool` at the gate, once its key's record said
    /// it goes on. A new draft (`continued: false`) is held to the policy:
    /// one that cannot be read refuses it (fail closed), and a run already
    /// at its count refuses it here, before the ERP is asked to price it.
    /// A takeover of a lapsed claim (`continued: true`) carries on a claim
    /// that was held and counted, and may have written: nothing refuses
    /// it, and it counts nothing again.
    pub fn hold(self, tool: &'a str, continued: bool) -> Result<Gate<'a>, ToolError> {
        let applied = match self.applied {
            Ok(applied) => applied,
            Err(_) if continued => None,
            Err(refusal) => return Err(refusal),
        };
        let mut gate = Gate {
            applied,
            observed: Vec::new(),
            counting: None,
            now: self.now,
            draft: Some(Drafting {
                caller: self.caller,
                tool,
                run: self.run,
                counts: !continued,
            }),
        };
        if !continued
            && let (Some(applied), Some(run)) = (&gate.applied, self.run)
            && let Some(refusal) =
                Counting::run_at_its_count(applied, self.caller, run, self.run_use.as_ref(), self.now)
        {
            gate.meet(refusal)?;
        }
        Ok(gate)
    }
}

/// The draft a gate holds: who drafts with which tool, in which run, and
/// whether it counts (a takeover does not).
#[derive(Debug, Clone, Copy)]
struct Drafting<'a> {
    caller: &'a Caller,
    tool: &'a str,
    run: Option<&'a str>,
    counts: bool,
}

/// One call at the gate: the limits of the tenant's policy that apply to
/// its caller (none without a policy), each limit observe mode let it
/// pass so far, and the counters it moves.
#[derive(Debug, Clone)]
pub struct Gate<'a> {
    applied: Option<Arc<Applied>>,
    observed: Vec<ReachedLimit>,
    counting: Option<Counting>,
    now: DateTime<Utc>,
    draft: Option<Drafting<'a>>,
}

/// What one attempt at a write carrying the gate's counters came to
/// ([`Gate::settle`]).
#[derive(Debug)]
pub enum Attempt<T> {
    /// Ended: written with its counters, or refused by another part.
    Done(T),
    /// The counter of this kind failed its condition, stored as this.
    Over(CounterKind, Option<Attributes>),
    /// Another call moved a counter at the same moment: the write is sent
    /// again as it is, a few times, and then ends as this.
    Contended(T),
}

/// What one attempt at a write is given to send: the counters' updates, by
/// kind (under their limits' conditions unless observe mode lifted them),
/// and what the call's audit item says of its limits.
#[derive(Debug)]
pub struct Sending {
    pub counters: Vec<(CounterKind, Write)>,
    pub label: Label,
}

/// What a call's audit item says of its limits.
#[derive(Debug, Clone, PartialEq)]
pub enum Label {
    /// The call was held to no policy.
    None,
    /// The version of the policy the call was held to.
    Policy(u64),
    /// Every limit observe mode let the call pass.
    Observed(Vec<ReachedLimit>),
    /// The limit that refused the call.
    Refused(Box<ReachedLimit>),
}

impl Label {
    /// `audit`, saying it.
    pub fn on(self, audit: AuditRecord) -> AuditRecord {
        match self {
            Self::None => audit,
            Self::Policy(version) => audit.under_policy(version),
            Self::Observed(limits) => audit.reaching(&limits, true),
            Self::Refused(limit) => audit.reaching(std::slice::from_ref(&limit), false),
        }
    }

    /// What the audit item of a call that ended as `result`, after observe
    /// mode let `observed` pass, says: the limit that refused it, or those
    /// let pass.
    pub fn of_outcome<T>(result: &Result<T, ToolError>, observed: Vec<ReachedLimit>) -> Self {
        match result.as_ref().err().and_then(ToolError::limit) {
            Some(limit) => Self::Refused(Box::new(limit.clone())),
            None if observed.is_empty() => Self::None,
            None => Self::Observed(observed),
        }
    }
}

impl<'a> Gate<'a> {
    /// A call moving `counting` outside any draft (a read's rate, the
    /// deployment's budget), held to `applied`.
    fn counting(applied: Option<Arc<Applied>>, counting: Counting, now: DateTime<Utc>) -> Self {
        Self {
            applied,
            observed: Vec::new(),
            counting: Some(counting),
            now,
            draft: None,
        }
    }

    /// The near-duplicate window of the draft: the policy's, if it sets
    /// one (0: none), else `default`.
    pub fn near_duplicate_window(&self, default: Option<StdDuration>) -> Option<StdDuration> {
        match self.applied.as_ref().and_then(|a| a.near_duplicate_hours) {
            Some(0) => None,
            Some(hours) => Some(StdDuration::from_secs(u64::from(hours) * 3600)),
            None => default,
        }
    }

    /// Checks the priced draft worth `stakes`: the counterparty rule,
    /// before anything is written (on either backend: before the ERP is
    /// asked, too), and the counters it then moves (none for a takeover).
    pub fn check_priced(&mut self, stakes: &Stakes) -> Result<(), ToolError> {
        let (Some(applied), Some(draft)) = (self.applied.clone(), self.draft) else {
            return Ok(());
        };
        if let Some(refusal) = super::counterparty::outside(&applied, stakes) {
            self.meet(refusal)?;
        }
        self.counting = draft
            .counts
            .then(|| Counting::of(&applied, draft.caller, (draft.tool, draft.run), stakes, self.now))
            .flatten();
        Ok(())
    }

    /// What the counters the draft moves add, to remember with a claim.
    pub fn reservation(&self) -> Option<Reservation> {
        self.counting.as_ref().map(Counting::reservation)
    }

    /// The limits observe mode let the call pass, in the order met.
    pub fn observed(&self) -> &[ReachedLimit] {
        &self.observed
    }

    /// What the call's audit item says: every limit observe mode let the
    /// call pass, or else the version of the policy it was held to.
    pub fn label(&self) -> Label {
        match (self.observed.is_empty(), &self.applied) {
            (false, _) => Label::Observed(self.observed.clone()),
            (true, Some(applied)) => Label::Policy(applied.version),
            (true, None) => Label::None,
        }
    }

    /// Sends the call's write with `send`, which gets the counters'
    /// updates and the audit item's label for each attempt, and
    /// settles what it came to: a counter over its limit is refused, or
    /// (observe mode) lifted and the write sent again at once; a write
    /// contended on a counter is sent again as it is, a few times.
    pub async fn settle<T, Send, Sent>(&mut self, mut send: Send) -> Result<T, ToolError>
    where
        Send: FnMut(Sending) -> Sent,
        Sent: Future<Output = Result<Attempt<T>, ToolError>>,
    {
        let mut contended = 0;
        loop {
            let counters = match &self.counting {
                Some(counting) => counting.items(),
                None => Vec::new(),
            };
            let sending = Sending {
                counters,
                label: self.label(),
            };
            match send(sending).await? {
                Attempt::Done(done) => return Ok(done),
                Attempt::Over(kind, stored) => self.over(kind, stored.as_ref())?,
                Attempt::Contended(done) if contended == CONTENDED_ATTEMPTS => return Ok(done),
                Attempt::Contended(_) => {
                    tokio::time::sleep(StdDuration::from_millis(5 + 20 * contended as u64)).await;
                    contended += 1;
                }
            }
        }
    }

    /// Moves each counter with an `UpdateItem` of its own, one at a time
    /// (a read's rate, the deployment's budget: there is no write for them
    /// to ride in), through [`Self::settle`].
    async fn spend(&mut self, table: &dyn Table) -> Result<(), ToolError> {
        let Some(counting) = &self.counting else {
            return Ok(());
        };
        for kind in counting.kinds() {
            self.settle(|sending| async move {
                let Some((_, update)) = sending.counters.into_iter().find(|(k, _)| *k == kind) else {
                    return Ok(Attempt::Done(()));
                };
                Ok(match counters::spend(table, update).await? {
                    Ok(()) => Attempt::Done(()),
                    Err(stored) => Attempt::Over(kind, stored),
                })
            })
            .await?;
        }
        Ok(())
    }

    /// What `refusal` does to the call: it stands (`Err`), or observe mode
    /// lets the call pass and keeps the limit for its audit item (`Ok`).
    /// Only a limit of the policy is observed; any other refusal stands.
    fn meet(&mut self, refusal: ToolError) -> Result<(), ToolError> {
        let observing = self.applied.as_ref().is_some_and(|a| a.mode == Mode::Observe);
        match refusal.limit() {
            Some(limit) if observing => {
                // A limit seen before the draft was priced (the run's count)
                // and again at its write is one limit.
                let again = self
                    .observed
                    .iter()
                    .any(|seen| seen.name == limit.name && seen.applies_to == limit.applies_to);
                if !again {
                    tracing::info!(limit = %limit.name, applies_to = %limit.applies_to, "a limit observed, not enforced");
                    self.observed.push(limit.clone());
                }
                Ok(())
            }
            _ => Err(refusal),
        }
    }

    /// The counter of `kind` failed its condition, stored as `stored`:
    /// meets every limit it reached and, when all of them were let pass,
    /// lifts its conditions for the next attempt.
    fn over(&mut self, kind: CounterKind, stored: Option<&Attributes>) -> Result<(), ToolError> {
        let Some(counting) = &self.counting else {
            return Err(ToolError::internal("a limit counter failed that was not sent"));
        };
        let refusals = counting.reached(kind, stored, self.now);
        if refusals.is_empty() {
            return Err(ToolError::internal("a limit counter failed that was not sent"));
        }
        for refusal in refusals {
            self.meet(refusal)?;
        }
        if self.counting.as_mut().is_some_and(|counting| counting.lift(kind)) {
            Ok(())
        } else {
            Err(ToolError::internal("a limit counter failed without its conditions"))
        }
    }
}

#[cfg(test)]
mod tests {
    //! The gate against the embedded DynamoDB engine (the counters'
    //! conditions are DynamoDB's to evaluate), one test per limit kind:
    //! under it, over it, and in observe mode, on a manual clock.

    use chrono::TimeZone;
    use draftline_contract::clock::ManualClock;
    use draftline_contract::identity::{BranchCode, BranchId, Scopes, TenantId, UserId};
    use draftline_contract::policy::{Amount, Policy};
    use draftline_contract::store::{Cancelled, TransactFailure};

    use super::*;
    use crate::storage::{MemoryTable, Table};

    const TOOL: &str = "purchasing_create_po_draft";

    fn caller(tenant: &str) -> Caller {
        Caller::from_verified(
            TenantId::parse(tenant).unwrap(),
            BranchId::parse("BR-SBY-01").unwrap(),
            BranchCode::parse("SBY").unwrap(),
            UserId::parse("agent-1").unwrap(),
            Vec::new(),
            Scopes::from_claim(""),
        )
    }

    /// 10:00 in the tenant's time zone (+07:00), 2026-12-07.
    fn clock() -> ManualClock {
        ManualClock::new(Utc.with_ymd_and_hms(2026, 12, 7, 3, 0, 0).unwrap())
    }

    /// Sets the tenant's policy: `mode`, with `limits` (JSON).
    async fn policy(db: &MemoryTable, caller: &Caller, mode: &str, limits: &str) -> u64 {
        let document = format!(
            r#"{{"version": null, "mode": "{mode}", "time_zone": "+07:00", "limits": {limits}, "branches": null}}"#
        );
        let policy = Policy::parse(document.as_bytes()).unwrap();
        let stored = PolicyStore::new(db, caller.tenant())
            .set(&policy, "test", Utc::now())
            .await
            .map_err(|_| "policy not set")
            .unwrap();
        stored.version
    }

    /// The draft's limits as its key lookup reads them (each key with a
    /// `GetItem` of its own here; the pipeline reads them in its batch).
    async fn held<'a>(
        limits: &'a Limits,
        db: &MemoryTable,
        caller: &'a Caller,
        run: Option<&'a str>,
        now: DateTime<Utc>,
    ) -> Result<Gate<'a>, ToolError> {
        let lookup = limits.lookup(caller, run, now);
        let found = Found::of(lookup.keys().filter_map(|key| db.item(&key)));
        lookup.found(&found).hold(TOOL, false)
    }

    /// Sends the gate's counters in a transaction of their own until the
    /// gate settles it: the label the audit item would carry, or the refusal.
    async fn settle(gate: &mut Gate<'_>, db: &MemoryTable) -> Result<Label, ToolError> {
        gate.settle(|Sending { counters, label }| async move {
            if counters.is_empty() {
                return Ok(Attempt::Done(label));
            }
            let kinds: Vec<CounterKind> = counters.iter().map(|(kind, _)| *kind).collect();
            let items = counters.into_iter().map(|(_, item)| item).collect();
            match db.transact(items, &ulid::Ulid::new().to_string(), "test").await {
                Ok(()) => Ok(Attempt::Done(label)),
                Err(TransactFailure::Cancelled(reasons)) => {
                    let (index, stored) = reasons
                        .iter()
                        .enumerate()
                        .find_map(|(i, reason)| match reason {
                            Cancelled::ConditionFailed(stored) => Some((i, stored.clone())),
                            _ => None,
                        })
                        .unwrap();
                    Ok(Attempt::Over(kinds[index], stored))
                }
                Err(other) => panic!("{other:?}"),
            }
        })
        .await
    }

    fn idr(units: i64) -> Stakes {
        Stakes {
            total: Some(Amount {
                currency: "IDR".to_owned(),
                hundredths: units * 100,
            }),
            counterparty: None,
        }
    }

    /// Holds, prices at `units` IDR and settles one draft in `run`.
    async fn draft(
        limits: &Limits,
        db: &MemoryTable,
        caller: &Caller,
        run: &str,
        units: i64,
        now: DateTime<Utc>,
    ) -> Result<Label, ToolError> {
        let mut gate = held(limits, db, caller, Some(run), now).await?;
        gate.check_priced(&idr(units))?;
        settle(&mut gate, db).await
    }

    fn limit_of(refused: Result<impl std::fmt::Debug, ToolError>) -> String {
        match refused {
            Err(ToolError::LimitReached { limit, .. }) => limit.name,
            other => panic!("not refused by a limit: {other:?}"),
        }
    }

    fn observed(label: &Label) -> Vec<&str> {
        match label {
            Label::Observed(limits) => limits.iter().map(|l| l.name.as_str()).collect(),
            other => panic!("nothing observed: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_runs_drafts_pass_under_its_count_are_refused_at_it_and_observe_mode_counts_past_it() {
        let db = &MemoryTable::new();
        let limits = Limits::new(StdDuration::ZERO, None);
        let now = clock().now();
        let agent = caller("t-run");
        let version = policy(db, &agent, "enforce", r#"{"per_run": {"max_drafts": 2}}"#).await;

        // Under: two drafts count, each held to the policy's version.
        for _ in 0..2 {
            assert_eq!(
                draft(&limits, db, &agent, "r-1", 10, now).await.unwrap(),
                Label::Policy(version)
            );
        }
        // At the count: refused when held, before the draft is priced.
        assert_eq!(
            limit_of(held(&limits, db, &agent, Some("r-1"), now).await),
            "per_run.max_drafts"
        );

        // Over at the write: two drafts held at once with one left; the
        // second's counter fails its condition and the gate refuses it.
        let (mut first, mut second) = (
            held(&limits, db, &agent, Some("r-2"), now).await.unwrap(),
            held(&limits, db, &agent, Some("r-2"), now).await.unwrap(),
        );
        draft(&limits, db, &agent, "r-2", 10, now).await.unwrap();
        first.check_priced(&idr(10)).unwrap();
        second.check_priced(&idr(10)).unwrap();
        settle(&mut first, db).await.unwrap();
        assert_eq!(limit_of(settle(&mut second, db).await), "per_run.max_drafts");

        // Observe: the run's third draft is held (the limit noted once) and
        // counted without the condition.
        policy(db, &agent, "observe", r#"{"per_run": {"max_drafts": 2}}"#).await;
        let label = draft(&limits, db, &agent, "r-1", 10, now).await.unwrap();
        assert_eq!(observed(&label), ["per_run.max_drafts"]);
        let stored = db.item(&counters::run_key(agent.owner(), "r-1")).unwrap();
        assert_eq!(counters::used(&stored, counters::DRAFTS), 3);
    }

    #[tokio::test]
    async fn a_persons_day_passes_under_its_value_is_refused_over_it_resets_at_midnight_and_observe_mode_lets_it_pass()
    {
        let db = &MemoryTable::new();
        let limits = Limits::new(StdDuration::ZERO, None);
        let clock = clock();
        let agent = caller("t-day");
        let day = r#"{"per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "1000"}]}}"#;
        let version = policy(db, &agent, "enforce", day).await;

        assert_eq!(
            draft(&limits, db, &agent, "r-1", 600, clock.now()).await.unwrap(),
            Label::Policy(version)
        );
        assert_eq!(
            limit_of(draft(&limits, db, &agent, "r-2", 600, clock.now()).await),
            "per_person_per_day.max_value"
        );
        // 400 are left of the day; the next day starts at midnight +07:00.
        assert_eq!(
            draft(&limits, db, &agent, "r-3", 400, clock.now()).await.unwrap(),
            Label::Policy(version)
        );
        clock.advance(chrono::Duration::hours(14));
        assert_eq!(
            draft(&limits, db, &agent, "r-4", 600, clock.now()).await.unwrap(),
            Label::Policy(version)
        );

        policy(db, &agent, "observe", day).await;
        let label = draft(&limits, db, &agent, "r-5", 600, clock.now()).await.unwrap();
        assert_eq!(observed(&label), ["per_person_per_day.max_value"]);
    }

    #[tokio::test]
    async fn a_reads_rate_passes_under_its_calls_is_refused_over_them_resets_with_the_minute_and_observe_mode_names_it()
    {
        let db = &MemoryTable::new();
        let limits = Limits::new(StdDuration::ZERO, None);
        let clock = clock();
        let agent = caller("t-rate");
        let rate = r#"{"per_tool_per_person": {"calls_per_minute": 2}}"#;
        policy(db, &agent, "enforce", rate).await;
        let read = "inventory_get_stock";

        for _ in 0..2 {
            assert!(limits.admit_read(db, &agent, read, &clock).await.unwrap().is_empty());
        }
        assert_eq!(
            limit_of(limits.admit_read(db, &agent, read, &clock).await),
            "per_tool_per_person.calls_per_minute"
        );
        clock.advance(chrono::Duration::seconds(60));
        assert!(limits.admit_read(db, &agent, read, &clock).await.unwrap().is_empty());

        policy(db, &agent, "observe", rate).await;
        limits.admit_read(db, &agent, read, &clock).await.unwrap();
        let passed = limits.admit_read(db, &agent, read, &clock).await.unwrap();
        let names: Vec<&str> = passed.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["per_tool_per_person.calls_per_minute"]);
    }

    #[tokio::test]
    async fn the_budget_passes_under_its_calls_refuses_over_them_even_under_an_observing_policy_and_resets_with_the_minute()
     {
        let db = &MemoryTable::new();
        let limits = Limits::new(StdDuration::ZERO, Some(2));
        let clock = clock();
        let agent = caller("t-budget");
        // The budget is the deployment's, not the tenant's policy: observe
        // mode does not let a call past it.
        policy(
            db,
            &agent,
            "observe",
            r#"{"per_tool_per_person": {"calls_per_minute": 1}}"#,
        )
        .await;

        for _ in 0..2 {
            limits.admit(db, &agent, clock.now()).await.unwrap();
        }
        match limits.admit(db, &agent, clock.now()).await {
            Err(ToolError::RateLimited {
                retry_after_seconds, ..
            }) => assert_eq!(retry_after_seconds, 60),
            other => panic!("not refused by the budget: {other:?}"),
        }
        clock.advance(chrono::Duration::seconds(60));
        limits.admit(db, &agent, clock.now()).await.unwrap();
    }
}
