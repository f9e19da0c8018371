//! `sales_create_quote_draft`: a sales quote in status draft, priced from the
//! customer's price list and taxed per line with the tax code the caller
//! chose. Its kind's rules for the draft engine ([`crate::drafting`]): a
//! customer of the branch not on credit hold, a tax code per line, and a
//! credit check for the reviewer.

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::NaiveDate;
use draftline_contract::ToolError;
use draftline_contract::error::FieldIssue;
use draftline_contract::tool::{RuleContext, ToolMeta, ToolSpec};
use draftline_contract::validation::rejected_with;
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use super::sales_get_customer_summary::customer_not_found;
use crate::domain::{
    CreditPosition, CreditStanding, Customer, CustomerRef, Item, ListPrice, Quote, QuoteFields, QuoteLine, Reviewable,
    TaxCode, TaxType,
};
use crate::drafting::{DraftKind, NO_DRAFT, Party, Priced, Words, draft_tool, mismatch};
use crate::money::{self, LineAmounts, Money};
use crate::port::{CounterpartyReads, Scope};
use crate::units::Uom;

/// How long a quote may be valid.
const MAX_VALID_DAYS: i64 = 90;

/// One line to quote.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuoteLineInput {
    /// The item code, e.g. BRG-0042.
    #[validate(custom(function = "super::code"))]
    #[schemars(pattern(super::CODE_PATTERN))]
    pub item_code: String,
    /// Whole units to quote, 1-100000.
    #[validate(range(min = 1, max = 100_000))]
    pub qty: i64,
    /// The unit of qty; must be one of the item's units and priced on the customer's price list.
    pub uom: Uom,
    /// The line's tax code; required on every line. finance_list_tax_types lists the codes in use and their rates.
    // Optional in Rust only so that a missing code gets the message that
    // names finance_list_tax_types (see `rules`); the schema says required.
    #[schemars(required)]
    pub tax_code: Option<TaxCode>,
}

/// Input of `sales_create_quote_draft`. Prices, tax rates, totals, branch,
/// status and dates other than valid_until are decided by the server.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateQuoteDraftInput {
    /// The customer's code, e.g. C-BDG-001 (sales_search_customers finds it).
    #[validate(custom(function = "super::code"))]
    #[schemars(pattern(super::CODE_PATTERN))]
    pub customer_code: String,
    /// The last day the quoted prices hold, YYYY-MM-DD; today or later, at most 90 days ahead.
    #[serde(deserialize_with = "draftline_contract::validation::date::strict")]
    pub valid_until: NaiveDate,
    /// Your own unique reference for this intended quote, e.g. quote-2026-11-29-tekstil. Reuse it only when retrying the same quote.
    #[validate(custom(function = "super::client_ref"))]
    #[schemars(pattern(super::CLIENT_REF_PATTERN))]
    pub client_ref: String,
    /// A note for the person who reviews the quote, or null.
    #[validate(length(max = 500))]
    pub note: Option<String>,
    /// 1-50 lines; each item and unit at most once.
    #[validate(length(min = 1, max = 50), nested)]
    pub lines: Vec<QuoteLineInput>,
}

draft_tool! { SalesCreateQuoteDraft: CreateQuoteDraftInput { customer_code, lines: QuoteLineInput } }

impl ToolSpec for SalesCreateQuoteDraft {
    type Input = CreateQuoteDraftInput;
    type Output = Quote;
    const META: ToolMeta = ToolMeta {
        name: "sales_create_quote_draft",
        title: "Create a sales quote draft",
        description: "Creates a sales quote in status draft for a customer of your branch, priced from the \
customer's price list and taxed per line. It is not sent and reserves no stock: a person \
reviews and sends it. Every line needs a tax_code (finance_list_tax_types lists codes and rates; tax-exempt \
customers use EXEMPT); items must be on the customer's price list in the unit asked; customers on credit hold cannot \
be quoted; valid_until is today or later. Returns the quote number, priced and taxed lines, subtotal, \
tax total, total (tax included), a credit check, and review_url (tell the user it waits for review \
there). A retry with the same idempotency key (or X-Agent-Run-Id and client_ref) returns the same draft, \
not a second one. Call sales_get_customer_summary first \
for the price list, credit and overdue invoices. Example: {\"customer_code\": \"C-BDG-001\", \"valid_until\": \
\"2026-12-31\", \"client_ref\": \"quote-tekstil-1\", \"note\": null, \"lines\": [{\"item_code\": \"BRG-0042\", \
\"qty\": 2, \"uom\": \"BOX\", \"tax_code\": \"VAT11\"}]}",
        module: "sales",
        scope: "sales:draft",
    };

