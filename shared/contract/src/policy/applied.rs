//! The limits that apply to the calls of one branch: the tenant's, narrowed
//! by the branch's (the tighter of each), with the policy's version and
//! mode, and the day of the tenant's time zone a moment falls in.

use chrono::{DateTime, Duration, FixedOffset, NaiveDate, Offset, TimeZone, Utc};

pub use super::Mode;
use super::amount::{self, Amount};
use super::{BranchLimits, CounterpartyRule, Limits, MoneyLimit, Policy};

/// The limits one branch's calls are held to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The stored policy's version (the audit item records it).
    pub version: u64,
    /// Enforce or observe.
    pub mode: Mode,
    /// The tenant's time zone.
    pub offset: FixedOffset,
    /// The most drafts per agent run.
    pub run_drafts: Option<u32>,
    /// The most value per agent run, per currency.
    pub run_value: Vec<Amount>,
    /// The most value per person per day, per currency.
    pub day_value: Vec<Amount>,
    /// The most calls per tool, person and minute.
    pub calls_per_minute: Option<u32>,
    /// Allowed vendor codes; `None`: every vendor.
    pub vendors: Option<Vec<String>>,
    /// Allowed customer codes; `None`: every customer.
    pub customers: Option<Vec<String>>,
    /// The near-duplicate window in hours (`Some(0)`: never ask); `None`:
    /// the deployment's setting.
    pub near_duplicate_hours: Option<u32>,
}

impl Applied {
    /// Whether any limit bounds a draft's counters (run or day).
    pub fn counts_drafts(&self) -> bool {
        self.run_drafts.is_some() || !self.run_value.is_empty() || !self.day_value.is_empty()
    }

    /// The day of the tenant's time zone `at` falls in.
    pub fn day_of(&self, at: DateTime<Utc>) -> NaiveDate {
        at.with_timezone(&self.offset).date_naive()
    }

    /// The next midnight of the tenant's time zone after `at`, in UTC: when
    /// a person's day limit resets.
    pub fn next_midnight(&self, at: DateTime<Utc>) -> DateTime<Utc> {
        let tomorrow = self.day_of(at).succ_opt().unwrap_or(NaiveDate::MAX);
        let midnight = tomorrow.and_hms_opt(0, 0, 0).unwrap_or_default();
        self.offset
            .from_local_datetime(&midnight)
            .single()
            .map_or(at + Duration::days(1), |local| local.with_timezone(&Utc))
    }
}

fn amounts(limits: Option<&[MoneyLimit]>) -> Vec<Amount> {
    limits
        .unwrap_or_default()
        .iter()
        .filter_map(|l| Amount::parse(&l.amount, &l.currency).ok())
        .collect()
}

/// Per currency, the tighter of `a` and `b` (a currency only one of them
/// limits keeps that limit).
fn tighter_amounts(a: Vec<Amount>, b: Vec<Amount>) -> Vec<Amount> {
    let mut out = a;
    for limit in b {
        match out.iter_mut().find(|o| o.currency == limit.currency) {
            Some(existing) => existing.hundredths = existing.hundredths.min(limit.hundredths),
            None => out.push(limit),
        }
    }
    out
}

fn tighter<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// An allow-list, narrowed: the codes both allow.
fn narrower(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.into_iter().filter(|code| b.contains(code)).collect()),
        (a, b) => a.or(b),
    }
}

struct Flat {
    run_drafts: Option<u32>,
    run_value: Vec<Amount>,
    day_value: Vec<Amount>,
    calls_per_minute: Option<u32>,
    vendors: Option<Vec<String>>,
    customers: Option<Vec<String>>,
    near_duplicate_hours: Option<u32>,
}

fn flat(limits: &Limits) -> Flat {
    let allow = |list: &Option<Vec<String>>| match &limits.counterparties {
        Some(parties) if parties.rule == CounterpartyRule::AllowList => Some(list.clone().unwrap_or_default()),
        _ => None,
    };
    let parties = limits.counterparties.as_ref();
    Flat {
        run_drafts: limits.per_run.as_ref().and_then(|r| r.max_drafts),
        run_value: amounts(limits.per_run.as_ref().and_then(|r| r.max_value.as_deref())),
        day_value: amounts(limits.per_person_per_day.as_ref().and_then(|d| d.max_value.as_deref())),
        calls_per_minute: limits.per_tool_per_person.as_ref().and_then(|r| r.calls_per_minute),
        vendors: parties.and_then(|p| allow(&p.vendors)),
        customers: parties.and_then(|p| allow(&p.customers)),
        near_duplicate_hours: limits.near_duplicate_hours,
    }
}

