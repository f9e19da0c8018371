//! `finance_get_account_summary`: receivables and payables of the caller's
//! branch, aged by days past due.

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::NaiveDate;
use draftline_contract::ToolError;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::OpenItem;
use crate::money::{self, Money};
use crate::port::Scope;

/// How many counterparties with the most overdue are named per ledger.
const TOP: usize = 5;

/// How the buckets are cut, stated in every answer.
const AGEING_RULE: &str = "days overdue = as_of - due date; not_due: due today or later; then 1-30, 31-60, 61-90 and \
over 90 days overdue. Amounts are what is still unpaid, exact, in the branch currency";

/// Which side of the ledger to summarise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Ledger {
    /// What customers owe the branch.
    Receivables,
    /// What the branch owes vendors.
    Payables,
}

/// Input of `finance_get_account_summary`.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetAccountSummaryInput {
    /// receivables or payables; null for both.
    pub ledger: Option<Ledger>,
}

/// A counterparty with money overdue.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Overdue {
    /// Customer or vendor code.
    pub code: String,
    /// Name.
    pub name: String,
    /// Overdue and unpaid.
    pub overdue: Money,
    /// Days the oldest overdue document is past due.
    pub oldest_days_overdue: i64,
    /// The overdue document numbers (at most 5).
    pub documents: Vec<String>,
}

/// One ledger's documents in one currency, aged.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ageing {
    /// The currency of every amount here.
    pub currency: String,
    /// Documents with money still owed.
    pub open_documents: u32,
    /// Everything still owed.
    pub total_outstanding: Money,
    /// Not yet due.
    pub not_due: Money,
    /// 1-30 days overdue.
    pub days_1_30: Money,
    /// 31-60 days overdue.
    pub days_31_60: Money,
    /// 61-90 days overdue.
    pub days_61_90: Money,
    /// More than 90 days overdue.
    pub over_90: Money,
    /// Everything overdue (the four buckets).
    pub overdue_total: Money,
    /// The counterparties with the most overdue, largest first (at most 5).
    pub largest_overdue: Vec<Overdue>,
}

/// Output of `finance_get_account_summary`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountSummary {
    /// The caller's branch; other branches are never included.
    pub branch_id: String,
    /// The day ages are counted to (today, UTC).
    pub as_of: NaiveDate,
    /// What customers owe, one ageing per currency (usually one); null when only payables were asked for.
    pub receivables: Option<Vec<Ageing>>,
    /// What the branch owes vendors, one ageing per currency; null when only receivables were asked for.
    pub payables: Option<Vec<Ageing>>,
    /// How the buckets are cut.
    pub ageing_rule: String,
}

super::erp_tool!(FinanceGetAccountSummary);

impl ToolSpec for FinanceGetAccountSummary {
    type Input = GetAccountSummaryInput;
    type Output = AccountSummary;
    const META: ToolMeta = ToolMeta {
        name: "finance_get_account_summary",
        title: "Get receivables and payables ageing",
        description: "Returns the receivables and payables of your branch aged by days past due, as of today. \
Only your branch's invoices and bills are counted; ledger chooses receivables or payables, null gives both. Returns, \
per ledger and currency, the number of open documents, the total still owed, the amounts not yet due and 1-30, 31-60, 61-90 and \
over 90 days overdue (exact decimals with currency), and the five customers or vendors with the most overdue. For \
one customer's invoices, orders and credit use sales_get_customer_summary; tax codes are in finance_list_tax_types. \
Example: {\"ledger\": null}",
        module: "finance",
        scope: "finance:read",
    };
}

/// Ages `items` as of `today`, one ageing per currency (amounts in different
/// currencies are never added up).
fn age_by_currency<T: OpenItem>(items: &[T], today: NaiveDate) -> Result<Vec<Ageing>, ToolError> {
    let mut by_currency: BTreeMap<&str, Vec<&T>> = BTreeMap::new();
    for item in items.iter().filter(|i| i.is_open()) {
        by_currency.entry(item.currency()).or_default().push(item);
    }
    by_currency
        .into_iter()
        .map(|(currency, open)| age(&open, today, currency))
        .collect()
}

