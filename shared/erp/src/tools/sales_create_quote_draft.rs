//! `sales_create_quote_draft`: a sales quote in status draft, priced from the
//! customer's price list and taxed per line with the tax code the caller
//! chose. Idempotent through the same contract as purchase-order drafts.

use std::collections::BTreeSet;

use std::sync::Arc;

use async_trait::async_trait;
use chrono::NaiveDate;
use draftline_contract::ToolError;
use draftline_contract::error::FieldIssue;
use draftline_contract::tool::{Call, DocumentRef, Draft, DraftTool, RuleContext, ToolMeta, ToolSpec};
use draftline_contract::validation::rejected_with;
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use super::sales_get_customer_summary::customer_not_found;
use crate::domain::quote::CustomerRef;
use crate::domain::{CreditPosition, Customer, ListPrice, Quote, QuoteDraft, QuoteLine, Reviewable, TaxCode, TaxType};
use crate::money::{self, Money};
use crate::port::{Erp, Scope};
use crate::pricing;
use crate::units::Uom;

/// How long a quote may be valid.
const MAX_VALID_DAYS: i64 = 90;

const NO_DRAFT: &str = "No draft was created.";

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

/// The tool.
#[derive(Clone)]
pub struct SalesCreateQuoteDraft {
    erp: Arc<dyn Erp>,
}

impl SalesCreateQuoteDraft {
    /// The tool over `erp`.
    pub fn new(erp: Arc<dyn Erp>) -> Self {
        Self { erp }
    }
}

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
        for (i, line) in input.lines.iter().enumerate() {
            if line.tax_code.is_none() {
                issues.push(FieldIssue::new(
                    format!("lines[{i}].tax_code"),
                    format!(
                        "line {} ({}) has no tax_code; every quote line needs one. Call finance_list_tax_types for \
                         the tax codes in use and their rates (for example VAT11 = 11% for most sales, EXEMPT for \
                         tax-exempt customers), then resend the line with tax_code set",
                        i.saturating_add(1),
                        line.item_code
                    ),
                ));
            }
        }
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

#[async_trait]
impl DraftTool for SalesCreateQuoteDraft {
    fn client_ref(input: &CreateQuoteDraftInput) -> &str {
        &input.client_ref
    }