    fn rules(input: &CreateQuoteDraftInput, ctx: &RuleContext) -> Vec<FieldIssue> {
        let too_far = format!("quotes hold for at most {MAX_VALID_DAYS} days");
        let mut issues: Vec<FieldIssue> =
            super::date_in_window("valid_until", input.valid_until, ctx.today, MAX_VALID_DAYS, &too_far)
                .into_iter()
                .collect();
        issues.extend(
            (input.lines.iter().enumerate())
                .filter(|(_, line)| line.tax_code.is_none())
                .map(|(i, line)| missing_tax(i, line)),
        );
        issues.extend(super::repeated_lines(
            input.lines.iter().map(|l| (l.item_code.as_str(), l.uom)),
        ));
        issues
    }
}

/// Checks one line's tax code against the tax types in the data and the customer.
fn tax_for<'t>(
    code: TaxCode,
    customer: &Customer,
    taxes: &'t [TaxType],
    path: String,
) -> Result<&'t TaxType, FieldIssue> {
    let active: Vec<String> = taxes.iter().filter(|t| t.active).map(TaxType::describe).collect();
    let tax = taxes.iter().find(|t| t.code == code && t.active).ok_or_else(|| {
        FieldIssue::new(
            path.clone(),
            format!(
                "tax code {code} is not in use. Tax codes in use: {}. Call finance_list_tax_types for their \
                 meaning and resend the line with one of them",
                active.join(", ")
            ),
        )
    })?;
    if customer.tax_exempt && code != TaxCode::Exempt {
        return Err(FieldIssue::new(
            path,
            format!(
                "customer {} is exempt from VAT; its lines use tax code EXEMPT, not {code}",
                customer.code
            ),
        ));
    }
    Ok(tax)
}

/// The sentence a reviewer reads about credit.
fn credit_check(position: &CreditPosition, quote_total: Decimal, currency: &str) -> Result<String, ToolError> {
    let money = |amount: Decimal| format!("{} {currency}", money::round(amount));
    let after = position
        .available
        .checked_sub(quote_total)
        .ok_or_else(|| money::overflow("the credit left after the quote"))?;
    let head = format!(
        "Credit limit {}, exposure {} (open orders {}, unpaid invoices {}), available {}.",
        money(position.limit),
        money(position.exposure),
        money(position.open_orders),
        money(position.outstanding_invoices),
        money(position.available)
    );
    if after < Decimal::ZERO {
        Ok(format!(
            "{head} If this quote becomes an order the customer is {} over its limit: a person must approve the \
             credit before it is confirmed.",
            money(after.abs())
        ))
    } else {
        Ok(format!(
            "{head} This quote fits within the limit ({} left after it).",
            money(after)
        ))
    }
}

/// The refusal of line `i`, which has no tax code.
fn missing_tax(i: usize, line: &QuoteLineInput) -> FieldIssue {
    FieldIssue::new(
        format!("lines[{i}].tax_code"),
        format!(
            "line {} ({}) has no tax_code; every quote line needs one. Call finance_list_tax_types for the tax \
             codes in use and their rates (for example VAT11 = 11% for most sales, EXEMPT for tax-exempt \
             customers), then resend the line with tax_code set",
            i.saturating_add(1),
            line.item_code
        ),
    )
}

/// A refusal of the customer.
fn refused(message: String) -> ToolError {
    rejected_with(vec![FieldIssue::new("customer_code", message)], NO_DRAFT)
}

