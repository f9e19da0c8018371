//! The sales quote document. Agents only ever create it in status `draft`;
//! a person reviews it and sends it to the customer.

use draftline_contract::ToolError;
use draftline_contract::identity::{BranchId, TenantId};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::attrs::{self, Item as Attrs, sv};
use super::po::DocumentStatus;
use super::tax::TaxCode;
use crate::keys;
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
}

impl Quote {
    /// The key of quote `number` in `branch`.
    pub fn key(tenant: &TenantId, branch: &BranchId, number: &str) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::quotes(tenant, branch))),
            ("sk".to_owned(), sv(keys::quote_sk(number))),
        ])
    }

    /// The item: queryable attributes plus the document as JSON.
    pub fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Result<Attrs, ToolError> {
        let mut item = Self::key(tenant, branch, &self.quote_number);
        item.extend([
            ("kind".to_owned(), sv("quote")),
            ("quote_id".to_owned(), sv(&self.quote_id)),
            ("quote_number".to_owned(), sv(&self.quote_number)),
            ("status".to_owned(), sv("draft")),
            ("customer_code".to_owned(), sv(&self.customer.code)),
            ("created_at".to_owned(), sv(&self.created_at)),
            (
                "total".to_owned(),
                aws_sdk_dynamodb::types::AttributeValue::N(self.total.amount.clone()),
            ),
            ("drafted_on_behalf_of".to_owned(), sv(&self.drafted_on_behalf_of)),
            (
                "document".to_owned(),
                sv(serde_json::to_string(self).map_err(ToolError::internal)?),
            ),
        ]);
        if let Some(run) = &self.drafted_by_agent_run {
            item.insert("drafted_by_agent_run".into(), sv(run));
        }
        Ok(item)
    }

    /// Reads a quote.
    pub fn from_item(item: &Attrs) -> Result<Self, ToolError> {
        let text = attrs::s(item, "quote", "document")?;
        serde_json::from_str(&text).map_err(ToolError::internal)
    }
}
