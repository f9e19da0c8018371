//! The sales quote document. Agents only ever create it in status `draft`;
//! a person reviews it and sends it to the customer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::po::DocumentStatus;
use super::tax::TaxCode;
use crate::money::Money;
use crate::units::Uom;

/// A customer as printed on a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomerRef {
    /// Customer code.
    pub code: String,
    /// Customer name.
    pub name: String,
}

/// One line of a quote, priced and taxed by the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuoteLine {
    /// 1-based line number.
    pub line_no: u32,
    /// Item code.
    pub item_code: String,
    /// Item description.
    pub item_name: String,
    /// Quantity in `uom`.
    pub qty: i64,
    /// The unit quoted.
    pub uom: Uom,
    /// The same quantity in the item's base unit.
    pub base_qty: i64,
    /// The item's base unit.
    pub base_uom: Uom,
    /// Price per `uom` before tax, from the customer's price list.
    pub unit_price: Money,
    /// Where the price came from (`price list PL-WHOLESALE, BRG-0042 per BOX`).
    pub price_source: String,
    /// qty x unit price, rounded.
    pub net_amount: Money,
    /// The tax code of the line.
    pub tax_code: TaxCode,
    /// Its rate in percent, exact (`"11"`).
    pub tax_rate_percent: String,
    /// net amount x rate, rounded.
    pub tax_amount: Money,
    /// net amount + tax amount.
    pub line_total: Money,
}

impl QuoteLine {
    /// `line` (its total the net amount plus the tax) with its `net`
    /// amount and `tax`'s `amount` on it.
    pub fn taxed(line: super::PoLine, net: Money, tax: &super::TaxType, amount: Money) -> Self {
        Self {
            line_no: line.line_no,
            item_code: line.item_code,
            item_name: line.item_name,
            qty: line.qty,
            uom: line.uom,
            base_qty: line.base_qty,
            base_uom: line.base_uom,
            unit_price: line.unit_price,
            price_source: line.price_source,
            net_amount: net,
            tax_code: tax.code,
            tax_rate_percent: tax.rate_percent.normalize().to_string(),
            tax_amount: amount,
            line_total: line.line_total,
        }
    }
}

/// A sales quote (always a draft when an agent made it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quote {
    /// Document id (use in data, not in text).
    pub quote_id: String,
    /// The quote number people use (`QT-BDG-000001`).
    pub quote_number: String,
    /// Always `draft`.
    pub status: DocumentStatus,
    /// The branch the quote belongs to.
    pub branch_id: String,
    /// The customer.
    pub customer: CustomerRef,
    /// The price list the lines were priced from.
    pub price_list: String,
    /// Last day the quoted prices hold (YYYY-MM-DD).
    pub valid_until: chrono::NaiveDate,
    /// Currency of every amount.
    pub currency: String,
    /// The lines, priced and taxed by the server.
    pub lines: Vec<QuoteLine>,
    /// Sum of net amounts.
    pub subtotal: Money,
    /// Sum of tax amounts.
    pub tax_total: Money,
    /// subtotal + tax total.
    pub total: Money,
    /// How amounts are rounded.
    pub rounding: String,
    /// The customer's credit position against this quote, for the reviewer.
    pub credit_check: String,
    /// Free-text note from the caller.
    pub note: Option<String>,
    /// The caller's own reference.
    pub client_ref: String,
    /// The agent run that drafted it (`X-Agent-Run-Id`), if any.
    pub drafted_by_agent_run: Option<String>,
    /// The person the agent acted for (token subject).
    pub drafted_on_behalf_of: String,
    /// When it was drafted (RFC 3339, UTC).
    pub created_at: String,
    /// What happens next, for the model to tell the user.
    pub next_step: String,
    /// A person's decision (approved, or rejected with the reason, and who
    /// decided), once there is one; null while the draft waits for review.
    #[serde(default)]
    pub decision: Option<super::decision::Decision>,
    /// The page where a person reviews this quote
    /// (`<deployment>/review/documents/<number>`): tell the user it waits
    /// there. Set in every answer; not stored.
    #[serde(default)]
    pub review_url: Option<String>,
}

/// What only a quote draft has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteFields {
    /// The price list it was priced from.
    pub price_list: String,
    /// The last day the quote is valid.
    pub valid_until: chrono::NaiveDate,
    /// Sum of the lines' tax.
    pub tax_total: Money,
    /// What the quote does to the customer's credit.
    pub credit_check: String,
}

/// A quote the tool has priced and checked, not yet in the ERP.
pub type QuoteDraft = super::draft::DraftDocument<CustomerRef, QuoteLine, QuoteFields>;

impl QuoteDraft {
    /// The quote this draft becomes once the ERP gave it `quote_id`,
    /// `quote_number` and its creation time (RFC 3339, UTC).
    pub fn numbered(&self, quote_id: String, quote_number: String, created_at: String) -> Quote {
        Quote {
            next_step: format!(
                "Draft {quote_number} awaits review: a person must check and send it to {}. It has not been sent \
                 and reserves no stock.",
                self.counterparty.name
            ),
            quote_id,
            quote_number,
            status: DocumentStatus::Draft,
            branch_id: self.branch_id.clone(),
            customer: self.counterparty.clone(),
            price_list: self.own.price_list.clone(),
            valid_until: self.own.valid_until,
            currency: self.currency.clone(),
            lines: self.lines.clone(),
            subtotal: self.subtotal.clone(),
            tax_total: self.own.tax_total.clone(),
            total: self.total.clone(),
            rounding: crate::money::TAX_ROUNDING_RULE.to_owned(),
            credit_check: self.own.credit_check.clone(),
            note: self.note.clone(),
            client_ref: self.client_ref.clone(),
            drafted_by_agent_run: self.drafted_by_agent_run.clone(),
            drafted_on_behalf_of: self.drafted_on_behalf_of.clone(),
            created_at,
            decision: None,
            review_url: None,
        }
    }
}