/// What a quote keeps of its customer: the customer, the tax types, and
/// what it owes.
pub(crate) struct Sales {
    customer: Customer,
    taxes: Vec<TaxType>,
    standing: CreditStanding,
}

impl SalesCreateQuoteDraft {
    /// The customer's prices of every unit of `items` and its standing:
    /// where the backend did not read them with the customer, read now,
    /// the standing from the customer's orders and invoices.
    async fn prices_and_standing(
        &self,
        scope: &Scope<'_>,
        customer: &Customer,
        items: &HashMap<String, Item>,
        (prices, standing): (Option<Vec<ListPrice>>, Option<CreditStanding>),
    ) -> Result<(Vec<ListPrice>, CreditStanding), ToolError> {
        let priced: Vec<(String, Uom)> = items
            .values()
            .flat_map(|item| item.units.iter().map(|u| (item.code.clone(), u.uom)))
            .collect();
        let prices = async {
            match prices {
                Some(prices) => Ok(prices),
                None if priced.is_empty() => Ok(Vec::new()),
                None => Ok(self.erp.list_prices(scope, &customer.price_list, &priced).await?),
            }
        };
        let standing = async {
            match standing {
                Some(standing) => Ok(standing),
                None => {
                    let (orders, invoices) = tokio::try_join!(
                        self.erp.customer_orders(scope, &customer.code),
                        self.erp.customer_invoices(scope, &customer.code),
                    )?;
                    CreditStanding::of(&customer.code, &orders, &invoices)
                }
            }
        };
        tokio::try_join!(prices, standing)
    }
}

#[async_trait]
impl DraftKind for SalesCreateQuoteDraft {
    type Input = CreateQuoteDraftInput;
    type Own = Sales;
    type Rule = TaxType;
    type Printed = CustomerRef;
    type DocLine = QuoteLine;
    type Fields = QuoteFields;
    type Output = Quote;

    const WORDS: Words = Words {
        item_hint: "inventory_get_stock",
        unit_verb: "sold",
        read_tool: "sales_get_quote",
    };

    async fn party(
        &self,
        scope: &Scope<'_>,
        read: CounterpartyReads,
        items: &HashMap<String, Item>,
        input: &CreateQuoteDraftInput,
    ) -> Result<Party<Sales>, ToolError> {
        let CounterpartyReads::Customer {
            customer,
            taxes,
            standing,
            prices,
        } = read
        else {
            return Err(mismatch(Quote::KIND));
        };
        let customer = customer.ok_or_else(|| refused(customer_not_found(&input.customer_code)))?;
        if let Some(reason) = &customer.credit_hold {
            return Err(refused(format!(
                "Customer {} ({}) is on credit hold: {reason}. No quote can be drafted until a person in finance \
                 lifts the hold; sales_get_customer_summary shows the overdue invoices to discuss with the customer",
                customer.code, customer.name
            )));
        }
        let read = (prices, standing);
        let (prices, standing) = self.prices_and_standing(scope, &customer, items, read).await?;
        Ok(Party {
            code: customer.code.clone(),
            name: customer.name.clone(),
            currency: customer.currency.clone(),
            list: customer.price_list.clone(),
            prices: prices.into_iter().map(|p| (p.item, p.uom, p.unit_price)).collect(),
            own: Sales {
                customer,
                taxes,
                standing,
            },
        })
    }

    async fn unpriced(
        &self,
        _: &Scope<'_>,
        customer: &Party<Sales>,
        lines: &[(usize, &Item)],
    ) -> Result<Vec<FieldIssue>, ToolError> {
        let issue = |(i, item): &(usize, &Item)| {
            let priced: Vec<&str> = (item.units.iter())
                .filter(|u| customer.price_of(&item.code, u.uom).is_some())
                .map(|u| u.uom.code())
                .collect();
            let message = if priced.is_empty() {
                format!(
                    "Item {} is not on price list {} of customer {}, so it cannot be quoted to this customer. \
                     Remove the line, or ask a person to add the item to the price list.",
                    item.code, customer.list, customer.code
                )
            } else {
                format!(
                    "Price list {} prices {} only in {}. Resend the line with uom {}.",
                    customer.list,
                    item.code,
                    priced.join(", "),
                    priced.join(" or ")
                )
            };
            FieldIssue::new(format!("lines[{i}].uom"), message)
        };
        Ok(lines.iter().map(issue).collect())
    }

