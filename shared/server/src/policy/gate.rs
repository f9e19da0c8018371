//! The limits gate: the one place that decides what a reached limit does
//! to a call. Every limit is checked where its counter moves (a read's
//! rate and the deployment's budget with an `UpdateItem` of their own, a
//! draft's counters in its transaction or its key's claim, the
//! counterparty rule once the draft is priced), and every refusal it
//! makes comes here ([`Gate::meet`]):
//!
//! - under a policy in `enforce` mode, a limit of the policy refuses the
//!   call (`LIMIT_REACHED`);
//! - in `observe` mode it lets the call pass and is kept, with every other
//!   limit the call passes, for the call's one audit item
//!   ([`Gate::audited`]); a counter that reached one is counted again
//!   without its conditions, the others keep theirs, so each limit the
//!   call would have passed is found;
//! - the deployment's budget (`DRAFTLINE_RATE_LIMIT_PER_MINUTE`,
//!   `RATE_LIMITED`) is not the tenant's policy: it refuses in any mode.

use std::collections::HashMap;
use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};

use draftline_contract::error::{ReachedLimit, ToolError};
use draftline_contract::policy::{Applied, Mode};
use draftline_dynamo::Db;

use super::{CounterKind, Counting};
use crate::audit::AuditRecord;

/// One call at the gate: the limits of the tenant's policy that apply to
/// its caller (none without a policy), and each limit observe mode let it
/// pass so far.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    applied: Option<Arc<Applied>>,
    observed: Vec<ReachedLimit>,
}

impl Gate {
    /// The gate of a call held to `applied` (`None`: the tenant has no
    /// policy; only the deployment's budget holds it).
    pub fn new(applied: Option<Arc<Applied>>) -> Self {
        Self {
            applied,
            observed: Vec::new(),
        }
    }

    /// The limits that apply to the call.
    pub fn applied(&self) -> Option<&Applied> {
        self.applied.as_deref()
    }

    /// What `refusal` does to the call: it stands (`Err`), or observe mode
    /// lets the call pass and keeps the limit for its audit item (`Ok`).
    /// Only a limit of the policy is observed; any other refusal stands.
    pub fn meet(&mut self, refusal: ToolError) -> Result<(), ToolError> {
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

    /// The counter of `kind` in `counting` failed its condition, stored as
    /// `stored`, at `now`: meets every limit it reached and, when all of
    /// them were let pass, lifts its conditions for the next attempt.
    pub fn over(
        &mut self,
        counting: &mut Counting,
        kind: CounterKind,
        stored: Option<&HashMap<String, AttributeValue>>,
        now: DateTime<Utc>,
    ) -> Result<(), ToolError> {
        let refusals = counting.reached(kind, stored, now);
        if refusals.is_empty() {
            return Err(ToolError::internal("a limit counter failed that was not sent"));
        }
        for refusal in refusals {
            self.meet(refusal)?;
        }
        if counting.lift(kind) {
            Ok(())
        } else {
            Err(ToolError::internal("a limit counter failed without its conditions"))
        }
    }

    /// Moves each of `counting`'s counters with an `UpdateItem` of its own
    /// (a read's rate, the deployment's budget), at `now`: a limit reached
    /// is met, and counted again without its conditions if let pass.
    pub async fn spend(&mut self, db: &Db, counting: &mut Counting, now: DateTime<Utc>) -> Result<(), ToolError> {
        for kind in counting.kinds() {
            while let Err(stored) = counting.spend(db, kind).await? {
                self.over(counting, kind, stored.as_ref(), now)?;
            }
        }
        Ok(())
    }

    /// The limits observe mode let the call pass, in the order met.
    pub fn observed(&self) -> &[ReachedLimit] {
        &self.observed
    }

    /// `audit`, naming every limit observe mode let the call pass, or else
    /// the version of the policy the call was held to.
    pub fn audited(&self, audit: AuditRecord) -> AuditRecord {
        match (self.observed.is_empty(), &self.applied) {
            (false, _) => audit.reaching(&self.observed, true),
            (true, Some(applied)) => audit.under_policy(applied.version),
            (true, None) => audit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use draftline_contract::policy::Policy;

    fn applied(mode: &str) -> Applied {
        let document = format!(
            r#"{{"version": null, "mode": "{mode}", "time_zone": "+07:00",
                "limits": {{"per_run": {{"max_drafts": 1, "max_value": null}}}}, "branches": null}}"#
        );
        Policy::parse(document.as_bytes()).unwrap().applying_to("SBY-01", 4)
    }

    fn limit(name: &str) -> ToolError {
        ToolError::LimitReached {
            message: format!("{name} reached"),
            limit: Box::new(ReachedLimit {
                name: name.to_owned(),
                unit: "drafts".to_owned(),
                applies_to: "agent run r".to_owned(),
                max: Some("1".to_owned()),
                used: Some("1".to_owned()),
                this_call: "1".to_owned(),
                resets_at: None,
                policy_version: 4,
            }),
            retry_after_seconds: None,
        }
    }

    fn budget() -> ToolError {
        ToolError::RateLimited {
            message: "budget".to_owned(),
            retry_after_seconds: 7,
        }
    }

    #[test]
    fn enforce_refuses_observe_keeps_every_limit_and_the_budget_refuses_in_either_mode() {
        let mut enforced = Gate::new(Some(Arc::new(applied("enforce"))));
        assert!(matches!(
            enforced.meet(limit("per_run.max_drafts")),
            Err(ToolError::LimitReached { .. })
        ));
        assert!(enforced.observed().is_empty());

        let mut observed = Gate::new(Some(Arc::new(applied("observe"))));
        assert!(observed.meet(limit("counterparties.vendors")).is_ok());
        assert!(observed.meet(limit("per_run.max_drafts")).is_ok());
        let names: Vec<&str> = observed.observed().iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["counterparties.vendors", "per_run.max_drafts"]);
        assert!(matches!(observed.meet(budget()), Err(ToolError::RateLimited { .. })));

        // Without a policy nothing is observed: a refusal stands.
        assert!(Gate::default().meet(limit("per_run.max_drafts")).is_err());
        assert!(Gate::default().meet(budget()).is_err());
    }
}
