//! `sales_get_customer_summary`: the examiner of a customer. Profile, credit
//! limit and exposure, open orders, overdue invoices and recent invoices in
//! one call.

use async_trait::async_trait;
use chrono::NaiveDate;
use draftline_contract::ToolError;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::{CustomerInvoice, OpenItem, SalesOrderStatus, TaxCode};
use crate::money::{self, Money};
use crate::port::Scope;

/// How many documents each list shows (the counts and totals cover all).
const SHOWN: usize = 10;
/// How many recent invoices the history shows.
const HISTORY: usize = 5;

/// Input of `sales_get_customer_summary`.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetCustomerSummaryInput {
    /// The customer code, e.g. C-BDG-001 (sales_search_customers finds it).
    #[validate(custom(function = "super::code"))]
    #[schemars(pattern(super::CODE_PATTERN))]
    pub customer_code: String,
}

/// The customer's profile.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomerProfile {
    /// Code.
    pub code: String,
    /// Name.
    pub name: String,
    /// City.
    pub city: String,
    /// The price list its quotes are priced from.
    pub price_list: String,
    /// Payment terms in days.
    pub payment_terms_days: i64,
    /// The tax code its quote lines use by default (EXEMPT for exempt customers).
    pub default_tax_code: TaxCode,
    /// Why it is on credit hold (no quotes can be drafted), or null.
    pub credit_hold: Option<String>,
}

/// Credit limit against what the customer owes and has on order.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Credit {
    /// The credit limit.
    pub credit_limit: Money,
    /// Not yet invoiced value of open and partly delivered orders.
    pub open_orders: Money,
    /// Unpaid invoice amounts (overdue or not).
    pub outstanding_invoices: Money,
    /// open_orders + outstanding_invoices.
    pub exposure: Money,
    /// credit_limit - exposure; negative when over the limit.
    pub available_credit: Money,
    /// Whether exposure exceeds the limit.
    pub over_limit: bool,
}

/// A sales order, briefly.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderBrief {
    /// Order number.
    pub number: String,
    /// Order date.
    pub order_date: NaiveDate,
    /// Status.
    pub status: SalesOrderStatus,
    /// Order total.
    pub total: Money,
    /// Not yet invoiced.
    pub open_amount: Money,
}

/// An invoice, briefly.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InvoiceBrief {
    /// Invoice number.
    pub number: String,
    /// Invoice date.
    pub invoice_date: NaiveDate,
    /// Due date.
    pub due_date: NaiveDate,
    /// Amount including tax.
    pub amount: Money,
    /// Still unpaid.
    pub outstanding: Money,
    /// Days past the due date today (0 when not yet due).
    pub days_overdue: i64,
}

/// A bounded list of orders, with the count and total of all of them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenOrders {
    /// How many open orders there are.
    pub count: u32,
    /// The most recent ones (at most 10).
    pub orders: Vec<OrderBrief>,
}

/// A bounded list of overdue invoices, with the count and total of all of them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverdueInvoices {
    /// How many invoices are overdue.
    pub count: u32,
    /// Outstanding on all of them.
    pub total_outstanding: Money,
    /// The most overdue first (at most 10).
    pub invoices: Vec<InvoiceBrief>,
}

/// Output of `sales_get_customer_summary`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomerSummary {
    /// The day overdue days are counted to (today, UTC).
    pub as_of: NaiveDate,
    /// Profile.
    pub customer: CustomerProfile,
    /// Credit position.
    pub credit: Credit,
    /// Open and partly delivered sales orders.
    pub open_orders: OpenOrders,
    /// Invoices past their due date with money still owed.
    pub overdue_invoices: OverdueInvoices,
    /// The latest invoices, paid or not (at most 5), newest first.
    pub recent_invoices: Vec<InvoiceBrief>,
}

super::erp_tool!(SalesGetCustomerSummary);