    fn rule(customer: &Party<Sales>, i: usize, line: &QuoteLineInput) -> Result<TaxType, FieldIssue> {
        // `rules` refused missing tax codes before any read.
        let code = line.tax_code.ok_or_else(|| missing_tax(i, line))?;
        let Sales { customer, taxes, .. } = &customer.own;
        tax_for(code, customer, taxes, format!("lines[{i}].tax_code")).cloned()
    }

    fn tax(tax: &TaxType, net: Decimal) -> Option<Decimal> {
        tax.tax_on(net)
    }

    fn line(tax: TaxType, Priced { line, net, tax: amount }: Priced) -> QuoteLine {
        QuoteLine::taxed(line, net, &tax, amount)
    }

    async fn existing(&self, scope: &Scope<'_>, number: String) -> Result<Quote, ToolError> {
        self.erp.quote(scope, &number).await?.ok_or_else(|| {
            ToolError::NotFound(format!(
                "Quote {number} was not found in your branch. Nothing was created. Call sales_create_quote_draft \
                 again without a confirmation to be asked afresh."
            ))
        })
    }

    fn printed(customer: &Party<Sales>) -> CustomerRef {
        CustomerRef {
            code: customer.code.clone(),
            name: customer.name.clone(),
        }
    }

    fn fields(
        customer: Party<Sales>,
        input: &CreateQuoteDraftInput,
        sums: &LineAmounts,
    ) -> Result<QuoteFields, ToolError> {
        let Sales { customer, standing, .. } = customer.own;
        let position = customer.credit_position_of(standing)?;
        Ok(QuoteFields {
            credit_check: credit_check(&position, sums.total, &customer.currency)?,
            tax_total: Money::new(sums.tax, &customer.currency),
            price_list: customer.price_list,
            valid_until: input.valid_until,
        })
    }
}

#[cfg(test)]
mod tests {
    use draftline_contract::tool::{Call, Decision};

    use super::*;
    use crate::domain::DocumentStatus;
    use crate::drafting::fixture::Fixture;
    use crate::testing::issues;

    type Quoting = SalesCreateQuoteDraft;

    fn quoted(item_code: &str, qty: i64, uom: Uom, tax_code: TaxCode) -> QuoteLineInput {
        QuoteLineInput {
            item_code: item_code.into(),
            qty,
            uom,
            tax_code: Some(tax_code),
        }
    }

    fn quote_for(customer_code: &str, lines: Vec<QuoteLineInput>) -> CreateQuoteDraftInput {
        CreateQuoteDraftInput {
            customer_code: customer_code.into(),
            valid_until: "2026-12-15".parse().unwrap(),
            client_ref: "quote-tekstil-1".into(),
            note: None,
            lines,
        }
    }

    /// 2 BOX of BRG-0042 at VAT 11% for PT Tekstil Priangan: the description's example.
    fn bearings() -> CreateQuoteDraftInput {
        quote_for("C-BDG-001", vec![quoted("BRG-0042", 2, Uom::Box, TaxCode::Vat11)])
    }

    #[tokio::test]
    async fn a_box_is_priced_from_the_customers_list_and_taxed_per_line() {
        let (erp, seller) = Quoting::drafter();
        let quote = Quoting::created(&erp, &seller.draft("q1"), bearings()).await;
        assert_eq!(quote.quote_number, "QT-BDG-000004");
        assert_eq!(quote.status, DocumentStatus::Draft);
        assert_eq!(quote.price_list, "PL-WHOLESALE");
        let line = &quote.lines[0];
        assert_eq!((line.base_qty, line.base_uom), (48, Uom::Pcs));
        assert_eq!(line.unit_price.amount, "340000.00");
        assert_eq!(line.price_source, "price list PL-WHOLESALE, BRG-0042 per BOX");
        assert_eq!(
            (
                line.net_amount.amount.as_str(),
                line.tax_rate_percent.as_str(),
                line.tax_amount.amount.as_str(),
                line.line_total.amount.as_str()
            ),
            ("680000.00", "11", "74800.00", "754800.00")
        );
        assert_eq!(
            (
                quote.subtotal.amount.as_str(),
                quote.tax_total.amount.as_str(),
                quote.total.amount.as_str()
            ),
            ("680000.00", "74800.00", "754800.00")
        );
        assert_eq!(quote.drafted_on_behalf_of, "sales-bdg");
        assert_eq!(
            quote.review_url.as_deref(),
            Some("https://draftline.test/review/documents/QT-BDG-000004")
        );
    }

