//! `agent_get_limits`: the examiner tool. What the tenant's policy still
//! lets this agent run and this person draft, read from the counters the
//! draft tools move (`docs/limits.md`). The run is the call's own
//! (`X-Agent-Run-Id`, taken where the draft tools take it), never an
//! argument: an agent cannot look at another person's run. Tenant, branch
//! and person are the verified token's.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::SecondsFormat;
use draftline_contract::ToolError;
use draftline_contract::policy::amount::format_hundredths;
use draftline_contract::policy::standing::{Standing, Use};
use draftline_contract::policy::{CounterpartyRule, Mode};
use draftline_contract::tool::{AGENT_MODULE, Call, ReadTool, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use super::purchasing_create_po_draft::PurchasingCreatePoDraft;
use super::sales_create_quote_draft::SalesCreateQuoteDraft;
use crate::port::Erp;

/// Input of `agent_get_limits`: nothing; send an empty object. The run,
/// the person and the branch are the call's own.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetLimitsInput {}

/// A count limit and what is left of it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountLeft {
    /// The limit.
    pub max: i64,
    /// Used so far.
    pub used: i64,
    /// What is left: max - used, never below 0.
    pub left: i64,
}

/// A value limit in one currency and what is left of it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValueLeft {
    /// ISO 4217 code (IDR).
    pub currency: String,
    /// The limit, two decimals ("2000000000.00").
    pub max: String,
    /// The total drafted so far, two decimals.
    pub used: String,
    /// What is left, two decimals: a draft whose total is at most this fits.
    pub left: String,
}

/// What this agent run may still draft.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunLeft {
    /// The agent run (the call's X-Agent-Run-Id).
    pub agent_run: String,
    /// Drafts this run may still create; null: no limit on the number.
    pub drafts: Option<CountLeft>,
    /// Value this run may still draft, per limited currency (a currency not listed is not limited).
    pub value: Vec<ValueLeft>,
}

/// What may still be drafted for this person today.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DayLeft {
    /// Today in the tenant's time zone (YYYY-MM-DD).
    pub day: String,
    /// When the day's limit resets: the next midnight in the tenant's time zone, as RFC 3339 in that zone.
    pub resets_at: String,
    /// The same moment in UTC (RFC 3339).
    pub resets_at_utc: String,
    /// Value still allowed today, per limited currency (a currency not listed is not limited).
    pub value: Vec<ValueLeft>,
}

/// Calls of one draft tool left this minute.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLeft {
    /// The draft tool.
    pub tool: String,
    /// Calls per minute allowed, made this minute, and left.
    pub calls: CountLeft,
    /// When this minute ends (RFC 3339, UTC).
    pub resets_at: String,
}

/// Which counterparties agents may draft for.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CounterpartiesView {
    /// Vendors: all, or allow_list.
    pub vendor_rule: CounterpartyRule,
    /// With allow_list: the vendor codes agents may draft purchase orders for (empty: none); null with all.
    pub vendors: Option<Vec<String>>,
    /// Customers: all, or allow_list.
    pub customer_rule: CounterpartyRule,
    /// With allow_list: the customer codes agents may draft quotes for (empty: none); null with all.
    pub customers: Option<Vec<String>>,
}

/// Output of `agent_get_limits`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsOutput {
    /// Whether the tenant has a policy in force; false: no limit of the policy applies, and every other field but summary is null or empty.
    pub policy_in_force: bool,
    /// The version of the policy in force.
    pub policy_version: Option<u64>,
    /// enforce: a draft over a limit is refused with LIMIT_REACHED; observe: it is created and recorded.
    pub mode: Option<Mode>,
    /// The tenant's time zone (a UTC offset, +07:00).
    pub time_zone: Option<String>,
    /// This agent run's limits; null when the call names no agent run (X-Agent-Run-Id) or the policy sets no run limit.
    pub run: Option<RunLeft>,
    /// This person's day; null when the policy sets no day limit.
    pub today: Option<DayLeft>,
    /// Calls left this minute per draft tool you may call; empty when the policy sets no rate.
    pub rates: Vec<RateLeft>,
    /// The counterparty rule of your branch.
    pub counterparties: Option<CounterpartiesView>,
    /// The same, in one paragraph.
    pub summary: String,
}

