//! What a counter that failed its condition refuses: one refusal per
//! limit it reached, in words a model acts on.

use chrono::{DateTime, SecondsFormat, Utc};

use draftline_contract::error::{ReachedLimit, ToolError};
use draftline_contract::policy::amount::format_hundredths;

use super::{Bound, Counter, CounterKind, Counting, DRAFTS, Whose, used};
use draftline_contract::store::Attributes;

impl Counting {
    /// The refusals for every limit the counter of `kind` reached, stored
    /// as `old` when its condition failed at `now` (`None`: not counted
    /// yet). At least one: a failed condition whose stored use shows no
    /// limit passed (it moved since) names the counter's first.
    pub fn reached(&self, kind: CounterKind, old: Option<&Attributes>, now: DateTime<Utc>) -> Vec<ToolError> {
        let Some(counter) = self.counter(kind) else {
            return Vec::new();
        };
        let used = |bound: &Bound| -> i64 { old.map_or(0, |item| used(item, &bound.attribute)) };
        let mut passed: Vec<&Bound> = counter
            .bounds
            .iter()
            .filter(|b| used(b).saturating_add(b.this) > b.max)
            .collect();
        if passed.is_empty() {
            passed.extend(counter.bounds.first());
        }
        passed
            .into_iter()
            .map(|bound| self.refusal(counter, bound, used(bound), now))
            .collect()
    }

    /// The refusal of one call by `bound` of `counter`, of which `used`
    /// was used.
    fn refusal(&self, counter: &Counter, bound: &Bound, used: i64, now: DateTime<Utc>) -> ToolError {
        let wait = |ends: &DateTime<Utc>| wait_until(*ends, now);
        let resets_at = counter
            .resets_at
            .map(|at| at.to_rfc3339_opts(SecondsFormat::Secs, true));
        let (this, max, version) = (bound.show(bound.this), bound.show(bound.max), self.version);
        let left = format_hundredths(bound.max.saturating_sub(used).max(0));
        let shown = bound.show(used);
        let (applies_to, message, retry_after_seconds) = match &counter.whose {
            Whose::Budget { ends } => {
                let retry_after = wait(ends);
                return ToolError::RateLimited {
                    message: format!(
                        "You have used your budget of {max} tool calls per minute. Nothing was read or written. \
                         Wait {retry_after} second(s), then retry the same call; if you are looping, stop and tell \
                         the person you act for what you were trying to do."
                    ),
                    retry_after_seconds: retry_after,
                };
            }
            Whose::Rate {
                tool,
                user,
                ends,
                refused,
            } => {
                let wait = wait(ends);
                let message = format!(
                    "You have called {tool} {max} times this minute, the most the tenant's policy (version \
                     {version}, per_tool_per_person.calls_per_minute) allows one person. {refused} Wait \
                     {wait} second(s), then retry this same call unchanged; if you are looping, stop and tell the \
                     person you act for what you were trying to do."
                );
                (format!("{user} calling {tool}"), message, Some(wait))
            }
            Whose::Run(run) if bound.unit == DRAFTS => (
                format!("agent run {run}"),
                run_at_its_count(run, bound.max, used, version),
                None,
            ),
            Whose::Run(run) => {
                let currency = &bound.unit;
                let message = format!(
                    "This draft's total of {this} {currency} would take agent run '{run}' past its limit of {max} \
                     {currency} (the tenant's policy, version {version}, per_run.max_value): {shown} {currency} was \
                     drafted in this run, {left} {currency} is left. No draft was created. Split the order into \
                     smaller drafts that fit what is left, or ask a person to draft this one."
                );
                (format!("agent run {run}"), message, None)
            }
            Whose::Day { user, day } => {
                let currency = &bound.unit;
                let message = format!(
                    "This draft's total of {this} {currency} would take what was drafted for {user} on {day} past \
                     the daily limit of {max} {currency} (the tenant's policy, version {version}, \
                     per_person_per_day.max_value): {shown} {currency} was drafted today, {left} {currency} is left. \
                     No draft was created. Split the order into smaller drafts that fit what is left, wait until the \
                     limit resets at {resets} (midnight in the tenant's time zone), or ask a person to draft this one.",
                    resets = resets_at.as_deref().unwrap_or("midnight"),
                );
                (format!("{user} on {day}"), message, None)
            }
        };
        ToolError::LimitReached {
            message,
            limit: Box::new(ReachedLimit {
                name: bound.name.to_owned(),
                unit: bound.unit.clone(),
                applies_to,
                max: Some(max),
                used: Some(shown),
                this_call: this,
                resets_at,
                policy_version: version,
            }),
            retry_after_seconds,
        }
    }
}

/// The words of a refusal of agent run `run`, at its count of `max`
/// drafts with `used` of them, under policy `version`.
fn run_at_its_count(run: &str, max: i64, used: i64, version: u64) -> String {
    format!(
        "Agent run '{run}' has reached its limit of {max} (the tenant's policy, version {version}, \
         per_run.max_drafts): {used} created in this run, and this call would add 1. No draft was \
         created. Do not retry it in this run: stop drafting, tell the person you act for which drafts \
         this run created, and ask them to draft the rest or to raise the limit.",
        max = drafts(max),
        used = if used == 1 {
            "1 was".to_owned()
        } else {
            format!("{used} were")
        },
    )
}

/// The whole seconds from `now` until `ends`, 1 to 60.
fn wait_until(ends: DateTime<Utc>, now: DateTime<Utc>) -> u64 {
    let wait = ends.signed_duration_since(now).num_seconds().clamp(1, 60);
    u64::try_from(wait).unwrap_or(1)
}

/// `1 draft`, `10 drafts`.
fn drafts(n: i64) -> String {
    if n == 1 {
        "1 draft".to_owned()
    } else {
        format!("{n} drafts")
    }
}