    #[tokio::test]
    async fn the_credit_check_says_what_is_left_after_the_quote() {
        let (erp, seller) = Quoting::drafter();
        let quote = Quoting::created(&erp, &seller.draft("q1"), bearings()).await;
        assert_eq!(
            quote.credit_check,
            "Credit limit 150000000.00 IDR, exposure 72705000.00 IDR (open orders 36075000.00 IDR, unpaid invoices \
             36630000.00 IDR), available 77295000.00 IDR. This quote fits within the limit (76540200.00 IDR left \
             after it)."
        );
    }

    #[tokio::test]
    async fn a_quote_beyond_the_credit_limit_says_a_person_must_approve_the_credit() {
        let (erp, seller) = Quoting::drafter();
        // C-BDG-002 is already 1,040,000 over; 1 BOX at retail is 372,000 + 40,920 tax.
        let input = quote_for("C-BDG-002", vec![quoted("BRG-0042", 1, Uom::Box, TaxCode::Vat11)]);
        let quote = Quoting::created(&erp, &seller.draft("q1"), input).await;
        assert_eq!(quote.total.amount, "412920.00");
        assert!(
            quote.credit_check.ends_with(
                "the customer is 1452920.00 IDR over its limit: a person must approve the credit before it is \
                 confirmed."
            ),
            "{}",
            quote.credit_check
        );
    }

    #[tokio::test]
    async fn a_unit_the_list_does_not_price_is_the_base_price_times_the_conversion() {
        let (erp, seller) = Quoting::drafter();
        // PL-WHOLESALE prices BRG-0043 per PCS only (17000).
        let input = quote_for("C-BDG-001", vec![quoted("BRG-0043", 1, Uom::Box, TaxCode::Vat11)]);
        let quote = Quoting::created(&erp, &seller.draft("q1"), input).await;
        assert_eq!(quote.lines[0].unit_price.amount, "408000.00");
        assert_eq!(
            quote.lines[0].price_source,
            "price list PL-WHOLESALE, BRG-0043 per PCS x 24 (24 per BOX)"
        );
    }

    #[tokio::test]
    async fn a_unit_only_priced_in_another_unit_names_the_priced_one() {
        let (erp, seller) = Quoting::drafter();
        // PL-WHOLESALE prices BLT-0107 by the box only, so pieces have no base price to convert.
        let input = quote_for("C-BDG-001", vec![quoted("BLT-0107", 50, Uom::Pcs, TaxCode::Vat11)]);
        let err = Quoting::refused(&erp, &seller.draft("q1"), input).await;
        assert_eq!(
            issues(&err),
            [(
                "lines[0].uom",
                "Price list PL-WHOLESALE prices BLT-0107 only in BOX. Resend the line with uom BOX."
            )]
        );
    }

    #[tokio::test]
    async fn an_item_not_on_the_customers_price_list_cannot_be_quoted() {
        let (erp, seller) = Quoting::drafter();
        let input = quote_for("C-BDG-001", vec![quoted("VBT-0220", 4, Uom::Pcs, TaxCode::Vat11)]);
        let err = Quoting::refused(&erp, &seller.draft("q1"), input).await;
        let found = issues(&err);
        assert_eq!(found[0].0, "lines[0].uom");
        assert!(
            found[0].1.starts_with(
                "Item VBT-0220 is not on price list PL-WHOLESALE of customer C-BDG-001, so it cannot be quoted"
            ),
            "{}",
            found[0].1
        );
        // The retail list has it.
        let retail = quote_for("C-BDG-002", vec![quoted("VBT-0220", 4, Uom::Pcs, TaxCode::Vat11)]);
        assert_eq!(
            Quoting::created(&erp, &seller.draft("q2"), retail).await.lines[0]
                .unit_price
                .amount,
            "52000.00"
        );
    }

