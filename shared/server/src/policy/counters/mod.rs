//! The run and day counters a draft moves, as items of the draft's own
//! transaction, and the rate counter of every tool call (a read's is one
//! `UpdateItem` of its own: a read has no write to ride in).
//!
//! - `pk = T#<tenant>#LIMIT#RUN#<branch>#<user>#<run id>`, `sk = USE`: one
//!   agent run's drafts and value per currency. A run is its owner's: the
//!   run id is whatever `X-Agent-Run-Id` a caller sends, so two people's
//!   calls under one id are two runs, and no one can spend or read another
//!   person's run ([`Owner`]);
//! - `pk = T#<tenant>#LIMIT#DAY#<user>`, `sk = <YYYY-MM-DD>` (the tenant's
//!   day): what was drafted for one person that day;
//! - `pk = T#<tenant>#LIMIT#RATE#<user>#<tool>`, `sk = MINUTE#<epoch minute>`:
//!   one person's calls of one tool in one minute.
//! - `pk = T#<tenant>#BUDGET#<user>`, `sk = MINUTE#<epoch minute>`: one
//!   person's calls of every tool in one minute, under the deployment's
//!   budget (`DRAFTLINE_RATE_LIMIT_PER_MINUTE`, `429 RATE_LIMITED`), which
//!   is not the tenant's policy and is enforced in any mode.
//!
//! Each is an `Update` that `ADD`s the draft (a run's: `drafts` 1 and
//! `v_<currency>` its total in hundredths; a day's: the total alone, the one
//! thing a day limit bounds; `calls` 1 for a rate) under the condition
//! `used + this <= limit`, written
//! `used <= limit - this` (DynamoDB conditions have no arithmetic). The
//! condition is evaluated with the document's own write, so concurrent
//! drafts cannot pass a limit together, a refused draft counts nothing (the
//! whole transaction is cancelled), and a replay never reaches it. A failed
//! condition returns the counter as stored (`ALL_OLD`), which is what the
//! refusal tells: used, this call's share, the limit.
//!
//! A draft in another system (the ERP) cannot share the transaction: its
//! counters ride in the key's claim instead, before the ERP write, and the
//! claim remembers what it added ([`Reservation`]). A release (the write
//! definitely did not happen) gives exactly that back in the release's own
//! transaction; a claim that may have written keeps it, and a worker taking
//! a lapsed claim over carries it on without counting again.
//!
//! This file builds the counters a call moves ([`Counting`]); where they
//! are stored is `layout`, how each is written `update`, and what one that
//! failed its condition refuses `refusal`.

mod layout;
mod refusal;
mod update;

use chrono::{DateTime, Duration, Utc};

use draftline_contract::error::ToolError;
use draftline_contract::identity::{Caller, Owner};
use draftline_contract::policy::Applied;
use draftline_contract::policy::amount::format_hundredths;
use draftline_contract::store::{Attributes, Update, Write};
use draftline_contract::tool::Stakes;

pub use layout::{
    CALLS, DRAFTS, day_key, minute_of, rate_key, run_counted, run_key, run_key_at, run_pk, used, value_attribute,
};
use layout::{LIMIT_USE, RUN_SK, day_pk, key, minute_sk, rate_pk};
pub use update::spend;

/// How long a run's counter outlives its last draft: a run older than
/// this starts counting again (agent runs last minutes or hours).
const RUN_COUNTER_DAYS: i64 = 30;

/// What one counter counts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Whose {
    /// One agent run.
    Run(String),
    /// One person on one day of the tenant's time zone.
    Day { user: String, day: String },
    /// One person's calls of one tool in one minute (UTC), which ends at
    /// `ends`; a refusal says `refused` did not happen.
    Rate {
        tool: String,
        user: String,
        ends: DateTime<Utc>,
        refused: &'static str,
    },
    /// One person's calls of every tool in one minute (UTC), which ends at
    /// `ends`: the deployment's budget (`DRAFTLINE_RATE_LIMIT_PER_MINUTE`),
    /// not the tenant's policy. It is refused `RATE_LIMITED`, in any mode.
    Budget { ends: DateTime<Utc> },
}

/// The kind of limit a counter counts: a transaction names its counters by
/// it (a call moves at most one counter of each kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CounterKind {
    /// One agent run's drafts and value.
    Run,
    /// One person's value on one day.
    Day,
    /// One person's calls of one tool in a minute (a policy's rate).
    Rate,
    /// One person's calls in a minute (the deployment's budget).
    Budget,
}

impl Whose {
    fn kind(&self) -> CounterKind {
        match self {
            Self::Run(_) => CounterKind::Run,
            Self::Day { .. } => CounterKind::Day,
            Self::Rate { .. } => CounterKind::Rate,
            Self::Budget { .. } => CounterKind::Budget,
        }
    }
}