impl ToolSpec for SalesGetCustomerSummary {
    type Input = GetCustomerSummaryInput;
    type Output = CustomerSummary;
    const META: ToolMeta = ToolMeta {
        name: "sales_get_customer_summary",
        title: "Get a customer summary",
        description: "Returns everything needed before quoting a customer of your branch in one call: profile, \
credit limit and exposure, open orders, overdue invoices and recent invoices. Only your branch's customers can be read; \
another branch's customer is reported as not found. Returns the price list and default tax code, the credit limit, \
exposure (open orders plus unpaid invoices), available credit and whether it is over the limit, the open orders, the \
overdue invoices with days overdue (most overdue first, at most 10 each, with counts and totals of all), and the last \
5 invoices. To find the code use sales_search_customers; to quote use sales_create_quote_draft. \
Example: {\"customer_code\": \"C-BDG-001\"}",
        module: "sales",
        scope: "sales:read",
    };
}

/// The one text for a customer that is missing or belongs to another branch.
pub fn customer_not_found(code: &str) -> String {
    format!(
        "Customer {code} was not found in your branch. Check the code; sales_search_customers finds customers by name."
    )
}

fn brief(invoice: &CustomerInvoice, today: NaiveDate) -> Result<InvoiceBrief, ToolError> {
    let outstanding = invoice
        .outstanding()
        .ok_or_else(|| money::overflow(&format!("what is owed on {}", invoice.number)))?;
    Ok(InvoiceBrief {
        number: invoice.number.clone(),
        invoice_date: invoice.invoice_date,
        due_date: invoice.due_date,
        amount: Money::new(invoice.amount, &invoice.currency),
        outstanding: Money::new(outstanding, &invoice.currency),
        days_overdue: if invoice.is_open() {
            invoice.days_overdue(today)
        } else {
            0
        },
    })
}