    #[tokio::test]
    async fn a_customer_on_credit_hold_cannot_be_quoted() {
        let (erp, seller) = Quoting::drafter();
        let input = quote_for("C-BDG-003", vec![quoted("BRG-0042", 1, Uom::Box, TaxCode::Vat11)]);
        let err = Quoting::refused(&erp, &seller.draft("q1"), input).await;
        let found = issues(&err);
        assert_eq!(found[0].0, "customer_code");
        assert!(
            found[0]
                .1
                .starts_with("Customer C-BDG-003 (UD Sumber Rejeki Lembang) is on credit hold: an invoice is more than 90 days overdue."),
            "{}",
            found[0].1
        );
        assert_eq!(Quoting::last_number(&erp), 3);
    }

    #[tokio::test]
    async fn a_tax_exempt_customer_is_quoted_with_exempt_only() {
        let (erp, seller) = Quoting::drafter();
        let vat = quote_for("C-BDG-004", vec![quoted("BRG-0042", 1, Uom::Box, TaxCode::Vat11)]);
        let err = Quoting::refused(&erp, &seller.draft("q1"), vat).await;
        assert_eq!(
            issues(&err),
            [(
                "lines[0].tax_code",
                "customer C-BDG-004 is exempt from VAT; its lines use tax code EXEMPT, not VAT11"
            )]
        );
        let exempt = quote_for("C-BDG-004", vec![quoted("BRG-0042", 1, Uom::Box, TaxCode::Exempt)]);
        let quote = Quoting::created(&erp, &seller.draft("q2"), exempt).await;
        let line = &quote.lines[0];
        assert_eq!(
            (line.tax_rate_percent.as_str(), line.tax_amount.amount.as_str()),
            ("0", "0.00")
        );
        assert_eq!(quote.total.amount, "372000.00");
    }

    #[tokio::test]
    async fn an_inactive_tax_code_is_refused_naming_the_codes_in_use() {
        let (erp, seller) = Quoting::drafter();
        let input = quote_for("C-BDG-001", vec![quoted("BRG-0042", 1, Uom::Box, TaxCode::Vat10)]);
        let err = Quoting::refused(&erp, &seller.draft("q1"), input).await;
        let found = issues(&err);
        assert_eq!(found[0].0, "lines[0].tax_code");
        assert!(
            found[0]
                .1
                .starts_with("tax code VAT10 is not in use. Tax codes in use: EXEMPT = 0%, VAT0 = 0%, VAT11 = 11%."),
            "{}",
            found[0].1
        );
    }

    #[tokio::test]
    async fn a_customer_of_another_branch_reads_like_a_missing_one() {
        let (erp, seller) = Quoting::drafter();
        let elsewhere = quote_for("C-SBY-001", vec![quoted("BRG-0042", 1, Uom::Box, TaxCode::Vat11)]);
        let missing = quote_for("C-BDG-999", vec![quoted("BRG-0042", 1, Uom::Box, TaxCode::Vat11)]);
        let elsewhere = Quoting::refused(&erp, &seller.draft("q1"), elsewhere).await;
        let missing = Quoting::refused(&erp, &seller.draft("q1"), missing).await;
        assert_eq!(
            issues(&elsewhere),
            [("customer_code", customer_not_found("C-SBY-001").as_str())]
        );
        assert_eq!(
            issues(&missing),
            [("customer_code", customer_not_found("C-BDG-999").as_str())]
        );
    }

    #[tokio::test]
    async fn the_same_items_for_another_customer_are_not_a_near_duplicate() {
        let (erp, seller) = Quoting::drafter();
        Quoting::created(&erp, &seller.draft("q1"), bearings()).await;
        let mitra = quote_for("C-BDG-002", vec![quoted("BRG-0042", 2, Uom::Box, TaxCode::Vat11)]);
        assert_eq!(
            Quoting::created(&erp, &seller.draft("q2"), mitra).await.quote_number,
            "QT-BDG-000005"
        );
    }

