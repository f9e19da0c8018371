//! Sales orders, as far as credit exposure and a customer's history need them.
//! People create and move them; agents only read them.

use chrono::NaiveDate;
use draftline_contract::ToolError;
use draftline_contract::identity::{BranchId, TenantId};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

/// Where a sales order is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SalesOrderStatus {
    /// Confirmed, nothing delivered yet.
    Open,
    /// Partly delivered.
    PartiallyDelivered,
    /// Delivered and invoiced.
    Invoiced,
    /// Cancelled.
    Cancelled,
}

impl SalesOrderStatus {
    /// The status as stored and shown.
    pub fn code(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::PartiallyDelivered => "partially_delivered",
            Self::Invoiced => "invoiced",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a stored status.
    pub fn from_code(code: &str) -> Option<Self> {
        [Self::Open, Self::PartiallyDelivered, Self::Invoiced, Self::Cancelled]
            .into_iter()
            .find(|s| s.code() == code)
    }

    /// Whether the order still counts against the customer's credit.
    pub fn is_open(self) -> bool {
        matches!(self, Self::Open | Self::PartiallyDelivered)
    }
}

/// A sales order of a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SalesOrder {
    /// `SO-BDG-000045`.
    pub number: String,
    /// The customer's code.
    pub customer: String,
    /// When it was ordered.
    pub order_date: NaiveDate,
    /// Status.
    pub status: SalesOrderStatus,
    /// Order total including tax.
    pub total: Decimal,
    /// The part not yet invoiced (counts against credit while the order is open).
    pub open_amount: Decimal,
    /// Currency of the amounts.
    pub currency: String,
}

impl SalesOrder {
    /// The item.
    pub fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::sales_orders(tenant, branch))),
            ("sk".to_owned(), sv(keys::sales_order_sk(&self.customer, &self.number))),
            ("kind".to_owned(), sv("sales_order")),
            ("number".to_owned(), sv(&self.number)),
            ("customer".to_owned(), sv(&self.customer)),
            ("order_date".to_owned(), sv(self.order_date.to_string())),
            ("status".to_owned(), sv(self.status.code())),
            ("total".to_owned(), nv(self.total)),
            ("open_amount".to_owned(), nv(self.open_amount)),
            ("currency".to_owned(), sv(&self.currency)),
        ])
    }

    /// Reads a sales order.
    pub fn from_item(item: &Attrs) -> Result<Self, ToolError> {
        let what = "sales order";
        Ok(Self {
            number: attrs::s(item, what, "number")?,
            customer: attrs::s(item, what, "customer")?,
            order_date: attrs::date(item, what, "order_date")?,
            status: SalesOrderStatus::from_code(&attrs::s(item, what, "status")?)
                .ok_or_else(|| attrs::corrupt(what, "status"))?,
            total: attrs::dec(item, what, "total")?,
            open_amount: attrs::dec(item, what, "open_amount")?,
            currency: attrs::s(item, what, "currency")?,
        })
    }
}
