//! A tenant's limits for its agents: the policy document a person writes
//! and `draftline policy set` stores, versioned, in the table (DESIGN.md,
//! "Limits"; `docs/limits.md`).
//!
//! The document is data, with a published JSON Schema ([`schema`], the
//! strict schema of [`Policy`], as every tool input's), and is parsed
//! strictly ([`Policy::parse`]): unknown fields are refused, and every
//! problem is reported with its JSON path, those of the schema first (all of
//! them, [`crate::conformance`]) and then the rules a schema cannot state
//! (currency codes, amounts, one entry per currency, branch ids).
//!
//! A branch may narrow the tenant's limits, never widen them: the limit that
//! applies to a call is the tighter of the two ([`Policy::applying_to`]).
//!
//! ## Layout
//! - this file: the document and its parsing;
//! - [`amount`]: money as counters hold it (hundredths);
//! - [`applied`]: the limits that apply to one branch, and its day;
//! - [`standing`]: what those limits still leave one caller (the examiner
//!   tool's answer), and the seam the server reads it through.

pub mod amount;
pub mod applied;
pub mod standing;

use chrono::FixedOffset;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::FieldIssue;
pub use amount::Amount;
pub use applied::Applied;
pub use standing::{Examiner, Standing};

/// Whether a limit refuses a call or only records that it would have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A call over a limit is refused with LIMIT_REACHED; nothing is created.
    Enforce,
    /// Nothing is refused; each call that would have been is created and its audit item says which limit it passed.
    Observe,
}

/// The policy document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The version this document is (policy show prints it). On policy set: the version it was edited from, and the set is refused if the stored policy has moved on since; null overwrites whatever is stored.
    #[schemars(range(min = 1))]
    pub version: Option<u64>,
    /// enforce: calls over a limit are refused; observe: they are created and audited as would-be refusals.
    pub mode: Mode,
    /// The tenant's time zone as a fixed UTC offset (+07:00, -03:30, or UTC): a person's day runs from midnight to midnight there.
    pub time_zone: String,
    /// The tenant's limits, for every branch.
    pub limits: Limits,
    /// Narrower limits for some branches; the tighter of the tenant's and the branch's applies.
    pub branches: Option<Vec<BranchLimits>>,
}

/// One branch's narrower limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BranchLimits {
    /// The branch id, as in the access token's branch_id (SBY-01).
    pub branch_id: String,
    /// Its limits.
    pub limits: Limits,
}

/// Limits; null (or absent) means no limit of that kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Per agent run (the X-Agent-Run-Id of the calls).
    pub per_run: Option<RunLimits>,
    /// Per person the agents draft for, per day in the tenant's time zone.
    pub per_person_per_day: Option<DayLimits>,
    /// Per tool and person.
    pub per_tool_per_person: Option<RateLimits>,
    /// The vendors and customers agents may draft for.
    pub counterparties: Option<Counterparties>,
    /// How far back a draft looks for an open agent draft of the same items before it asks a person (0: never asks); null: the deployment's DRAFTLINE_NEAR_DUPLICATE_HOURS.
    #[schemars(range(max = 720))]
    pub near_duplicate_hours: Option<u32>,
}

/// What one agent run may draft.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunLimits {
    /// The most drafts one run may create.
    #[schemars(range(max = 1_000_000))]
    pub max_drafts: Option<u32>,
    /// The most total value one run may draft, per currency.
    pub max_value: Option<Vec<MoneyLimit>>,
}

/// What may be drafted for one person in one day.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DayLimits {
    /// The most total value drafted for one person per day, per currency.
    pub max_value: Option<Vec<MoneyLimit>>,
}

/// How often one person's agents may call one tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimits {
    /// The most calls of one tool per person per minute.
    #[schemars(range(min = 1, max = 100_000))]
    pub calls_per_minute: Option<u32>,
}

/// An amount one limit allows, in one currency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoneyLimit {
    /// ISO 4217 code (IDR).
    pub currency: String,
    /// Digits with at most two decimals ("500000000.00").
    pub amount: String,
}

/// Which counterparties agents may draft for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CounterpartyRule {
    /// Any vendor or customer.
    All,
    /// Only those listed; any other is refused with "ask a person to draft this one".
    AllowList,
}

