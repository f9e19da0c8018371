//! Customers of a branch: profile, price list, credit terms.

use draftline_contract::ToolError;
use rust_decimal::Decimal;

use super::invoice::{CustomerInvoice, OpenItem};
use super::sales_order::SalesOrder;
use crate::money;

/// A customer, served by one branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Customer {
    /// `C-BDG-001`.
    pub code: String,
    /// Name.
    pub name: String,
    /// City.
    pub city: String,
    /// The sales price list its quotes are priced from (`PL-WHOLESALE`).
    pub price_list: String,
    /// The currency it is invoiced in.
    pub currency: String,
    /// The most it may owe (open orders plus unpaid invoices).
    pub credit_limit: Decimal,
    /// Payment terms in days.
    pub payment_terms_days: i64,
    /// Exempt from VAT: its quote lines must use tax code EXEMPT.
    pub tax_exempt: bool,
    /// Why it is on credit hold, if it is (no new quotes until a person lifts it).
    pub credit_hold: Option<String>,
}

/// What a customer owes and may still owe, exact; computed once, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreditPosition {
    /// The credit limit.
    pub limit: Decimal,
    /// Not yet invoiced value of open and partly delivered orders.
    pub open_orders: Decimal,
    /// Unpaid invoice amounts.
    pub outstanding_invoices: Decimal,
    /// Open orders plus unpaid invoices.
    pub exposure: Decimal,
    /// The limit minus the exposure (negative when over the limit).
    pub available: Decimal,
}

impl CreditPosition {
    /// Whether the exposure exceeds the limit.
    pub fn over_limit(&self) -> bool {
        self.exposure > self.limit
    }
}

/// What a customer owes: the sums its credit position is made of, from its
/// orders and invoices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CreditStanding {
    /// Not yet invoiced value of open and partly delivered orders.
    pub open_orders: Decimal,
    /// Unpaid invoice amounts.
    pub outstanding_invoices: Decimal,
}

impl CreditStanding {
    /// The standing of customer `code` with these orders and invoices.
    pub fn of(code: &str, orders: &[SalesOrder], invoices: &[CustomerInvoice]) -> Result<Self, ToolError> {
        let overflow = || money::overflow(&format!("the credit exposure of {code}"));
        let open_orders =
            money::sum(orders.iter().filter(|o| o.status.is_open()).map(|o| o.open_amount)).ok_or_else(overflow)?;
        let outstanding = invoices
            .iter()
            .filter(|i| i.is_open())
            .map(|i| i.outstanding().ok_or_else(overflow))
            .collect::<Result<Vec<_>, _>>()?;
        let outstanding_invoices = money::sum(outstanding).ok_or_else(overflow)?;
        Ok(Self {
            open_orders,
            outstanding_invoices,
        })
    }
}

impl Customer {
    /// The customer's credit position given its orders and invoices.
    pub fn credit_position(
        &self,
        orders: &[SalesOrder],
        invoices: &[CustomerInvoice],
    ) -> Result<CreditPosition, ToolError> {
        self.credit_position_of(CreditStanding::of(&self.code, orders, invoices)?)
    }

    /// The customer's credit position given its standing.
    pub fn credit_position_of(&self, standing: CreditStanding) -> Result<CreditPosition, ToolError> {
        let overflow = || money::overflow(&format!("the credit exposure of {}", self.code));
        let CreditStanding {
            open_orders,
            outstanding_invoices,
        } = standing;
        let exposure = open_orders.checked_add(outstanding_invoices).ok_or_else(overflow)?;
        let available = self.credit_limit.checked_sub(exposure).ok_or_else(overflow)?;
        Ok(CreditPosition {
            limit: self.credit_limit,
            open_orders,
            outstanding_invoices,
            exposure,
            available,
        })
    }

    /// Whether the customer's code is `query` or its name contains it (case-insensitive).
    pub fn matches(&self, query: &str) -> bool {
        self.code.eq_ignore_ascii_case(query) || self.name.to_lowercase().contains(&query.to_lowercase())
    }
}