#[async_trait]
impl ReadTool for SalesGetCustomerSummary {
    async fn read(&self, call: &Call<'_>, input: GetCustomerSummaryInput) -> Result<CustomerSummary, ToolError> {
        let scope = Scope::of(call.caller);
        let code = &input.customer_code;
        let (customer, orders, invoices) = tokio::try_join!(
            self.erp.customer(&scope, code),
            self.erp.customer_orders(&scope, code),
            self.erp.customer_invoices(&scope, code),
        )?;
        let customer =
            customer.ok_or_else(|| ToolError::NotFound(format!("{} Nothing was read.", customer_not_found(code))))?;
        let today = call.clock.now().date_naive();
        let currency = customer.currency.as_str();
        let position = customer.credit_position(&orders, &invoices)?;

        let mut open: Vec<_> = orders.iter().filter(|o| o.status.is_open()).collect();
        open.sort_by(|a, b| b.order_date.cmp(&a.order_date).then_with(|| b.number.cmp(&a.number)));
        let mut overdue: Vec<&CustomerInvoice> = invoices
            .iter()
            .filter(|i| i.is_open() && i.days_overdue(today) > 0)
            .collect();
        overdue.sort_by(|a, b| a.due_date.cmp(&b.due_date).then_with(|| a.number.cmp(&b.number)));
        let mut recent: Vec<&CustomerInvoice> = invoices.iter().collect();
        recent.sort_by(|a, b| {
            b.invoice_date
                .cmp(&a.invoice_date)
                .then_with(|| b.number.cmp(&a.number))
        });

        let overdue_owed = overdue
            .iter()
            .map(|i| i.outstanding())
            .collect::<Option<Vec<_>>>()
            .and_then(money::sum)
            .ok_or_else(|| money::overflow(&format!("the overdue total of {code}")))?;
        let overdue_briefs = overdue
            .iter()
            .take(SHOWN)
            .map(|i| brief(i, today))
            .collect::<Result<Vec<_>, _>>()?;
        let recent_briefs = recent
            .iter()
            .take(HISTORY)
            .map(|i| brief(i, today))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CustomerSummary {
            as_of: today,
            credit: Credit {
                credit_limit: Money::new(position.limit, currency),
                open_orders: Money::new(position.open_orders, currency),
                outstanding_invoices: Money::new(position.outstanding_invoices, currency),
                exposure: Money::new(position.exposure, currency),
                available_credit: Money::new(position.available, currency),
                over_limit: position.over_limit(),
            },
            open_orders: OpenOrders {
                count: u32::try_from(open.len()).unwrap_or(u32::MAX),
                orders: open
                    .iter()
                    .take(SHOWN)
                    .map(|o| OrderBrief {
                        number: o.number.clone(),
                        order_date: o.order_date,
                        status: o.status,
                        total: Money::new(o.total, &o.currency),
                        open_amount: Money::new(o.open_amount, &o.currency),
                    })
                    .collect(),
            },
            overdue_invoices: OverdueInvoices {
                count: u32::try_from(overdue.len()).unwrap_or(u32::MAX),
                total_outstanding: Money::new(overdue_owed, currency),
                invoices: overdue_briefs,
            },
            recent_invoices: recent_briefs,
            customer: CustomerProfile {
                default_tax_code: if customer.tax_exempt {
                    TaxCode::Exempt
                } else {
                    TaxCode::Vat11
                },
                code: customer.code,
                name: customer.name,
                city: customer.city,
                price_list: customer.price_list,
                payment_terms_days: customer.payment_terms_days,
                credit_hold: customer.credit_hold,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;

    use super::*;
    use crate::testing::{MemoryErp, TestCaller};

    async fn summary(erp: &MemoryErp, user: &str, code: &str) -> Result<CustomerSummary, ToolError> {
        let caller = TestCaller::demo(user).unwrap();
        let input = GetCustomerSummaryInput {
            customer_code: code.into(),
        };
        SalesGetCustomerSummary::new(erp.port())
            .read(&caller.call(), input)
            .await
    }

    fn credit(out: &CustomerSummary) -> [&str; 5] {
        let c = &out.credit;
        [
            &c.credit_limit.amount,
            &c.open_orders.amount,
            &c.outstanding_invoices.amount,
            &c.exposure.amount,
            &c.available_credit.amount,
        ]
    }

    #[tokio::test]
    async fn the_exposure_is_open_orders_plus_unpaid_invoices_against_the_limit() {
        let erp = MemoryErp::demo().unwrap();
        let out = summary(&erp, "sales-bdg", "C-BDG-001").await.unwrap();
        assert_eq!(out.as_of.to_string(), "2026-11-29");
        // Open 31,080,000 + partly delivered 4,995,000; the invoiced order does not count.
        // Unpaid 24,420,000 + 12,210,000; the paid invoice does not count.
        assert_eq!(
            credit(&out),
            [
                "150000000.00",
                "36075000.00",
                "36630000.00",
                "72705000.00",
                "77295000.00"
            ]
        );
        assert!(!out.credit.over_limit);
        assert_eq!(out.customer.price_list, "PL-WHOLESALE");
        assert_eq!(out.customer.default_tax_code, TaxCode::Vat11);
    }

    #[tokio::test]
    async fn open_orders_are_newest_first_and_overdue_invoices_most_overdue_first() {
        let erp = MemoryErp::demo().unwrap();
        let out = summary(&erp, "sales-bdg", "C-BDG-001").await.unwrap();
        let orders: Vec<&str> = out.open_orders.orders.iter().map(|o| o.number.as_str()).collect();
        assert_eq!(
            (out.open_orders.count, orders),
            (2, vec!["SO-BDG-000047", "SO-BDG-000045"])
        );
        let mitra = summary(&erp, "sales-bdg", "C-BDG-002").await.unwrap();
        let overdue: Vec<(&str, i64, &str)> = mitra
            .overdue_invoices
            .invoices
            .iter()
            .map(|i| (i.number.as_str(), i.days_overdue, i.outstanding.amount.as_str()))
            .collect();
        assert_eq!(
            overdue,
            [
                ("INV-BDG-000097", 106, "4660000.00"),
                ("INV-BDG-000125", 26, "8880000.00")
            ]
        );
        assert_eq!(mitra.overdue_invoices.total_outstanding.amount, "13540000.00");
    }

    #[tokio::test]
    async fn a_customer_over_its_limit_has_negative_available_credit() {
        let erp = MemoryErp::demo().unwrap();
        let out = summary(&erp, "sales-bdg", "C-BDG-002").await.unwrap();
        assert_eq!(
            credit(&out),
            [
                "25000000.00",
                "12500000.00",
                "13540000.00",
                "26040000.00",
                "-1040000.00"
            ]
        );
        assert!(out.credit.over_limit);
    }

    #[tokio::test]
    async fn recent_invoices_are_newest_first_and_a_paid_one_is_not_overdue() {
        let erp = MemoryErp::demo().unwrap();
        let out = summary(&erp, "sales-bdg", "C-BDG-001").await.unwrap();
        let recent: Vec<(&str, &str, i64)> = out
            .recent_invoices
            .iter()
            .map(|i| (i.number.as_str(), i.outstanding.amount.as_str(), i.days_overdue))
            .collect();
        assert_eq!(
            recent,
            [
                ("INV-BDG-000131", "12210000.00", 0),
                ("INV-BDG-000118", "24420000.00", 45),
                ("INV-BDG-000101", "0.00", 0)
            ]
        );
        let overdue: Vec<&str> = out
            .overdue_invoices
            .invoices
            .iter()
            .map(|i| i.number.as_str())
            .collect();
        assert_eq!(overdue, ["INV-BDG-000118"]);
    }

    #[tokio::test]
    async fn a_tax_exempt_customer_defaults_to_exempt_and_a_held_one_shows_why() {
        let erp = MemoryErp::demo().unwrap();
        let exempt = summary(&erp, "sales-bdg", "C-BDG-004").await.unwrap();
        assert_eq!(exempt.customer.default_tax_code, TaxCode::Exempt);
        let held = summary(&erp, "sales-bdg", "C-BDG-003").await.unwrap();
        assert_eq!(
            held.customer.credit_hold.as_deref(),
            Some("an invoice is more than 90 days overdue")
        );
        assert_eq!(held.overdue_invoices.invoices[0].days_overdue, 128);
    }

    #[tokio::test]
    async fn another_branchs_customer_reads_exactly_like_a_missing_one() {
        let erp = MemoryErp::demo().unwrap();
        let elsewhere = summary(&erp, "sales-bdg", "C-SBY-001").await.unwrap_err();
        let missing = summary(&erp, "sales-bdg", "C-BDG-999").await.unwrap_err();
        let text = |code: &str| format!("{} Nothing was read.", customer_not_found(code));
        assert!(
            matches!(&elsewhere, ToolError::NotFound(m) if *m == text("C-SBY-001")),
            "{elsewhere:?}"
        );
        assert!(
            matches!(&missing, ToolError::NotFound(m) if *m == text("C-BDG-999")),
            "{missing:?}"
        );
    }

    #[tokio::test]
    async fn amounts_too_large_to_add_up_are_a_clear_error_not_a_panic() {
        let erp = MemoryErp::demo().unwrap();
        erp.edit(|b| {
            let (branch, mut invoice) = b
                .invoices
                .iter()
                .find(|(_, i)| i.number == "INV-BDG-000118")
                .unwrap()
                .clone();
            invoice.amount = Decimal::MAX;
            b.invoices.push((
                branch.clone(),
                CustomerInvoice {
                    number: "INV-BDG-000999".into(),
                    ..invoice.clone()
                },
            ));
            b.invoices.push((branch, invoice));
        });
        let err = summary(&erp, "sales-bdg", "C-BDG-001").await.unwrap_err();
        assert!(matches!(err, ToolError::Internal(_)), "{err:?}");
        assert!(
            err.to_string()
                .contains("the credit exposure of C-BDG-001 is too large"),
            "{err}"
        );
    }
}