/// One limit a counter checks.
#[derive(Debug, Clone)]
struct Bound {
    /// The limit's path in the policy.
    name: &'static str,
    /// The counter's attribute (`drafts`, `v_IDR`).
    attribute: String,
    /// `drafts` or the currency.
    unit: String,
    max: i64,
    this: i64,
}

impl Bound {
    /// A limit of `max` on a count (`drafts`, `calls`) a call adds one to.
    fn count(name: &'static str, unit: &str, max: i64) -> Self {
        Self {
            name,
            attribute: unit.to_owned(),
            unit: unit.to_owned(),
            max,
            this: 1,
        }
    }

    fn show(&self, n: i64) -> String {
        // Drafts and calls are counts; a currency's value is in hundredths.
        if self.unit == DRAFTS || self.unit == CALLS {
            n.to_string()
        } else {
            format_hundredths(n)
        }
    }
}

/// One counter item of the draft's transaction.
#[derive(Debug, Clone)]
struct Counter {
    whose: Whose,
    /// Its item's partition and sort keys.
    pk: String,
    sk: String,
    /// What it adds: `drafts` and the value (a run), the value (a day), or
    /// `calls` (a rate, the budget).
    adds: Vec<(String, i64)>,
    bounds: Vec<Bound>,
    /// When its limits reset (`None`: a run's last as long as the run).
    resets_at: Option<DateTime<Utc>>,
    expires_at: i64,
    /// Whether its update carries its limits' conditions: until observe
    /// mode lets a limit it reached pass ([`Counting::lift`]).
    conditioned: bool,
}

/// The counters one draft moves under the policy that applies to it.
#[derive(Debug, Clone)]
pub struct Counting {
    counters: Vec<Counter>,
    version: u64,
}

/// What a claim counted of a tenant's limits: each counter's key and what
/// it added, kept in the claim's key record (`reserved`) so that a release
/// gives back exactly that and a takeover does not count again.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reservation(Vec<Reserved>);

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Reserved {
    pk: String,
    sk: String,
    adds: Vec<(String, i64)>,
}

impl Reservation {
    /// The reservation as the key record stores it (a JSON text).
    pub fn to_text(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_default()
    }

    /// The reservation a key record stored; `None` if it holds none.
    pub fn from_text(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok().map(Self)
    }

    /// The transaction items that give it back: each counter less what it
    /// added, unconditionally (what was added is there to take away).
    pub fn give_back(&self) -> Vec<Write> {
        self.0
            .iter()
            .map(|reserved| {
                let mut update = Update::of(key(reserved.pk.clone(), reserved.sk.clone()));
                update.add = reserved
                    .adds
                    .iter()
                    .map(|(attribute, n)| (attribute.clone(), n.saturating_neg()))
                    .collect();
                Write::Update(update)
            })
            .collect()
    }
}

impl Counting {
    /// What [`Self::items`] adds, to remember with a claim.
    pub fn reservation(&self) -> Reservation {
        Reservation(
            self.counters
                .iter()
                .map(|counter| Reserved {
                    pk: counter.pk.clone(),
                    sk: counter.sk.clone(),
                    adds: counter.adds.clone(),
                })
                .collect(),
        )
    }