/// Ages open `items` of one currency as of `today`.
fn age<T: OpenItem>(open: &[&T], today: NaiveDate, currency: &str) -> Result<Ageing, ToolError> {
    let overflow = || money::overflow(&format!("the {currency} ageing"));
    let add = |to: &mut Decimal, amount: Decimal| -> Result<(), ToolError> {
        *to = to.checked_add(amount).ok_or_else(overflow)?;
        Ok(())
    };
    let mut buckets = [Decimal::ZERO; 5];
    let mut by_party: BTreeMap<&str, (&str, Decimal, i64, Vec<String>)> = BTreeMap::new();
    for item in open {
        let days = item.days_overdue(today);
        let bucket = match days {
            0 => 0,
            1..=30 => 1,
            31..=60 => 2,
            61..=90 => 3,
            _ => 4,
        };
        let outstanding = item.outstanding().ok_or_else(overflow)?;
        if let Some(sum) = buckets.get_mut(bucket) {
            add(sum, outstanding)?;
        }
        if days > 0 {
            let entry = by_party
                .entry(item.counterparty_code())
                .or_insert_with(|| (item.counterparty_name(), Decimal::ZERO, 0, Vec::new()));
            add(&mut entry.1, outstanding)?;
            entry.2 = entry.2.max(days);
            entry.3.push(item.number().to_owned());
        }
    }
    let mut largest: Vec<Overdue> = by_party
        .into_iter()
        .map(|(code, (name, overdue, oldest, mut documents))| {
            documents.sort();
            documents.truncate(TOP);
            Overdue {
                code: code.to_owned(),
                name: name.to_owned(),
                overdue: Money::new(overdue, currency),
                oldest_days_overdue: oldest,
                documents,
            }
        })
        .collect();
    largest.sort_by(|a, b| {
        let amount = |o: &Overdue| o.overdue.amount.parse::<Decimal>().unwrap_or_default();
        amount(b).cmp(&amount(a)).then_with(|| a.code.cmp(&b.code))
    });
    largest.truncate(TOP);
    let total = money::sum(buckets).ok_or_else(overflow)?;
    let [not_due, days_1_30, days_31_60, days_61_90, over_90] = buckets;
    let overdue_total = total.checked_sub(not_due).ok_or_else(overflow)?;
    Ok(Ageing {
        currency: currency.to_owned(),
        open_documents: u32::try_from(open.len()).unwrap_or(u32::MAX),
        total_outstanding: Money::new(total, currency),
        not_due: Money::new(not_due, currency),
        days_1_30: Money::new(days_1_30, currency),
        days_31_60: Money::new(days_31_60, currency),
        days_61_90: Money::new(days_61_90, currency),
        over_90: Money::new(over_90, currency),
        overdue_total: Money::new(overdue_total, currency),
        largest_overdue: largest,
    })
}