/// The counterparty rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Counterparties {
    /// all or allow_list.
    pub rule: CounterpartyRule,
    /// With allow_list: the vendor codes agents may draft purchase orders for.
    pub vendors: Option<Vec<String>>,
    /// With allow_list: the customer codes agents may draft quotes for.
    pub customers: Option<Vec<String>>,
}

/// The published JSON Schema of the policy document, made once: a stored
/// policy is checked against it each time an instance reads it, and
/// making it costs nine tenths of that check (1.29M of a parse's 1.47M
/// instructions, docs/benchmarks.md).
pub fn schema() -> &'static serde_json::Value {
    static SCHEMA: std::sync::LazyLock<serde_json::Value> = std::sync::LazyLock::new(|| {
        let mut schema = crate::schema::strict_schema_for::<Policy>();
        if let serde_json::Value::Object(root) = &mut schema {
            root.insert("title".into(), "draftline tenant policy".into());
        }
        schema
    });
    &SCHEMA
}

impl Policy {
    /// Parses a policy document strictly: every problem, with its JSON path.
    pub fn parse(bytes: &[u8]) -> Result<Self, Vec<FieldIssue>> {
        let value: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|e| vec![FieldIssue::schema("", format!("the policy is not valid JSON: {e}"))])?;
        let shape = crate::conformance::issues(&value, schema());
        if !shape.is_empty() {
            return Err(shape);
        }
        let policy: Policy = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            vec![FieldIssue::schema(path, e.inner().to_string())]
        })?;
        let rules = policy.rule_issues();
        if rules.is_empty() { Ok(policy) } else { Err(rules) }
    }

    /// The time zone as an offset (the rules checked it).
    pub fn offset(&self) -> Option<FixedOffset> {
        offset(&self.time_zone)
    }

    fn rule_issues(&self) -> Vec<FieldIssue> {
        let mut issues = Vec::new();
        if self.offset().is_none() {
            issues.push(FieldIssue::new(
                "time_zone",
                format!(
                    "'{}' is not a UTC offset: write it as +07:00, -03:30 or UTC",
                    self.time_zone.chars().take(16).collect::<String>()
                ),
            ));
        }
        self.limits.rule_issues("limits", &mut issues);
        let mut seen = std::collections::BTreeSet::new();
        for (i, branch) in self.branches.iter().flatten().enumerate() {
            let path = format!("branches[{i}]");
            if let Err(reason) = crate::identity::BranchId::parse(&branch.branch_id) {
                issues.push(FieldIssue::new(format!("{path}.branch_id"), reason));
            } else if !seen.insert(branch.branch_id.as_str()) {
                issues.push(FieldIssue::new(
                    format!("{path}.branch_id"),
                    format!(
                        "branch {} is listed twice; give each branch one entry",
                        branch.branch_id
                    ),
                ));
            }
            branch.limits.rule_issues(&format!("{path}.limits"), &mut issues);
        }
        issues
    }
}