    /// The counters a draft of `stakes` by `caller` with `tool` (in agent
    /// run `run`, if any) moves at `now` under `applied`; `None` when no
    /// run, day or rate limit applies to it.
    pub fn of(
        applied: &Applied,
        caller: &Caller,
        (tool, run): (&str, Option<&str>),
        stakes: &Stakes,
        now: DateTime<Utc>,
    ) -> Option<Self> {
        let tenant = caller.tenant();
        let mut drafted = vec![(DRAFTS.to_owned(), 1)];
        drafted.extend(
            stakes
                .total
                .as_ref()
                .map(|total| (value_attribute(&total.currency), total.hundredths)),
        );
        let value_bound = |name: &'static str, limits: &[draftline_contract::policy::Amount]| {
            let total = stakes.total.as_ref()?;
            let limit = limits.iter().find(|l| l.currency == total.currency)?;
            Some(Bound {
                name,
                attribute: value_attribute(&total.currency),
                unit: total.currency.clone(),
                max: limit.hundredths,
                this: total.hundredths,
            })
        };
        let mut counters = Vec::new();
        if let Some(run) = run {
            let mut bounds = Vec::new();
            bounds.extend(run_drafts_bound(applied));
            bounds.extend(value_bound("per_run.max_value", &applied.run_value));
            if !bounds.is_empty() {
                counters.push(run_counter(caller.owner(), run, drafted, bounds, now));
            }
        }
        if let Some(bound) = value_bound("per_person_per_day.max_value", &applied.day_value) {
            // A day counts what a day limit bounds, the value: no limit
            // counts a person's drafts per day, so the day's update does
            // not carry a count nothing reads.
            let adds = vec![(bound.attribute.clone(), bound.this)];
            let day = applied.day_of(now).to_string();
            let resets_at = applied.next_midnight(now);
            counters.push(Counter {
                whose: Whose::Day {
                    user: caller.user().to_string(),
                    day: day.clone(),
                },
                pk: day_pk(tenant, caller.user()),
                sk: day.clone(),
                adds,
                bounds: vec![bound],
                resets_at: Some(resets_at),
                expires_at: (resets_at + Duration::days(2)).timestamp(),
                conditioned: true,
            });
        }
        counters.extend(rate_counter(applied, caller, tool, now, NO_DRAFT));
        (!counters.is_empty()).then_some(Self {
            counters,
            version: applied.version,
        })
    }

    /// The rate counter one call of read tool `tool` by `caller` moves at
    /// `now` under `applied`; `None` when the policy sets no rate.
    pub fn of_read(applied: &Applied, caller: &Caller, tool: &str, now: DateTime<Utc>) -> Option<Self> {
        let counter = rate_counter(applied, caller, tool, now, NOTHING_READ)?;
        Some(Self {
            counters: vec![counter],
            version: applied.version,
        })
    }

    /// The refusal of a new draft by `caller` in run `run`, whose counter
    /// is stored as `stored`, when the run is already at the count
    /// `applied` allows it; `None` when one more draft may pass. Known from
    /// the counter alone, before the draft is priced (the ERP is not
    /// asked); its value limits need the priced draft and are checked with
    /// its write.
    pub fn run_at_its_count(
        applied: &Applied,
        caller: &Caller,
        run: &str,
        stored: Option<&Attributes>,
        now: DateTime<Utc>,
    ) -> Option<ToolError> {
        let bound = run_drafts_bound(applied)?;
        if stored.map_or(0, |item| used(item, DRAFTS)) < bound.max {
            return None;
        }
        let adds = vec![(DRAFTS.to_owned(), 1)];
        let counting = Self {
            counters: vec![run_counter(caller.owner(), run, adds, vec![bound], now)],
            version: applied.version,
        };
        counting.reached(CounterKind::Run, stored, now).into_iter().next()
    }

    /// The counter of `caller`'s calls of any tool in the minute of `now`
    /// under the deployment's budget of `limit` calls per minute.
    pub fn of_budget(caller: &Caller, limit: u32, now: DateTime<Utc>) -> Self {
        let (minute, ends) = minute_of(now);
        let counter = Counter {
            whose: Whose::Budget { ends },
            pk: format!("T#{}#BUDGET#{}", caller.tenant(), caller.user()),
            sk: minute_sk(minute),
            adds: vec![(CALLS.to_owned(), 1)],
            bounds: vec![Bound::count("DRAFTLINE_RATE_LIMIT_PER_MINUTE", CALLS, i64::from(limit))],
            resets_at: Some(ends),
            expires_at: (ends + Duration::minutes(1)).timestamp(),
            conditioned: true,
        };
        Self {
            counters: vec![counter],
            version: 0,
        }
    }

    /// How many items the counters add to the transaction.
    pub fn len(&self) -> usize {
        self.counters.len()
    }

    /// The kinds of its counters, in the order they are sent.
    pub fn kinds(&self) -> Vec<CounterKind> {
        self.counters.iter().map(|counter| counter.whose.kind()).collect()
    }

    fn counter(&self, kind: CounterKind) -> Option<&Counter> {
        self.counters.iter().find(|counter| counter.whose.kind() == kind)
    }

    /// Whether there is nothing to count (never, for a built [`Counting`]).
    pub fn is_empty(&self) -> bool {
        self.counters.is_empty()
    }

    /// The transaction items: each counter's update, by its kind, under its
    /// limits' conditions unless observe mode lifted them ([`Self::lift`]).
    pub fn items(&self) -> Vec<(CounterKind, Write)> {
        self.counters
            .iter()
            .map(|counter| (counter.whose.kind(), Write::Update(counter.update())))
            .collect()
    }

    /// Lets the counter of `kind` count without its limits' conditions
    /// (observe mode passed what it reached); `false` if it had none left
    /// to lift.
    pub fn lift(&mut self, kind: CounterKind) -> bool {
        match self.counters.iter_mut().find(|counter| counter.whose.kind() == kind) {
            Some(counter) if counter.conditioned => {
                counter.conditioned = false;
                true
            }
            _ => false,
        }
    }
}

/// What a refused draft did not do.
const NO_DRAFT: &str = "No draft was created.";
/// What a refused read did not do.
const NOTHING_READ: &str = "Nothing was read or written.";