    #[tokio::test]
    async fn use_existing_of_a_quote_that_is_not_there_is_not_found() {
        let (erp, seller) = Quoting::drafter();
        let gone = Decision::UseExisting("QT-BDG-000099".into());
        let call = Call {
            decision: Some(&gone),
            ..seller.draft("q4")
        };
        let err = Quoting::refused(&erp, &call, bearings()).await;
        assert!(matches!(err, ToolError::NotFound(_)), "{err:?}");
        assert!(err.to_string().contains("Quote QT-BDG-000099 was not found"), "{err}");
        assert_eq!(Quoting::last_number(&erp), 3);
    }

    #[tokio::test]
    async fn tax_too_large_to_compute_is_a_clear_error_not_a_panic() {
        let (erp, seller) = Quoting::drafter();
        // The net amount fits; net x 11 does not.
        Quoting::set_price_of(&erp, "BRG-0042", Uom::Box, "10000000000000000000000000000");
        let one = quote_for("C-BDG-001", vec![quoted("BRG-0042", 1, Uom::Box, TaxCode::Vat11)]);
        let err = Quoting::refused(&erp, &seller.draft("q1"), one).await;
        assert!(
            err.to_string().contains("lines[0] (BRG-0042 x 1 BOX) is too large"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_quote_total_of_ten_to_the_fourteen_is_refused_naming_the_line_and_the_largest_total() {
        // 100000 BOX at 900900901.00 IDR net: with VAT 11% the line is past
        // the largest total a tenant's limits can count.
        let (erp, seller) = Quoting::drafter();
        Quoting::set_price_of(&erp, "BRG-0042", Uom::Box, "900900901.00");
        let input = quote_for("C-BDG-001", vec![quoted("BRG-0042", 100_000, Uom::Box, TaxCode::Vat11)]);
        let err = Quoting::refused(&erp, &seller.draft("q1"), input).await;
        assert!(matches!(err, ToolError::Validation { .. }), "{err:?}");
        let found = issues(&err);
        assert_eq!(found.len(), 1, "{err:?}");
        assert_eq!(found[0].0, "lines[0]");
        assert!(
            found[0].1.contains("This line alone comes to 100000000011000.00 IDR")
                && found[0].1.contains("99999999999999.99 IDR"),
            "{}",
            found[0].1
        );
        assert_eq!(Quoting::last_number(&erp), 3, "nothing was numbered");
    }

    fn line(tax_code: Option<TaxCode>) -> QuoteLineInput {
        QuoteLineInput {
            item_code: "BRG-0042".into(),
            qty: 2,
            uom: Uom::Box,
            tax_code,
        }
    }

    #[test]
    fn a_line_without_a_tax_code_is_refused_naming_finance_list_tax_types() {
        let input = CreateQuoteDraftInput {
            customer_code: "C-BDG-001".into(),
            valid_until: "2026-12-31".parse().unwrap(),
            client_ref: "q".into(),
            note: None,
            lines: vec![line(Some(TaxCode::Vat11)), {
                let mut l = line(None);
                l.uom = Uom::Pcs;
                l
            }],
        };
        let ctx = RuleContext {
            today: "2026-11-29".parse().unwrap(),
        };
        let issues = SalesCreateQuoteDraft::rules(&input, &ctx);
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues[0].path, "lines[1].tax_code");
        assert!(issues[0].message.contains("finance_list_tax_types"));
    }

    #[test]
    fn the_schema_requires_a_non_null_tax_code() {
        let schema = draftline_contract::schema::strict_schema_for::<CreateQuoteDraftInput>();
        let tax = &schema["properties"]["lines"]["items"]["properties"]["tax_code"];
        assert_eq!(tax["type"], "string", "{tax}");
        assert!(!tax["enum"].as_array().unwrap().contains(&serde_json::Value::Null));
        assert!(draftline_contract::schema::strict_violations(&schema).is_empty());
    }
}
