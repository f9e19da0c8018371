//! Vendors and their price lists.

use draftline_contract::ToolError;
use draftline_contract::identity::{BranchId, TenantId};
use rust_decimal::Decimal;

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;
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

    /// The item.
    pub fn to_item(&self, tenant: &TenantId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::vendor(tenant, &self.code))),
            ("sk".to_owned(), sv(keys::VENDOR_PROFILE_SK)),
            ("kind".to_owned(), sv("vendor")),
            ("code".to_owned(), sv(&self.code)),
            ("name".to_owned(), sv(&self.name)),
            ("currency".to_owned(), sv(&self.currency)),
            (
                "branches".to_owned(),
                aws_sdk_dynamodb::types::AttributeValue::Ss(self.branches.clone()),
            ),
            ("payment_terms_days".to_owned(), nv(self.payment_terms_days)),
        ])
    }

    /// Reads a vendor profile.
    pub fn from_item(item: &Attrs) -> Result<Self, ToolError> {
        let what = "vendor";
        Ok(Self {
            code: attrs::s(item, what, "code")?,
            name: attrs::s(item, what, "name")?,
            currency: attrs::s(item, what, "currency")?,
            branches: item
                .get("branches")
                .and_then(|v| v.as_ss().ok())
                .cloned()
                .unwrap_or_default(),
            payment_terms_days: attrs::int(item, what, "payment_terms_days")?,
        })
    }
}

impl PriceEntry {
    /// The key of `vendor`'s price for `item` per `uom`.
    pub fn key(tenant: &TenantId, vendor: &str, item: &str, uom: Uom) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::vendor(tenant, vendor))),
            ("sk".to_owned(), sv(keys::price_sk(item, uom.code()))),
        ])
    }

    /// The item.
    pub fn to_item(&self, tenant: &TenantId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::vendor(tenant, &self.vendor))),
            ("sk".to_owned(), sv(keys::price_sk(&self.item, self.uom.code()))),
            ("kind".to_owned(), sv("price")),
            ("vendor".to_owned(), sv(&self.vendor)),
            ("item".to_owned(), sv(&self.item)),
            ("uom".to_owned(), sv(self.uom.code())),
            ("unit_price".to_owned(), nv(self.unit_price)),
        ])
    }

    /// Reads a price entry.
    pub fn from_item(item: &Attrs) -> Result<Self, ToolError> {
        let what = "price entry";
        Ok(Self {
            vendor: attrs::s(item, what, "vendor")?,
            item: attrs::s(item, what, "item")?,
            uom: Uom::from_code(&attrs::s(item, what, "uom")?).ok_or_else(|| attrs::corrupt(what, "uom"))?,
            unit_price: attrs::dec(item, what, "unit_price")?,
        })
    }
}

impl BranchVendor {
    /// The key of vendor `code` in `branch`'s listing.
    pub fn key(tenant: &TenantId, branch: &BranchId, code: &str) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::branch_vendors(tenant, branch))),
            ("sk".to_owned(), sv(keys::branch_vendor_sk(code))),
        ])
    }

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

    /// The item.
    pub fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
        let mut item = Self::key(tenant, branch, &self.code);
        item.extend([
            ("kind".to_owned(), sv("vendor_listing")),
            ("code".to_owned(), sv(&self.code)),
            ("name".to_owned(), sv(&self.name)),
            ("currency".to_owned(), sv(&self.currency)),
            ("payment_terms_days".to_owned(), nv(self.payment_terms_days)),
        ]);
        // DynamoDB refuses an empty string set.
        if !self.items.is_empty() {
            item.insert(
                "items".to_owned(),
                aws_sdk_dynamodb::types::AttributeValue::Ss(self.items.clone()),
            );
        }
        item
    }

    /// Reads a listing.
    pub fn from_item(item: &Attrs) -> Result<Self, ToolError> {
        let what = "vendor listing";
        let mut items = attrs::string_set(item, "items");
        items.sort();
        Ok(Self {
            code: attrs::s(item, what, "code")?,
            name: attrs::s(item, what, "name")?,
            currency: attrs::s(item, what, "currency")?,
            payment_terms_days: attrs::int(item, what, "payment_terms_days")?,
            items,
        })
    }
}