#[async_trait]
impl ReadTool for FinanceGetAccountSummary {
    async fn read(&self, call: &Call<'_>, input: GetAccountSummaryInput) -> Result<AccountSummary, ToolError> {
        let branch = call.caller.branch();
        let scope = Scope::of(call.caller);
        let today = call.clock.now().date_naive();
        let want_receivables = input.ledger != Some(Ledger::Payables);
        let want_payables = input.ledger != Some(Ledger::Receivables);
        let receivables = async {
            if want_receivables {
                self.erp.receivables(&scope).await.map(Some)
            } else {
                Ok(None)
            }
        };
        let payables = async {
            if want_payables {
                self.erp.payables(&scope).await.map(Some)
            } else {
                Ok(None)
            }
        };
        let (receivables, payables) = tokio::try_join!(receivables, payables)?;
        Ok(AccountSummary {
            branch_id: branch.to_string(),
            as_of: today,
            receivables: receivables.map(|r| age_by_currency(&r, today)).transpose()?,
            payables: payables.map(|p| age_by_currency(&p, today)).transpose()?,
            ageing_rule: AGEING_RULE.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::CustomerInvoice;
    use crate::testing::{MemoryErp, TestCaller};

    async fn summary(erp: &MemoryErp, user: &str, ledger: Option<Ledger>) -> Result<AccountSummary, ToolError> {
        let caller = TestCaller::demo(user).unwrap();
        FinanceGetAccountSummary::new(erp.port())
            .read(&caller.call(), GetAccountSummaryInput { ledger })
            .await
    }

    /// Not due, 1-30, 31-60, 61-90, over 90, overdue, total.
    fn buckets(ageing: &Ageing) -> [&str; 7] {
        [
            &ageing.not_due.amount,
            &ageing.days_1_30.amount,
            &ageing.days_31_60.amount,
            &ageing.days_61_90.amount,
            &ageing.over_90.amount,
            &ageing.overdue_total.amount,
            &ageing.total_outstanding.amount,
        ]
    }

    #[tokio::test]
    async fn receivables_are_aged_into_buckets_as_of_today() {
        let erp = MemoryErp::demo().unwrap();
        let out = summary(&erp, "sales-bdg", None).await.unwrap();
        assert_eq!(
            (out.branch_id.as_str(), out.as_of.to_string().as_str()),
            ("BDG-01", "2026-11-29")
        );
        let receivables = out.receivables.unwrap();
        assert_eq!(receivables.len(), 1);
        let idr = &receivables[0];
        assert_eq!(idr.currency, "IDR");
        // The paid invoice INV-BDG-000101 is not open.
        assert_eq!(idr.open_documents, 5);
        assert_eq!(
            buckets(idr),
            [
                "12210000.00",
                "8880000.00",
                "24420000.00",
                "0.00",
                "9100000.00",
                "42400000.00",
                "54610000.00"
            ]
        );
    }

    #[tokio::test]
    async fn the_largest_overdue_counterparties_come_first_with_their_oldest_days() {
        let erp = MemoryErp::demo().unwrap();
        let out = summary(&erp, "sales-bdg", Some(Ledger::Receivables)).await.unwrap();
        let receivables = out.receivables.unwrap();
        let largest: Vec<(&str, &str, i64, Vec<&str>)> = receivables[0]
            .largest_overdue
            .iter()
            .map(|o| {
                (
                    o.code.as_str(),
                    o.overdue.amount.as_str(),
                    o.oldest_days_overdue,
                    o.documents.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            largest,
            [
                ("C-BDG-001", "24420000.00", 45, vec!["INV-BDG-000118"]),
                (
                    "C-BDG-002",
                    "13540000.00",
                    106,
                    vec!["INV-BDG-000097", "INV-BDG-000125"]
                ),
                ("C-BDG-003", "4440000.00", 128, vec!["INV-BDG-000088"])
            ]
        );
        assert_eq!(receivables[0].largest_overdue[0].name, "PT Tekstil Priangan");
    }

    #[tokio::test]
    async fn payables_count_the_branchs_bills_only_and_ledger_picks_one_side() {
        let erp = MemoryErp::demo().unwrap();
        let out = summary(&erp, "sales-bdg", Some(Ledger::Payables)).await.unwrap();
        assert!(out.receivables.is_none());
        let payables = out.payables.unwrap();
        let idr = &payables[0];
        assert_eq!(idr.open_documents, 3);
        // VB-BDG-000210 is due tomorrow, VB-BDG-000215 in December: not due.
        assert_eq!(
            buckets(idr),
            [
                "33400000.00",
                "0.00",
                "8640000.00",
                "0.00",
                "0.00",
                "8640000.00",
                "42040000.00"
            ]
        );
        assert_eq!(idr.largest_overdue.len(), 1);
        assert_eq!(idr.largest_overdue[0].documents, ["VB-BDG-000198"]);
        let surabaya = summary(&erp, "buyer-sby", Some(Ledger::Receivables)).await.unwrap();
        let sby = &surabaya.receivables.unwrap()[0];
        assert_eq!(
            (sby.open_documents, sby.total_outstanding.amount.as_str()),
            (3, "63600000.00")
        );
        assert_eq!(sby.days_61_90.amount, "5280000.00");
        assert!(sby.largest_overdue.iter().all(|o| o.code.starts_with("C-SBY-")));
    }

    #[tokio::test]
    async fn amounts_in_other_currencies_are_never_added_up() {
        let erp = MemoryErp::demo().unwrap();
        erp.edit(|b| {
            b.invoices.push((
                "BDG-01".into(),
                CustomerInvoice {
                    number: "INV-BDG-000140".into(),
                    customer: "C-BDG-001".into(),
                    customer_name: "PT Tekstil Priangan".into(),
                    invoice_date: "2026-10-01".parse().unwrap(),
                    due_date: "2026-10-31".parse().unwrap(),
                    amount: Decimal::from(1_500),
                    paid: Decimal::from(500),
                    currency: "USD".into(),
                },
            ))
        });
        let out = summary(&erp, "sales-bdg", Some(Ledger::Receivables)).await.unwrap();
        let receivables = out.receivables.unwrap();
        let currencies: Vec<&str> = receivables.iter().map(|a| a.currency.as_str()).collect();
        assert_eq!(currencies, ["IDR", "USD"]);
        assert_eq!(receivables[0].total_outstanding.amount, "54610000.00");
        assert_eq!(
            (
                receivables[1].days_1_30.amount.as_str(),
                receivables[1].total_outstanding.currency.as_str()
            ),
            ("1000.00", "USD")
        );
    }

    #[tokio::test]
    async fn a_sum_too_large_to_compute_is_a_clear_error_not_a_panic() {
        let erp = MemoryErp::demo().unwrap();
        erp.edit(|b| {
            for invoice in b.invoices.iter_mut().filter(|(branch, _)| branch == "BDG-01") {
                invoice.1.amount = Decimal::MAX;
            }
        });
        let err = summary(&erp, "sales-bdg", None).await.unwrap_err();
        assert!(matches!(err, ToolError::Internal(_)), "{err:?}");
        assert!(err.to_string().contains("the IDR ageing is too large"), "{err}");
    }
}
