//! Sales orders, as far as credit exposure and a customer's history need them.
//! People create and move them; agents only read them.

use chrono::NaiveDate;
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