impl Policy {
    /// The limits of stored `version` of this policy that apply to the
    /// calls of `branch`.
    pub fn applying_to(&self, branch: &str, version: u64) -> Applied {
        let named = self.branches.iter().flatten().find(|b| b.branch_id == branch);
        self.applied(named, version)
    }

    /// What [`Self::applying_to`] gives each branch the policy names (in
    /// its order), and every other branch: applied once when the policy is
    /// read, so that a call under it applies nothing.
    pub fn applying_to_each(&self, version: u64) -> (Vec<(String, Applied)>, Applied) {
        let named = self
            .branches
            .iter()
            .flatten()
            .map(|b| (b.branch_id.clone(), self.applied(Some(b), version)))
            .collect();
        (named, self.applied(None, version))
    }

    /// The tenant's limits, narrowed by `branch`'s if the policy names it.
    fn applied(&self, branch: Option<&BranchLimits>, version: u64) -> Applied {
        let tenant = flat(&self.limits);
        let branch = branch.map(|b| flat(&b.limits));
        let mut applied = Applied {
            version,
            mode: self.mode,
            offset: self.offset().unwrap_or_else(|| Utc.fix()),
            run_drafts: tenant.run_drafts,
            run_value: tenant.run_value,
            day_value: tenant.day_value,
            calls_per_minute: tenant.calls_per_minute,
            vendors: tenant.vendors,
            customers: tenant.customers,
            near_duplicate_hours: tenant.near_duplicate_hours,
        };
        if let Some(branch) = branch {
            applied.run_drafts = tighter(applied.run_drafts, branch.run_drafts);
            applied.run_value = tighter_amounts(applied.run_value, branch.run_value);
            applied.day_value = tighter_amounts(applied.day_value, branch.day_value);
            applied.calls_per_minute = tighter(applied.calls_per_minute, branch.calls_per_minute);
            applied.vendors = narrower(applied.vendors, branch.vendors);
            applied.customers = narrower(applied.customers, branch.customers);
            applied.near_duplicate_hours = branch.near_duplicate_hours.or(applied.near_duplicate_hours);
        }
        applied
    }
}

/// The amount `hundredths` as the policy's texts write it (`288000.00`).
pub fn decimal(hundredths: i64) -> String {
    amount::format_hundredths(hundredths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_narrows_never_widens_and_the_day_is_the_tenants() {
        let policy = Policy::parse(
            br#"{"version": null, "mode": "observe", "time_zone": "+07:00",
                "limits": {"per_run": {"max_drafts": 10, "max_value": [{"currency": "IDR", "amount": "100"}]}},
                "branches": [{"branch_id": "SBY-01", "limits": {"per_run": {"max_drafts": 50,
                    "max_value": [{"currency": "IDR", "amount": "50"}, {"currency": "USD", "amount": "7"}]}}}]}"#,
        )
        .unwrap();
        let sby = policy.applying_to("SBY-01", 3);
        assert_eq!((sby.version, sby.mode, sby.run_drafts), (3, Mode::Observe, Some(10)));
        let values: Vec<String> = sby.run_value.iter().map(Amount::to_string).collect();
        assert_eq!(values, ["50.00 IDR", "7.00 USD"]);
        assert_eq!(policy.applying_to("JKT-01", 3).run_value.len(), 1);
        let (named, other) = policy.applying_to_each(3);
        assert_eq!(named, [("SBY-01".to_owned(), sby.clone())]);
        assert_eq!(other, policy.applying_to("JKT-01", 3));
        // 23:30 UTC is 06:30 the next day in +07:00; that day ends at 17:00 UTC.
        let at = Utc.with_ymd_and_hms(2026, 11, 29, 23, 30, 0).unwrap();
        assert_eq!(sby.day_of(at).to_string(), "2026-11-30");
        assert_eq!(
            sby.next_midnight(at),
            Utc.with_ymd_and_hms(2026, 11, 30, 17, 0, 0).unwrap()
        );
    }
}