impl Limits {
    fn rule_issues(&self, path: &str, issues: &mut Vec<FieldIssue>) {
        if let Some(run) = &self.per_run {
            money_issues(&format!("{path}.per_run.max_value"), run.max_value.as_deref(), issues);
        }
        if let Some(day) = &self.per_person_per_day {
            money_issues(
                &format!("{path}.per_person_per_day.max_value"),
                day.max_value.as_deref(),
                issues,
            );
        }
        if let Some(parties) = &self.counterparties {
            let path = format!("{path}.counterparties");
            for (field, codes) in [("vendors", &parties.vendors), ("customers", &parties.customers)] {
                match (parties.rule, codes) {
                    (CounterpartyRule::All, Some(_)) => issues.push(FieldIssue::new(
                        format!("{path}.{field}"),
                        "lists go with rule allow_list; with rule all, set it to null",
                    )),
                    (_, Some(codes)) => {
                        for (i, code) in codes.iter().enumerate() {
                            if !is_code(code) {
                                issues.push(FieldIssue::new(
                                    format!("{path}.{field}[{i}]"),
                                    format!(
                                        "'{}' is not a code: 1-32 characters of A-Z, 0-9 and '-' (V-00231)",
                                        code.chars().take(40).collect::<String>()
                                    ),
                                ));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

fn money_issues(path: &str, limits: Option<&[MoneyLimit]>, issues: &mut Vec<FieldIssue>) {
    let mut seen = std::collections::BTreeSet::new();
    for (i, limit) in limits.unwrap_or_default().iter().enumerate() {
        if let Err(reason) = amount::currency_code(&limit.currency) {
            issues.push(FieldIssue::new(format!("{path}[{i}].currency"), reason));
        } else if !seen.insert(limit.currency.as_str()) {
            issues.push(FieldIssue::new(
                format!("{path}[{i}].currency"),
                format!("{} has two limits here; give each currency one", limit.currency),
            ));
        }
        if let Err(reason) = amount::hundredths(&limit.amount) {
            issues.push(FieldIssue::new(format!("{path}[{i}].amount"), reason));
        }
    }
}

fn is_code(code: &str) -> bool {
    !code.is_empty()
        && code.len() <= 32
        && code
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-')
}

/// `+07:00`, `-03:30`, `UTC` or `Z` as an offset.
fn offset(text: &str) -> Option<FixedOffset> {
    if matches!(text, "UTC" | "Z") {
        return FixedOffset::east_opt(0);
    }
    let bytes = text.as_bytes();
    if bytes.len() != 6 || bytes[3] != b':' {
        return None;
    }
    let sign = match bytes[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let hours: i32 = text.get(1..3)?.parse().ok()?;
    let minutes: i32 = text.get(4..6)?.parse().ok()?;
    if hours > 14 || minutes > 59 || !text[1..3].bytes().chain(text[4..6].bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = r#"{
        "version": null, "mode": "enforce", "time_zone": "+07:00",
        "limits": {
            "per_run": {"max_drafts": 10, "max_value": [{"currency": "IDR", "amount": "500000000.00"}]},
            "per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "1000000000"}]},
            "per_tool_per_person": null,
            "counterparties": {"rule": "all", "vendors": null, "customers": null},
            "near_duplicate_hours": null
        },
        "branches": [{"branch_id": "SBY-01", "limits": {"per_run": {"max_drafts": 5, "max_value": null}}}]
    }"#;

    #[test]
    fn a_valid_policy_parses() {
        let policy = Policy::parse(VALID.as_bytes()).unwrap();
        assert_eq!(policy.mode, Mode::Enforce);
        assert_eq!(policy.offset(), FixedOffset::east_opt(7 * 3600));
        assert!(crate::schema::strict_violations(schema()).is_empty());
    }

    #[test]
    fn every_problem_is_reported_with_its_path() {
        let bad = VALID
            .replace(r#""mode": "enforce""#, r#""mode": "loud""#)
            .replace(r#""max_drafts": 10"#, r#""max_drafts": -1, "max_draft": 3"#);
        let issues = Policy::parse(bad.as_bytes()).unwrap_err();
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["mode", "limits.per_run.max_drafts", "limits.per_run.max_draft"]);

        let bad = VALID
            .replace("+07:00", "Asia/Jakarta")
            .replace(
                r#""currency": "IDR", "amount": "500000000.00""#,
                r#""currency": "idr", "amount": "5.001""#,
            )
            .replace(
                r#""rule": "all", "vendors": null"#,
                r#""rule": "all", "vendors": ["V-1"]"#,
            )
            .replace(r#""branch_id": "SBY-01""#, r#""branch_id": "SBY 01""#);
        let issues = Policy::parse(bad.as_bytes()).unwrap_err();
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "time_zone",
                "limits.per_run.max_value[0].currency",
                "limits.per_run.max_value[0].amount",
                "limits.counterparties.vendors",
                "branches[0].branch_id",
            ]
        );
    }

    #[test]
    fn offsets_are_fixed_and_bounded() {
        assert_eq!(offset("-03:30"), FixedOffset::west_opt(3 * 3600 + 1800));
        assert_eq!(offset("UTC"), FixedOffset::east_opt(0));
        for bad in ["+7:00", "+15:00", "07:00", "+07:60", "+0a:00"] {
            assert_eq!(offset(bad), None, "{bad}");
        }
    }
}