/// `caller`'s counter of calls of `tool` in the minute of `now`, when
/// `applied` limits calls per minute; a refusal says `refused`.
fn rate_counter(
    applied: &Applied,
    caller: &Caller,
    tool: &str,
    now: DateTime<Utc>,
    refused: &'static str,
) -> Option<Counter> {
    let max = applied.calls_per_minute?;
    let (minute, ends) = minute_of(now);
    Some(Counter {
        whose: Whose::Rate {
            tool: tool.to_owned(),
            user: caller.user().to_string(),
            ends,
            refused,
        },
        pk: rate_pk(caller.tenant(), caller.user(), tool),
        sk: minute_sk(minute),
        adds: vec![(CALLS.to_owned(), 1)],
        bounds: vec![Bound::count(
            "per_tool_per_person.calls_per_minute",
            CALLS,
            i64::from(max),
        )],
        resets_at: Some(ends),
        expires_at: (ends + Duration::minutes(2)).timestamp(),
        conditioned: true,
    })
}

/// The limit of a run's drafts `applied` sets, if it sets one.
fn run_drafts_bound(applied: &Applied) -> Option<Bound> {
    let max = applied.run_drafts?;
    Some(Bound::count("per_run.max_drafts", DRAFTS, i64::from(max)))
}

/// The counter of `owner`'s run `run`, adding `adds` under `bounds`: it
/// lasts [`RUN_COUNTER_DAYS`] after its last draft at `now`.
fn run_counter(
    owner: Owner<'_>,
    run: &str,
    adds: Vec<(String, i64)>,
    bounds: Vec<Bound>,
    now: DateTime<Utc>,
) -> Counter {
    Counter {
        whose: Whose::Run(run.to_owned()),
        pk: run_pk(owner, run),
        sk: RUN_SK.to_owned(),
        adds,
        bounds,
        resets_at: None,
        expires_at: (now + Duration::days(RUN_COUNTER_DAYS)).timestamp(),
        conditioned: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use draftline_contract::store::Value;

    fn counter(adds: &[(&str, i64)], bounds: Vec<Bound>) -> Counter {
        Counter {
            whose: Whose::Run("r-1".to_owned()),
            pk: "T#t#LIMIT#RUN#B#u#r-1".to_owned(),
            sk: RUN_SK.to_owned(),
            adds: adds.iter().map(|(a, n)| ((*a).to_owned(), *n)).collect(),
            bounds,
            resets_at: None,
            expires_at: 1_800_000_000,
            conditioned: true,
        }
    }

    fn value_bound(max: i64, this: i64) -> Bound {
        Bound {
            name: "per_run.max_value",
            attribute: value_attribute("IDR"),
            unit: "IDR".to_owned(),
            max,
            this,
        }
    }

    /// A stored counter with `drafts` and `v_IDR` as given.
    fn stored(drafts: i64, value: i64) -> Attributes {
        Attributes::from([
            (DRAFTS.to_owned(), Value::n(drafts)),
            ("v_IDR".to_owned(), Value::n(value)),
        ])
    }

    #[test]
    fn a_counter_adds_its_use_and_passes_while_each_bound_leaves_room_for_this_call() {
        let run = counter(
            &[(DRAFTS, 1), ("v_IDR", 28_800_000)],
            vec![
                Bound::count("per_run.max_drafts", DRAFTS, 50),
                value_bound(100_000_000, 28_800_000),
            ],
        );
        let update = run.update();
        assert_eq!(update.add, [(DRAFTS.to_owned(), 1), ("v_IDR".to_owned(), 28_800_000)]);
        assert_eq!(
            update.set,
            [
                ("kind".to_owned(), Value::s(LIMIT_USE)),
                ("expires_at".to_owned(), Value::n(1_800_000_000)),
            ]
        );
        let condition = update.condition.expect("conditioned");
        assert!(condition.holds(None), "nothing counted yet");
        assert!(condition.holds(Some(&stored(49, 71_200_000))));
        assert!(!condition.holds(Some(&stored(50, 0))), "the 51st draft");
        assert!(!condition.holds(Some(&stored(0, 71_200_001))), "one hundredth over");
        let after = Write::Update(run.update())
            .apply(Some(&stored(49, 1)))
            .unwrap()
            .unwrap();
        assert_eq!(used(&after, DRAFTS), 50);
        assert_eq!(used(&after, "v_IDR"), 28_800_001);
    }

    #[test]
    fn a_draft_alone_over_its_limit_passes_no_use_and_a_lifted_counter_is_unconditioned() {
        let mut day = counter(&[("v_IDR", 500)], vec![value_bound(400, 500)]);
        let condition = day.update().condition.expect("conditioned");
        assert!(!condition.holds(None) && !condition.holds(Some(&stored(0, 0))));
        day.conditioned = false;
        assert_eq!(day.update().condition, None);
    }
}
