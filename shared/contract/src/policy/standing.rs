//! What a tenant's policy still leaves one caller: the limits that apply
//! to its branch with what the counters hold now. The server reads it
//! from the table ([`Examiner`]); the examiner tool `agent_get_limits`
//! answers it to the agent, so an agent can plan a batch of drafts.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::Applied;
use crate::error::ToolError;
use crate::identity::Owner;

/// One limit and its use: `max` and `used` in the limit's unit (drafts,
/// calls, or hundredths of a currency).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Use {
    /// The limit.
    pub max: i64,
    /// What the counter holds (0 when nothing was counted yet).
    pub used: i64,
}

impl Use {
    /// What is left: `max - used`, never below 0.
    pub fn left(&self) -> i64 {
        self.max.saturating_sub(self.used).max(0)
    }
}

/// The policy that applies to a person and what their counters hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    /// The limits of the caller's branch.
    pub applied: Applied,
    /// The agent run the counters are of (`None`: the call named none, and
    /// no run limit applies to its drafts).
    pub run: Option<String>,
    /// The run's drafts (when the policy limits them and there is a run).
    pub run_drafts: Option<Use>,
    /// The run's value, per limited currency (empty without a run).
    pub run_value: Vec<(String, Use)>,
    /// The caller's day in the tenant's time zone (`YYYY-MM-DD`).
    pub day: String,
    /// When that day ends: the next midnight of the tenant's time zone.
    pub day_resets_at: DateTime<Utc>,
    /// What was drafted for the caller today, per limited currency.
    pub day_value: Vec<(String, Use)>,
    /// The calls of each draft tool asked about, this minute (when the
    /// policy limits calls per minute).
    pub rates: Vec<(&'static str, Use)>,
    /// When this minute ends (UTC).
    pub minute_ends: DateTime<Utc>,
}

/// Reads what the tenant's policy leaves a caller, from the counters the
/// draft path writes.
#[async_trait]
pub trait Examiner: Send + Sync {
    /// The standing of `owner` (in their agent `run`, if any) at `now`,
    /// with the rate of each of `draft_tools`; `None` when the tenant has no
    /// policy. Only the owner's own use: a run id names a run only within
    /// its owner's calls.
    async fn standing(
        &self,
        owner: Owner<'_>,
        run: Option<&str>,
        draft_tools: &[&'static str],
        now: DateTime<Utc>,
    ) -> Result<Option<Standing>, ToolError>;
}

/// An examiner for a deployment without a policy store (unit tests of
/// tools): no tenant has a policy.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPolicies;

#[async_trait]
impl Examiner for NoPolicies {
    async fn standing(
        &self,
        _owner: Owner<'_>,
        _run: Option<&str>,
        _draft_tools: &[&'static str],
        _now: DateTime<Utc>,
    ) -> Result<Option<Standing>, ToolError> {
        Ok(None)
    }
}