    async fn draft(&self, call: &Call<'_>, input: CreateQuoteDraftInput) -> Result<Draft<Quote>, ToolError> {
        let branch = call.caller.branch();
        let scope = Scope::of(call.caller);
        let codes: Vec<String> = input
            .lines
            .iter()
            .map(|l| l.item_code.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let check = super::Check::of(call.decision, call.near_duplicate_window);
        let now = call.clock.now();
        let since = super::window_start(now, call.near_duplicate_window);
        let open_drafts = async {
            match check {
                super::Check::Look => self.erp.open_quote_drafts(&scope, &input.customer_code, since).await,
                _ => Ok(Vec::new()),
            }
        };
        // The reads are independent: issue them together.
        let (customer, orders, invoices, items, taxes, open) = tokio::try_join!(
            self.erp.customer(&scope, &input.customer_code),
            self.erp.customer_orders(&scope, &input.customer_code),
            self.erp.customer_invoices(&scope, &input.customer_code),
            self.erp.items(&scope, &codes),
            self.erp.tax_types(&scope),
            open_drafts,
        )?;
        let customer = customer.ok_or_else(|| {
            rejected_with(
                vec![FieldIssue::new(
                    "customer_code",
                    customer_not_found(&input.customer_code),
                )],
                NO_DRAFT,
            )
        })?;
        if let Some(reason) = &customer.credit_hold {
            return Err(rejected_with(
                vec![FieldIssue::new(
                    "customer_code",
                    format!(
                        "Customer {} ({}) is on credit hold: {reason}. No quote can be drafted until a person in \
                         finance lifts the hold; sales_get_customer_summary shows the overdue invoices to discuss \
                         with the customer",
                        customer.code, customer.name
                    ),
                )],
                NO_DRAFT,
            ));
        }

        // Every unit of each item: the line's own price, the base-unit
        // fallback, and the priced units to name when neither exists.
        let wanted: Vec<(String, Uom)> = items
            .values()
            .flat_map(|item| item.units.iter().map(|u| (item.code.clone(), u.uom)))
            .collect();
        let prices: Vec<ListPrice> = if wanted.is_empty() {
            Vec::new()
        } else {
            self.erp.list_prices(&scope, &customer.price_list, &wanted).await?
        };

        let currency = customer.currency.clone();
        let mut issues = Vec::new();
        let mut lines = Vec::with_capacity(input.lines.len());
        let mut nets = Vec::with_capacity(input.lines.len());
        let mut taxes_of_lines = Vec::with_capacity(input.lines.len());
        for (i, line) in input.lines.iter().enumerate() {
            let Some(item) = items.get(&line.item_code) else {
                issues.push(FieldIssue::new(
                    format!("lines[{i}].item_code"),
                    format!(
                        "Item {} does not exist. Check the code with inventory_get_stock.",
                        line.item_code
                    ),
                ));
                continue;
            };
            let Some(unit) = item.unit(line.uom) else {
                let allowed: Vec<&str> = item.units.iter().map(|u| u.uom.code()).collect();
                issues.push(FieldIssue::new(
                    format!("lines[{i}].uom"),
                    format!(
                        "Item {code} is not sold in {uom}. Allowed units for {code}: {units}. Resend the line with \
                         uom {choices}.",
                        code = item.code,
                        uom = line.uom,
                        units = item.describe_units(),
                        choices = allowed.join(" or "),
                    ),
                ));
                continue;
            };
            let price_of = |u: Uom| {
                prices
                    .iter()
                    .find(|p| p.item == item.code && p.uom == u)
                    .map(|p| p.unit_price)
            };
            let Some(priced) = pricing::unit_price(&customer.price_list, item, line.uom, price_of) else {
                let priced_units: Vec<&str> = item
                    .units
                    .iter()
                    .filter(|u| price_of(u.uom).is_some())
                    .map(|u| u.uom.code())
                    .collect();
                issues.push(FieldIssue::new(
                    format!("lines[{i}].uom"),
                    if priced_units.is_empty() {
                        format!(
                            "Item {} is not on price list {} of customer {}, so it cannot be quoted to this \
                             customer. Remove the line, or ask a person to add the item to the price list.",
                            item.code, customer.price_list, customer.code
                        )
                    } else {
                        format!(
                            "Price list {} prices {} only in {}. Resend the line with uom {}.",
                            customer.price_list,
                            item.code,
                            priced_units.join(", "),
                            priced_units.join(" or ")
                        )
                    },
                ));
                continue;
            };
            // `rules` refused missing tax codes before any read.
            let Some(code) = line.tax_code else {
                continue;
            };
            let tax = match tax_for(code, &customer, &taxes, format!("lines[{i}].tax_code")) {
                Ok(tax) => tax,
                Err(issue) => {
                    issues.push(issue);
                    continue;
                }
            };
            let overflow = || money::overflow(&format!("lines[{i}] ({} x {} {})", item.code, line.qty, line.uom));
            let net = money::round(money::mul(priced.unit_price, Decimal::from(line.qty)).ok_or_else(overflow)?);
            let tax_amount = tax.tax_on(net).ok_or_else(overflow)?;
            let line_total = net.checked_add(tax_amount).ok_or_else(overflow)?;
            nets.push(net);
            taxes_of_lines.push(tax_amount);
            lines.push(QuoteLine {
                line_no: u32::try_from(i).map_or(u32::MAX, |i| i.saturating_add(1)),
                item_code: item.code.clone(),
                item_name: item.name.clone(),
                qty: line.qty,
                uom: line.uom,
                base_qty: line.qty.checked_mul(unit.factor).ok_or_else(overflow)?,
                base_uom: item.base_uom,
                unit_price: Money::new(priced.unit_price, &currency),
                price_source: priced.source,
                net_amount: Money::new(net, &currency),
                tax_code: code,
                tax_rate_percent: tax.rate_percent.normalize().to_string(),
                tax_amount: Money::new(tax_amount, &currency),
                line_total: Money::new(line_total, &currency),
            });
        }
        if !issues.is_empty() {
            return Err(rejected_with(issues, NO_DRAFT));
        }
        // Ask rather than guess: the same items for the same customer drafted
        // in the last day under another key.
        let items_asked = codes.iter().map(String::as_str);
        if let Some(question) = super::near_duplicate(
            &open,
            call.draft_key,
            items_asked,
            &customer.code,
            "quote",
            "sales_get_quote",
            now,
        ) {
            return Err(question);
        }
        if let super::Check::UseExisting(number) = check {
            let existing = self.erp.quote(&scope, &number).await?.ok_or_else(|| {
                ToolError::NotFound(format!(
                    "Quote {number} was not found in your branch. Nothing was created. Call sales_create_quote_draft \
                     again without a confirmation to be asked afresh."
                ))
            })?;
            return Ok(Draft::Existing {
                document: DocumentRef {
                    id: existing.quote_id.clone(),
                    number: existing.quote_number.clone(),
                    kind: "quote".to_owned(),
                },
                output: existing.with_review_url(call.review_pages),
            });
        }

        let overflow = || money::overflow("the quote total");
        let subtotal = money::sum(nets).ok_or_else(overflow)?;
        let tax_total = money::sum(taxes_of_lines).ok_or_else(overflow)?;
        let total = subtotal.checked_add(tax_total).ok_or_else(overflow)?;
        let position = customer.credit_position(&orders, &invoices)?;
        let draft = QuoteDraft {
            branch_id: branch.to_string(),
            customer: CustomerRef {
                code: customer.code.clone(),
                name: customer.name.clone(),
            },
            price_list: customer.price_list.clone(),
            valid_until: input.valid_until,
            currency: currency.clone(),
            lines,
            subtotal: Money::new(subtotal, &currency),
            tax_total: Money::new(tax_total, &currency),
            total: Money::new(total, &currency),
            credit_check: credit_check(&position, total, &currency)?,
            note: input.note.clone(),
            client_ref: input.client_ref.clone(),
            drafted_by_agent_run: call.agent.run_id.clone(),
            drafted_on_behalf_of: call.caller.user().to_string(),
            drafted_by_tool_call: call.agent.tool_call_id.clone(),
        };
        // Only a draft that passed every check is placed (and numbered), so
        // refused input writes nothing and leaves no gap.
        let placement = self
            .erp
            .place_quote_draft(&scope, draft.clone(), call.draft_key, call.clock.now())
            .await?;
        Ok(super::prepared(
            placement,
            draft,
            QuoteDraft::numbered,
            |quote: &Quote| DocumentRef {
                id: quote.quote_id.clone(),
                number: quote.quote_number.clone(),
                kind: "quote".to_owned(),
            },
            call.review_pages,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