/// The tool (it reads draftline's own counters, not the ERP).
#[derive(Clone, Default)]
pub struct AgentGetLimits;

impl AgentGetLimits {
    /// The tool; the ERP is not used.
    pub fn new(_erp: Arc<dyn Erp>) -> Self {
        Self
    }
}

impl ToolSpec for AgentGetLimits {
    type Input = GetLimitsInput;
    type Output = LimitsOutput;
    const META: ToolMeta = ToolMeta {
        name: "agent_get_limits",
        title: "Get my drafting limits",
        description: "Returns what the tenant's policy still lets this agent run and the person you act for draft. It \
lists the drafts left in this run, the value left per currency in this run and today (with when the day resets: \
midnight in the tenant's time zone), the calls left this minute per draft tool, which vendors and customers agents may \
draft for, the mode and the policy version; or it says that no policy is in force. Call it before a batch of drafts, and plan the batch to \
fit: a draft over a limit is refused with LIMIT_REACHED and nothing is created. The run is the one your calls carry \
(the X-Agent-Run-Id header, as for the draft tools); it changes nothing. To draft use purchasing_create_po_draft or \
sales_create_quote_draft. Example: {}",
        module: AGENT_MODULE,
        scope: "agent:read",
    };
}

/// The draft tools whose rates are reported, with the scope each needs.
const DRAFT_TOOLS: [(&str, &str); 2] = [
    (PurchasingCreatePoDraft::META.name, PurchasingCreatePoDraft::META.scope),
    (SalesCreateQuoteDraft::META.name, SalesCreateQuoteDraft::META.scope),
];

#[async_trait]
impl ReadTool for AgentGetLimits {
    async fn read(&self, call: &Call<'_>, _input: GetLimitsInput) -> Result<LimitsOutput, ToolError> {
        let tools: Vec<&'static str> = DRAFT_TOOLS
            .iter()
            .filter(|(_, scope)| call.caller.scopes().grants(scope))
            .map(|(name, _)| *name)
            .collect();
        let run = call.agent.run_id.as_deref();
        let standing = call
            .limits
            .standing(call.caller.owner(), run, &tools, call.clock.now())
            .await?;
        Ok(standing.map_or_else(none, |s| output(&s)))
    }
}

fn none() -> LimitsOutput {
    LimitsOutput {
        policy_in_force: false,
        policy_version: None,
        mode: None,
        time_zone: None,
        run: None,
        today: None,
        rates: Vec::new(),
        counterparties: None,
        summary: "No policy is in force for your tenant: no run, day, rate or counterparty limit of a policy \
applies to your drafts."
            .to_owned(),
    }
}

fn count(u: Use) -> CountLeft {
    CountLeft {
        max: u.max,
        used: u.used,
        left: u.left(),
    }
}

fn values(list: &[(String, Use)]) -> Vec<ValueLeft> {
    list.iter()
        .map(|(currency, u)| ValueLeft {
            currency: currency.clone(),
            max: format_hundredths(u.max),
            used: format_hundredths(u.used),
            left: format_hundredths(u.left()),
        })
        .collect()
}

