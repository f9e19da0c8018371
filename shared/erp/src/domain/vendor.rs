//! Vendors and their price lists.

use rust_decimal::Decimal;

use crate::units::Uom;

/// A vendor of the tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vendor {
    /// `V-00231`.
    pub code: String,
    /// Name.
    pub name: String,
    /// The currency it invoices in.
    pub currency: String,
    /// Branches it supplies.
    pub branches: Vec<String>,
    /// Payment terms in days.
    pub payment_terms_days: i64,
}

/// A vendor as listed for one branch it supplies: what a search shows.
/// The listing lives in the branch's partition, so a branch only ever finds
/// the vendors that supply it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchVendor {
    /// `V-00231`.
    pub code: String,
    /// Name.
    pub name: String,
    /// The currency it invoices in.
    pub currency: String,
    /// Payment terms in days.
    pub payment_terms_days: i64,
    /// Codes of the items on its price list, sorted.
    pub items: Vec<String>,
}

/// One entry of a vendor's price list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceEntry {
    /// The vendor.
    pub vendor: String,
    /// The item.
    pub item: String,
    /// The unit the price is for.
    pub uom: Uom,
    /// Price per unit, exact.
    pub unit_price: Decimal,
}

impl Vendor {
    /// Whether the vendor supplies `branch`.
    pub fn supplies(&self, branch: &str) -> bool {
        self.branches.iter().any(|b| b == branch)
    }
}

impl BranchVendor {
    /// The listing of `vendor` in one branch, supplying `items`.
    pub fn of(vendor: &Vendor, mut items: Vec<String>) -> Self {
        items.sort();
        items.dedup();
        Self {
            code: vendor.code.clone(),
            name: vendor.name.clone(),
            currency: vendor.currency.clone(),
            payment_terms_days: vendor.payment_terms_days,
            items,
        }
    }

    /// Whether the vendor's code is `query` or its name contains it (case-insensitive).
    pub fn matches(&self, query: &str) -> bool {
        self.code.eq_ignore_ascii_case(query) || self.name.to_lowercase().contains(&query.to_lowercase())
    }
}