fn offset_text(offset: chrono::FixedOffset) -> String {
    let seconds = offset.local_minus_utc();
    if seconds == 0 {
        return "UTC".to_owned();
    }
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

fn output(s: &Standing) -> LimitsOutput {
    let applied = &s.applied;
    let run = s.run.as_ref().and_then(|run| {
        (s.run_drafts.is_some() || !s.run_value.is_empty()).then(|| RunLeft {
            agent_run: run.clone(),
            drafts: s.run_drafts.map(count),
            value: values(&s.run_value),
        })
    });
    let today = (!s.day_value.is_empty()).then(|| DayLeft {
        day: s.day.clone(),
        resets_at: s
            .day_resets_at
            .with_timezone(&applied.offset)
            .to_rfc3339_opts(SecondsFormat::Secs, true),
        resets_at_utc: s.day_resets_at.to_rfc3339_opts(SecondsFormat::Secs, true),
        value: values(&s.day_value),
    });
    let rates: Vec<RateLeft> = s
        .rates
        .iter()
        .map(|(tool, u)| RateLeft {
            tool: (*tool).to_owned(),
            calls: count(*u),
            resets_at: s.minute_ends.to_rfc3339_opts(SecondsFormat::Secs, true),
        })
        .collect();
    let rule = |list: &Option<Vec<String>>| {
        if list.is_some() {
            CounterpartyRule::AllowList
        } else {
            CounterpartyRule::All
        }
    };
    let counterparties = CounterpartiesView {
        vendor_rule: rule(&applied.vendors),
        vendors: applied.vendors.clone(),
        customer_rule: rule(&applied.customers),
        customers: applied.customers.clone(),
    };
    let mut summary = format!(
        "The tenant's policy version {} is in force in {} mode.",
        applied.version,
        match applied.mode {
            Mode::Enforce => "enforce",
            Mode::Observe => "observe (nothing is refused; drafts over a limit are recorded)",
        }
    );
    match (&run, s.run.as_deref()) {
        (Some(run), _) => {
            if let Some(drafts) = &run.drafts {
                summary.push_str(&format!(
                    " This run ({}) may create {} more draft(s).",
                    run.agent_run, drafts.left
                ));
            }
            for v in &run.value {
                summary.push_str(&format!(" This run may draft {} {} more.", v.left, v.currency));
            }
        }
        (None, None) if applied.run_drafts.is_some() || !applied.run_value.is_empty() => {
            summary.push_str(" Your calls name no agent run (X-Agent-Run-Id), so no run limit applies to them.")
        }
        _ => {}
    }
    if let Some(today) = &today {
        for v in &today.value {
            summary.push_str(&format!(
                " {} {} more may be drafted for you today; the day resets at {}.",
                v.left, v.currency, today.resets_at
            ));
        }
    }
    for rate in &rates {
        summary.push_str(&format!(
            " {} may be called {} more time(s) this minute.",
            rate.tool, rate.calls.left
        ));
    }
    let list = |kind: &str, codes: &Option<Vec<String>>| match codes {
        None => format!(" Agents may draft for any {kind}."),
        Some(codes) if codes.is_empty() => format!(" Agents may draft for no {kind}: ask a person."),
        Some(codes) => format!(" Agents may draft only for these {kind}s: {}.", codes.join(", ")),
    };
    summary.push_str(&list("vendor", &applied.vendors));
    summary.push_str(&list("customer", &applied.customers));
    LimitsOutput {
        policy_in_force: true,
        policy_version: Some(applied.version),
        mode: Some(applied.mode),
        time_zone: Some(offset_text(applied.offset)),
        run,
        today,
        rates,
        counterparties: Some(counterparties),
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemoryErp, TestCaller};

    #[tokio::test]
    async fn without_a_policy_it_says_none_applies() {
        let erp = MemoryErp::demo().unwrap();
        let caller = TestCaller::demo("buyer-sby").unwrap();
        let out = AgentGetLimits::new(erp.port())
            .read(&caller.call(), GetLimitsInput {})
            .await
            .unwrap();
        assert!(!out.policy_in_force);
        assert!(out.summary.starts_with("No policy is in force"), "{}", out.summary);
    }

    #[test]
    fn offsets_are_written_as_the_policy_writes_them() {
        assert_eq!(offset_text(chrono::FixedOffset::east_opt(7 * 3600).unwrap()), "+07:00");
        assert_eq!(
            offset_text(chrono::FixedOffset::west_opt(3 * 3600 + 1800).unwrap()),
            "-03:30"
        );
        assert_eq!(offset_text(chrono::FixedOffset::east_opt(0).unwrap()), "UTC");
    }
}
